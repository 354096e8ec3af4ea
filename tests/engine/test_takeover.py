"""A reader takes over the moment its primary goes: real processes, SIGKILL, SIGSTOP and clean exits.

Every reader here has a 1-hour periodic take-over, so only its connection to the primary's socket
(`PrimaryWatcher`) can make it the primary within a test. How fast is measured in `bench/takeover.py`; the
tests only give each step a generous deadline.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ragdown.core.config import Settings
from ragdown.engine.engine import Engine
from ragdown.search.hybrid import SearchOptions
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.sqlite.primary import PrimaryLock, PrimaryWatcher, socket_path
from tests.conftest import REPO, isolated_env, write

DEADLINE_S = 20.0
NO_PERIODIC_TAKEOVER_S = 3600.0


def eventually(check: Callable[[], bool], what: str, deadline_s: float = DEADLINE_S) -> None:
    deadline = time.monotonic() + deadline_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {deadline_s:.0f} s: {what}")
        time.sleep(0.02)


class EngineProcess:
    """`tests.storage.sqlite.primary_process` on the test's docs: an Engine in its own process, asked over stdin."""

    def __init__(self, env: dict[str, str], docs: Path, takeover_interval_s: float) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.storage.sqlite.primary_process",
                str(docs),
                str(takeover_interval_s),
            ],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.started_as = self._line().removeprefix("role ")
        assert self._line() == "synced"

    def _line(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def ask(self, command: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._line()

    def files_saying(self, word: str) -> set[str]:
        """The files whose hits for `word` hold it (the hash embedder's dense side returns others too)."""
        hits: list[tuple[str, str]] = json.loads(self.ask(f"search {word}"))
        return {path for path, text in hits if word in text}


@pytest.fixture
def env(tmp_path: Path, docs: Path) -> dict[str, str]:
    # No watcher anywhere: a file written while the primary runs stays unindexed until someone syncs, so
    # only a take-over's own sync can index it.
    return isolated_env(
        tmp_path, RAGDOWN_DOCS_DIR=str(docs), RAGDOWN_DATA_DIR=str(tmp_path / "data"), RAGDOWN_WATCH="false"
    )


@pytest.fixture
def spawn(env: dict[str, str], docs: Path) -> Iterator[Callable[..., EngineProcess]]:
    procs: list[EngineProcess] = []

    def start(takeover_interval_s: float = NO_PERIODIC_TAKEOVER_S) -> EngineProcess:
        proc = EngineProcess(env, docs, takeover_interval_s)
        procs.append(proc)
        return proc

    yield start
    for p in procs:
        if p.proc.poll() is None:
            with_signal(p.proc, signal.SIGCONT)
            p.proc.kill()
        p.proc.wait()
        for stream in (p.proc.stdin, p.proc.stdout):
            if stream is not None:
                stream.close()


def with_signal(proc: subprocess.Popen[str], sig: signal.Signals) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)


@pytest.fixture
def readers(env: dict[str, str], docs: Path) -> Iterator[Callable[[], Engine]]:
    """Readers in this process: no initial sync, no watcher (as a `ragdown index` or `search` would be)."""
    engines: list[Engine] = []

    def start() -> Engine:
        engine = Engine(
            Settings.from_env(env), "stdio", docs_dir=docs, takeover_interval_s=NO_PERIODIC_TAKEOVER_S
        )
        engines.append(engine)
        engine.start(background=False, initial_sync=False, watch=False)
        return engine

    yield start
    for engine in engines:
        engine.close()


def paths_found(engine: Engine, query: str) -> list[str]:
    return [hit.path for hit in engine.search(query, FileFilter(), SearchOptions(top_k=8))]


def attached_reader(start: Callable[[], Engine]) -> Engine:
    engine = start()
    assert engine.role == "reader"
    eventually(lambda: engine.watching_primary, "the reader attached to the primary's socket")
    return engine


def test_a_reader_takes_over_the_moment_the_primary_is_killed(
    docs: Path, spawn: Callable[..., EngineProcess], readers: Callable[[], Engine]
) -> None:
    write(docs, "doc.md", "# Doc\n\nthe first note\n")
    primary = spawn()
    assert primary.started_as == "primary"
    reader = attached_reader(readers)
    write(docs, "late.md", "# Late\n\nzebra crossing\n")
    assert "late.md" not in paths_found(reader, "zebra"), "the primary was not meant to index it"

    primary.proc.kill()
    primary.proc.wait()

    eventually(lambda: reader.role == "primary", "the reader became the primary")
    assert reader.indexer is not None
    # Started with initial_sync=False, but a take-over syncs at once: the primary never indexed late.md.
    eventually(lambda: "late.md" in paths_found(reader, "zebra"), "late.md became searchable")


def test_a_change_made_while_no_process_is_the_primary_is_indexed(
    docs: Path, spawn: Callable[..., EngineProcess]
) -> None:
    """The reader is stopped (SIGSTOP) while the primary dies and a file changes: nothing runs meanwhile."""
    write(docs, "doc.md", "# Doc\n\nthe first note\n")
    primary = spawn()
    reader = spawn()
    assert (primary.started_as, reader.started_as) == ("primary", "reader")
    eventually(lambda: reader.ask("watching") == "yes", "the reader attached to the primary's socket")

    reader.proc.send_signal(signal.SIGSTOP)
    primary.proc.kill()
    primary.proc.wait()
    write(docs, "doc.md", "# Doc\n\nrewritten while nobody was primary: walrus\n")
    write(docs, "meanwhile.md", "# Meanwhile\n\nwalrus tusks\n")
    reader.proc.send_signal(signal.SIGCONT)

    eventually(lambda: reader.ask("role") == "primary", "the reader became the primary")
    eventually(
        lambda: reader.files_saying("walrus") == {"doc.md", "meanwhile.md"},
        "both changes became searchable",
    )


def test_of_two_readers_one_takes_over_and_the_other_reattaches(
    docs: Path, spawn: Callable[..., EngineProcess], readers: Callable[[], Engine]
) -> None:
    write(docs, "doc.md", "# Doc\n\nthe first note\n")
    primary = spawn()
    first, second = attached_reader(readers), attached_reader(readers)

    primary.proc.kill()
    primary.proc.wait()

    eventually(lambda: "primary" in (first.role, second.role), "a reader became the primary")
    winner, loser = (first, second) if first.role == "primary" else (second, first)
    eventually(lambda: loser.watching_primary, "the other reader attached to the new primary")
    assert (winner.role, loser.role) == ("primary", "reader")
    assert loser.indexer is None

    # The other reader's sync is forwarded to the new primary, which indexes the file.
    winner.sync()  # the take-over's own sync done first, so the forwarded one is the one that adds
    write(docs, "other.md", "# Other\n\nforwarded to the new primary\n")
    report = loser.sync()
    assert report["added"] == 1
    assert loser.role == "reader"
    assert "other.md" in paths_found(loser, "forwarded")

    # And when the new primary closes, the last reader takes over in turn.
    winner.close()
    eventually(lambda: loser.role == "primary", "the last reader became the primary")


@pytest.mark.parametrize("how", ["stdin closed", "SIGTERM"])
def test_a_primary_that_exits_cleanly_hands_over(
    how: str, docs: Path, spawn: Callable[..., EngineProcess], readers: Callable[[], Engine]
) -> None:
    write(docs, "doc.md", "# Doc\n\nthe first note\n")
    primary = spawn()
    reader = attached_reader(readers)
    write(docs, "late.md", "# Late\n\nyak herding\n")

    if how == "SIGTERM":
        primary.proc.terminate()
    else:
        assert primary.proc.stdin is not None
        primary.proc.stdin.close()
    assert primary.proc.wait(timeout=DEADLINE_S) == 0  # a clean exit: Engine.close() ran

    eventually(lambda: reader.role == "primary", "the reader became the primary")
    eventually(lambda: "late.md" in paths_found(reader, "yak"), "late.md became searchable")


def test_closing_a_reader_ends_its_watch(
    docs: Path, spawn: Callable[..., EngineProcess], readers: Callable[[], Engine]
) -> None:
    write(docs, "doc.md", "# Doc\n\nthe first note\n")
    primary = spawn()
    reader = attached_reader(readers)
    reader.close()
    assert not [t for t in threading.enumerate() if t.name == "ragdown-primary-watch"]
    assert reader.role == "reader"
    assert primary.ask("role") == "primary"  # the primary goes on, its watching reader gone


# -- PrimaryWatcher against a PrimaryLock in this process ----------------------------------------------


def no_sync(full: bool, paths: list[str] | None, folders: frozenset[str] | None) -> dict[str, object]:
    raise AssertionError("no sync is forwarded in these tests")


class Calls:
    def __init__(self, result: bool) -> None:
        self.count = 0
        self.result = result
        self.event = threading.Event()

    def __call__(self) -> bool:
        self.count += 1
        self.event.set()
        return self.result


def test_a_watcher_hears_its_primary_release(tmp_path: Path) -> None:
    lock = PrimaryLock(tmp_path)
    assert lock.try_acquire(no_sync)
    gone = Calls(result=True)
    watcher = PrimaryWatcher(tmp_path, gone)
    watcher.start()
    try:
        assert watcher.wait_attached(DEADLINE_S)
        assert gone.count == 0
        lock.release()
        assert gone.event.wait(DEADLINE_S)
        eventually(lambda: not watcher.running, "the watcher's thread ended (on_gone said done)")
        assert gone.count == 1
    finally:
        watcher.stop()
        lock.release()


def test_stopping_a_watcher_hangs_up_without_calling_on_gone(tmp_path: Path) -> None:
    lock = PrimaryLock(tmp_path)
    assert lock.try_acquire(no_sync)
    gone = Calls(result=True)
    watcher = PrimaryWatcher(tmp_path, gone)
    watcher.start()
    try:
        assert watcher.wait_attached(DEADLINE_S)
        watcher.stop()
        assert not watcher.running
        assert not watcher.attached
        assert gone.count == 0
    finally:
        lock.release()


def test_a_watcher_with_no_primary_retries_then_leaves_it_to_the_periodic_check(tmp_path: Path) -> None:
    gone = Calls(result=False)  # "someone else is the primary", yet nobody binds the socket
    watcher = PrimaryWatcher(tmp_path, gone, retry_s=0.3)
    watcher.start()
    eventually(lambda: not watcher.running, "the watcher gave up")
    assert gone.count >= 2
    assert not watcher.attached


def test_a_primary_that_cannot_be_watched_is_left_to_the_periodic_check(tmp_path: Path) -> None:
    """An older primary answers the unknown op and hangs up: that is no reason to take over."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(socket_path(tmp_path)))
    server.listen(4)

    def old_primary() -> None:
        with server:
            conn, _ = server.accept()
            with conn:
                conn.makefile("rb").readline()
                conn.sendall(b'{"ok": false, "error": "unknown op \'watch\'"}\n')

    thread = threading.Thread(target=old_primary)
    thread.start()
    gone = Calls(result=False)
    watcher = PrimaryWatcher(tmp_path, gone)
    watcher.start()
    thread.join(DEADLINE_S)
    eventually(lambda: not watcher.running, "the watcher ended")
    assert gone.count == 0
