"""One size limit for every write (issue 8, fault 5): the indexer skips documents over 8 MiB, so no write
may make one; each write path refuses with the limit named, and nothing changes on disk."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.access.scope import Scope
from ragdown.core.paths import MAX_DOCUMENT_BYTES
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.http.errors import status_of
from tests.conftest import write
from tests.mcpserver.conftest import Endpoint

pytestmark = pytest.mark.anyio

TOO_BIG = "x" * (MAX_DOCUMENT_BYTES + 1)


@pytest.fixture
def end(docs: Path, open_engine: Callable[..., Engine]) -> Endpoint:
    write(docs, "note.md", "# Note\n\nsmall")
    engine = open_engine(docs)
    return Endpoint(Runtime(engine.settings, engine), Scope(root=docs, folder=""))


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


async def test_every_write_tool_refuses_a_document_past_the_limit(docs: Path, end: Endpoint) -> None:
    before = snapshot(docs)
    read = await end.ok("ragdown_read_doc", path="note.md")
    base = read.split("hash ", 1)[1].split(")", 1)[0]
    calls: list[tuple[str, dict[str, object]]] = [
        ("ragdown_write", {"path": "big.md", "text": TOO_BIG}),
        ("ragdown_write", {"path": "note.md", "text": TOO_BIG, "base_hash": base}),
        ("ragdown_write", {"path": "note.md", "text": TOO_BIG, "append": True}),
        ("ragdown_edit", {"path": "note.md", "edits": [{"old_text": "small", "new_text": TOO_BIG}]}),
        ("ragdown_remember", {"title": "Big", "content": TOO_BIG}),
    ]
    for name, args in calls:
        refused = await end.refusal(name, **args)
        assert (refused.kind, status_of(refused), refused.code) == ("too_large", 413, "too_large"), name
        assert "8 MiB" in refused.message, refused.message
        assert "8 MiB" in await end.error(name, **args)
    assert snapshot(docs) == before


async def test_a_document_at_the_limit_is_written_and_indexed(docs: Path, end: Endpoint) -> None:
    text = "# Big\n\nneedle words\n\n" + "y" * (MAX_DOCUMENT_BYTES - 100)
    text = text[:MAX_DOCUMENT_BYTES]
    answer = await end.ok("ragdown_write", path="big.md", text=text)
    assert answer.startswith("created big.md")
    listed = await end.ok("ragdown_list")
    assert "big.md — Big" in listed
