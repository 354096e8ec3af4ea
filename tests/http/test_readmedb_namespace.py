"""ReadmeDB's clients at home (issue 21): a key is a namespace. A key (or OAuth token) of one folder calls
ReadmeDB's REST routes (`/api/v1/files…`) and its MCP endpoint (`/api/mcp`) with nothing but the key, and
gets that folder with ReadmeDB's shapes and statuses; any other caller is told the folder routes. Its 401
names ReadmeDB's `realm` and `authorization_server`; `/oauth/authorize` and `/oauth/token` are the
discovered endpoints. Against `ragdown serve`'s app in-process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragdown.access.keys import KeyStore
from ragdown.http.openapi import document
from ragdown.toolsets.readmedb import TOOL_NAMES
from tests.conftest import write
from tests.http.conftest import APP_URL, Server, StartServer
from tests.http.keyed import mcp_client

pytestmark = pytest.mark.anyio
MB = 1024 * 1024


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def served(start_app: StartServer, docs: Path) -> tuple[Server, dict[str, str]]:
    """Folders `notes` (a ReadmeDB namespace: ReadmeDB's 1 MB per file as its quota) and `other`; a write
    key of `notes` alone, one of both folders, one of every folder."""
    write(docs, "notes/.ragdown.json", json.dumps({"mcp": True, "max_file_bytes": MB}))
    write(docs, "notes/CLAUDE.md", "# Claude\n\nAlways run the tests.\n")
    write(docs, "other/secret.md", "# Secret\n\nNot in the namespace.\n")
    store = KeyStore(docs)
    keys = {
        "one": store.create("rdb", ["notes"], "write")[0],
        "two": store.create("two", ["notes", "other"], "write")[0],
        "every": store.create("every", None, "write")[0],
    }
    return start_app(docs), keys


def _json(response: httpx.Response, status: int) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def test_readmedbs_documented_rest_calls_verbatim_with_a_one_folder_key(
    served: tuple[Server, dict[str, str]],
) -> None:
    """The REST API section of seed 002, call by call (base URL and key ours), and what it promises."""
    server, keys = served
    rdb = server.client(token=keys["one"])
    headers = {"Content-Type": "application/json"}  # "Content-Type: application/json"

    # GET /api/v1/files -> 200 { "files": [{ "name", "sizeBytes", "createdAt", "updatedAt" }] }
    listed = _json(rdb.get("/api/v1/files"), 200)
    assert [f["name"] for f in listed["files"]] == ["CLAUDE.md"]  # the key's folder, and nothing else
    entry = listed["files"][0]
    assert all(isinstance(entry[k], int) for k in ("sizeBytes", "createdAt", "updatedAt"))

    # POST /api/v1/files { "name": "file.md", "content": "# Hello" } -> 201 { "ok": true }
    body = {"name": "file.md", "content": "# Hello"}
    created = _json(rdb.post("/api/v1/files", content=json.dumps(body), headers=headers), 201)
    assert created["ok"] is True
    assert (server.docs / "notes/file.md").read_text() == "# Hello"

    # GET /api/v1/files/{name} -> 200 { "name", "content", "sizeBytes": 7, "createdAt", "updatedAt" }
    read = _json(rdb.get("/api/v1/files/file.md"), 200)
    assert (read["name"], read["content"], read["sizeBytes"]) == ("file.md", "# Hello", 7)
    assert isinstance(read["createdAt"], int)
    assert isinstance(read["updatedAt"], int)

    # PUT /api/v1/files/{name} { "content": "# Updated" } -> 200 { "ok": true }
    put = rdb.put("/api/v1/files/file.md", content=json.dumps({"content": "# Updated"}), headers=headers)
    assert _json(put, 200)["ok"] is True
    assert (server.docs / "notes/file.md").read_text() == "# Updated"
    # ReadmeDB's PUT answers 200 whether it replaced a file or made one (the folder route says 201)
    made = rdb.put("/api/v1/files/made.md", json={"content": "# Made"})
    assert _json(made, 200)["ok"] is True

    # "URL-encode the file name"
    rdb.post("/api/v1/files", json={"name": "notes/plan one.md", "content": "# Plan"})
    assert _json(rdb.get("/api/v1/files/notes%2Fplan%20one.md"), 200)["content"] == "# Plan"

    # Error 413: file too large (>1 MB); Error 402: quota exceeded
    big = {"name": "big.md", "content": "x" * (MB + 1)}
    assert _json(rdb.post("/api/v1/files", json=big), 413)["error"]
    assert not (server.docs / "notes/big.md").exists()
    write(server.docs, "notes/.ragdown.json", json.dumps({"mcp": True, "max_file_bytes": MB, "max_files": 4}))
    full = rdb.post("/api/v1/files", json={"name": "fifth.md", "content": "# Fifth"})
    assert _json(full, 402)["code"] == "over_quota"
    assert not (server.docs / "notes/fifth.md").exists()

    # DELETE /api/v1/files/{name} -> 200 { "ok": true }; Error 404: file not found
    assert _json(rdb.delete("/api/v1/files/file.md"), 200)["ok"] is True
    assert not (server.docs / "notes/file.md").exists()
    assert _json(rdb.get("/api/v1/files/file.md"), 404)["error"]
    assert _json(rdb.delete("/api/v1/files/file.md"), 404)["error"]
    # "permanently deletes the file and all version history": no trash entry, no version left
    admin = server.api
    assert "file.md" not in {e["path"] for e in _json(admin.get("/api/v1/folders/notes/trash"), 200)["trash"]}
    assert admin.get("/api/v1/folders/notes/files/file.md/history").status_code == 404
    # the other folder is not in this namespace
    assert _json(rdb.get("/api/v1/files/secret.md"), 404)["error"]
    assert "secret.md" not in {f["name"] for f in _json(rdb.get("/api/v1/files"), 200)["files"]}


def test_a_caller_of_no_single_folder_is_told_the_folder_routes(
    served: tuple[Server, dict[str, str]],
) -> None:
    server, keys = served
    for who in ("admin", "two", "every"):
        client = server.api if who == "admin" else server.client(token=keys[who])
        for method, url in (("GET", "/api/v1/files"), ("GET", "/api/v1/files/CLAUDE.md")):
            body = _json(client.request(method, url), 400)
            assert body["code"] == "not_a_namespace", who
            assert "/api/v1/folders/{folder}/files" in body["error"]
            assert "/mcp/{folder}" in body["error"]
        answer = client.post("/api/v1/files", json={"name": "x.md", "content": "# X"})
        assert answer.status_code == 400
        ping = client.post("/api/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert ping.status_code == 400, ping.text
        assert "/mcp/{folder}" in ping.json()["error"]
    assert not (server.docs / "notes/x.md").exists()
    assert not (server.docs / "x.md").exists()
    # the folder routes are unchanged, and do not clash with ReadmeDB's
    assert [f["name"] for f in _json(server.api.get("/api/v1/folders/notes/files"), 200)["files"]] == [
        "CLAUDE.md"
    ]
    assert _json(server.anonymous.get("/api/openapi"), 200) == json.loads(json.dumps(document()))
    paths = document()["paths"]
    assert {"/api/v1/files", "/api/v1/files/{path}"} <= set(paths)
    assert set(paths["/api/v1/files"]) == {"get", "post"}


async def test_the_mcp_endpoint_offers_readmedbs_tools_on_the_keys_folder(
    served: tuple[Server, dict[str, str]],
) -> None:
    server, keys = served
    async with mcp_client(server, "/api/mcp", keys["one"]) as client:
        assert {t.name for t in (await client.list_tools()).tools} == set(TOOL_NAMES)
        result = await client.call_tool("get_namespace_summary", {})
        summary = json.loads(result.content[0].text)  # type: ignore[union-attr]
        assert summary["fileCount"] == 1
        assert [f["name"] for f in summary["recentFiles"]] == ["CLAUDE.md"]
        wrote = await client.call_tool("write_file", {"name": "mcp.md", "content": "# From MCP"})
        assert not wrote.is_error, wrote.content
    assert (server.docs / "notes/mcp.md").read_text() == "# From MCP"


def test_the_401_names_readmedbs_realm_and_authorization_server(
    served: tuple[Server, dict[str, str]],
) -> None:
    server, _keys = served
    anonymous = server.anonymous
    mcp = anonymous.post("/api/mcp", json={})
    assert mcp.status_code == 401
    challenge = mcp.headers["www-authenticate"]
    metadata = f"{APP_URL}/.well-known/oauth-protected-resource/api/mcp"
    assert challenge == (
        f'Bearer resource_metadata="{metadata}", realm="readmedb", authorization_server="{APP_URL}"'
    )
    assert anonymous.get(metadata).json()["resource"] == f"{APP_URL}/api/mcp"
    rest = server.client(token="rdb_not-a-key").get("/api/v1/files")
    assert rest.status_code == 401
    assert rest.headers["www-authenticate"].startswith('Bearer error="invalid_token", error_description="')
    assert 'realm="readmedb", authorization_server="' in rest.headers["www-authenticate"]
    elsewhere = anonymous.get("/api/docs").headers["www-authenticate"]
    assert 'realm="ragdown"' in elsewhere


def test_oauth_authorize_and_token_answer_as_the_discovered_endpoints(
    served: tuple[Server, dict[str, str]],
) -> None:
    server, _keys = served
    anonymous = server.anonymous
    meta = anonymous.get("/.well-known/oauth-authorization-server").json()
    for alias, endpoint in (
        ("/oauth/authorize", "authorization_endpoint"),
        ("/oauth/token", "token_endpoint"),
    ):
        discovered = meta[endpoint].removeprefix(APP_URL)
        params = {"client_id": "nobody", "response_type": "code", "redirect_uri": "https://x.example/cb"}
        if alias == "/oauth/token":
            ours = anonymous.post(alias, data={"grant_type": "authorization_code", "code": "x"})
            theirs = anonymous.post(discovered, data={"grant_type": "authorization_code", "code": "x"})
        else:
            ours, theirs = anonymous.get(alias, params=params), anonymous.get(discovered, params=params)
        assert ours.status_code == theirs.status_code != 404, ours.text
        assert ours.text == theirs.text
