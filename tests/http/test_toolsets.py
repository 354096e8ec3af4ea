"""Choosing a folder's tool set over HTTP (issue 9): `?toolset=` on the MCP URL over the folder's `toolset`
setting over `RAGDOWN_TOOLSET`; unions; unknown sets refused; the root endpoint keeps ragdown's tools."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.conftest import write
from tests.http.conftest import StartServer, ops_folder
from tests.http.test_mcp_http import mcp_client

pytestmark = pytest.mark.anyio

MARKINDEX = [
    "browse_documents",
    "get_document",
    "get_document_structure",
    "get_node_content",
    "search_documents",
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def names(server: object, path: str) -> list[str]:
    async with mcp_client(server, path) as client:  # type: ignore[arg-type]
        return sorted(t.name for t in (await client.list_tools()).tools)


async def test_the_url_wins_over_the_folder_and_the_folder_over_the_variable(
    docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    write(docs, "lab/notes.md", "# Notes\n\nA lab note.")
    write(docs, "lab/.ragdown.json", json.dumps({"mcp": True, "toolset": "markindex"}))
    server = start_app(docs, RAGDOWN_TOOLSET="ragdown")
    ops = await names(server, "/mcp/ops")
    assert "ragdown_recall" in ops
    assert "browse_documents" not in ops
    assert await names(server, "/mcp/lab") == MARKINDEX
    assert await names(server, "/mcp/ops?toolset=markindex") == MARKINDEX
    both = await names(server, "/mcp/lab?toolset=ragdown,markindex")
    assert set(MARKINDEX) <= set(both)
    assert "ragdown_outline" in both
    async with mcp_client(server, "/mcp/lab") as client:
        assert "[doc_path, L<start>-<end>]" in (client.instructions or "")
        result = await client.call_tool("browse_documents", {})
        body = json.loads("".join(getattr(c, "text", "") for c in result.content))
        assert [d["doc_path"] for d in body["data"]["documents"]] == ["notes.md"]


async def test_the_variable_is_the_default_of_folders_without_one(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    server = start_app(docs, RAGDOWN_TOOLSET="markindex")
    assert await names(server, "/mcp/ops") == MARKINDEX


def test_an_unknown_tool_set_is_a_400_and_the_root_endpoint_keeps_its_own(
    docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    server = start_app(docs, RAGDOWN_ROOT_MCP="true")
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    api = server.api
    unknown = api.post("/mcp/ops?toolset=nope", json=ping, headers=headers)
    assert unknown.status_code == 400
    assert "unknown tool set" in unknown.json()["error"]
    assert api.post("/mcp?toolset=markindex", json=ping, headers=headers).status_code == 400


def test_a_folders_tool_set_is_set_and_checked_through_the_api(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    api: httpx.Client = start_app(docs).api
    changed = api.patch("/api/folders/ops", json={"toolset": "MarkIndex, ragdown"})
    assert changed.status_code == 200, changed.text
    assert changed.json()["folder"]["toolset"] == "markindex,ragdown"
    assert json.loads((docs / "ops/.ragdown.json").read_text())["toolset"] == "markindex,ragdown"
    refused = api.patch("/api/folders/ops", json={"toolset": "nope"})
    assert refused.status_code == 400
    cleared = api.patch("/api/folders/ops", json={"toolset": None})
    assert "toolset" not in cleared.json()["folder"]
    assert "toolset" not in json.loads((docs / "ops/.ragdown.json").read_text())
