"""Under `ragdown stdio` the docs dir is the folder: its own `.ragdown.json` quota holds for every write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import write
from tests.mcpserver.conftest import Connect

pytestmark = pytest.mark.anyio


async def test_the_docs_dirs_quota_holds_under_stdio(docs: Path, connect: Connect) -> None:
    write(docs, ".ragdown.json", json.dumps({"max_files": 2, "max_file_bytes": 100}))
    write(docs, "a.md", "# A\n")
    async with connect(docs) as session:
        saved = await session.ok("ragdown_remember", title="Note", content="short", name="n1")
        assert saved.endswith("\nquota: 2/2 files, 0.00 MB")
        refused = await session.error("ragdown_remember", title="Other", content="short", name="n2")
        assert "max_files" in refused
        assert "2/2 files" in refused
        big = await session.error("ragdown_write", path="a.md", text="x" * 200, base_hash=None, append=True)
        assert "max_file_bytes" in big
    assert sorted(p.name for p in docs.rglob("*.md")) == ["a.md", "n1.md"]
