from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import anyio
import pytest

from ragdown.access.scope import Scope
from ragdown.core.config import Settings
from ragdown.embedders import HashEmbedder, Vectors
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.search.hybrid import SearchOptions
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.records import IndexMeta
from ragdown.storage.sqlite.store import Store
from ragdown.sync.indexer import FIRST_BATCH_CHUNKS, Indexer
from ragdown.sync.report import SyncProgress, SyncReport, SyncRequest
from ragdown.writes import door
from tests.conftest import BOTH_BACKENDS, write
from tests.mcpserver.conftest import Endpoint

OpenEngine = Callable[..., Engine]
# Each engine test runs on SQLite and on PostgreSQL (`tests/conftest.py`).
INDEX_BACKENDS = BOTH_BACKENDS


def report(engine: Engine) -> dict[str, int]:
    return engine.sync()


def test_adds_updates_and_removes_incrementally(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "a.md", "# A\n\nalpha text\n")
    write(docs, "sub/b.md", "# B\n\nbeta text\n")
    write(docs, ".git/c.md", "# C\n\nhidden\n")
    write(docs, "node_modules/d.md", "# D\n\nvendored\n")
    write(docs, ".obsidian/e.md", "# E\n")
    write(docs, "photo.png", "not a document")
    write(docs, "UPPER.MD", "# Upper\n\nshouting\n")
    write(docs, "x.markdown", "# X\n\nx\n")
    write(docs, "y.mdx", "# Y\n\ny\n")
    engine = open_engine(docs, sync=False)
    first = report(engine)
    assert first == {**first, "added": 5, "updated": 0, "removed": 0, "unchanged": 0}
    store = engine.require_store()
    assert sorted(f.path for f in store.all_files()) == [
        "UPPER.MD",
        "a.md",
        "sub/b.md",
        "x.markdown",
        "y.mdx",
    ]

    again = report(engine)
    assert again == {**again, "added": 0, "updated": 0, "removed": 0, "unchanged": 5, "chunks": 0}

    write(docs, "a.md", "# A\n\nalpha text changed\n")
    (docs / "sub/b.md").unlink()
    second = report(engine)
    assert (second["added"], second["updated"], second["removed"], second["unchanged"]) == (0, 1, 1, 3)
    assert second["chunks"] == 1


def test_a_touched_file_is_not_re_embedded_and_keeps_its_mtime(docs: Path, open_engine: OpenEngine) -> None:
    path = write(docs, "a.md", "# A\n\nalpha\n")
    os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    engine = open_engine(docs)
    store = engine.require_store()
    before = store.get_file("a.md")
    assert before is not None
    os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    touched = report(engine)
    assert (touched["updated"], touched["unchanged"], touched["chunks"]) == (0, 1, 0)
    after = store.get_file("a.md")
    assert after is not None
    assert after.mtime_ns == before.mtime_ns == 1_600_000_000_000_000_000
    # The new stat is remembered: the next sync skips the file without reading it.
    assert store.file_states()["a.md"].stat_mtime_ns == 1_700_000_000_000_000_000


def test_full_reindex_re_embeds_everything(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "a.md", "# A\n\none\n\n## B\n\ntwo\n")
    engine = open_engine(docs)
    full = engine.sync(full=True)
    assert (full["added"], full["chunks"]) == (1, 2)


def test_serve_mode_indexes_folders_and_lists_loose_files(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "loose.md", "# Loose\n")
    write(docs, "work/a.md", "# A\n\nalpha\n")
    write(docs, "home/b.md", "# B\n\nbeta\n")
    engine = open_engine(docs, "serve")
    store = engine.require_store()
    assert sorted((f.folder, f.path) for f in store.all_files()) == [
        ("home", "home/b.md"),
        ("work", "work/a.md"),
    ]
    assert engine.indexer is not None
    assert engine.indexer.loose_files == ["loose.md"]


def _chunk_ids(engine: Engine, folder: str) -> set[int]:
    store = engine.require_store()
    files = [f.id for f in store.all_files() if f.folder == folder]
    return {chunk for chunk, _ in store.chunk_ids_of_files(files)}


def test_a_sync_of_some_folders_walks_drops_and_re_embeds_only_them(
    docs: Path, open_engine: OpenEngine
) -> None:
    """Issue 8: a folder's reindex (`folders`) walks that folder only, reports only it, and `full` re-embeds
    only it: the other folders' changes wait for their own sync, their sections stay as they were."""
    write(docs, "work/a.md", "# A\n\nalpha\n")
    write(docs, "home/b.md", "# B\n\nbeta\n")
    write(docs, "home/c.md", "# C\n\ngamma\n")
    engine = open_engine(docs, "serve")
    home_chunks = _chunk_ids(engine, "home")
    write(docs, "work/new.md", "# New\n\nnew work\n")
    write(docs, "home/new.md", "# New\n\nnew home\n")
    (docs / "home/c.md").unlink()
    work = engine.sync(folders=frozenset({"work"}))
    assert work == {**work, "added": 1, "updated": 0, "removed": 0, "unchanged": 1}
    store = engine.require_store()
    assert sorted(f.path for f in store.all_files()) == ["home/b.md", "home/c.md", "work/a.md", "work/new.md"]
    work_chunks = _chunk_ids(engine, "work")
    full = engine.sync(full=True, folders=frozenset({"work"}))
    assert full == {**full, "added": 2, "updated": 0, "removed": 0, "unchanged": 0, "chunks": 2}
    assert not _chunk_ids(engine, "work") & work_chunks  # re-embedded: new sections
    assert _chunk_ids(engine, "home") == home_chunks  # left alone
    home = engine.sync(folders=frozenset({"home"}))
    assert home == {**home, "added": 1, "removed": 1, "unchanged": 1}
    # Each folder's last sync is the last that covered it: work's was the full one.
    last_work = engine.last_sync_of(frozenset({"work"}))
    assert last_work is not None
    assert {k: v for k, v in last_work.items() if k != "at"} == full
    every = engine.sync()
    assert every == {**every, "added": 0, "removed": 0, "unchanged": 4}


def test_callers_sharing_a_follow_up_each_hear_of_their_own_folders(
    docs: Path, open_engine: OpenEngine
) -> None:
    """One follow-up covers what every caller joining it asked for; each is told of its own folders only."""
    write(docs, "work/a.md", "# A\n\nalpha\n")
    write(docs, "home/b.md", "# B\n\nbeta\n")
    write(docs, "other/e.md", "# E\n\nelsewhere\n")
    engine = open_engine(docs, "serve")
    indexer = engine.indexer
    assert indexer is not None
    gate = threading.Event()
    started = threading.Event()
    covered: list[frozenset[str] | None] = []
    original = indexer.run

    def slow_run(request: SyncRequest) -> SyncReport:
        covered.append(request.folders)
        started.set()
        gate.wait(5)
        return original(request)

    indexer.run = slow_run  # type: ignore[method-assign]
    first = indexer.request_sync(folders=frozenset({"other"}))  # held at the gate while the others join
    assert started.wait(10)  # running, so the next two join a follow-up of their own
    write(docs, "work/c.md", "# C\n\nmore work\n")
    write(docs, "home/d.md", "# D\n\nmore home\n")
    work = indexer.request_sync(folders=frozenset({"work"}))
    home = indexer.request_sync(full=True, folders=frozenset({"home"}))
    assert work is home
    gate.set()
    first.result(10)
    shared = work.result(10)
    assert covered == [frozenset({"other"}), frozenset({"work", "home"})]
    assert shared.as_dict(frozenset({"work"})) == {
        **shared.as_dict(frozenset({"work"})),
        "added": 1,
        "unchanged": 1,
    }
    # home's was full: both its documents re-embedded, and nothing of work's counted in its answer.
    assert shared.as_dict(frozenset({"home"})) == {
        **shared.as_dict(frozenset({"home"})),
        "added": 2,
        "unchanged": 0,
    }


def test_a_readers_sync_of_some_folders_is_made_and_counted_by_the_primary_for_them(
    docs: Path, make_settings: Callable[..., Settings]
) -> None:
    """A reader forwards the folders of its sync: the primary walks and counts those only."""
    write(docs, "work/a.md", "# A\n\nalpha\n")
    write(docs, "home/b.md", "# B\n\nbeta\n")
    settings = make_settings(docs)
    primary = Engine(settings, "serve", docs_dir=docs)
    primary.start(background=False, initial_sync=False, watch=False)
    reader = Engine(settings, "serve", docs_dir=docs, takeover_interval_s=3600)
    try:
        primary.sync()
        reader.start(background=False, initial_sync=False, watch=False)
        assert (primary.role, reader.role) == ("primary", "reader")
        write(docs, "work/new.md", "# New\n\nnew work\n")
        write(docs, "home/new.md", "# New\n\nnew home\n")
        report = reader.sync(folders=frozenset({"work"}))
        assert report == {**report, "added": 1, "unchanged": 1, "removed": 0}
        assert primary.require_store().get_file("home/new.md") is None
        assert primary.require_store().get_file("work/new.md") is not None
    finally:
        reader.close()
        primary.close()


def test_a_writes_sync_covers_and_counts_the_writers_folder_only(
    docs: Path, make_settings: Callable[..., Settings]
) -> None:
    """A write syncs its own paths, then the tree of the writer's folder only: a change made outside in
    another folder waits for that folder's sync, and the report counts the writer's folder alone; the same
    for a reader's write, forwarded to the primary with its paths and its folders."""
    write(docs, "work/a.md", "# A\n\nalpha\n")
    write(docs, "home/b.md", "# B\n\nbeta\n")
    settings = make_settings(docs)
    primary = Engine(settings, "serve", docs_dir=docs)
    primary.start(background=False, initial_sync=False, watch=False)
    reader = Engine(settings, "serve", docs_dir=docs, takeover_interval_s=3600)
    try:
        primary.sync()
        reader.start(background=False, initial_sync=False, watch=False)
        assert (primary.role, reader.role) == ("primary", "reader")
        store = primary.require_store()
        for engine, n in ((primary, 1), (reader, 2)):
            write(docs, f"work/outside-{n}.md", "# Outside\n\nmade outside, in work\n")
            write(docs, f"home/outside-{n}.md", "# Outside\n\nmade outside, in home\n")
            with door.recording() as changed:
                door.save(docs / f"work/w{n}.md", f"work/w{n}.md", door.becomes(b"# W\n\nwritten\n"))
            synced = engine.sync_after_write(changed, folders=frozenset({"work"}))
            assert synced.pending is None, synced.pending
            assert synced.report is not None
            # The write's file and the work folder's change made outside; nothing of home.
            work_docs = sum(1 for _ in (docs / "work").glob("*.md"))
            assert (synced.report["added"], synced.report["removed"]) == (2, 0), synced.report
            assert synced.report["added"] + synced.report["unchanged"] == work_docs, synced.report
            assert store.get_file(f"work/outside-{n}.md") is not None
            assert store.get_file(f"home/outside-{n}.md") is None
        home = primary.sync(folders=frozenset({"home"}))
        assert (home["added"], home["unchanged"]) == (2, 1), home
    finally:
        reader.close()
        primary.close()


def test_symlinks_are_not_followed(docs: Path, tmp_path: Path, open_engine: OpenEngine) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret.md", "# Secret\n\nsecret words\n")
    (docs / "link").symlink_to(outside, target_is_directory=True)
    (docs / "file.md").symlink_to(outside / "secret.md")
    write(docs, "real.md", "# Real\n")
    engine = open_engine(docs)
    assert [f.path for f in engine.require_store().all_files()] == ["real.md"]


def test_single_flight_shares_one_follow_up(docs: Path, open_engine: OpenEngine) -> None:
    for i in range(30):
        write(docs, f"n{i}.md", f"# Note {i}\n\n" + "words and more words\n\n" * 40)
    engine = open_engine(docs, sync=False)
    indexer = engine.indexer
    assert indexer is not None
    gate = threading.Event()
    calls: list[bool] = []
    original = indexer.run

    def slow_run(request: SyncRequest) -> SyncReport:
        calls.append(request.full is None)  # a full sync of every folder
        gate.wait(5)
        return original(request)

    indexer.run = slow_run  # type: ignore[method-assign]
    first = indexer.request_sync()
    second = indexer.request_sync()
    third = indexer.request_sync(full=True)
    assert second is third
    assert first is not second
    gate.set()
    assert first.result(10).added == 30
    follow = second.result(10)
    assert follow.added == 30  # the follow-up was full: everything re-embedded
    assert calls == [False, True]
    assert not indexer.syncing


class GatedEmbedder(HashEmbedder):
    """The hash embedder, made to stop inside a sync until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()
        self.gate = False

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if self.gate:
            self.entered.set()
            assert self.release.wait(30)
        return super().embed_documents(texts)


def test_searches_never_wait_for_a_sync(docs: Path, make_settings: Callable[..., Settings]) -> None:
    write(docs, "a.md", "# Alpha\n\nquartz crystal\n")
    embedder = GatedEmbedder()
    engine = Engine(make_settings(docs), "stdio", docs_dir=docs, embedder=embedder)
    engine.start(background=False, initial_sync=False, watch=False)
    try:
        engine.sync()
        write(docs, "b.md", "# Beta\n\nquartz too\n")
        embedder.gate = True
        assert engine.indexer is not None
        pending = engine.indexer.request_sync()
        assert embedder.entered.wait(10)
        # The sync is stuck inside the embedder: a search still answers, from what is committed.
        hits = engine.search("quartz", FileFilter(), SearchOptions(top_k=5))
        assert [h.path for h in hits] == ["a.md"]
        assert engine.syncing
        embedder.release.set()
        assert pending.result(30).added == 1
        assert [h.path for h in engine.search("quartz", FileFilter(), SearchOptions(top_k=5))] == [
            "a.md",
            "b.md",
        ]
    finally:
        embedder.release.set()
        engine.close()


@pytest.mark.backends("sqlite")  # reads and writes SQLite's file itself
def test_rebuilds_when_the_embedder_changes(docs: Path, open_engine: OpenEngine, tmp_path: Path) -> None:
    write(docs, "a.md", "# A\n\nalpha\n")
    engine = open_engine(docs)
    engine.close()
    store = Store(tmp_path / "data", writable=True)
    assert store.read_meta()["embedder"] == "hash-384"
    assert store.ensure_meta(IndexMeta(embedder="other", dim=384, chunker_version=99)) is True
    assert store.all_files() == []
    store.close()
    engine2 = open_engine(docs, sync=False)
    assert engine2.require_store().read_meta()["embedder"] == "hash-384"
    assert engine2.sync()["added"] == 1


@pytest.mark.parametrize("full", [False, True])
def test_indexer_reports_progress(docs: Path, open_engine: OpenEngine, full: bool) -> None:
    for i in range(5):
        write(docs, f"n{i}.md", f"# N{i}\n\ntext {i}\n")
    engine = open_engine(docs, sync=False)
    indexer: Indexer | None = engine.indexer
    assert indexer is not None
    seen: list[tuple[int, int]] = []
    indexer.add_progress_listener(lambda p: seen.append((p.files_done, p.files_total)))
    indexer.sync(full)
    assert seen[-1] == (5, 5)


def test_a_write_answers_before_a_long_sync_ends(docs: Path, open_engine: OpenEngine) -> None:
    """A write waits a bounded time for its sync (a first index of a large folder takes minutes, longer than
    MCP clients wait): past it, the answer says the index has not caught up, and the sync still finishes."""
    for i in range(300):
        write(docs, f"bulk/{i}.md", f"# Note {i}\n\nbulk text number {i}\n")
    engine = open_engine(docs, sync=False)
    late = engine.sync_after_write(wait_s=0)
    assert late.report is None
    assert late.pending is not None
    assert late.pending.startswith("the index is still syncing")
    assert "the change is on disk" in late.pending
    assert late.pending.endswith("(ragdown_stats shows how far it is)")
    assert late.as_dict() == {"pending": late.pending}
    assert late.notes() == [late.pending]
    engine.sync()  # the one running, or its follow-up: every file indexed either way
    assert len(engine.require_store().all_files()) == 300
    on_time = engine.sync_after_write()
    assert on_time.pending is None
    assert on_time.notes() == []
    assert on_time.report is not None
    assert on_time.report["unchanged"] == 300


def test_a_first_index_commits_a_small_batch_first(docs: Path, open_engine: OpenEngine) -> None:
    """The first batch is `FIRST_BATCH_CHUNKS` and each next one twice as large: a first index with a model
    on the CPU is searchable (and its progress moves) within seconds instead of after a full batch."""
    for i in range(100):
        write(docs, f"n{i:03}.md", f"# Note {i}\n\nsmall text {i}\n")
    engine = open_engine(docs, sync=False)
    store = engine.require_store()
    seen_at_first: list[int] = []

    def on_progress(progress: SyncProgress) -> None:
        if progress.files_done == 1 and not seen_at_first:
            seen_at_first.append(len(store.all_files()))

    engine.add_progress_listener(on_progress)
    assert engine.sync()["added"] == 100
    assert seen_at_first == [FIRST_BATCH_CHUNKS]


def test_the_progress_reads_the_same_everywhere() -> None:
    """`/api/status` and `ragdown_stats` carry `as_dict`; a write's note and the web badge say `describe`."""
    files = SyncProgress(files_done=1200, files_total=9800, chunks=5000)
    assert files.as_dict() == {"files_done": 1200, "files_total": 9800, "chunks": 5000}
    assert files.describe() == "indexing 1,200 of 9,800 files"
    graph = SyncProgress(files_done=10, files_total=10, chunks=40, step="building the vector index")
    assert graph.as_dict() == {
        "files_done": 10,
        "files_total": 10,
        "chunks": 40,
        "step": "building the vector index",
    }
    assert graph.describe() == "building the vector index"
    busy = SyncProgress(files_done=0, files_total=1, at="parsing notes/big.md")
    assert busy.as_dict() == {"files_done": 0, "files_total": 1, "chunks": 0, "at": "parsing notes/big.md"}
    assert busy.describe() == "indexing 0 of 1 files: parsing notes/big.md"


HELD = "heldword"  # the backlog's word: `BacklogGate` stops on it


class BacklogGate(HashEmbedder):
    """The hash embedder, made to stop on the texts of a backlog (those holding `HELD`) until the test lets
    it go: the sync that embeds them is stuck, as behind a large document on a slow model; any other text
    is embedded at once."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if any(HELD in t for t in texts):
            self.entered.set()
            assert self.release.wait(60)
        return super().embed_documents(texts)


@pytest.fixture
def stuck(docs: Path, make_settings: Callable[..., Settings]) -> Iterator[tuple[Engine, BacklogGate]]:
    """A primary whose sync of a 40-note backlog is stuck in the embedder, the bytes of its first batch
    (`backlog/0.md` first) read; `a.md` indexed before it."""
    write(docs, "a.md", "# Alpha\n\nquartz crystal\n")
    gate = BacklogGate()
    engine = Engine(make_settings(docs), "stdio", docs_dir=docs, embedder=gate)
    engine.start(background=False, initial_sync=False, watch=False)
    try:
        engine.sync()
        for i in range(40):
            write(docs, f"backlog/{i}.md", f"# Note {i}\n\n{HELD} original{i}\n")
        yield engine, gate
    finally:
        gate.release.set()
        engine.close()


def top(engine: Engine, query: str) -> str:
    return engine.search(query, FileFilter(), SearchOptions(top_k=3))[0].path


def chunk_texts(engine: Engine, path: str) -> list[str]:
    store = engine.require_store()
    record = store.get_file(path)
    assert record is not None
    return [
        c.text for c in store.chunks_by_id([i for i, _ in store.chunk_ids_of_files([record.id])]).values()
    ]


@pytest.mark.anyio
async def test_a_write_is_indexed_and_answered_while_a_long_sync_is_stuck(
    docs: Path, stuck: tuple[Engine, BacklogGate]
) -> None:
    """A write syncs its own files beside a long sync, never after it: it answers without a pending note
    and is searchable while that sync is still stuck. The stuck sync, which read `backlog/0.md` before the
    write edited it, then leaves the edit's newer state alone; in the end every file is indexed as on disk."""
    engine, gate = stuck
    assert engine.indexer is not None
    long_sync = engine.indexer.request_sync()
    assert gate.entered.wait(30)
    # Its progress names what it is stuck on, not only "0 of 40 files".
    assert engine.progress is not None
    assert engine.progress.describe() == "indexing 0 of 40 files: embedding 16 files: 0 of 16 sections"
    tools = Endpoint(Runtime(engine.settings, engine), Scope(root=docs, folder=""))
    created = await tools.ok("ragdown_write", path="fresh.md", text="# Fresh\n\nzebra crossing\n")
    edit = [{"old_text": f"{HELD} original0", "new_text": "rewritten by a write"}]
    edited = await tools.ok("ragdown_edit", path="backlog/0.md", edits=edit)
    assert "note:" not in created + edited, (created, edited)
    assert engine.syncing  # the long sync is still stuck
    assert not long_sync.done()
    assert top(engine, "zebra crossing") == "fresh.md"
    assert chunk_texts(engine, "backlog/0.md") == ["rewritten by a write"]

    gate.release.set()
    report = long_sync.result(60)
    assert (report.added, report.updated) == (39, 0)  # backlog/0.md is the write's
    assert chunk_texts(engine, "backlog/0.md") == ["rewritten by a write"]
    store = engine.require_store()
    for path in ("backlog/0.md", "fresh.md", "backlog/39.md"):
        record = store.get_file(path)
        assert record is not None
        assert record.hash == hashlib.sha256((docs / path).read_bytes()).hexdigest()
    again = engine.sync()
    assert (again["added"], again["updated"], again["removed"], again["unchanged"]) == (0, 0, 0, 42)


def test_a_readers_write_is_synced_by_the_primary_beside_its_long_sync(
    docs: Path, make_settings: Callable[..., Settings], stuck: tuple[Engine, BacklogGate]
) -> None:
    """A reader forwards the paths its write changed: the primary syncs them alone, beside its stuck sync,
    and the reader's write answers with the index holding them."""
    primary, gate = stuck
    reader = Engine(
        make_settings(docs), "stdio", docs_dir=docs, embedder=HashEmbedder(), takeover_interval_s=3600
    )
    reader.start(background=False, initial_sync=False, watch=False)
    try:
        assert (primary.role, reader.role) == ("primary", "reader")
        assert primary.indexer is not None
        long_sync = primary.indexer.request_sync()
        assert gate.entered.wait(30)
        with door.recording() as changed:
            door.save(docs / "fresh.md", "fresh.md", door.becomes(b"# Fresh\n\nzebra crossing\n"))
            door.delete(docs / "a.md", "a.md")
        synced = reader.sync_after_write(changed)
        assert synced.pending is None, synced.pending
        assert synced.report is not None
        assert (synced.report["added"], synced.report["removed"]) == (1, 1)
        assert not long_sync.done()
        assert top(reader, "zebra crossing") == "fresh.md"
        assert reader.require_store().get_file("a.md") is None
        gate.release.set()
        assert long_sync.result(60).added == 40
    finally:
        reader.close()


@pytest.mark.anyio
async def test_no_tool_call_waits_for_a_sync_after_the_first(
    docs: Path, stuck: tuple[Engine, BacklogGate]
) -> None:
    """Every tool call starts with `wait_ready_async`, which gives the first sync a moment to end: once it
    has ended, a call never waits for a later sync (each search used to wait 2 s while any sync ran)."""
    engine, gate = stuck
    assert engine.indexer is not None
    long_sync = engine.indexer.request_sync()
    assert gate.entered.wait(30)
    with anyio.fail_after(60):
        await engine.wait_ready_async(first_sync_s=3600)
    assert not long_sync.done()


@pytest.mark.anyio
async def test_a_long_first_sync_holds_back_only_the_first_calls(
    docs: Path, make_settings: Callable[..., Settings]
) -> None:
    """The first sync's moment is counted from the first call and shared by every call after it: a first
    index that takes minutes makes the first calls wait that once, not every call while it runs."""
    for i in range(40):
        write(docs, f"backlog/{i}.md", f"# Note {i}\n\n{HELD} original{i}\n")
    gate = BacklogGate()
    engine = Engine(make_settings(docs), "stdio", docs_dir=docs, embedder=gate)
    engine.start(background=False, initial_sync=False, watch=False)
    try:
        assert engine.indexer is not None
        first = engine.indexer.request_sync()
        assert gate.entered.wait(30)
        with anyio.fail_after(60):
            await engine.wait_ready_async(first_sync_s=0)  # the first call: its moment is over at once
            await engine.wait_ready_async(first_sync_s=3600)  # a later one has no moment of its own
        assert not first.done()
    finally:
        gate.release.set()
        engine.close()
