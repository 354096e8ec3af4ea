"""An MCP server for one scope, built from the tool definitions; and the `stdio` entry point.

Every failure is a tool result with `isError: true` and a message saying what to do next, never a
transport error. A hidden tool (read-only mode, `RAGDOWN_DISABLED_TOOLS`) is refused exactly as an unknown
one is. The handshake never waits for the model: tool calls do.
"""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from ragdown import __version__, toolsets
from ragdown.config import ConfigError, Settings
from ragdown.engine import Engine, NotReady
from ragdown.errors import Refusal
from ragdown.index.embedders import min_score_warning
from ragdown.runtime import Runtime
from ragdown.scope import Scope
from ragdown.tools import ALL_TOOLS, AnyTool, visible_tools
from ragdown.tools.base import Failure, ProtocolError
from ragdown.tools.context import ToolContext
from ragdown.toolsets import ragdown_instructions

log = logging.getLogger(__name__)


def text_result(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)


async def call_tool(
    tools: dict[str, AnyTool], ctx: ToolContext, name: str, args: dict[str, Any] | None
) -> types.CallToolResult:
    spec = tools.get(name)
    if spec is None:
        return text_result(f"Unknown tool: {name}", error=True)
    try:
        return text_result(await spec.call(ctx, args))
    except Refusal as err:
        failure = Failure(err.message, err.kind, err.code, err.details)
    except NotReady as err:
        failure = Failure(f"{name}: the index is not available: {err}", "unavailable")
    except Exception as err:
        log.exception("%s failed", name)
        failure = Failure(
            f"{name} failed unexpectedly: {err}. Try again; if it persists, check the server log.", "internal"
        )
    if spec.failure is None:
        return text_result(failure.message, error=True)
    try:
        return text_result(spec.failure(failure), error=True)
    except ProtocolError as err:
        raise MCPError(err.code, err.message) from None


def build_server(
    runtime: Runtime,
    scope: Scope,
    *,
    name: str,
    title: str,
    tools: tuple[AnyTool, ...] = ALL_TOOLS,
    instructions: str | None = None,
) -> Server[Any]:
    visible = {t.name: t for t in visible_tools(runtime.settings, tools)}
    listing = [
        types.Tool(
            name=t.name,
            description=t.description,
            input_schema=t.input_schema(),
            annotations=types.ToolAnnotations.model_validate(t.annotations.as_mcp()),
        )
        for t in visible.values()
    ]
    ctx = ToolContext(runtime=runtime, scope=scope)

    async def on_list_tools(
        _: ServerRequestContext[Any], __: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listing)

    async def on_call_tool(
        _: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await call_tool(visible, ctx, params.name, params.arguments)

    def input_schema(tool: str) -> dict[str, Any] | None:
        spec = visible.get(tool)
        return spec.input_schema() if spec is not None else None

    return Server(
        name,
        version=__version__,
        instructions=instructions if instructions is not None else ragdown_instructions(title),
        get_tool_input_schema=input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def warn_about_min_score(runtime: Runtime) -> None:
    min_score = runtime.settings.hook.min_score
    if min_score is not None:
        warning = min_score_warning(runtime.embedder_spec, min_score)
        if warning:
            log.warning("%s", warning)


async def run_stdio(settings: Settings) -> None:
    docs = settings.require_docs_dir()
    scope = Scope(root=docs, folder="")
    folder = scope.settings()
    title = folder.title
    try:
        selection = toolsets.select(settings.toolset or folder.toolset)
    except Refusal as err:
        where = "RAGDOWN_TOOLSET" if settings.toolset else f"the toolset of {docs}/.ragdown.json"
        raise ConfigError(f"{where}: {err.message}") from None
    engine = Engine(settings, "stdio", docs_dir=docs)
    engine.start()
    runtime = Runtime(settings, engine)
    warn_about_min_score(runtime)
    server = build_server(
        runtime,
        scope,
        name="ragdown",
        title=title,
        tools=selection.tools,
        instructions=selection.instructions(title),
    )
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        engine.close()
