"""Documents as MCP resources, the `ragdown://{path}` template, the `ragdown_onboard` prompt and resource
subscriptions (issue 10), through the SDK's client against a real `ragdown stdio`.

Subscriptions are checked both ways a client asks for them: `resources/subscribe` with
`notifications/resources/updated` on a handshake-era connection (`mode="legacy"`), and
`subscriptions/listen` on a 2026-07-28 one (the client's default). A change the test must not hear of is
made and synced (`ragdown_reindex`) before the change it must hear of: the server sends its notifications
in sync order, so once the second one arrives the first would have been seen already.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import quote

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.client.subscriptions import ResourceUpdated
from mcp.shared.exceptions import MCPError

from ragdown.access.scope import Scope
from ragdown.core.errors import not_found
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.mcpserver.resources import RESOURCE_PAGE_SIZE
from ragdown.mcpserver.server import build_server
from ragdown.tools.catalog import ALL_TOOLS
from ragdown.tools.context import ToolContext
from ragdown.toolsets import Selection
from ragdown.toolsets.base import PromptArgument, PromptSpec, ResourceSpec, ResourceTemplateSpec
from tests.conftest import write
from tests.mcpserver.conftest import Connect, Session, stdio_params

pytestmark = pytest.mark.anyio
# `resources/subscribe` is what handshake-era clients (the ones deployed today) use: deprecated in the SDK's
# client for 2026-07-28 connections, where `Client.listen()` replaces it.
handshake_era = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

WAIT_S = 60  # a deadline for a notification: the watcher settles for 750 ms, then syncs
UNICODE = "notes/Café menu ü 新.md"


def uri_of(path: str) -> str:
    return "ragdown://" + quote(path, safe="/")


async def all_resources(client: Client) -> tuple[list[types.Resource], int]:
    """Every listed resource, following `nextCursor`, and how many pages that took."""
    resources: list[types.Resource] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = await client.list_resources(cursor=cursor, cache_mode="bypass")
        pages += 1
        resources += page.resources
        cursor = page.next_cursor
        if cursor is None:
            return resources, pages
        assert pages <= 10, "the cursor never ends"


async def test_documents_are_listed_in_pages_of_the_page_size(docs: Path, connect: Connect) -> None:
    count = RESOURCE_PAGE_SIZE * 2 + 3
    for i in range(count):
        write(docs, f"bulk/doc-{i:03}.md", f"# Document {i}\n\nbody {i}\n")
    write(docs, UNICODE, "---\ndescription: What the café serves\n---\n# Menu\n\nCoffee.\n")
    write(docs, ".obsidian/hidden.md", "# Hidden\n")
    async with connect(docs) as s:
        await s.ok("ragdown_reindex")
        first = await s.client.list_resources(cache_mode="bypass")
        assert len(first.resources) == RESOURCE_PAGE_SIZE
        assert first.next_cursor is not None
        resources, pages = await all_resources(s.client)
    assert pages == 3
    by_uri = {r.uri: r for r in resources}
    assert len(by_uri) == len(resources) == count + 1
    assert set(by_uri) == {uri_of(f"bulk/doc-{i:03}.md") for i in range(count)} | {uri_of(UNICODE)}
    menu = by_uri["ragdown://notes/Caf%C3%A9%20menu%20%C3%BC%20%E6%96%B0.md"]
    assert (menu.name, menu.description, menu.mime_type) == ("Menu", "What the café serves", "text/markdown")
    assert menu.size == (docs / UNICODE).stat().st_size
    assert menu.annotations is not None
    assert menu.annotations.last_modified
    assert by_uri[uri_of("bulk/doc-007.md")].name == "Document 7"


async def test_a_document_is_read_by_its_uri_straight_from_disk(docs: Path, connect: Connect) -> None:
    text = "---\ntags: [food]\n---\n# Menu\n\nCoffee, [[Tea]] and cake.\n"
    write(docs, UNICODE, text)
    write(docs, "Tea.md", "# Tea\n\nGreen.\n")
    async with connect(docs) as s:
        await s.ok("ragdown_reindex")
        listed = [r.uri for r in (await all_resources(s.client))[0]]
        assert uri_of(UNICODE) in listed
        read = await s.client.read_resource(uri_of(UNICODE), cache_mode="bypass")
        [content] = read.contents
        assert isinstance(content, types.TextResourceContents)
        assert (content.uri, content.text, content.mime_type) == (uri_of(UNICODE), text, "text/markdown")
        # The template expanded by RFC 6570 (`/` encoded too) names the same document.
        expanded = "ragdown://" + quote(UNICODE, safe="")
        [same] = (await s.client.read_resource(expanded, cache_mode="bypass")).contents
        assert isinstance(same, types.TextResourceContents)
        assert same.text == text
        # Read from disk, not the index: a change shows at once.
        write(docs, UNICODE, text + "\nNew line.\n")
        [fresh] = (await s.client.read_resource(uri_of(UNICODE), cache_mode="bypass")).contents
        assert isinstance(fresh, types.TextResourceContents)
        assert fresh.text.endswith("New line.\n")
        for uri, says in [
            ("ragdown://notes/missing.md", "not found"),
            ("ragdown://Tea", "not found"),  # a path, never a wikilink target
            ("ragdown://../outside.md", "outside"),
            ("ragdown://.obsidian/x.md", "dot-folders"),
            ("ragdown://notes/%FF.md", "not UTF-8"),
            ("other://Tea.md", "not found"),
        ]:
            with pytest.raises(MCPError) as caught:
                await s.client.read_resource(uri, cache_mode="bypass")
            assert caught.value.error.code == types.INVALID_PARAMS, uri
            assert says in caught.value.error.message, (uri, caught.value.error.message)


async def test_the_document_template_and_the_onboarding_prompt(docs: Path, connect: Connect) -> None:
    write(docs, ".ragdown.json", '{"title": "Field notes"}')
    write(docs, "a.md", "# A\n")
    async with connect(docs) as s:
        caps = s.client.server_capabilities
        assert caps.resources is not None
        assert caps.resources.subscribe
        assert caps.prompts is not None
        templates = (await s.client.list_resource_templates(cache_mode="bypass")).resource_templates
        assert [t.uri_template for t in templates] == ["ragdown://{path}"]
        assert templates[0].mime_type == "text/markdown"
        prompts = (await s.client.list_prompts(cache_mode="bypass")).prompts
        assert [p.name for p in prompts] == ["ragdown_onboard"]
        assert [(a.name, a.required) for a in prompts[0].arguments or []] == [("task", False)]
        got = await s.client.get_prompt("ragdown_onboard", {"task": "find the backup policy"})
        [message] = got.messages
        assert message.role == "user"
        assert isinstance(message.content, types.TextContent)
        text = message.content.text
        assert '"Field notes"' in text
        order = [text.index(t) for t in ("ragdown_outline", "ragdown_recall", "ragdown_read_doc")]
        assert order == sorted(order)
        assert "line_numbers: true" in text
        assert "[path, L<a>-<b>]" in text
        assert "ragdown://{path}" in text
        assert text.endswith("Your task: find the backup policy")
        with pytest.raises(MCPError) as caught:
            await s.client.get_prompt("nope")
        assert "Unknown prompt: nope" in caught.value.error.message


async def test_the_onboarding_prompt_names_the_tools_of_the_set_offered(docs: Path, connect: Connect) -> None:
    write(docs, "a.md", "# A\n")
    async with connect(docs, RAGDOWN_TOOLSET="markindex") as s:
        got = await s.client.get_prompt("ragdown_onboard")
        text = "".join(m.content.text for m in got.messages if isinstance(m.content, types.TextContent))
        for tool in ("browse_documents", "search_documents", "get_document_structure", "get_node_content"):
            assert tool in text
        assert "ragdown_recall" not in text
        assert "ragdown_read_doc" not in text
        assert "[doc_path, L<start>-<end>]" in text
    async with connect(docs, RAGDOWN_DISABLED_TOOLS="ragdown_outline") as s:
        got = await s.client.get_prompt("ragdown_onboard")
        text = "".join(m.content.text for m in got.messages if isinstance(m.content, types.TextContent))
        assert "ragdown_outline" not in text
        assert "ragdown_recall" in text


# -- subscriptions ---------------------------------------------------------------------------------


class Notifications:
    """The server's resource notifications as they arrive: (method, uri or None)."""

    def __init__(self) -> None:
        self.send, self.receive = anyio.create_memory_object_stream[tuple[str, str | None]](1000)
        self.seen: list[tuple[str, str | None]] = []

    async def __call__(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.send.send_nowait((message.method, message.params.uri))
        elif isinstance(message, types.ResourceListChangedNotification):
            self.send.send_nowait((message.method, None))

    async def until(self, method: str, uri: str | None = None) -> list[tuple[str, str | None]]:
        """What arrives up to and including (method, uri), within the deadline."""
        got: list[tuple[str, str | None]] = []
        with anyio.fail_after(WAIT_S):
            async for item in self.receive:
                got.append(item)
                self.seen.append(item)
                if item == (method, uri):
                    return got
        raise AssertionError(f"the stream ended before {method} {uri}: {got}")


UPDATED = "notifications/resources/updated"
LIST_CHANGED = "notifications/resources/list_changed"


@asynccontextmanager
async def legacy_session(tmp_path: Path, docs: Path, handler: Notifications) -> AsyncIterator[Session]:
    params = stdio_params(tmp_path, docs, RAGDOWN_WATCH="true")
    async with Client(params, mode="legacy", message_handler=handler, read_timeout_seconds=120) as client:
        yield Session(client)


@handshake_era
async def test_a_subscribed_document_changed_on_disk_is_notified(docs: Path, tmp_path: Path) -> None:
    write(docs, "a.md", "# A\n\nfirst\n")
    write(docs, "b b.md", "# B\n\nfirst\n")
    a, b, c = uri_of("a.md"), uri_of("b b.md"), uri_of("c.md")
    heard = Notifications()
    async with legacy_session(tmp_path, docs, heard) as s:
        caps = s.client.server_capabilities
        assert caps.resources is not None
        assert caps.resources.subscribe
        assert caps.resources.list_changed
        await s.client.subscribe_resource(a)
        await s.ok("ragdown_reindex")
        write(docs, "b b.md", "# B\n\nsecond\n")  # not subscribed
        await s.ok("ragdown_reindex")
        write(docs, "a.md", "# A\n\nsecond\n")
        got = await heard.until(UPDATED, a)
        assert (UPDATED, b) not in got
        [content] = (await s.client.read_resource(a, cache_mode="bypass")).contents
        assert isinstance(content, types.TextResourceContents)
        assert "second" in content.text

        write(docs, "c.md", "# C\n\nnew\n")  # a new document: the list changed
        await heard.until(LIST_CHANGED)

        await s.client.unsubscribe_resource(a)
        await s.client.subscribe_resource(c)
        write(docs, "a.md", "# A\n\nthird\n")
        await s.ok("ragdown_reindex")
        (docs / "c.md").unlink()  # a removed document is an update of its resource too
        got = await heard.until(UPDATED, c)
        assert (UPDATED, a) not in got
        assert (UPDATED, b) not in heard.seen


@handshake_era
async def test_a_reader_hears_of_the_primarys_syncs(docs: Path, tmp_path: Path, connect: Connect) -> None:
    """A second process on the same index is a reader: it syncs nothing, and follows the index instead."""
    write(docs, "a.md", "# A\n\nfirst\n")
    heard = Notifications()
    async with connect(docs, RAGDOWN_WATCH="true") as primary:
        assert json.loads(await primary.ok("ragdown_stats"))["role"] == "primary"
        async with legacy_session(tmp_path, docs, heard) as reader:
            assert json.loads(await reader.ok("ragdown_stats"))["role"] == "reader"
            await reader.client.subscribe_resource(uri_of("a.md"))
            write(docs, "a.md", "# A\n\nsecond\n")
            await heard.until(UPDATED, uri_of("a.md"))
            write(docs, "new.md", "# New\n")
            await heard.until(LIST_CHANGED)


async def test_a_listen_stream_hears_of_its_documents_only(docs: Path, connect_process: Connect) -> None:
    """Over a real process: `subscriptions/listen` is the 2026-07-28 protocol's, which the SDK's in-memory
    transport (the handshake era's) does not carry."""
    write(docs, "a.md", "# A\n\nfirst\n")
    write(docs, "b.md", "# B\n\nfirst\n")
    async with connect_process(docs, RAGDOWN_WATCH="true") as s:
        assert s.client.protocol_version == "2026-07-28"
        caps = s.client.server_capabilities
        assert caps.resources is not None
        assert caps.resources.subscribe
        await s.ok("ragdown_reindex")
        async with s.client.listen(resource_subscriptions=[uri_of("a.md")]) as events:
            write(docs, "b.md", "# B\n\nsecond\n")
            await s.ok("ragdown_reindex")
            write(docs, "a.md", "# A\n\nsecond\n")
            with anyio.fail_after(WAIT_S):
                first = await events.__anext__()
            assert first == ResourceUpdated(uri=uri_of("a.md"))


@handshake_era
async def test_subscribing_to_something_that_is_no_resource_is_refused(docs: Path, tmp_path: Path) -> None:
    write(docs, "a.md", "# A\n")
    async with legacy_session(tmp_path, docs, Notifications()) as s:
        await s.client.subscribe_resource(uri_of("not-yet.md"))
        for uri in ("ragdown://../x.md", "other://a.md"):
            with pytest.raises(MCPError) as caught:
                await s.client.subscribe_resource(uri)
            assert caught.value.error.code == types.INVALID_PARAMS


# -- a tool set's own resources, templates and prompts ---------------------------------------------


async def _naming(ctx: ToolContext) -> str:
    return f"# Naming\n\nIn {ctx.scope.root.name}: lower-case names.\n"


async def _tool_doc(ctx: ToolContext, values: dict[str, str]) -> str:
    if values["tool_name"] != "find thing":
        raise not_found(f"no tool named {values['tool_name']}")
    return "# find thing\n\nFinds things.\n"


async def _session_prompt(ctx: ToolContext, args: dict[str, str]) -> str:
    return f"Start a session as {args['who']}."


SET_EXTRAS = Selection(
    ("ragdown",),
    ALL_TOOLS,
    resources=(ResourceSpec("test://policy/naming", "naming", "How documents are named.", _naming),),
    templates=(ResourceTemplateSpec("test://docs/{tool_name}", "tool docs", "A tool's page.", _tool_doc),),
    prompts=(
        PromptSpec(
            "onboard_session",
            "Start a session.",
            _session_prompt,
            (PromptArgument("who", "Who you are.", required=True),),
        ),
    ),
)


async def test_a_tool_sets_own_resources_templates_and_prompts(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    """The server of a set that brings resources, templates and prompts (as `readmedb` does), in-process."""
    write(docs, "a.md", "# A\n")
    engine = open_engine(docs)
    runtime = Runtime(engine.settings, engine)
    server = build_server(
        runtime, Scope(root=docs.resolve(), folder=""), name="t", title="T", extras=SET_EXTRAS
    )
    async with Client(server) as client:
        listed = (await client.list_resources(cache_mode="bypass")).resources
        assert [r.uri for r in listed] == ["test://policy/naming", "ragdown://a.md"]
        [policy] = (await client.read_resource("test://policy/naming", cache_mode="bypass")).contents
        assert isinstance(policy, types.TextResourceContents)
        assert policy.text == f"# Naming\n\nIn {docs.name}: lower-case names.\n"
        templates = (await client.list_resource_templates(cache_mode="bypass")).resource_templates
        assert [t.uri_template for t in templates] == ["ragdown://{path}", "test://docs/{tool_name}"]
        [page] = (await client.read_resource("test://docs/find%20thing", cache_mode="bypass")).contents
        assert isinstance(page, types.TextResourceContents)
        assert page.text.startswith("# find thing")
        with pytest.raises(MCPError) as caught:
            await client.read_resource("test://docs/nope", cache_mode="bypass")
        assert caught.value.error.code == types.INVALID_PARAMS
        assert "no tool named nope" in caught.value.error.message
        prompts = (await client.list_prompts(cache_mode="bypass")).prompts
        assert [p.name for p in prompts] == ["ragdown_onboard", "onboard_session"]
        got = await client.get_prompt("onboard_session", {"who": "a reviewer"})
        [message] = got.messages
        assert isinstance(message.content, types.TextContent)
        assert message.content.text == "Start a session as a reviewer."
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("onboard_session")
        assert "needs the argument(s) who" in caught.value.error.message
