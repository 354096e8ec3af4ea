"""Eight agents editing one document at once, each through its own `ragdown stdio` process.

That is several Claude Code windows on one folder: one process per window, all on the same docs dir and
data dir. The first becomes the primary; the others are readers that forward their syncs to it. Every
change carries the `base_hash` its agent read, so each is either written in full over the version it was
made to, or refused as a conflict ("changed"): none is lost, and no reader ever sees a torn file.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest

from tests.conftest import write
from tests.mcpserver.conftest import Session, stdio_params, stdio_session

pytestmark = pytest.mark.anyio

SESSIONS = 8
CALLS = 25
HEAD = "# Shared\n"
DOC = "shared.md"
MARKER = re.compile(r"- s(\d+)-c(\d+) ok")
HASH = re.compile(r"hash ([0-9a-f]{12})")


def marker(session: int, call: int) -> str:
    return f"- s{session}-c{call:02d} ok"


def short(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]


def markers_in(text: str) -> list[str]:
    """The marker lines of one version of the document; anything else there means it was torn."""
    lines = text.split("\n")
    assert lines[0] == HEAD.rstrip("\n"), text
    assert text.endswith("\n"), text
    found: list[str] = []
    for line in lines[1:]:
        if line == "":
            continue
        assert MARKER.fullmatch(line), f"not a complete marker line: {line!r}"
        found.append(line)
    return found


@dataclass
class Outcomes:
    accepted: dict[str, str] = field(default_factory=dict)  # marker -> hash of the file it wrote
    refused: dict[str, str] = field(default_factory=dict)  # marker -> message


class Poller:
    """Reads the document over and over from another thread, keeping every distinct version seen."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seen: set[bytes] = set()
        self.reads = 0
        self.errors: list[OSError] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.seen.add(self.path.read_bytes())
            except OSError as err:  # the document missing, even for an instant, is a failure too
                self.errors.append(err)
            self.reads += 1

    def __enter__(self) -> Poller:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


async def change(s: Session, session: int, call: int, out: Outcomes) -> None:
    """Read the current version, then change it over that version: rewrite, edit or append by turns."""
    read = await s.ok("ragdown_read_doc", path=DOC)
    header, body = read.split("\n", 1)
    found = HASH.search(header)
    assert found is not None, header
    base = found[1]
    line = marker(session, call)
    kind = (session + call) % 3
    if kind == 0:
        text, error = await s.call(
            "ragdown_write", path=DOC, text=f"{body.rstrip()}\n{line}\n", base_hash=base
        )
    elif kind == 1:
        edits = [{"old_text": HEAD, "new_text": f"{HEAD}{line}\n"}]
        text, error = await s.call("ragdown_edit", path=DOC, edits=edits, base_hash=base)
    else:
        text, error = await s.call("ragdown_write", path=DOC, text=line, append=True, base_hash=base)
    if error:
        assert "changed" in text, f"refused for another reason than a conflict: {text}"
        out.refused[line] = text
        return
    written = HASH.search(text)
    assert written is not None, text
    out.accepted[line] = written[1]


async def test_concurrent_agents_never_lose_a_change_or_tear_the_file(tmp_path: Path, docs: Path) -> None:
    path = write(docs, DOC, HEAD)
    initial = short(path.read_bytes())
    data = tmp_path / "data"
    out = Outcomes()
    connected = [anyio.Event() for _ in range(SESSIONS)]
    go = anyio.Event()
    finished = 0
    all_done = anyio.Event()
    roles: dict[int, str] = {}

    async def agent(session: int) -> None:
        nonlocal finished
        async with stdio_session(stdio_params(tmp_path, docs, data)) as s:
            roles[session] = json.loads(await s.ok("ragdown_stats"))["role"]
            connected[session].set()
            await go.wait()
            try:
                for call in range(CALLS):
                    await change(s, session, call, out)
            finally:
                finished += 1
                if finished == SESSIONS:
                    all_done.set()
            # Stay up until every agent is done, so the primary is there for the readers' syncs.
            await all_done.wait()

    with Poller(path) as poller:
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent, 0)
            await connected[0].wait()  # the first process becomes the primary
            for session in range(1, SESSIONS):
                tg.start_soon(agent, session)
            for event in connected:
                await event.wait()
            go.set()

    assert roles == {0: "primary", **dict.fromkeys(range(1, SESSIONS), "reader")}
    assert len(out.accepted) + len(out.refused) == SESSIONS * CALLS
    assert out.accepted, "every change was refused"

    final = path.read_text()
    in_file = markers_in(final)
    assert len(in_file) == len(set(in_file))
    # No lost update: every accepted change is in the final file, and no refused one is.
    assert set(in_file) == set(out.accepted)
    # No torn file: every version a reader saw is one that a tool call wrote in full.
    written = {initial, *out.accepted.values()}
    assert poller.reads > 0
    assert poller.errors == []
    for version in poller.seen:
        markers_in(version.decode())
        assert short(version) in written, version
    assert short(path.read_bytes()) in written


async def test_a_reader_takes_over_when_the_primary_leaves_and_no_change_fails(
    tmp_path: Path, docs: Path
) -> None:
    """A Claude Code window closes: its process was the primary. The others go on writing; one of them
    takes over the index, and none of their writes is reported as failed (each is written or refused)."""
    path = write(docs, DOC, HEAD)
    data = tmp_path / "data"
    out = Outcomes()
    readers = 3
    primary_up = anyio.Event()
    readers_up = [anyio.Event() for _ in range(readers)]
    readers_done = [anyio.Event() for _ in range(readers)]
    roles_read = [anyio.Event() for _ in range(readers)]
    primary_gone = anyio.Event()
    roles: dict[int, str] = {}

    async def primary() -> None:
        async with stdio_session(stdio_params(tmp_path, docs, data)) as s:
            assert json.loads(await s.ok("ragdown_stats"))["role"] == "primary"
            primary_up.set()
            for event in readers_up:
                await event.wait()
            for call in range(3):
                await change(s, 0, call, out)
        primary_gone.set()

    async def reader(session: int) -> None:
        async with stdio_session(stdio_params(tmp_path, docs, data)) as s:
            assert json.loads(await s.ok("ragdown_stats"))["role"] == "reader"
            readers_up[session - 1].set()
            await primary_gone.wait()
            for call in range(8):
                await change(s, session, call, out)
            # Every reader still up: exactly one of them is now the primary.
            readers_done[session - 1].set()
            for event in readers_done:
                await event.wait()
            roles[session] = json.loads(await s.ok("ragdown_stats"))["role"]
            roles_read[session - 1].set()
            for event in roles_read:
                await event.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(primary)
        await primary_up.wait()
        for session in range(1, readers + 1):
            tg.start_soon(reader, session)

    assert sorted(roles.values()).count("primary") == 1, roles
    assert len(out.accepted) + len(out.refused) == 3 + readers * 8
    assert set(markers_in(path.read_text())) == set(out.accepted)
