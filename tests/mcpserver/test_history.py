"""Every change recoverable (issue 10): versions from every source, move and delete keep history, restore,
retention, several processes recording at once, and the data dir deleted with the history intact."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import re
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragdown.access.scope import Scope
from ragdown.core import atomic
from ragdown.core.errors import Refusal
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.history import HistoryStore
from ragdown.history.journal import observe_sync
from ragdown.tools.history import restore
from ragdown.tools.versions import followed, history_of, version_bytes
from ragdown.writes import door
from tests.conftest import write
from tests.mcpserver.conftest import Connect, Endpoint

pytestmark = pytest.mark.anyio


def endpoint(engine: Engine) -> Endpoint:
    return Endpoint(Runtime(engine.settings, engine), Scope(root=engine.root, folder=""))


def hash_of(answer: str) -> str:
    found = re.search(r"hash ([0-9a-f]{12})", answer)
    assert found, answer
    return found[1]


async def history(end: Endpoint, path: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(await end.ok("ragdown_history", path=path, format="json"))
    return body


async def test_each_source_makes_a_version_with_who_made_it(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, "note.md", "# Note\n\nfirst\n")
    engine = open_engine(docs)
    end = endpoint(engine)
    assert "no recorded versions yet" in await end.error("ragdown_history", path="note.md")
    assert not (docs / ".ragdown").exists()  # a first sync copies nothing into the history

    base = hash_of(await end.ok("ragdown_read_doc", path="note.md"))
    await end.ok("ragdown_write", path="note.md", text="# Note\n\nsecond\n", base_hash=base, session_id="s1")
    write(docs, "note.md", "# Note\n\nthird, from an editor\n")  # outside ragdown
    engine.sync()
    tmp = docs / ".note.md.git-tmp"  # a `git checkout`: a new file renamed over the old one
    tmp.write_text("# Note\n\nfourth, from git\n")
    os.replace(tmp, docs / "note.md")
    engine.sync()
    body = await history(end, "note.md")
    got = [(v["version"], v["event"], v["who"], v.get("session")) for v in body["versions"]]
    assert got == [
        (4, "changed", "external", None),
        (3, "changed", "external", None),
        (2, "changed", "ragdown_write", "s1"),
        (1, "original", "before", None),
    ]
    first = await end.ok("ragdown_read_doc", path="note.md", version=1)
    assert first.split("\n", 1)[1] == "# Note\n\nfirst\n"  # as it is in the file, its last line break too
    assert "version 1 of 4" in first.split("\n", 1)[0]
    diff = await end.ok("ragdown_diff", path="note.md", **{"from": 2, "to": 3})
    assert "-second" in diff
    assert "+third, from an editor" in diff
    against_disk = await end.ok("ragdown_diff", path="note.md", **{"from": 1}, context_lines=0)
    assert "+fourth, from git" in against_disk
    assert "(on disk)" in against_disk


async def test_move_and_delete_keep_the_history_and_a_deleted_document_comes_back(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, "a.md", "# A\n\none\n")
    write(docs, "link.md", "See [[a]].\n")
    engine = open_engine(docs)
    end = endpoint(engine)
    base = hash_of(await end.ok("ragdown_read_doc", path="a.md"))
    await end.ok("ragdown_write", path="a.md", text="# A\n\ntwo\n", base_hash=base)
    await end.ok("ragdown_move", **{"from": "a.md", "to": "sub/b.md"})
    moved = await history(end, "sub/b.md")
    assert [v["event"] for v in moved["versions"]] == ["moved", "changed", "original"]
    assert "no document a.md" in await end.error("ragdown_history", path="a.md")

    await end.ok("ragdown_delete", path="sub/b.md")
    assert not (docs / "sub/b.md").exists()
    trash = await end.ok("ragdown_list", deleted=True)
    assert "sub/b.md (deleted " in trash
    gone = await history(end, "sub/b.md")
    assert gone["deleted"] is True
    assert "in the trash" in await end.ok("ragdown_history", path="sub/b.md")
    assert "two" in await end.ok("ragdown_read_doc", path="sub/b.md", version=3)

    restored = await end.ok("ragdown_restore", path="sub/b.md", version=1)
    assert restored.startswith("restored sub/b.md to version 1 (saved as version 5)")  # v4: the delete
    assert (docs / "sub/b.md").read_text() == "# A\n\none\n"
    assert "sub/b.md" in await end.ok("ragdown_list")  # indexed again
    assert await end.ok("ragdown_list", deleted=True) == "The trash is empty."
    again = await history(end, "sub/b.md")
    assert again["deleted"] is False
    assert next(v["event"] for v in again["versions"]) == "restored"
    # A restore is a version like any other: it can be undone.
    await end.ok("ragdown_restore", path="sub/b.md", version=2)
    assert (docs / "sub/b.md").read_text() == "# A\n\ntwo\n"
    stale = await end.error("ragdown_restore", path="sub/b.md", version=1, base_hash="0" * 12)
    assert "changed" in stale


async def test_a_folder_deleted_whole_goes_to_the_trash(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, "proj/x.md", "# X\n")
    write(docs, "proj/deep/y.md", "# Y\n")
    engine = open_engine(docs)
    end = endpoint(engine)
    await end.ok("ragdown_delete", path="proj", recursive=True)
    trash = await end.ok("ragdown_list", deleted=True)
    assert "proj/x.md" in trash
    assert "proj/deep/y.md" in trash
    await end.ok("ragdown_restore", path="proj/deep/y.md", version=1)
    assert (docs / "proj/deep/y.md").read_text() == "# Y\n"


async def test_list_since_shows_what_changed(docs: Path, open_engine: Callable[..., Engine]) -> None:
    write(docs, "old.md", "# Old\n")
    past = time.time() - 3 * 86400
    os.utime(docs / "old.md", (past, past))
    write(docs, "new.md", "# New\n")
    engine = open_engine(docs)
    end = endpoint(engine)
    recent = await end.ok("ragdown_list", since="2h")
    assert "new.md" in recent
    assert "old.md" not in recent
    assert "old.md" in await end.ok("ragdown_list", since="1w")
    assert "not a time" in await end.error("ragdown_list", since="yesterday-ish")


async def test_read_doc_reads_several_paths_each_with_its_own_error(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, "a.md", "# A\n\nalpha\n")
    write(docs, "b.md", "# B\n\nbeta\n")
    end = endpoint(open_engine(docs))
    text = await end.ok("ragdown_read_doc", paths=["a.md", "missing.md", "b.md"])
    parts = text.split("\n\n")
    assert parts[0].startswith("a.md:1-3 of 3 (hash ")
    assert any(p.startswith("missing.md: error: no such document") for p in parts)
    assert "beta" in text
    assert "not both" in await end.error("ragdown_read_doc", path="a.md", paths=["b.md"])
    assert "paths" in await end.error("ragdown_read_doc", paths=[f"{i}.md" for i in range(11)])


def test_retention_keeps_recent_versions_and_the_last_of_each_document(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path, keep_days=30, keep=3)
    for i in range(8):
        store.record("a.md", f"version {i}".encode(), who="test")
    store.record("b.md", b"only", who="test")
    conn = store._conn()
    conn.execute("UPDATE versions SET at = at - 40 * 86400")  # all of it older than keep_days
    assert store.prune() == 5
    a = store.find_doc("a.md")
    b = store.find_doc("b.md")
    assert a is not None
    assert b is not None
    assert [v.version for v in store.versions(a)] == [8, 7, 6]
    assert [v.version for v in store.versions(b)] == [1]
    kept = {row[0] for row in conn.execute("SELECT hash FROM blobs")}
    assert kept == {v.hash for v in store.versions(a) + store.versions(b)}  # unused blobs dropped
    assert store.data(store.versions(a)[0]) == b"version 7"
    store.close()


def test_identical_versions_share_one_blob(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path)
    text = b"# Same\n" * 1000
    store.record("a.md", text, who="test")
    store.record("b.md", text, who="test")
    assert store.record("a.md", text, who="test") is None  # the same bytes again: no new version
    count = store._conn().execute("SELECT count(*) FROM blobs").fetchone()[0]
    assert count == 1
    store.close()


async def test_the_history_outlives_the_data_dir(tmp_path: Path, docs: Path, connect: Connect) -> None:
    write(docs, "note.md", "# Note\n\nfirst\n")
    async with connect(docs) as s:
        base = hash_of(await s.ok("ragdown_read_doc", path="note.md"))
        await s.ok("ragdown_write", path="note.md", text="# Note\n\nsecond\n", base_hash=base)
    shutil.rmtree(tmp_path / "data")
    async with connect(docs) as s:
        body = json.loads(await s.ok("ragdown_history", path="note.md", format="json"))
        assert [v["version"] for v in body["versions"]] == [2, 1]
        assert "first" in await s.ok("ragdown_read_doc", path="note.md", version=1)
        tools = set(await s.tool_names())
        assert {"ragdown_history", "ragdown_diff", "ragdown_restore"} <= tools
    async with connect(docs, RAGDOWN_READ_ONLY="true") as s:
        assert "ragdown_restore" not in await s.tool_names()


async def test_two_processes_record_at_once_and_nothing_is_lost(
    tmp_path: Path, docs: Path, connect_process: Connect
) -> None:
    """A primary and a reader (two `ragdown stdio` processes on one docs dir and data dir) writing at once."""
    for name in ("a", "b"):
        write(docs, f"{name}.md", f"# {name}\n\nv0\n")
    rounds = 12

    async def agent(name: str) -> None:
        async with connect_process(docs) as s:
            for i in range(1, rounds + 1):
                base = hash_of(await s.ok("ragdown_read_doc", path=f"{name}.md"))
                await s.ok("ragdown_write", path=f"{name}.md", text=f"# {name}\n\nv{i}\n", base_hash=base)

    await asyncio.gather(agent("a"), agent("b"))
    store = HistoryStore(docs)
    for name in ("a", "b"):
        doc = store.find_doc(f"{name}.md")
        assert doc is not None
        texts = [store.data(v).decode() for v in reversed(store.versions(doc))]
        assert texts == [f"# {name}\n\nv{i}\n" for i in range(rounds + 1)]  # v0 as the original, then each
    store.close()


def versions_of(store: HistoryStore, path: str) -> list[bytes]:
    doc = store.find_doc(path)
    assert doc is not None
    return [store.data(v) for v in reversed(store.versions(doc))]


def test_a_sync_that_reads_a_write_in_flight_leaves_its_versions_to_the_write(tmp_path: Path) -> None:
    """The race two processes hit: a write through the door has put v1 on disk and is about to record it
    (with v0 as its original) when another process's sync reads v1 and records it as an external change.
    The sync records under the document's lock, so it waits, finds the write's version and adds nothing."""
    docs = tmp_path / "docs"
    write(docs, "n.md", "v0")
    store = HistoryStore(docs)
    target = docs / "n.md"
    on_disk = threading.Event()

    def door_write() -> None:
        with door.document_lock(target):
            atomic.replace(target, b"v1")
            on_disk.set()
            time.sleep(0.3)  # the sync reads v1 meanwhile and would record it first
            store.record("n.md", b"v1", who="ragdown_write", event="changed", before=b"v0")

    writer = threading.Thread(target=door_write)
    writer.start()
    assert on_disk.wait(10)
    observe_sync(store, [("n.md", b"v1")], [], [], root=docs, lock=door.document_lock)
    writer.join()
    assert versions_of(store, "n.md") == [b"v0", b"v1"]
    # Bytes the sync read that a later write has replaced are left to that write (or the next sync).
    observe_sync(store, [("n.md", b"v0-stale")], [], [], root=docs, lock=door.document_lock)
    assert versions_of(store, "n.md") == [b"v0", b"v1"]
    store.close()


def test_history_off_records_nothing(docs: Path, open_engine: Callable[..., Engine]) -> None:
    write(docs, "a.md", "# A\n")
    engine = open_engine(docs, RAGDOWN_HISTORY="false")
    assert engine.history is None
    end = endpoint(engine)

    async def run() -> None:
        text = await end.error("ragdown_history", path="a.md")
        assert "RAGDOWN_HISTORY=false" in text

    asyncio.run(run())
    assert not (docs / ".ragdown").exists()


@pytest.mark.parametrize("existing", [False, True])
def test_every_file_of_the_history_is_owner_only(tmp_path: Path, existing: bool) -> None:
    """The WAL holds the documents' text too: SQLite gives it (and the -shm) the main file's mode, so the
    main file is 0600 before SQLite opens it, whatever the umask; a file left 0644 by an older ragdown too."""
    history = tmp_path / ".ragdown" / "history.sqlite"
    if existing:
        history.parent.mkdir()
        history.touch(mode=0o644)
        history.chmod(0o644)
    old = os.umask(0o022)
    try:
        store = HistoryStore(tmp_path)
        store.record("a.md", b"# A\n\nsecret text\n", who="ragdown_write", event="created")
        files = sorted(history.parent.glob("history.sqlite*"))
        assert {f.name for f in files} >= {"history.sqlite", "history.sqlite-wal", "history.sqlite-shm"}
        assert {f.name: oct(f.stat().st_mode & 0o777) for f in files} == {f.name: "0o600" for f in files}
        store.close()
    finally:
        os.umask(old)


def test_concurrent_changes_leave_every_acknowledged_version_reachable(
    docs: Path, open_engine: Callable[..., Engine], caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 2's stress: writes, creates, moves, deletes and restores on a few paths from several threads at
    once, through the write door. Afterwards every version a change acknowledged can be read through the
    history (the trash, and the documents on disk), and every document in the trash can be restored."""
    engine = open_engine(docs)
    ctx = endpoint(engine).ctx
    names = ["a.md", "b.md", "c.md", "sub/d.md"]
    acknowledged: set[bytes] = set()
    guard = threading.Lock()

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        for i in range(40):
            name, other = rng.sample(names, 2)
            path = docs / name
            journal = ctx.journal(f"w{seed}")
            data = f"# {name}\n\nworker {seed} change {i}\n".encode()
            try:
                match rng.choice(["save", "save", "create", "delete", "move", "restore"]):
                    case "save":
                        door.save(path, name, door.becomes(data), journal=journal)
                    case "create":
                        door.create(path, data, name, journal=journal)
                    case "delete":
                        door.delete(path, name, journal=journal)
                        continue
                    case "move":
                        door.move(path, docs / other, other, journal=journal)
                        continue
                    case _:
                        entries = history_of(ctx).trash()
                        target = rng.choice([e.path for e in entries] or [name])
                        f = followed(ctx, target)
                        restore(ctx, target, rng.choice(f.versions).version, None, "restore")
                        continue
            except (Refusal, FileNotFoundError):
                continue  # the path was taken or gone meanwhile: refused, nothing acknowledged
            with guard:
                acknowledged.add(data)

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    store = history_of(ctx)
    reachable: set[bytes] = set()
    on_disk = [p.relative_to(docs).as_posix() for p in docs.rglob("*.md") if ".ragdown" not in p.parts]
    trashed = [e.path for e in store.trash()]
    for name in on_disk + trashed:
        reachable |= {version_bytes(ctx, v) for v in followed(ctx, name).versions}
    assert acknowledged - reachable == set()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []  # all recorded
    for name in trashed:
        f = followed(ctx, name)
        restore(ctx, name, f.versions[0].version, None, "restore")
        assert (docs / name).read_bytes() == version_bytes(ctx, f.versions[0])
