"""The `chatgpt` tool set over stdio (issue 26): with no server address, a result's `url` is its file's URI,
so ChatGPT-style clients still get a citable, non-empty link."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import write
from tests.mcpserver.conftest import Connect

pytestmark = pytest.mark.anyio


async def test_search_and_fetch_over_stdio_link_the_files(docs: Path, connect: Connect) -> None:
    write(docs, "guides/restore.md", "# Restore\n\nRun pg_restore twice.\n")
    async with connect(docs, RAGDOWN_TOOLSET="chatgpt") as s:
        assert await s.tool_names() == ["fetch", "search"]
        found = json.loads(await s.ok("search", query="pg_restore"))
        assert found["results"][0]["id"] == "guides/restore.md"
        assert found["results"][0]["url"] == (docs / "guides/restore.md").as_uri()
        doc = json.loads(await s.ok("fetch", id="guides/restore.md"))
        assert doc["text"] == "# Restore\n\nRun pg_restore twice.\n"
        assert doc["metadata"]["path"] == "guides/restore.md"
        assert "folder" not in doc["metadata"]
