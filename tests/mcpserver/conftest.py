"""MCP over a real `ragdown stdio` process, through the official SDK's client; and the same tool handlers
in-process (`Endpoint`) for scopes that only HTTP serves (a folder of `serve` mode, or a subfolder)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from ragdown.access.scope import Scope
from ragdown.core.config import Settings
from ragdown.core.errors import Refusal
from ragdown.engine.runtime import Runtime
from ragdown.mcpserver.server import call_tool, prepare_stdio
from ragdown.tools.catalog import visible_tools
from ragdown.tools.context import ToolContext
from tests.conftest import REPO, isolated_env

Connect = Callable[..., AbstractAsyncContextManager["Session"]]


def refusal_text(name: str, text: str, error: bool) -> str:
    """`text` when it is a tool's refusal; a success, or a crash ("failed unexpectedly", what the server
    answers when a handler raised something other than a refusal), fails the test."""
    assert error, f"{name} should have failed but answered: {text}"
    assert "failed unexpectedly" not in text, f"{name} crashed instead of refusing: {text}"
    return text


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
        """The text of a refusal: an error result that says why, never a crash of the handler."""
        return refusal_text(name, *await self.call(name, **args))

    async def tool_names(self) -> list[str]:
        return sorted(t.name for t in (await self.client.list_tools()).tools)


def stdio_params(
    tmp_path: Path, docs: Path, data: Path | None = None, /, **env: str
) -> StdioServerParameters:
    """How to launch `ragdown stdio` on `docs` with the test environment (hash embedder, no watcher)."""
    environment = isolated_env(
        tmp_path, RAGDOWN_DOCS_DIR=str(docs), RAGDOWN_DATA_DIR=str(data or tmp_path / "data"), **env
    )
    return StdioServerParameters(
        command=sys.executable, args=["-m", "ragdown.cli", "stdio"], env=environment, cwd=REPO
    )


@asynccontextmanager
async def stdio_session(params: StdioServerParameters) -> AsyncIterator[Session]:
    async with Client(params, read_timeout_seconds=120) as client:
        yield Session(client)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def inprocess_session(settings: Settings) -> AsyncIterator[Session]:
    """What `ragdown stdio` serves (`prepare_stdio`), driven in this process by the SDK's client over its
    in-memory transport: the same initialize handshake, JSON-RPC messages and handlers, no process to start."""
    served = prepare_stdio(settings)
    try:
        async with Client(served.server, mode="legacy", read_timeout_seconds=120) as client:
            yield Session(client)
    finally:
        served.close()


@pytest.fixture
def connect(tmp_path: Path, index_env: dict[str, str]) -> Connect:
    """`connect(docs, **env)`: an MCP session with `ragdown stdio`'s server on `docs`, in-process (on the
    test's index backend, `tests/conftest.py`)."""

    @asynccontextmanager
    async def open_session(docs: Path, **env: str) -> AsyncIterator[Session]:
        environment = isolated_env(
            tmp_path,
            RAGDOWN_DOCS_DIR=str(docs),
            RAGDOWN_DATA_DIR=str(tmp_path / "data"),
            **{**index_env, **env},
        )
        async with inprocess_session(Settings.from_env(environment)) as session:
            yield session

    return open_session


@pytest.fixture
def connect_process(tmp_path: Path) -> Connect:
    """`connect_process(docs, **env)`: the same over a real `ragdown stdio` process (end to end)."""

    @asynccontextmanager
    async def open_session(docs: Path, **env: str) -> AsyncIterator[Session]:
        async with stdio_session(stdio_params(tmp_path, docs, **env)) as session:
            yield session

    return open_session


class Endpoint:
    """One scope's tools in-process, answered exactly as the MCP server answers them (`call_tool`)."""

    def __init__(self, runtime: Runtime, scope: Scope) -> None:
        self.runtime = runtime
        self.scope = scope
        self.ctx = ToolContext(runtime=runtime, scope=scope)
        self.tools = {t.name: t for t in visible_tools(runtime.settings)}

    async def call(self, name: str, /, **args: Any) -> tuple[str, bool]:
        result = await call_tool(self.tools, self.ctx, name, args)
        texts = [c.text for c in result.content if hasattr(c, "text")]
        return "".join(texts), bool(result.is_error)

    async def ok(self, name: str, /, **args: Any) -> str:
        text, error = await self.call(name, **args)
        assert not error, f"{name} failed: {text}"
        return text

    async def error(self, name: str, /, **args: Any) -> str:
        """The text of a refusal: an error result that says why, never a crash of the handler."""
        return refusal_text(name, *await self.call(name, **args))

    async def refusal(self, name: str, /, **args: Any) -> Refusal:
        """The refusal a call ends in (its status is what HTTP answers), through the same handler."""
        try:
            answer = await self.tools[name].call(self.ctx, args)
        except Refusal as err:
            return err
        raise AssertionError(f"{name} should have been refused but answered: {answer}")
