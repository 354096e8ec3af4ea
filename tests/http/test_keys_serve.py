"""Keys and limits against a real `ragdown serve` (one process for the module): a key made by `ragdown keys
create` in another process works at once, sees only its folders over `/api` and MCP, and stops at once
when `ragdown keys revoke` runs; `/api/keys` is the same store over HTTP; past `RAGDOWN_RATE_LIMIT` a
429 with `Retry-After`."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, isolated_env, start_serve, write
from tests.http.conftest import TOKEN, Server, _server_env, ops_folder
from tests.http.keyed import mcp_client

LIMIT = 40  # requests a minute per key: the admin's bucket runs out in the last test, the status polls' never

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("keys-serve")
    docs = home / "docs"
    ops_folder(docs)
    write(docs, "home/.ragdown.json", json.dumps({"title": "Home", "mcp": True}))
    write(docs, "home/private.md", "# Private\n\nRun pg_restore twice at home.\n")
    env = _server_env(docs, home / "data", TOKEN, {"RAGDOWN_RATE_LIMIT": str(LIMIT)})
    process = start_serve(home, env)
    server = Server(process.url, TOKEN, docs, home / "data", process=process)
    try:
        server.wait_synced()
        yield server
    finally:
        server.stop()


def keys_command(tmp_path: Path, docs: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragdown.cli", "keys", *args],
        cwd=REPO,
        env=isolated_env(tmp_path, RAGDOWN_DOCS_DIR=str(docs)),
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_a_key_made_and_revoked_by_the_cli_holds_at_once_in_a_running_server(
    tmp_path: Path, served: Server
) -> None:
    server, docs = served, served.docs
    made = keys_command(
        tmp_path, docs, "create", "--name", "agent", "--folders", "ops", "--role", "read", "--json"
    )
    assert made.returncode == 0, made.stderr
    secret = json.loads(made.stdout)["secret"]

    key = server.client(token=secret)
    assert [f["name"] for f in key.get("/api/folders").json()["folders"]] == ["ops"]
    hits = key.get("/api/search", params={"q": "pg_restore twice"}).json()["hits"]
    assert {h["path"].split("/")[0] for h in hits} == {"ops"}
    assert key.post("/api/doc", json={"path": "ops/new.md", "text": "# New\n"}).status_code == 403
    assert key.post("/mcp/home", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).status_code == 404
    async with mcp_client(server, "/mcp/ops", secret) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "ragdown_recall" in names
        assert not {"ragdown_write", "ragdown_remember", "ragdown_delete"} & names

    revoked = keys_command(tmp_path, docs, "revoke", "agent")
    assert revoked.returncode == 0, revoked.stderr
    assert key.get("/api/folders").status_code == 401
    assert key.post("/mcp/ops", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).status_code == 401
    listed = keys_command(tmp_path, docs, "list", "--json")
    assert json.loads(listed.stdout)["keys"] == []


def test_the_admin_manages_keys_over_http(served: Server) -> None:
    server = served
    api = server.api
    made = api.post("/api/keys", json={"name": "ci", "folders": ["ops"], "role": "write"})
    assert made.status_code == 201, made.text
    secret, key = made.json()["secret"], made.json()["key"]
    assert (key["name"], key["role"], key["folders"]) == ("ci", "write", ["ops"])
    listed = api.get("/api/keys").json()["keys"]
    assert [k["id"] for k in listed] == [key["id"]]
    assert secret not in json.dumps(listed)
    assert api.post("/api/keys", json={"name": "ci", "folders": None, "role": "read"}).status_code == 400
    assert api.post("/api/keys", json={"name": "x", "folders": ["nope"], "role": "read"}).status_code == 400
    assert api.post("/api/keys", json={"name": "x", "folders": None, "role": "admin"}).status_code == 400
    as_key = server.client(token=secret)
    assert as_key.post("/api/doc", json={"path": "ops/by-key.md", "text": "# By key\n"}).status_code == 201
    assert as_key.get("/api/keys").status_code == 403
    assert api.delete(f"/api/keys/{key['id']}").json()["revoked"]["name"] == "ci"
    assert as_key.get("/api/folders").status_code == 401
    assert api.delete(f"/api/keys/{key['id']}").status_code == 404


def test_a_key_that_would_be_expired_already_is_refused_over_http(served: Server) -> None:
    api = served.api
    for when in (1, time.time() - 1):
        asked = {"name": "tmp2", "folders": ["ops"], "role": "read", "expires_at": when}
        refused = api.post("/api/keys", json=asked)
        assert refused.status_code == 400, refused.text
        assert "expires_at" in refused.json()["error"]
        assert "not in the future" in refused.json()["error"]
    assert "tmp2" not in {k["name"] for k in api.get("/api/keys").json()["keys"]}
    later = time.time() + 3600
    made = api.post(
        "/api/keys", json={"name": "tmp2", "folders": ["ops"], "role": "read", "expires_at": later}
    )
    assert made.status_code == 201, made.text
    assert made.json()["key"]["expired"] is False
    assert api.delete("/api/keys/tmp2").status_code == 200


def test_past_the_rate_limit_a_429_with_retry_after(served: Server) -> None:
    api = served.api  # the admin's bucket: earlier tests spent some of it
    codes = [api.get("/api/folders").status_code for _ in range(LIMIT + 1)]
    assert codes[0] == 200
    assert codes[-1] == 429
    over = api.get("/api/docs")
    assert over.status_code == 429
    assert int(over.headers["retry-after"]) >= 1
    assert over.json()["code"] == "RATE_LIMIT_EXCEEDED"
