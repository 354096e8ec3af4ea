"""MCP over a real `ragdown stdio` process, through the official SDK's client."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import REPO, isolated_env

Connect = Callable[..., AbstractAsyncContextManager["Session"]]


class Session:
    """A connected client with helpers that return a tool's text and whether it was an error."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def call(self, name: str, /, **args: object) -> tuple[str, bool]:
        result = await self.client.call_tool(name, dict(args))
        texts = [c.text for c in result.content if hasattr(c, "text")]
        return "".join(texts), bool(result.is_error)

    async def ok(self, name: str, /, **args: object) -> str:
        text, error = await self.call(name, **args)
        assert not error, f"{name} failed: {text}"
        return text

    async def error(self, name: str, /, **args: object) -> str:
        text, error = await self.call(name, **args)
        assert error, f"{name} should have failed but answered: {text}"
        return text

    async def tool_names(self) -> list[str]:
        return sorted(t.name for t in (await self.client.list_tools()).tools)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def connect(tmp_path: Path) -> Connect:
    @asynccontextmanager
    async def open_session(docs: Path, **env: str) -> AsyncIterator[Session]:
        environment = isolated_env(
            tmp_path, RAGDOWN_DOCS_DIR=str(docs), RAGDOWN_DATA_DIR=str(tmp_path / "data"), **env
        )
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "ragdown.cli", "stdio"], env=environment, cwd=REPO
        )
        async with Client(params, read_timeout_seconds=120) as client:
            yield Session(client)

    return open_session
