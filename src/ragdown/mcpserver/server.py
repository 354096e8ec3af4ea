"""An MCP server for one scope, built from the tool definitions; and the `stdio` entry point.

Every failure is a tool result with `isError: true` and a message saying what to do next, never a
transport error (unless a tool set says its failures otherwise: hallouminate's are JSON-RPC errors). A hidden
tool (read-only mode, a read key's endpoint, `RAGDOWN_DISABLED_TOOLS`) is refused exactly as an unknown one
is, in the tool set's way. The handshake never waits for the model: tool calls do.

Documents are resources too: `resources/list` pages the scope's documents as `ragdown://<path>` (the path
as the endpoint shows it, percent-encoded per segment; at the root endpoint `<folder>/<path>`), the
template `ragdown://{path}` names any of them, and `resources/read` reads one straight from disk through
the sandbox, as `ragdown_read_doc` does (a path, never a wikilink). A tool set adds its own fixed
resources, templates and prompts; `ragdown_onboard`, in every set, tells an agent how to start.

Subscriptions need a session that outlives a request: stdio serves `resources/subscribe` (handshake-era
clients: `notifications/resources/updated` for a subscribed document, `notifications/resources/list_changed`
when documents come or go) and `subscriptions/listen` (2026-07-28 clients), both fed by the engine's change
listener after each sync. Stateless HTTP has no session to notify later: it does not advertise `subscribe`,
and answers a subscribe with an error that says so.
"""

from __future__ import annotations

import bisect
import dataclasses
import logging
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import unquote

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import (
    ListenHandler,
)
from mcp.shared.exceptions import MCPError

from ragdown import __version__, toolsets
from ragdown.access.caller import Access
from ragdown.access.scope import Scope
from ragdown.core.config import ConfigError, Settings
from ragdown.core.errors import Refusal
from ragdown.core.times import iso_seconds
from ragdown.documents import decode_text
from ragdown.embedders import min_score_warning
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.engine.status import NotReady
from ragdown.mcpserver.resources import (
    DOCUMENT_TEMPLATE,
    MARKDOWN,
    ONBOARD_ARGUMENTS,
    ONBOARD_PROMPT,
    RESOURCE_PAGE_SIZE,
    STATELESS_SUBSCRIBE,
    DocumentFeed,
    cursor_after,
    cursor_of,
    document_mime,
    document_path,
    document_uri,
    is_document_uri,
    live_scope,
    missing,
    onboard_text,
    resource_error,
    template_pattern,
)
from ragdown.storage.records import StoreError
from ragdown.sync.progress_log import ProgressLog
from ragdown.tools import cli_answers as commands
from ragdown.tools.base import Failure, FailureStyle, ProtocolError, Structured
from ragdown.tools.catalog import ALL_TOOLS, AnyTool, visible_tools
from ragdown.tools.context import ToolContext
from ragdown.toolsets import ragdown_instructions
from ragdown.toolsets.base import PromptSpec, ResourceSpec, ResourceTemplateSpec
from ragdown.vault.sandbox import read_plain

log = logging.getLogger(__name__)


def text_result(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)


def failed(failure: Failure, style: FailureStyle | None) -> types.CallToolResult:
    """A failure said in a tool set's way (`style`): ragdown's `isError` result when None, a set's own
    text, or a JSON-RPC error (the style raises `ProtocolError`)."""
    if style is None:
        return text_result(failure.message, error=True)
    try:
        return text_result(style(failure), error=True)
    except ProtocolError as err:
        raise MCPError(err.code, err.message) from None


async def call_tool(
    tools: dict[str, AnyTool],
    ctx: ToolContext,
    name: str,
    args: dict[str, Any] | None,
    *,
    unknown: FailureStyle | None = None,
) -> types.CallToolResult:
    """A tool's answer; a tool `tools` does not hold is refused in the `unknown` style (the tool set's)."""
    spec = tools.get(name)
    if spec is None:
        return failed(Failure(f"Unknown tool: {name}", "invalid"), unknown)
    try:
        answer = await spec.call(ctx, args)
        if isinstance(answer, Structured):
            return types.CallToolResult(
                content=[types.TextContent(text=answer.text)], structured_content=answer.data
            )
        return text_result(answer)
    except Refusal as err:
        failure = Failure(err.message, err.kind, err.code, err.details)
    except (NotReady, StoreError) as err:
        failure = Failure(f"{name}: the index is not available: {err}", "unavailable")
    except Exception as err:
        log.exception("%s failed", name)
        failure = Failure(
            f"{name} failed unexpectedly: {err}. Try again; if it persists, check the server log.", "internal"
        )
    failure = dataclasses.replace(failure, message=ctx.redact(failure.message))  # a key: no server path
    return failed(failure, spec.failure)


# -- document URIs ---------------------------------------------------------------------------------


class RagdownServer(Server[Any]):
    """The SDK's low-level server, saying honestly whether it can notify a subscriber later."""

    notifies: bool = False

    def get_capabilities(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
        *,
        protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        caps = super().get_capabilities(
            notification_options, experimental_capabilities, extensions, protocol_version=protocol_version
        )
        if not self.notifies and caps.resources is not None and caps.resources.subscribe:
            resources = caps.resources.model_copy(update={"subscribe": False})
            caps = caps.model_copy(update={"resources": resources})
        return caps


# -- the server ------------------------------------------------------------------------------------


class Extras(Protocol):
    """What a tool set offers besides tools (a `toolsets.Selection`)."""

    @property
    def resources(self) -> tuple[ResourceSpec, ...]: ...

    @property
    def templates(self) -> tuple[ResourceTemplateSpec, ...]: ...

    @property
    def prompts(self) -> tuple[PromptSpec, ...]: ...

    @property
    def unknown(self) -> FailureStyle | None:
        """How a call to a tool not offered is refused (None: ragdown's `isError` result)."""
        ...


@dataclass(frozen=True)
class _NoExtras:
    resources: tuple[ResourceSpec, ...] = ()
    templates: tuple[ResourceTemplateSpec, ...] = ()
    prompts: tuple[PromptSpec, ...] = ()
    unknown: FailureStyle | None = None


def build_server(
    runtime: Runtime,
    scope: Scope,
    *,
    name: str,
    title: str,
    tools: tuple[AnyTool, ...] = ALL_TOOLS,
    instructions: str | None = None,
    extras: Extras | None = None,
    feed: DocumentFeed | None = None,
    access: Access | None = None,
    base_url: str | None = None,
) -> RagdownServer:
    """The MCP server of one scope: its tools, its documents as resources, the tool set's resources,
    templates and prompts (`extras`, a `toolsets.Selection`), and `ragdown_onboard`. With a `feed` (a
    connection that lasts, stdio) subscriptions are served; without one they are refused as stateless.
    `access` (the HTTP caller's) leaves out the tools it may not call (`tools.visible_tools`); `base_url` is
    the server's address as the client reached it (links into the web UI)."""
    offered = extras if extras is not None else _NoExtras()
    visible = {t.name: t for t in visible_tools(runtime.settings, tools, access)}
    listing = [
        types.Tool(
            name=t.name,
            description=t.description,
            input_schema=t.input_schema(),
            annotations=types.ToolAnnotations.model_validate(t.annotations.as_mcp()),
        )
        for t in visible.values()
    ]
    ctx = ToolContext(runtime=runtime, scope=scope, access=access, base_url=base_url)
    fixed = {r.uri: r for r in offered.resources}
    templates = [(t, template_pattern(t.uri_template)) for t in offered.templates]
    prompts: dict[str, PromptSpec] = {}
    for p in offered.prompts:
        prompts.setdefault(p.name, p)

    async def on_list_tools(
        _: ServerRequestContext[Any], __: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listing)

    async def on_call_tool(
        _: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await call_tool(visible, ctx, params.name, params.arguments, unknown=offered.unknown)

    def input_schema(tool: str) -> dict[str, Any] | None:
        spec = visible.get(tool)
        return spec.input_schema() if spec is not None else None

    # -- resources ---------------------------------------------------------------------------------

    def document_page(after: str | None) -> tuple[list[types.Resource], str | None]:
        here = live_scope(scope)
        records = ctx.store().list_files(here.file_filter(hide_superseded=False))
        paths = [r.path for r in records]
        start = bisect.bisect_right(paths, after) if after is not None else 0
        page = records[start : start + RESOURCE_PAGE_SIZE]
        resources = [
            types.Resource(
                uri=document_uri(here, r.path),
                name=r.title or here.view(r.path),
                description=r.description or None,
                mime_type=document_mime(r.path),
                size=r.size,
                annotations=types.Annotations(last_modified=iso_seconds(r.mtime_ns / 1e9)),
            )
            for r in page
        ]
        more = start + RESOURCE_PAGE_SIZE < len(records)
        return resources, cursor_of(page[-1].path) if more and page else None

    async def on_list_resources(
        rctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        if feed is not None:
            await feed.bind(rctx)
        after = cursor_after(params.cursor if params is not None else None)
        await ctx.ready()
        try:
            documents, cursor = await ctx.run(document_page, after)
        except (Refusal, NotReady) as err:
            raise resource_error("resources/list", err) from None
        own = [
            types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
            for r in offered.resources
        ]
        return types.ListResourcesResult(
            resources=(own if after is None else []) + documents, next_cursor=cursor
        )

    async def on_list_resource_templates(
        rctx: ServerRequestContext[Any], __: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        if feed is not None:
            await feed.bind(rctx)
        document = types.ResourceTemplate(
            uri_template=DOCUMENT_TEMPLATE,
            name="document",
            title="A Markdown document",
            description=(
                "A document of this folder by its path (as resources/list and the tools show it), "
                "read straight from disk."
            ),
            mime_type=MARKDOWN,
        )
        own = [
            types.ResourceTemplate(
                uri_template=t.uri_template, name=t.name, description=t.description, mime_type=t.mime_type
            )
            for t in offered.templates
        ]
        return types.ListResourceTemplatesResult(resource_templates=[document, *own])

    def read_document(uri: str) -> str:
        docs_path = document_path(scope, uri)
        data = read_plain(scope.root, docs_path)
        if data is None:  # missing, a symlink, not a regular file: as ragdown_read_doc answers it
            raise missing(uri)
        text, _ = decode_text(data)
        return text

    async def on_read_resource(
        rctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if feed is not None:
            await feed.bind(rctx)
        uri = params.uri
        mime = MARKDOWN
        try:
            if uri in fixed:
                mime = fixed[uri].mime_type
                text = await fixed[uri].read(ctx)
            elif is_document_uri(uri):
                text = await ctx.run(read_document, uri)
                mime = document_mime(document_path(scope, uri))
            else:
                for spec, pattern in templates:
                    m = pattern.fullmatch(uri)
                    if m is not None:
                        values = {k: unquote(v) for k, v in m.groupdict().items()}
                        mime = spec.mime_type
                        text = await spec.read(ctx, values)
                        break
                else:
                    raise missing(uri)
        except (Refusal, NotReady) as err:
            raise resource_error(uri, err) from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)]
        )

    def subscription_key(uri: str) -> str | None:
        """The docs path a subscription watches (None: a tool set's resource, which never changes)."""
        if is_document_uri(uri):
            return document_path(scope, uri)
        if uri in fixed or any(p.fullmatch(uri) for _, p in templates):
            return None
        raise missing(uri)

    async def on_subscribe(
        rctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        if feed is None:
            raise MCPError(types.INVALID_REQUEST, STATELESS_SUBSCRIBE)
        key = subscription_key(params.uri)
        await feed.bind(rctx)
        if key is not None:
            feed.subscribed.setdefault(key, set()).add(params.uri)
        return types.EmptyResult()

    async def on_unsubscribe(
        rctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        if feed is None:
            raise MCPError(types.INVALID_REQUEST, STATELESS_SUBSCRIBE)
        key = subscription_key(params.uri)
        if key is not None and key in feed.subscribed:
            feed.subscribed[key].discard(params.uri)
            if not feed.subscribed[key]:
                del feed.subscribed[key]
        return types.EmptyResult()

    listen = ListenHandler(feed.bus) if feed is not None else None

    async def on_listen(
        rctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        assert feed is not None
        assert listen is not None
        await feed.bind(rctx)
        return await listen(rctx, params)

    # -- prompts -----------------------------------------------------------------------------------

    onboard = types.Prompt(
        name=ONBOARD_PROMPT,
        title="Start on this folder",
        description=(
            "How to start on this folder of Markdown documents with the tools offered here: find, read, cite."
        ),
        arguments=[
            types.PromptArgument(name=a.name, description=a.description, required=a.required)
            for a in ONBOARD_ARGUMENTS
        ],
    )
    prompt_listing = [onboard] + [
        types.Prompt(
            name=p.name,
            description=p.description,
            arguments=[
                types.PromptArgument(name=a.name, description=a.description, required=a.required)
                for a in p.arguments
            ],
        )
        for p in prompts.values()
        if p.name != ONBOARD_PROMPT
    ]

    async def on_list_prompts(
        _: ServerRequestContext[Any], __: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=prompt_listing)

    async def on_get_prompt(
        _: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        args = dict(params.arguments or {})
        if params.name == ONBOARD_PROMPT:
            text = onboard_text(title, visible, root=scope.is_root, task=args.get("task") or None)
            description = onboard.description
        elif params.name in prompts:
            spec = prompts[params.name]
            missing = [a.name for a in spec.arguments if a.required and not args.get(a.name)]
            if missing:
                raise MCPError(
                    types.INVALID_PARAMS, f"prompt {spec.name} needs the argument(s) {', '.join(missing)}"
                )
            try:
                text = await spec.render(ctx, args)
            except (Refusal, NotReady) as err:
                raise resource_error(f"prompt {spec.name}", err) from None
            description = spec.description
        else:
            known = ", ".join([ONBOARD_PROMPT, *(p for p in prompts if p != ONBOARD_PROMPT)])
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name} (the prompts are {known})")
        return types.GetPromptResult(
            description=description,
            messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))],
        )

    server = RagdownServer(
        name,
        version=__version__,
        instructions=instructions if instructions is not None else ragdown_instructions(title),
        get_tool_input_schema=input_schema,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_resource_templates,
        on_read_resource=on_read_resource,
        on_subscribe_resource=on_subscribe,
        on_unsubscribe_resource=on_unsubscribe,
        on_subscriptions_listen=on_listen if feed is not None else None,
        on_list_prompts=on_list_prompts,
        on_get_prompt=on_get_prompt,
    )
    server.notifies = feed is not None
    return server


def warn_about_min_score(runtime: Runtime) -> None:
    min_score = runtime.settings.hook.min_score
    if min_score is not None:
        warning = min_score_warning(runtime.embedder_spec, min_score)
        if warning:
            log.warning("%s", warning)


@dataclass
class StdioServer:
    """What `ragdown stdio` serves, built and started, before any transport: the MCP server, its engine and
    document feed. Tests drive the same object in-process through the SDK's client."""

    server: RagdownServer
    engine: Engine
    feed: DocumentFeed

    def initialization_options(self) -> InitializationOptions:
        return self.server.create_initialization_options(NotificationOptions(resources_changed=True))

    def close(self) -> None:
        self.feed.close()
        self.engine.close()


def prepare_stdio(
    settings: Settings, ignore: tuple[str, ...] = (), setext: bool | None = None
) -> StdioServer:
    """The stdio server for `RAGDOWN_DOCS_DIR` as one folder, its engine started (in the background).
    `ignore`: more exclusions (`ragdown mcp --ignore`); `setext`: the explicit choice, over the variable
    and what the index was built with (`engine/setext.py`)."""
    from ragdown.engine.setext import with_setext

    docs = settings.require_docs_dir()
    settings = with_setext(settings, docs, "stdio", setext)
    scope = Scope(root=docs, folder="")
    folder = scope.settings()
    title = folder.title
    try:
        selection = toolsets.select(settings.toolset or folder.toolset)
    except Refusal as err:
        where = "RAGDOWN_TOOLSET" if settings.toolset else f"the toolset of {docs}/.ragdown.json"
        raise ConfigError(f"{where}: {err.message}") from None
    engine = Engine(settings, "stdio", docs_dir=docs, ignore=ignore, cli_answer=commands.answer)
    engine.add_progress_listener(ProgressLog())
    feed = DocumentFeed(scope)
    feed.attach(engine)
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
        extras=selection,
        feed=feed,
    )
    return StdioServer(server, engine, feed)


async def run_stdio(settings: Settings, ignore: tuple[str, ...] = (), setext: bool | None = None) -> None:
    served = prepare_stdio(settings, ignore, setext)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await served.server.run(read_stream, write_stream, served.initialization_options())
    finally:
        served.close()
