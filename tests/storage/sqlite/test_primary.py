"""Two real processes on one index: the primary indexes and watches, a reader searches and forwards."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ragdown.core.config import Settings
from ragdown.documents import CHUNKER_VERSION
from ragdown.engine.engine import Engine
from ragdown.search.hybrid import SearchOptions
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.records import INDEX_VERSION, IndexMeta, rebuild_message
from ragdown.storage.sqlite.primary import request, socket_path
from ragdown.storage.sqlite.store import DB_NAME
from tests.conftest import REPO, isolated_env, write

SECTIONS = 6


def versioned(version: int) -> str:
    body = "\n\n".join(f"## Part {i}\n\nmarker v{version} part {i}" for i in range(SECTIONS))
    return f"# Doc\n\n{body}\n"


@pytest.fixture
def env(tmp_path: Path, docs: Path) -> dict[str, str]:
    return isolated_env(
        tmp_path, RAGDOWN_DOCS_DIR=str(docs), RAGDOWN_DATA_DIR=str(tmp_path / "data"), RAGDOWN_WATCH="true"
    )


@pytest.fixture
def primary(env: dict[str, str], docs: Path) -> Iterator[Callable[[], subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []

    def start() -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.storage.sqlite.primary_process", str(docs)],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "role primary"
        assert proc.stdout.readline().strip() == "synced"
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def reader(env: dict[str, str], docs: Path) -> Engine:
    engine = Engine(Settings.from_env(env), "stdio", docs_dir=docs, takeover_interval_s=3600)
    engine.start(background=False, initial_sync=False, watch=False)
    return engine


def file_versions(engine: Engine, path: str) -> list[str]:
    """Every chunk of `path` as one snapshot sees it: the version marker each holds."""
    store = engine.require_store()
    with store.read_snapshot():
        record = store.get_file(path)
        if record is None:
            return []
        ids = [cid for cid, _ in store.chunk_ids_of_files([record.id])]
        texts = [c.text for c in store.chunks_by_id(ids).values()]
    return [t.split()[1] for t in texts if t.startswith("marker")]


def test_a_second_process_is_a_reader_that_sees_the_primarys_commits(
    env: dict[str, str], docs: Path, primary: Callable[[], subprocess.Popen[str]]
) -> None:
    write(docs, "doc.md", versioned(0))
    primary()
    engine = reader(env, docs)
    try:
        assert engine.role == "reader"
        assert engine.indexer is None
        assert set(file_versions(engine, "doc.md")) == {"v0"}

        # The primary's watcher re-indexes it; the reader sees the commit (how fast is not asserted here).
        write(docs, "doc.md", versioned(1))
        deadline = time.monotonic() + 20
        seen = False
        while not seen and time.monotonic() < deadline:
            hits = engine.search("marker v1 part", FileFilter(), SearchOptions(top_k=3))
            seen = bool(hits) and "v1" in hits[0].chunk.text
            time.sleep(0.05)
        assert seen, "the reader never saw the primary's re-index"

        # A sync asked of a reader runs in the primary.
        write(docs, "other.md", "# Other\n\nforwarded\n")
        report = engine.sync()
        assert report["added"] == 1
        assert engine.search("forwarded", FileFilter(), SearchOptions(top_k=1))[0].path == "other.md"
    finally:
        engine.close()


def test_a_reader_never_sees_part_of_a_file(
    env: dict[str, str], docs: Path, primary: Callable[[], subprocess.Popen[str]]
) -> None:
    write(docs, "doc.md", versioned(0))
    primary()
    engine = reader(env, docs)
    stop = threading.Event()
    torn: list[list[str]] = []
    looks = 0

    def watch() -> None:
        nonlocal looks
        while not stop.is_set():
            versions = file_versions(engine, "doc.md")
            looks += 1
            if len(versions) != SECTIONS or len(set(versions)) != 1:
                torn.append(versions)

    thread = threading.Thread(target=watch)
    thread.start()
    try:
        for version in range(1, 15):
            write(docs, "doc.md", versioned(version))
            engine.sync()
    finally:
        stop.set()
        thread.join()
        engine.close()
    assert looks > 50
    assert torn == []


def test_a_store_taken_before_a_take_over_still_answers(
    env: dict[str, str], docs: Path, primary: Callable[[], subprocess.Popen[str]]
) -> None:
    """A call that took the reader's store just before the take-over (a write linting what it wrote) finishes
    on it: the old store is retired, not closed under the call, and closed with the engine."""
    write(docs, "doc.md", versioned(0))
    proc = primary()
    engine = reader(env, docs)
    try:
        held = engine.require_store()
        proc.kill()
        proc.wait()
        assert engine.try_promote()
        assert engine.require_store() is not held
        assert held.get_file("doc.md") is not None
        held.generation()
    finally:
        engine.close()
    with pytest.raises(Exception, match="closed"):
        held.generation()


def test_a_take_over_that_cannot_open_the_index_lets_the_role_go_and_tries_again(
    env: dict[str, str], docs: Path, primary: Callable[[], subprocess.Popen[str]]
) -> None:
    """A reader that wins the lock but cannot open the index for writing (here its path is a directory
    for a while) stays a reader and lets the lock go, so no process holds the role without indexing; the
    next try, once the index opens, takes over."""
    write(docs, "doc.md", versioned(0))
    proc = primary()
    engine = reader(env, docs)
    data = Path(env["RAGDOWN_DATA_DIR"])
    index = data / DB_NAME
    away = data / "index-away.sqlite"
    try:
        index.rename(away)  # the reader's open connection keeps the file
        index.mkdir()
        proc.kill()
        proc.wait()
        assert not engine.try_promote()
        with engine._role_lock:  # the primary watcher may be trying too
            assert engine.role == "reader"
            assert not engine._lock.held
        assert engine.search("marker", FileFilter(), SearchOptions(top_k=3))  # still answers as a reader
        index.rmdir()
        away.rename(index)
        assert engine.try_promote()
        assert engine.role == "primary"
        write(docs, "new.md", "# New\n\ntaken over at last\n")
        engine.sync()
        assert engine.sync()["unchanged"] == 2
    finally:
        engine.close()


def test_a_dead_primarys_socket_is_taken_over(
    env: dict[str, str], docs: Path, primary: Callable[[], subprocess.Popen[str]]
) -> None:
    write(docs, "doc.md", versioned(0))
    proc = primary()
    engine = reader(env, docs)
    try:
        assert engine.role == "reader"
        proc.kill()
        proc.wait()
        assert engine.try_promote()  # the reader's watcher may have taken over already: True either way
        assert engine.role == "primary"
        # The stale socket was replaced by the reader's own, which answers.
        assert request(socket_path(Path(env["RAGDOWN_DATA_DIR"])), {"op": "ping"}, timeout=5.0)["ok"]
        engine.sync()  # the take-over's own sync done, so the next one is the one that finds new.md
        write(docs, "new.md", "# New\n\ntaken over\n")
        assert engine.sync()["added"] == 1
    finally:
        engine.close()


def test_a_reader_of_an_index_another_version_built_says_what_differs_and_what_rebuilds_it(
    env: dict[str, str], docs: Path, primary: Callable[[], subprocess.Popen[str]]
) -> None:
    """The primary is running, with the same embedder, but the index's chunker version is not this one's
    (another version of ragdown indexes it): the reader names the chunker versions, not the embedder it
    shares, and says the primary is the one to restart (it used to say `needs a rebuild for hash-384 (it
    holds hash-384): start the primary`)."""
    write(docs, "doc.md", versioned(0))
    primary()
    index = Path(env["RAGDOWN_DATA_DIR"]) / DB_NAME
    with sqlite3.connect(index) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'chunker_version'", (str(CHUNKER_VERSION - 1),))
    engine = reader(env, docs)
    try:
        assert engine.role == "reader"
        message = engine.error or ""
        assert message.startswith(
            f"the index at {index} was built with chunker version {CHUNKER_VERSION - 1}, not this version's "
            f"{CHUNKER_VERSION}: only the primary (the ragdown process indexing it, running now) rebuilds it; "
            "it is another version of ragdown, still running: restart it with this version"
        ), message
        assert "embedder" not in message
        assert "start the primary" not in message
        assert "`ragdown index --full`" in message
    finally:
        engine.close()


def test_a_rebuild_message_names_each_thing_that_differs() -> None:
    ours = IndexMeta(embedder="hash-384", dim=384, chunker_version=7)
    same = ours.as_dict()
    embedder = rebuild_message("X", {**same, "embedder": "bge-small", "dim": "768"}, ours)
    assert embedder.startswith(
        "the index at X was built with the embedder bge-small (768 dimensions), not this process's hash-384 "
        "(384 dimensions): "
    )
    assert "RAGDOWN_EMBEDDER" in embedder
    assert "version" not in embedder
    index = rebuild_message("X", {**same, "index_version": "1"}, ours)
    assert f"index version 1, not this version's {INDEX_VERSION}" in index
    assert "embedder" not in index
    both = rebuild_message("X", {**same, "embedder": "bge-small", "chunker_version": "6"}, ours)
    assert "the embedder bge-small" in both
    assert "chunker version 6, not this version's 7" in both
    assert "RAGDOWN_EMBEDDER=hash-384" in both
    assert "has not been built yet" in rebuild_message("X", {}, ours)
