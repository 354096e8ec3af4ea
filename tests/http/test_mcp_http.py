"""MCP over streamable HTTP on folder, subfolder and root endpoints, through the official SDK client: to the
app of `ragdown serve` in-process (`start_app`, the SDK's HTTP client on an ASGI transport), and to a real
`ragdown serve` process (`start_server`) for one endpoint end to end and for a second process on the index."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import write
from tests.http.conftest import TOKEN, Server, StartServer, ops_folder

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def mcp_client(server: Server, path: str, token: str | None = TOKEN) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        server.mcp_http(headers) as http,
        Client(streamable_http_client(server.url + path, http_client=http)) as client,
    ):
        yield client


async def text_of(client: Client, tool: str, **args: object) -> str:
    result = await client.call_tool(tool, dict(args))
    assert not result.is_error, result.content
    return "".join(getattr(c, "text", "") for c in result.content)


async def test_answers_tool_calls_with_the_folders_name_and_title(
    docs: Path, start_server: StartServer
) -> None:
    ops_folder(docs)
    server = start_server(docs)
    async with mcp_client(server, "/mcp/ops") as client:
        assert client.server_info is not None
        assert client.server_info.name == "ragdown-ops"
        assert '"Operations"' in (client.instructions or "")
        text = await text_of(client, "ragdown_recall", query="restore twice", top_k=1)
        assert text.startswith("[1] backups.md:7-7 — Backups › Restore (similarity ")


async def test_each_mcp_folder_and_subfolder_is_served_and_nothing_of_a_human_only_one(
    docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    write(docs, "ops/projects/alpha/plan.md", "# Plan\n\nalpha launch plan\n")
    write(docs, "ops/projects/alpha-old/plan.md", "# Old plan\n\nalpha launch plan\n")
    write(docs, "home/secret.md", "# Secret\n\nalpha launch plan\n")
    server = start_app(docs)
    async with mcp_client(server, "/mcp/ops/projects/alpha") as client:
        hits = json.loads(await text_of(client, "ragdown_recall", query="alpha launch plan", format="json"))[
            "hits"
        ]
        assert [h["path"] for h in hits] == ["plan.md"]
        stats = json.loads(await text_of(client, "ragdown_stats"))
        assert (stats["files"], stats["scope"]) == (1, str(docs.resolve() / "ops/projects/alpha"))
        saved = await text_of(client, "ragdown_remember", title="Note", content="in the subfolder", name="n")
        assert saved == "saved n.md"
        assert (docs / "ops/projects/alpha/n.md").exists()
    async with mcp_client(server, "/mcp/ops") as client:
        saved = await text_of(client, "ragdown_remember", title="Note", content="in notes", name="n")
        assert saved == "saved notes/n.md"
    api = server.api
    human = api.post("/mcp/home", json={})
    missing = api.post("/mcp/nope", json={})
    assert (human.status_code, missing.status_code) == (404, 404)
    assert human.json() == missing.json()
    for bad in ("/mcp/ops/missing", "/mcp/ops/backups.md", "/mcp/.git", "/mcp/ops/%ff"):
        assert api.post(bad, json={}).status_code == 404, bad
    bare = api.post("/mcp", json={})
    assert bare.status_code == 404
    assert bare.json() == {"error": "Pick a folder: /mcp/<folder>"}


async def test_the_root_endpoint_serves_every_mcp_folder(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    write(docs, "home/secret.md", "# Secret\n\nrestore the garden\n")
    server = start_app(docs, RAGDOWN_ROOT_MCP="true")
    async with mcp_client(server, "/mcp") as client:
        assert client.server_info is not None
        assert client.server_info.name == "ragdown"
        names = sorted(t.name for t in (await client.list_tools()).tools)
        assert "ragdown_folders" in names
        assert "ragdown_create_folder" in names
        assert await text_of(client, "ragdown_folders") == "ops — Operations (1 document)"
        text = await text_of(client, "ragdown_recall", query="restore", top_k=2)
        assert text.startswith("[1] [ops] backups.md:")
        assert "secret" not in text
        needs_folder = await client.call_tool("ragdown_read_doc", {"path": "backups.md"})
        assert needs_folder.is_error
        read = await text_of(client, "ragdown_read_doc", folder="ops", path="backups.md", start_line=5)
        assert read.startswith("backups.md:5-7 of 7")
        # JSON names a hit by the arguments ragdown_read_doc takes here, and a clipped hit points with them.
        found = await text_of(client, "ragdown_recall", query="restore", top_k=1, format="json", max_chars=3)
        hit = json.loads(found)["hits"][0]
        assert (hit["folder"], hit["path"]) == ("ops", "backups.md")
        assert 'ragdown_read_doc {folder: "ops", path: "backups.md", start_line: ' in hit["text"]
        whole = await text_of(client, "ragdown_read_doc", folder=hit["folder"], path=hit["path"])
        assert whole.startswith("backups.md:1-7 of 7")
        stats = json.loads(await text_of(client, "ragdown_stats", include_files=True))
        assert stats["file_list"] == [{"folder": "ops", "path": "backups.md", "chunks": 2}]
        hidden = await client.call_tool("ragdown_read_doc", {"folder": "home", "path": "secret.md"})
        assert hidden.is_error
        assert "no such folder" in hidden.content[0].text  # type: ignore[union-attr]
        made = await text_of(client, "ragdown_create_folder", name="agents", title="Agent notes")
        assert made.startswith("created folder agents")
        assert json.loads((docs / "agents/.ragdown.json").read_text()) == {
            "title": "Agent notes",
            "mcp": True,
            "created_by": "ragdown_create_folder",
        }
        again = await client.call_tool("ragdown_create_folder", {"name": "agents"})
        assert again.is_error
    folders = server.api.get("/api/folders").json()["folders"]
    assert {f["name"]: f.get("created_by") for f in folders}["agents"] == "ragdown_create_folder"


async def test_hook_memory_persists_across_stateless_requests(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    server = start_app(docs)
    prompt = {"prompt": "how do I restore the backups?", "session_id": "s"}
    async with mcp_client(server, "/mcp/ops") as client:
        assert (await text_of(client, "ragdown_context", **prompt)).startswith("<ragdown-context ")
    async with mcp_client(server, "/mcp/ops") as client:
        assert await text_of(client, "ragdown_context", **prompt) == ""


async def test_pages_on_other_origins_cannot_drive_mcp(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    server = start_app(docs)
    api = server.api
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    # A rebound name gets nothing without a credential; with one (which no such page holds) any name works.
    assert server.anonymous.post("/mcp/ops", json=body, headers={"Host": "evil.example"}).status_code == 421
    wrong = {"Host": "evil.example", "Authorization": "Bearer not-the-token"}
    assert server.anonymous.post("/mcp/ops", json=body, headers=wrong).status_code == 421
    neighbour = api.post(
        "/mcp/ops",
        json=body,
        headers={"Host": "ragdown:3000", "Accept": "application/json, text/event-stream"},
    )
    assert neighbour.status_code == 200, neighbour.text
    assert api.post("/mcp/ops", json=body, headers={"Origin": "http://evil.example"}).status_code == 403
    port = server.url.rsplit(":", 1)[1]
    same = api.get("/api/folders", headers={"Origin": f"http://127.0.0.1:{port}"})
    assert same.status_code == 200


@pytest.mark.integration
async def test_the_embedder_can_be_changed_in_place(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    server = start_app(docs)
    api = server.api
    bad = api.patch("/api/settings", json={"embedder": "nope"})
    assert bad.status_code == 400
    assert "nope" in bad.json()["error"]
    assert api.get("/api/status").json()["embedder"] == "hash-384"
    changed = api.patch("/api/settings", json={"embedder": "minilm"})
    assert changed.status_code == 200
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = api.get("/api/status").json()
        if status["embedder"] == "minilm" and status["chunks"] == 2 and not status["syncing"]:
            break
        time.sleep(0.2)
    assert status["embedder"] == "minilm"
    # No word of this query is in the folder: the hash embedder scores 0, a real model does not.
    hits = api.get(
        "/api/search", params={"folder": "ops", "q": "bringing data back after a disaster"}
    ).json()["hits"]
    assert max(h["similarity"] for h in hits) > 0.1
    back = api.patch("/api/settings", json={"embedder": None})
    assert back.json()["settings"]["embedder"] == "hash"


async def test_a_reader_process_refuses_settings_changes(docs: Path, start_server: StartServer) -> None:
    ops_folder(docs)
    first = start_server(docs)
    second = start_server(docs, data=first.data, wait=False)
    deadline = time.monotonic() + 60
    while not (status := second.api.get("/api/status").json())["ready"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert status["role"] == "reader"
    assert second.api.patch("/api/settings", json={"text_limit": 5}).status_code == 409
    assert first.api.patch("/api/settings", json={"text_limit": 5}).status_code == 200


async def test_the_query_log_counts_a_read_after_a_hit_of_that_folders_document(
    docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    write(docs, "lab/backups.md", "# Backups\n\nLab snapshots.\n\n## Restore\n\nRun pg_restore twice.")
    write(docs, "lab/.ragdown.json", json.dumps({"title": "Lab", "mcp": True}))
    server = start_app(docs, RAGDOWN_QUERY_LOG="true")
    async with mcp_client(server, "/mcp/lab") as lab, mcp_client(server, "/mcp/ops") as ops:
        # lab/backups.md was shown, ops/backups.md read: the same path in another folder is no follow-up.
        await text_of(lab, "ragdown_recall", query="restore", top_k=1)
        await text_of(ops, "ragdown_read_doc", path="backups.md")
        summary = server.api.get("/api/query-log").json()["summary"]
        assert (summary["reads"], summary["reads_after_search"]) == (1, 0)
        await text_of(ops, "ragdown_recall", query="restore", top_k=1)
        await text_of(ops, "ragdown_read_doc", path="backups.md")
    summary = server.api.get("/api/query-log").json()["summary"]
    assert summary["reads_after_search"] == 1
    assert summary["top_read"] == [{"folder": "ops", "path": "backups.md", "reads": 2, "after_search": 1}]
    # The web UI's search is logged as the tools' are: its time, and each hit's folder and path.
    assert server.api.get("/api/search", params={"q": "restore"}).status_code == 200
    assert server.app is not None
    line = server.app.runtime.query_log.entries()[-1]
    assert (line["kind"], type(line["ms"])) == ("search", float)
    assert {(h["folder"], h["path"]) for h in line["hits"]} == {("ops", "backups.md"), ("lab", "backups.md")}
