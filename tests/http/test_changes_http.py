"""`ragdown_changes` over HTTP (issue 26): at the root endpoint with and without `folder`, under a key that sees
one folder (another folder's changes are not there), with the web UI's writes named as the user's."""

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


async def test_changes_at_the_root_endpoint_see_only_the_keys_folders(
    docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    write(docs, "lab/.ragdown.json", json.dumps({"title": "Lab", "mcp": True}))
    server = start_app(docs, RAGDOWN_ROOT_MCP="true")
    api = server.api
    for path in ("ops/runbook.md", "lab/secret-plan.md"):
        assert api.post("/api/doc", json={"path": path, "text": "# Note\n\nText.\n"}).status_code == 201
    key = api.post("/api/keys", json={"name": "reader", "folders": ["ops"], "role": "read"}).json()["secret"]
    async with mcp_client(server, "/mcp?toolset=ragdown,extra", token=key) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "ragdown_changes" in names
        assert "ragdown_write" not in names  # a read key
        seen = json.loads(await text_of(client, "ragdown_changes", format="json", who="user"))
        assert [(c["path"], c["who"]) for c in seen["changes"]] == [("[ops] runbook.md", "web")]
        in_ops = json.loads(await text_of(client, "ragdown_changes", format="json", folder="ops"))
        assert [c["path"] for c in in_ops["changes"]] == ["runbook.md"]
        refused = await client.call_tool("ragdown_changes", {"folder": "lab"})
        assert refused.is_error
