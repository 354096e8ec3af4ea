"""Plain-text files put in the folder by hand (issue 21): indexed as the index's walk finds them, on both
stores, as one body of text (never parsed as Markdown, titled by the file's name); hidden ones (an
Obsidian vault's `.obsidian/*.json`) and other extensions left out; binary or non-UTF-8 ones skipped with
the reason."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.access.scope import Scope
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.search.hybrid import SearchOptions
from ragdown.storage.filter_sql import FileFilter
from tests.conftest import BOTH_BACKENDS, write
from tests.mcpserver.conftest import Endpoint

INDEX_BACKENDS = BOTH_BACKENDS
pytestmark = pytest.mark.anyio


async def test_hand_placed_plain_text_is_indexed_as_text_and_binary_is_skipped(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, "note.md", "# Note\n\nSee [[todo.txt]].\n")
    write(docs, "lists/todo.txt", "# not a heading\n\n[[note]] #nottag quokka\n")
    write(docs, "data.JSON", '{"city": "ulaanbaatar"}')
    write(docs, "long.txt", "\n\n".join(f"paragraph {i} " + "word " * 60 for i in range(20)))
    write(docs, ".obsidian/app.json", '{"theme": "moonstone"}')
    write(docs, "photo.png", "not a document")
    write(docs, "blob.txt", b"text\x00binary")
    write(docs, "latin.csv", b"caf\xe9,1\n")
    engine = open_engine(docs)
    store = engine.require_store()
    files = {f.path: f for f in store.all_files()}
    assert sorted(files) == ["data.JSON", "lists/todo.txt", "long.txt", "note.md"]
    todo = files["lists/todo.txt"]
    assert (todo.title, todo.tags, todo.aliases) == ("todo.txt", (), ())
    assert (todo.chunk_count, files["data.JSON"].chunk_count) == (1, 1)
    assert files["long.txt"].chunk_count > 1  # a long body is chunked by size, at blank lines

    hits = engine.search("quokka", FileFilter(), SearchOptions(top_k=3))
    assert hits[0].path == "lists/todo.txt"
    assert (hits[0].chunk.breadcrumb, hits[0].chunk.start_line) == ("todo.txt", 1)
    assert not [
        h for h in engine.search("moonstone", FileFilter(), SearchOptions(top_k=9)) if "lexical" in h.sources
    ]

    end = Endpoint(Runtime(engine.settings, engine), Scope(root=docs, folder=""))
    stats = json.loads(await end.ok("ragdown_stats", include_files=True))
    reasons = {item["path"]: item["reason"] for item in stats["skipped_files"]}
    assert reasons == {
        "blob.txt": "binary content (NUL bytes), not text",
        "latin.csv": "not UTF-8 text (byte 3): plain-text files are read as UTF-8 only",
    }
    # Its one body: what looks like a heading, a wikilink or a tag is text.
    outline = await end.ok("ragdown_outline", path="lists/todo.txt")
    assert "not a heading" not in outline
    assert "lists/todo.txt" not in await end.ok("ragdown_backlinks", path="note.md")
    assert "note.md" in await end.ok("ragdown_backlinks", path="lists/todo.txt")

    # Fixed by hand, the file is indexed at the next sync.
    write(docs, "latin.csv", "café,1\n")
    report = engine.sync()
    assert report["added"] == 1
    assert "latin.csv" in {f.path for f in store.all_files()}
