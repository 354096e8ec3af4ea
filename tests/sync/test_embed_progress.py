"""A long note's sections as they are embedded: the one progress object (`SyncProgress`) that `/api/status`,
`ragdown_stats`, a write's note, the log and the CLI's bar read says `embedding notes/big.md: 8 of 40
sections` while a model embeds one big file, not only "0 of 1 files" for minutes."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import anyio
import numpy as np
import pytest

from ragdown.access.scope import Scope
from ragdown.core.config import Settings
from ragdown.documents import parse_document
from ragdown.embedders import HashEmbedder, Vectors
from ragdown.embedders.base import tell_progress
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.sync.indexer import BYTES_PER_CHUNK, SHORT_SYNC_CHUNKS
from ragdown.sync.report import SyncProgress
from tests.conftest import write
from tests.mcpserver.conftest import Endpoint

HELD = "heldword"  # the long note's word: the gate stops after its first pass over it
PASS = 8  # texts per pass of the gate, as an ONNX model embeds 16 per pass


class PassingGate(HashEmbedder):
    """The hash embedder, embedding in passes of `PASS` texts and telling how far it is after each, as the
    ONNX models do (`tell_progress`); on the texts of the long note (those holding `HELD`) it stops after
    its first pass until the test lets it go: a sync stuck in the middle of a long note on a slow model."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        rows = []
        for start in range(0, len(texts), PASS):
            rows.append(super().embed_documents(texts[start : start + PASS]))
            tell_progress(min(start + PASS, len(texts)), len(texts))
            if start == 0 and any(HELD in t for t in texts):
                self.entered.set()
                assert self.release.wait(60)
        return np.concatenate(rows) if rows else super().embed_documents(texts)


def long_note(sections: int) -> str:
    """`sections` H2 sections of ~600 bytes: by its size (`SHORT_SYNC_CHUNKS`), a sync that a write does not
    wait for."""
    words = " ".join(f"word{j}" for j in range(90))
    return "# Big\n\n" + "".join(f"## Part {i}\n\n{HELD} part {i}: {words}.\n\n" for i in range(sections))


@pytest.fixture
def gated(docs: Path, make_settings: Callable[..., Settings]) -> Iterator[tuple[Engine, PassingGate]]:
    """A primary (folder-less `stdio`) embedding through the gate, `a.md` indexed."""
    write(docs, "a.md", "# Alpha\n\nquartz crystal\n")
    gate = PassingGate()
    engine = Engine(make_settings(docs), "stdio", docs_dir=docs, embedder=gate)
    engine.start(background=False, initial_sync=False, watch=False)
    try:
        engine.sync()
        yield engine, gate
    finally:
        gate.release.set()
        engine.close()


@pytest.fixture
def stuck(docs: Path, gated: tuple[Engine, PassingGate]) -> tuple[Engine, PassingGate, int]:
    """The primary with `notes/big.md` written, whose sync will be stuck after the first pass of its
    embedding. The engine, the gate and the note's sections."""
    engine, gate = gated
    text = long_note(40)
    write(docs, "notes/big.md", text)
    sections = len(parse_document("notes/big.md", text.encode()).chunks)
    assert sections > 2 * PASS
    return engine, gate, sections


@pytest.mark.anyio
async def test_a_long_note_shows_its_sections_embedded_while_a_write_elsewhere_answers(
    docs: Path, stuck: tuple[Engine, PassingGate, int]
) -> None:
    engine, gate, sections = stuck
    assert engine.indexer is not None
    heard: list[SyncProgress] = []
    engine.add_progress_listener(
        lambda p: heard.append(
            SyncProgress(p.files_done, p.files_total, at=p.at, sections_done=p.sections_done)
        )
    )
    long_sync = engine.indexer.request_sync()
    assert gate.entered.wait(30)
    progress = engine.progress
    assert progress is not None
    at = f"embedding notes/big.md: {PASS} of {sections} sections"
    assert progress.as_dict() == {
        "files_done": 0,
        "files_total": 1,
        "chunks": 0,
        "at": at,
        "sections_done": PASS,
        "sections_total": sections,
    }
    assert progress.describe() == f"indexing 0 of 1 files: {at}"
    assert progress.doing() == at  # the CLI's bar
    assert (heard[-1].files_done, heard[-1].at) == (0, at)  # listeners (the log, the bar) hear each pass
    tools = Endpoint(Runtime(engine.settings, engine), Scope(root=docs, folder=""))
    stats = json.loads(await tools.ok("ragdown_stats"))
    assert stats["progress"]["at"] == at
    assert (stats["progress"]["sections_done"], stats["progress"]["sections_total"]) == (PASS, sections)
    # A write to another note answers beside it, its note indexed, no "still syncing".
    written = await tools.ok("ragdown_write", path="fresh.md", text="# Fresh\n\nzebra crossing\n")
    assert "note:" not in written, written
    assert not long_sync.done()

    gate.release.set()
    assert long_sync.result(60).added == 1
    moved = [p.sections_done for p in heard if p.files_done == 0 and p.at]
    assert moved == sorted(moved)
    assert moved[-1] == sections
    done = [p for p in heard if p.files_total == 1 and p.files_done == 1]
    assert done
    assert done[0].at is None  # the file written: nothing under way


@pytest.mark.anyio
async def test_a_small_note_of_many_sections_does_not_hold_a_write_elsewhere_back(
    docs: Path, gated: tuple[Engine, PassingGate]
) -> None:
    """By its bytes (`BYTES_PER_CHUNK`, `SHORT_SYNC_CHUNKS`) a sync of this note looks short, but it parses into
    60 one-line sections: a model embeds them for as long as a big note's. A write elsewhere answers once
    the note is parsed, without waiting for its embedding: here the embedding waits for the write, and
    `RAGDOWN_WRITE_WAIT` (30 s) is past the guard's 20 s."""
    engine, gate = gated
    text = "# Many\n\n" + "".join(f"## P{i}\n\n{HELD} {i}\n\n" for i in range(60))
    assert len(text) // BYTES_PER_CHUNK <= SHORT_SYNC_CHUNKS
    write(docs, "notes/many.md", text)
    assert engine.indexer is not None
    long_sync = engine.indexer.request_sync()
    assert gate.entered.wait(30)
    tools = Endpoint(Runtime(engine.settings, engine), Scope(root=docs, folder=""))
    with anyio.fail_after(20):
        written = await tools.ok("ragdown_write", path="fresh.md", text="# Fresh\n\nzebra crossing\n")
    assert "note:" not in written, written
    assert not long_sync.done()
    gate.release.set()
    assert long_sync.result(60).added == 1


def test_another_folders_caller_hears_how_far_but_not_which_note() -> None:
    progress = SyncProgress(files_total=3, covers=frozenset({"ops", "hr"}))
    progress.by_folder = {"ops": [0, 1, 0], "hr": [0, 2, 0]}
    progress.embedding(1280, 4290, 1, "ops/big.md", "ops")
    assert progress.at == "embedding ops/big.md: 1,280 of 4,290 sections"
    ops = progress.of(frozenset({"ops"}))
    assert ops is not None
    assert ops.at == progress.at
    hr = progress.of(frozenset({"hr"}))
    assert hr is not None
    assert hr.as_dict() == {
        "files_done": 0,
        "files_total": 2,
        "chunks": 0,
        "at": "embedding: 1,280 of 4,290 sections",
        "sections_done": 1280,
        "sections_total": 4290,
    }
    progress.embedding(16, 256, 37, None, None)
    assert progress.describe() == "indexing 0 of 3 files: embedding 37 files: 16 of 256 sections"
    progress.clear_at()
    assert progress.as_dict() == {"files_done": 0, "files_total": 3, "chunks": 0}
    assert progress.doing() == "indexing"


def test_the_cli_bar_counts_the_last_notes_sections_while_they_are_embedded() -> None:
    from ragdown.cli.main import bar_counts

    progress = SyncProgress(files_total=3, files_done=1, chunks=40)
    assert bar_counts(progress) == (1, 3, "files · 40 chunks")
    progress.embedding(16, 256, 2, None, None)  # a batch of two files: the files still count
    assert bar_counts(progress) == (1, 3, "files · 40 chunks")
    progress.files_done = 2
    progress.embedding(1280, 4290, 1, "notes/big.md", None)  # the last file, a long note
    assert bar_counts(progress) == (1280, 4290, "sections")
    progress.clear_at()
    progress.files_done = 3
    assert bar_counts(progress) == (3, 3, "files · 40 chunks")
