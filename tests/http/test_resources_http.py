"""Resources and prompts over stateless streamable HTTP (issue 10), to the app of `ragdown serve`
in-process through the SDK's client: a folder's, a subfolder's and the root endpoint's documents as
`ragdown://` resources, the onboarding prompt, and subscriptions refused (no session to notify later)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.conftest import write
from tests.http.conftest import TOKEN, Server, StartServer, ops_folder
from tests.http.test_mcp_http import mcp_client

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def legacy_client(server: Server, path: str) -> AsyncIterator[Client]:
    """A handshake-era client (`initialize`), as most deployed MCP clients are."""
    async with (
        server.mcp_http({"Authorization": f"Bearer {TOKEN}"}) as http,
        Client(streamable_http_client(server.url + path, http_client=http), mode="legacy") as client,
    ):
        yield client


def prompt_text(result: types.GetPromptResult) -> str:
    return "".join(m.content.text for m in result.messages if isinstance(m.content, types.TextContent))


async def uris(client: Client) -> list[str]:
    return [r.uri for r in (await client.list_resources(cache_mode="bypass")).resources]


async def test_a_folders_documents_and_prompt_over_http(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    write(docs, "ops/projects/plan one.md", "# Plan\n\nalpha launch\n")
    server = start_app(docs)
    async with mcp_client(server, "/mcp/ops") as client:
        caps = client.server_capabilities
        assert caps.resources is not None
        assert not caps.resources.subscribe
        assert not caps.resources.list_changed
        listed = (await client.list_resources(cache_mode="bypass")).resources
        assert [(r.uri, r.name) for r in listed] == [
            ("ragdown://backups.md", "Backups"),
            ("ragdown://projects/plan%20one.md", "Plan"),
        ]
        [content] = (await client.read_resource("ragdown://backups.md", cache_mode="bypass")).contents
        assert isinstance(content, types.TextResourceContents)
        assert content.text == (docs / "ops/backups.md").read_text()
        with pytest.raises(MCPError) as caught:
            await client.read_resource("ragdown://../home/secret.md", cache_mode="bypass")
        assert caught.value.error.code == types.INVALID_PARAMS
        templates = (await client.list_resource_templates(cache_mode="bypass")).resource_templates
        assert [t.uri_template for t in templates] == ["ragdown://{path}"]
        text = prompt_text(await client.get_prompt("ragdown_onboard"))
        assert '"Operations"' in text
        assert "ragdown_recall" in text
    async with mcp_client(server, "/mcp/ops/projects") as client:
        assert await uris(client) == ["ragdown://plan%20one.md"]
    async with mcp_client(server, "/mcp/ops?toolset=markindex") as client:
        text = prompt_text(await client.get_prompt("ragdown_onboard"))
        assert "browse_documents" in text
        assert "ragdown_recall" not in text


async def test_the_root_endpoint_names_each_document_with_its_folder(
    docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    write(docs, "home/secret.md", "# Secret\n")
    write(docs, "home/.ragdown.json", json.dumps({"mcp": False}))
    server = start_app(docs, RAGDOWN_ROOT_MCP="true")
    async with mcp_client(server, "/mcp") as client:
        assert await uris(client) == ["ragdown://ops/backups.md"]
        [content] = (await client.read_resource("ragdown://ops/backups.md", cache_mode="bypass")).contents
        assert isinstance(content, types.TextResourceContents)
        assert content.text.startswith("# Backups")
        with pytest.raises(MCPError) as caught:  # a human-only folder is not there
            await client.read_resource("ragdown://home/secret.md", cache_mode="bypass")
        assert "not found" in caught.value.error.message
        onboard = prompt_text(await client.get_prompt("ragdown_onboard"))
        assert "ragdown_folders" in onboard
        assert "every folder this server offers" in onboard
        assert '"every" folder' not in onboard


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_subscriptions_are_refused_without_a_session(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    server = start_app(docs)
    async with legacy_client(server, "/mcp/ops") as client:
        caps = client.server_capabilities
        assert caps.resources is not None
        assert not caps.resources.subscribe
        assert await uris(client) == ["ragdown://backups.md"]
        with pytest.raises(MCPError) as caught:
            await client.subscribe_resource("ragdown://backups.md")
        assert "stateless HTTP" in caught.value.error.message
        assert "stdio" in caught.value.error.message
    async with mcp_client(server, "/mcp/ops") as client:
        with pytest.raises(MCPError) as refused:  # not served: nothing can stream back later
            async with client.listen(resource_subscriptions=["ragdown://backups.md"]):
                pass
        assert refused.value.error.code == types.METHOD_NOT_FOUND
