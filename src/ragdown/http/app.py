"""The ASGI app of `ragdown serve`: Host/Origin checks, the bearer token, `/mcp…`, `/api/…`, the web UI.

Dispatch is explicit rather than a router so the status codes are exactly the spec's: an unknown `/api`
path is a 404 before auth, a known one with the wrong method a 405, a missing or wrong token a 401.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.types import Message, Receive, Scope, Send

from ragdown import toolsets
from ragdown.engine import NotReady
from ragdown.errors import Refusal, bad_request, not_found, printable
from ragdown.folders import folder_settings, list_folders
from ragdown.http import api as routes
from ragdown.http.errors import error, refused
from ragdown.http.security import Guard
from ragdown.index.store import StoreError
from ragdown.mcpserver import build_server
from ragdown.paths import is_text
from ragdown.runtime import Runtime
from ragdown.scope import Scope as DocScope
from ragdown.scope import open_scope
from ragdown.tools import ROOT_TOOLS

log = logging.getLogger(__name__)

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
NOT_FOUND_MCP = {"error": "Not found"}

Route = Callable[[routes.Api, Request], Awaitable[Response]]
FolderRoute = Callable[[routes.Api, Request, str], Awaitable[Response]]

API: dict[str, dict[str, Route]] = {
    "/api/status": {"GET": routes.status},
    "/api/settings": {"PATCH": routes.patch_settings},
    "/api/query-log": {"GET": routes.query_log, "DELETE": routes.clear_query_log},
    "/api/folders": {"GET": routes.get_folders, "POST": routes.post_folder},
    "/api/loose": {"DELETE": routes.delete_loose},
    "/api/docs": {"GET": routes.get_docs},
    "/api/doc": {"GET": routes.get_doc, "POST": routes.post_doc, "DELETE": routes.delete_doc},
    "/api/render": {"POST": routes.render_preview},
    "/api/search": {"GET": routes.search},
    "/api/resolve": {"GET": routes.resolve},
    "/api/move": {"POST": routes.move},
    "/api/backlinks": {"GET": routes.backlinks},
    "/api/outline": {"GET": routes.outline},
    "/api/history": {"GET": routes.history},
    "/api/version": {"GET": routes.version},
    "/api/diff": {"GET": routes.diff},
    "/api/restore": {"POST": routes.restore_version},
    "/api/trash": {"GET": routes.trash},
    "/api/file": {"GET": routes.get_file},
}
FOLDER_API: dict[str, FolderRoute] = {"PATCH": routes.patch_folder, "DELETE": routes.delete_folder}
OPEN_ROUTES = frozenset({"/api/status"})


class RagdownApp:
    """The whole HTTP surface; `lifespan` starts the engine and stops it."""

    def __init__(self, runtime: Runtime, guard: Guard, keep_alive_s: float) -> None:
        self.runtime = runtime
        self.guard = guard
        self.api = routes.Api(runtime=runtime, auth_required=guard.auth_required)
        self.keep_alive_s = keep_alive_s

    @contextlib.asynccontextmanager
    async def lifespan(self, _: Any) -> AsyncIterator[None]:
        self.runtime.engine.start()
        try:
            yield
        finally:
            self.runtime.engine.close()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        send = self._with_keep_alive(send)
        request = Request(scope, receive)
        response = await self._checked(request)
        if response is not None:
            await response(scope, receive, send)
            return
        path: str = scope["path"]
        if path == "/mcp" or path.startswith("/mcp/"):
            await self._mcp(request, scope, receive, send)
            return
        if path.startswith("/api/") or path == "/api":
            await (await self._api(request))(scope, receive, send)
            return
        await self._static(request)(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        assert message["type"] == "lifespan.startup"
        async with self.lifespan(None):
            await send({"type": "lifespan.startup.complete"})
            message = await receive()
        await send({"type": "lifespan.shutdown.complete"})

    def _with_keep_alive(self, send: Send) -> Send:
        if self.keep_alive_s <= 0:
            return send
        value = f"timeout={round(self.keep_alive_s)}".encode()

        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if h[0].lower() != b"keep-alive"]
                message = {**message, "headers": [*headers, (b"keep-alive", value)]}
            await send(message)

        return wrapped

    async def _checked(self, request: Request) -> Response | None:
        host = request.headers.get("host")
        if not self.guard.host_allowed(host):
            return JSONResponse(
                {"error": f"Host {host!r} is not allowed: add it to RAGDOWN_ALLOWED_HOSTS"}, status_code=421
            )
        if not self.guard.origin_allowed(request.headers.get("origin"), host, request.url.scheme):
            return JSONResponse(
                {"error": "Cross-origin requests are not allowed: add the origin to RAGDOWN_ALLOWED_ORIGINS"},
                status_code=403,
            )
        return None

    def _authorized(self, request: Request) -> bool:
        return self.guard.authorized(request.headers.get("authorization"))

    # -- /api --------------------------------------------------------------------------------------

    async def _api(self, request: Request) -> Response:
        path = request.url.path.rstrip("/") or "/"
        method = request.method
        folder: str | None = None
        handlers: dict[str, Any] | None = API.get(path)
        if handlers is None and path.startswith("/api/folders/"):
            raw = path[len("/api/folders/") :]
            folder = raw if "/" not in raw else None
            handlers = FOLDER_API if folder else None
        if handlers is None:
            return error(404, f"no route {printable(path)}")
        if method not in handlers and not (method == "HEAD" and "GET" in handlers):
            return error(405, f"{method} is not allowed on {printable(path)}")
        if path not in OPEN_ROUTES and not self._authorized(request):
            return error(401, "Unauthorized")
        handler = handlers.get(method) or handlers["GET"]
        try:
            if folder is not None:
                name = unquote(folder, errors="strict")
                if not is_text(name):
                    raise not_found(f"no such folder: {printable(name)}")
                return await handler(self.api, request, name)  # type: ignore[no-any-return]
            return await handler(self.api, request)  # type: ignore[no-any-return]
        except Refusal as err:
            return refused(err)
        except UnicodeDecodeError:
            return error(404, f"no such folder: {printable(unquote(folder or ''))}")
        except (NotReady, StoreError) as err:
            return error(503, f"the index is not available: {err}")
        except Exception as err:
            log.exception("%s %s failed", method, printable(path))
            return error(500, f"internal error: {err}")

    # -- /mcp --------------------------------------------------------------------------------------

    async def _mcp(self, request: Request, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._authorized(request):
            await error(401, "Unauthorized")(scope, receive, send)
            return
        found = self._mcp_scope(scope["path"])
        if found is None:
            body = NOT_FOUND_MCP if scope["path"] != "/mcp" else {"error": "Pick a folder: /mcp/<folder>"}
            await JSONResponse(body, status_code=404)(scope, receive, send)
            return
        doc_scope, name, title, folder_toolset = found
        try:
            selection = self._tools_for(doc_scope, request.query_params.get("toolset"), folder_toolset)
        except Refusal as err:
            await refused(err)(scope, receive, send)
            return
        # Stateless: no feed, so resource subscriptions are refused (there is no session to notify later).
        server = build_server(
            self.runtime,
            doc_scope,
            name=name,
            title=title,
            tools=selection.tools,
            instructions=selection.instructions(title),
            extras=selection,
        )
        manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True)
        async with manager.run():
            await manager.handle_request(scope, receive, send)

    def _tools_for(
        self, doc_scope: DocScope, asked: str | None, folder_toolset: str | None
    ) -> toolsets.Selection:
        """The tool set an MCP request gets (its tools, resources, templates and prompts): `?toolset=` over
        the folder's `toolset` over `RAGDOWN_TOOLSET`."""
        if doc_scope.is_root:
            if toolsets.parse(asked) != (toolsets.DEFAULT_TOOLSET,):
                raise bad_request("the root endpoint /mcp offers ragdown's own tools only")
            return toolsets.Selection((toolsets.DEFAULT_TOOLSET,), ROOT_TOOLS)
        return toolsets.select(asked or folder_toolset or self.runtime.settings.toolset)

    def _mcp_scope(self, path: str) -> tuple[DocScope, str, str, str | None] | None:
        """The scope an MCP path names, the server's name and title, and the folder's own tool set."""
        root = self.runtime.engine.root
        parts = [p for p in path.split("/")[2:] if p != ""]
        if not parts:
            if not self.runtime.root_mcp:
                return None
            doc_scope = DocScope(root=root, folder="", folders=())
            return doc_scope, "ragdown", "every", None
        try:
            folder = unquote(parts[0], errors="strict")
            sub = "/".join(unquote(p, errors="strict") for p in parts[1:])
        except UnicodeDecodeError:
            return None
        if folder not in list_folders(root):
            return None
        settings = folder_settings(root / folder, folder)
        if not settings.mcp:
            return None
        try:
            doc_scope = open_scope(root, folder, sub)
        except Refusal:
            return None
        return doc_scope, f"ragdown-{folder}", settings.title, settings.toolset

    # -- the web UI --------------------------------------------------------------------------------

    def _static(self, request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            return error(404, "not found")
        index = WEB_DIR / "index.html"
        try:
            rel = unquote(request.url.path, errors="strict").lstrip("/")
        except UnicodeDecodeError:
            rel = ""
        candidate = (WEB_DIR / rel).resolve() if rel else index
        if not rel or WEB_DIR not in candidate.parents or not candidate.is_file():
            candidate = index
        if not candidate.is_file():
            return error(404, "the web UI is not installed")
        return FileResponse(candidate, headers={"cache-control": "no-cache"})
