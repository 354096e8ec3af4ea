"""`ragdown_query` over HTTP (issue 26): the REST route `POST /api/v1/folders/{folder}/query` under a read key,
and the tool at the root endpoint with `folder` (another folder refused)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdown.access.keys import KeyStore
from tests.conftest import write
from tests.http.conftest import StartServer, ops_folder
from tests.http.test_mcp_http import mcp_client, text_of

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_query_over_rest_and_the_root_endpoint(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    write(docs, "lab/.ragdown.json", json.dumps({"title": "Lab", "mcp": True}))
    write(docs, "ops/a.md", "---\nstatus: open\nrank: 2\n---\n# A\n")
    write(docs, "ops/b.md", "---\nstatus: open\nrank: 1\n---\n# B\n")
    write(docs, "lab/c.md", "---\nstatus: open\n---\n# C\n")
    key, _ = KeyStore(docs).create("reader", ["ops"], "read")
    server = start_app(docs, RAGDOWN_ROOT_MCP="true")
    body = {
        "where": [{"property": "status", "value": "open"}],
        "sort": [{"by": "rank"}],
        "columns": ["path", "rank"],
    }
    answer = server.api.post(
        "/api/v1/folders/ops/query", json=body, headers={"Authorization": f"Bearer {key}"}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["rows"] == [{"path": "b.md", "rank": 1}, {"path": "a.md", "rank": 2}]
    refused = server.api.post(
        "/api/v1/folders/ops/query",
        json={"where": [{"property": "x", "op": "~"}]},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert refused.status_code == 400
    async with mcp_client(server, "/mcp?toolset=ragdown,extra", token=key) as client:
        assert "ragdown_query" in {t.name for t in (await client.list_tools()).tools}
        refused_lab = await client.call_tool("ragdown_query", {"folder": "lab"})
        assert refused_lab.is_error
        in_ops = json.loads(
            await text_of(
                client, "ragdown_query", format="json", folder="ops", columns=["path"], where=body["where"]
            )
        )
        assert in_ops["rows"] == [{"path": "a.md"}, {"path": "b.md"}]
