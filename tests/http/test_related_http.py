"""`ragdown_related` over HTTP (issue 26): the REST route, and the root endpoint with `folder` under a key
that sees one folder (another folder's notes are neither answered nor named)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import write
from tests.http.conftest import StartServer, ops_folder
from tests.http.test_mcp_http import mcp_client, text_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_related_over_rest_and_at_the_root_endpoint_under_a_key(
    docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    write(docs, "ops/restore-drill.md", "# Drill\n\nPractise [[backups#Restore]] monthly.\n")
    write(docs, "lab/.ragdown.json", json.dumps({"title": "Lab", "mcp": True}))
    write(docs, "lab/secret.md", "# Secret\n\nSee [[backups]].\n")
    server = start_app(docs, RAGDOWN_ROOT_MCP="true")
    api = server.api
    got = api.get("/api/v1/folders/ops/related", params={"path": "backups.md"})
    assert got.status_code == 200, got.text
    body = got.json()
    assert [(r["path"], r["why"].split("; ")[0], r["cite"]) for r in body["related"]] == [
        ("restore-drill.md", "backlink", "restore-drill.md:3")
    ]
    assert api.get("/api/v1/folders/ops/related", params={"path": "nope.md"}).status_code == 404
    key = api.post("/api/keys", json={"name": "reader", "folders": ["ops"], "role": "read"}).json()["secret"]
    async with mcp_client(server, "/mcp?toolset=ragdown,extra", token=key) as client:
        assert "ragdown_related" in {t.name for t in (await client.list_tools()).tools}
        text = await text_of(client, "ragdown_related", folder="ops", path="backups.md", format="json")
        assert [r["path"] for r in json.loads(text)["related"]] == ["restore-drill.md"]
        refused = await client.call_tool("ragdown_related", {"folder": "lab", "path": "secret.md"})
        assert refused.is_error
