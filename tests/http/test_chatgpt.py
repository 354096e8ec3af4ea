"""The `chatgpt` tool set (issue 26): OpenAI's `search`/`fetch` connector contract over HTTP, with a read key,
links into the web UI at the public URL or the request's address, and refusals that change nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import write
from tests.http.conftest import APP_URL, StartServer, ops_folder
from tests.http.test_mcp_http import mcp_client

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def call(client: Client, tool: str, **args: object) -> tuple[dict[str, Any], Any]:
    """OpenAI's contract: exactly one text item holding the answer as JSON, the same as structuredContent."""
    result = await client.call_tool(tool, dict(args))
    assert not result.is_error, result.content
    assert [c.type for c in result.content] == ["text"], result.content
    answer = json.loads(text_of(result))
    assert answer == result.structured_content
    return answer, result


async def test_search_then_fetch_in_openais_shapes_with_links_into_the_web_ui(
    docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    write(docs, "ops/guides/disks.md", "---\ntags: [storage]\n---\n# Disks\n\nReplace a failed disk.\n")
    server = start_app(docs)
    key = server.api.post("/api/keys", json={"name": "gpt", "folders": ["ops"], "role": "read"})
    assert key.status_code == 201, key.text
    async with mcp_client(server, "/mcp/ops?toolset=chatgpt", token=key.json()["secret"]) as client:
        tools = (await client.list_tools()).tools
        assert sorted(t.name for t in tools) == ["fetch", "search"]
        assert all(t.annotations is not None and t.annotations.read_only_hint for t in tools)
        assert [list(t.input_schema["properties"]) for t in sorted(tools, key=lambda t: t.name)] == [
            ["id"],
            ["query"],
        ]
        found, _ = await call(client, "search", query="replace a failed disk")
        assert list(found) == ["results"]
        results = found["results"]
        assert results
        assert all(list(r) == ["id", "title", "url"] for r in results)
        first = results[0]
        assert first["id"] == "guides/disks.md"
        assert first["title"] == "Disks"
        assert re.fullmatch(re.escape(f"{APP_URL}/#/d/ops/guides/disks.md?line=") + r"[46]", first["url"])
        assert len({r["id"] for r in results}) == len(results)  # one result per document
        doc, _ = await call(client, "fetch", id=first["id"])
        assert list(doc) == ["id", "title", "text", "url", "metadata"]
        assert doc["id"] == "guides/disks.md"
        assert doc["title"] == "Disks"
        assert doc["text"] == (docs / "ops/guides/disks.md").read_text()
        assert doc["url"] == f"{APP_URL}/#/d/ops/guides/disks.md"
        meta = doc["metadata"]
        assert (meta["folder"], meta["path"], meta["tags"]) == ("ops", "guides/disks.md", ["storage"])
        # Nothing found is an empty list, not an error.
        none, _ = await call(client, "search", query="zzqx-nothing-like-this")
        assert none["results"] == [] or all(r["id"] for r in none["results"])


async def test_the_public_url_makes_the_links_and_bad_ids_are_clear_errors(
    docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    write(docs, "secret.md", "# Outside the folder\n")
    server = start_app(docs, RAGDOWN_PUBLIC_URL="https://notes.example.com")
    async with mcp_client(server, "/mcp/ops?toolset=chatgpt") as client:
        found, _ = await call(client, "search", query="pg_restore")
        assert found["results"][0]["url"].startswith("https://notes.example.com/#/d/ops/backups.md?line=")
        for bad in ("missing.md", "../secret.md", "/etc/passwd"):
            result = await client.call_tool("fetch", {"id": bad})
            assert result.is_error, bad
            text = text_of(result)
            assert "Outside the folder" not in text
            assert "root:" not in text
        missing = await client.call_tool("fetch", {"id": "missing.md"})
        assert "pass an id from search's results" in text_of(missing)
        blank = await client.call_tool("search", {"query": "   "})
        assert blank.is_error
        assert "blank" in text_of(blank)


async def test_the_root_endpoint_searches_every_folder_the_key_sees(
    docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    write(docs, "lab/.ragdown.json", json.dumps({"title": "Lab", "mcp": True}))
    write(docs, "lab/restore-lab.md", "# Lab restore\n\nRun pg_restore in the lab.\n")
    server = start_app(docs, RAGDOWN_ROOT_MCP="true")
    made = server.api.post("/api/keys", json={"name": "gpt", "folders": ["ops"], "role": "read"})
    key = made.json()["secret"]
    async with mcp_client(server, "/mcp?toolset=chatgpt", token=key) as client:
        assert sorted(t.name for t in (await client.list_tools()).tools) == ["fetch", "search"]
        found, _ = await call(client, "search", query="pg_restore")
        assert [r["id"] for r in found["results"]] == ["ops/backups.md"]  # lab is not the key's
        assert found["results"][0]["url"].startswith(f"{APP_URL}/#/d/ops/backups.md?line=")
        doc, _ = await call(client, "fetch", id="ops/backups.md")
        assert (doc["metadata"]["folder"], doc["metadata"]["path"]) == ("ops", "backups.md")
        assert doc["text"] == (docs / "ops/backups.md").read_text()
        hidden = await client.call_tool("fetch", {"id": "lab/restore-lab.md"})
        assert hidden.is_error
        assert "Run pg_restore in the lab" not in text_of(hidden)
    async with mcp_client(server, "/mcp?toolset=chatgpt") as client:  # the admin sees both
        found, _ = await call(client, "search", query="pg_restore")
        assert {r["id"] for r in found["results"]} == {"ops/backups.md", "lab/restore-lab.md"}
