"""The ASGI app of `ragdown serve`: Host/Origin checks, the bearer token, `/mcp…`, `/api/…`, the web UI.

Dispatch is explicit rather than a router so the status codes are exactly the spec's: an unknown `/api`
path is a 404 before auth, a known one with the wrong method a 405, a missing or wrong token a 401.

Before any route runs, the request's credential is resolved once (`security.Guard.resolve`) to an
`access.Access`, put in the ASGI scope (`access.access_of` reads it back), and charged to its caller's
rate limit (`ratelimit.py`: per key, per client address without one, which is the connection's unless
it comes from one of `RAGDOWN_TRUSTED_PROXIES`; the web UI's files are free). Who
may call which `/api` route is one table, `NEEDS`; which folders a caller sees is the routes' own
business (`http/api/`: a folder a key does not see answers as a missing one), and so is it for `/mcp`: a
folder endpoint the key does not see is a 404, the root endpoint lists and searches only its folders,
and a read key is offered no write tool (`tools.visible_tools`).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, unquote

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.types import Message, Receive, Scope, Send

from ragdown import toolsets
from ragdown.access.caller import ADMIN, SCOPE_KEY, Access, access_of, namespace_of
from ragdown.access.scope import Scope as DocScope
from ragdown.access.scope import open_scope
from ragdown.core.errors import (
    Refusal,
    forbidden,
    internal,
    not_found,
    printable,
    rate_limited,
    unavailable,
)
from ragdown.core.paths import is_usable, printable_name
from ragdown.engine.runtime import Runtime
from ragdown.engine.status import NotReady
from ragdown.http import keyroutes, openapi
from ragdown.http.api import base, docs, folders, history, server
from ragdown.http.errors import MISDIRECTED, NO_ROUTE, NOT_ALLOWED, UNAUTHORIZED, error, refused, rpc_refused
from ragdown.http.oauth.routes import OAuth
from ragdown.http.ratelimit import RateLimiter
from ragdown.http.rest import routes as rest
from ragdown.http.security import Guard, TrustedProxies, bearer
from ragdown.mcpserver.server import build_server
from ragdown.storage.records import StoreError
from ragdown.vault.folders import folder_settings, list_folders

log = logging.getLogger(__name__)

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
NOT_FOUND_MCP = {"error": "Not found"}
NAMESPACE_MCP = "/api/mcp"  # ReadmeDB's MCP endpoint: the readmedb tool set on the one folder of the key
NAMESPACE_TOOLSET = "readmedb"
RPC_ID_BYTES = 65_536  # of a rate-limited MCP request's body read to answer with its id

Route = Callable[[base.Api, Request], Awaitable[Response]]
FolderRoute = Callable[[base.Api, Request, str], Awaitable[Response]]

API: dict[str, dict[str, Route]] = {
    "/api/status": {"GET": server.status},
    "/api/settings": {"PATCH": server.patch_settings},
    "/api/query-log": {"GET": server.query_log, "DELETE": server.clear_query_log},
    "/api/folders": {"GET": folders.get_folders, "POST": folders.post_folder},
    "/api/loose": {"DELETE": folders.delete_loose},
    "/api/docs": {"GET": docs.get_docs},
    "/api/doc": {"GET": docs.get_doc, "POST": docs.post_doc, "DELETE": docs.delete_doc},
    "/api/render": {"POST": docs.render_preview},
    "/api/search": {"GET": docs.search},
    "/api/resolve": {"GET": docs.resolve},
    "/api/move": {"POST": docs.move},
    "/api/backlinks": {"GET": docs.backlinks},
    "/api/outline": {"GET": docs.outline},
    "/api/history": {"GET": history.history},
    "/api/version": {"GET": history.version},
    "/api/diff": {"GET": history.diff},
    "/api/restore": {"POST": history.restore_version},
    "/api/trash": {"GET": history.trash, "DELETE": history.purge_trash},
    "/api/file": {"GET": docs.get_file},
    "/api/keys": {"GET": keyroutes.list_keys, "POST": keyroutes.create_key},
    "/api/openapi.json": {"GET": openapi.openapi_json},
    "/api/openapi": {"GET": openapi.openapi_json},  # where ReadmeDB's reference says its OpenAPI spec is
}
FOLDER_API: dict[str, FolderRoute] = {"PATCH": folders.patch_folder, "DELETE": folders.delete_folder}
# Routes with one path segment after the prefix (`/api/keys/<id>`): the segment is the route's argument.
ITEM_API: dict[str, dict[str, FolderRoute]] = {
    "/api/folders/": FOLDER_API,
    "/api/keys/": {"DELETE": keyroutes.delete_key},
}

# Who may call each route, in one table (tests/http/test_access_walk.py walks every entry with every kind
# of key, and fails on a route without one):
#   open   anyone, no credential needed
#   read   any key or the admin; the route shows only the folders its caller sees
#   write  a write key or the admin (a read key: 403), in the folders it sees
#   admin  RAGDOWN_TOKEN only (or no token configured): server settings, folders, keys, the query log
Need = Literal["open", "read", "write", "admin"]
NEEDS: dict[str, dict[str, Need]] = {
    "/api/status": {"GET": "open"},
    "/api/settings": {"PATCH": "admin"},
    "/api/query-log": {"GET": "admin", "DELETE": "admin"},
    "/api/folders": {"GET": "read", "POST": "admin"},
    "/api/loose": {"DELETE": "admin"},
    "/api/docs": {"GET": "read"},
    "/api/doc": {"GET": "read", "POST": "write", "DELETE": "write"},
    "/api/render": {"POST": "read"},
    "/api/search": {"GET": "read"},
    "/api/resolve": {"GET": "read"},
    "/api/move": {"POST": "write"},
    "/api/backlinks": {"GET": "read"},
    "/api/outline": {"GET": "read"},
    "/api/history": {"GET": "read"},
    "/api/version": {"GET": "read"},
    "/api/diff": {"GET": "read"},
    "/api/restore": {"POST": "write"},
    "/api/trash": {"GET": "read", "DELETE": "write"},
    "/api/file": {"GET": "read"},
    "/api/keys": {"GET": "admin", "POST": "admin"},
    "/api/folders/": {"PATCH": "admin", "DELETE": "admin"},
    "/api/keys/": {"DELETE": "admin"},
    "/api/openapi.json": {"GET": "open"},
    "/api/openapi": {"GET": "open"},
    **rest.NEEDS,  # /api/v1: templated paths (`{folder}`, `{path}`, `{version}`), matched by `rest.route_of`
}
MCP_NEED: Need = "read"  # every MCP endpoint: which folders and tools, the endpoint decides by the access


def permits(access: Access, need: Need) -> bool:
    """Whether `access` may call a route that needs `need` (folders aside)."""
    if need in ("open", "read"):
        return True
    if need == "write":
        return access.can_write
    return access.is_admin


def need_of(route: str, method: str) -> Need:
    """A route's need from `NEEDS` (HEAD as GET); one missing from the table is the admin's alone."""
    needs = NEEDS.get(route, {})
    return needs.get(method) or (needs.get("GET") if method == "HEAD" else None) or "admin"


class RagdownApp:
    """The whole HTTP surface; `lifespan` starts the engine and stops it."""

    def __init__(self, runtime: Runtime, guard: Guard, keep_alive_s: float) -> None:
        self.runtime = runtime
        self.guard = guard
        self.keys = guard.keys  # the docs dir's KeyStore (None: keys are not served)
        self.api = base.Api(runtime=runtime, auth_required=guard.auth_required, keys=guard.keys)
        self.keep_alive_s = keep_alive_s
        self.limiter = RateLimiter(runtime.settings.rate_limit)
        self.proxies = TrustedProxies(runtime.settings.trusted_proxies)
        self.oauth = self._oauth(runtime, guard)

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
        self.proxies.apply(scope)  # the client and scheme a trusted proxy names (RAGDOWN_TRUSTED_PROXIES)
        send = self._with_keep_alive(send)
        request = Request(scope, receive)
        response = await self._checked(request)
        if response is not None:
            await response(scope, receive, send)
            return
        path: str = scope["path"]
        access = self.guard.resolve(request.headers.get("authorization"))
        if access is not None:
            scope[SCOPE_KEY] = access
        is_mcp = path in ("/mcp", NAMESPACE_MCP) or path.startswith("/mcp/")
        if not self._is_static(request):
            wait = self.limiter.take(self._caller(request, access))
            if wait is not None:
                limited = rate_limited(wait)
                reply = rpc_refused(limited, await _rpc_id(request)) if is_mcp else refused(limited)
                await reply(scope, receive, send)
                return
        if self.oauth is not None and self.oauth.handles(path):  # open routes: OAuth is how to get a key
            await self.oauth(scope, receive, send)
            return
        if is_mcp:
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
        coded = rest.is_v1(request.url.path)
        if not self.guard.host_allowed(host) and not self.guard.credentialed(
            request.headers.get("authorization")
        ):
            message = f"Host {host!r} is not allowed: add it to RAGDOWN_ALLOWED_HOSTS"
            return error(MISDIRECTED, message, "misdirected" if coded else None)
        if not self.guard.origin_allowed(request.headers.get("origin"), host, request.url.scheme):
            message = "Cross-origin requests are not allowed: add the origin to RAGDOWN_ALLOWED_ORIGINS"
            return refused(forbidden(message), coded=coded)
        return None

    def _authorized(self, request: Request) -> bool:
        """Whether the dispatch resolved this request's credential to an access (else it is a 401)."""
        return SCOPE_KEY in request.scope

    def _unauthorized(self, request: Request) -> Response:
        """The 401 of a request without a credential this server knows, saying where to get one (the MCP
        authorization spec's `WWW-Authenticate`, with RFC 9728's `resource_metadata`); REST v1's has a code."""
        code = "unauthorized" if rest.is_v1(request.url.path) else None
        response = error(UNAUTHORIZED, "Unauthorized", code)
        presented = bearer(request.headers.get("authorization")) is not None
        if self.oauth is not None:
            response.headers["WWW-Authenticate"] = self.oauth.challenge(request.scope, presented=presented)
        else:
            response.headers["WWW-Authenticate"] = 'Bearer error="invalid_token"' if presented else "Bearer"
        return response

    @staticmethod
    def _oauth(runtime: Runtime, guard: Guard) -> OAuth | None:
        """OAuth for hosted clients (`http/oauth/routes.py`), where keys are served: its tokens are keys."""
        if guard.keys is None:
            return None
        settings = runtime.settings

        def is_admin(secret: str) -> bool:
            return guard.resolve(f"Bearer {secret}") is ADMIN

        return OAuth(
            runtime.engine.root,
            guard.keys,
            is_admin=is_admin if guard.auth_required else None,
            public_url=settings.public_url,
            access_ttl_s=settings.oauth_token_ttl,
            refresh_ttl_s=settings.oauth_refresh_days * 86_400,
        )

    def _caller(self, request: Request, access: Access | None) -> str:
        """Whose rate limit a request spends: its key's, the admin's, else its client address's."""
        if access is not None and access.key_id is not None:
            return "key:" + access.key_id
        if access is ADMIN:
            return "admin"
        return "addr:" + (request.client.host if request.client else "")

    def _is_static(self, request: Request) -> bool:
        """A file of the web UI (or its page at `/`): never rate limited, as a browser loads dozens."""
        path = request.url.path
        if request.method not in ("GET", "HEAD") or path.startswith(("/api", "/mcp", "/.well-known")):
            return False
        return path == "/" or self._static_file(path) is not None

    # -- /api --------------------------------------------------------------------------------------

    async def _api(self, request: Request) -> Response:
        path = request.url.path.rstrip("/") or "/"
        method = request.method
        folder: str | None = None
        route = path
        handlers: dict[str, Any] | None = API.get(path)
        if handlers is None:
            for prefix, items in ITEM_API.items():
                if path.startswith(prefix):
                    raw = path[len(prefix) :]
                    folder = raw if raw and "/" not in raw else None
                    handlers = items if folder else None
                    route = prefix
                    break
        if handlers is None and path.startswith(rest.PREFIX + "/"):
            found = rest.route_of(request)
            if found is not None:
                route, handlers = found
        coded = rest.is_v1(path)  # REST v1's errors always carry a code; the web UI's keep the core's
        if handlers is None:
            return error(NO_ROUTE, f"no route {printable(path)}", "no_route" if coded else None)
        if method not in handlers and not (method == "HEAD" and "GET" in handlers):
            message = f"{method} is not allowed on {printable(path)}"
            return error(NOT_ALLOWED, message, "method_not_allowed" if coded else None)
        need = need_of(route, method)
        if need != "open" and not self._authorized(request):
            return self._unauthorized(request)
        if need != "open" and not permits(access_of(request.scope), need):
            who = "the admin token (RAGDOWN_TOKEN)" if need == "admin" else "a key with the write role"
            return refused(forbidden(f"{method} {printable(path)} needs {who}"), coded=coded)
        handler: Any = handlers.get(method) or handlers["GET"]
        try:
            if folder is not None:
                name = unquote(folder, errors="strict")
                if not is_usable(name):
                    raise not_found(f"no such folder: {printable_name(name)}")
                return await handler(self.api, request, name)  # type: ignore[no-any-return]
            return await handler(self.api, request)  # type: ignore[no-any-return]
        except Refusal as err:
            return refused(err, coded=coded)
        except UnicodeDecodeError:
            return refused(not_found(f"no such folder: {printable(unquote(folder or ''))}"), coded=coded)
        except (NotReady, StoreError) as err:
            return refused(
                unavailable(self._told(request, f"the index is not available: {err}")), coded=coded
            )
        except Exception as err:
            log.exception("%s %s failed", method, printable(path))
            return refused(internal(self._told(request, f"internal error: {err}")), coded=coded)

    def _told(self, request: Request, text: str) -> str:
        """An error's words for this caller: the admin's as they are, anyone else's without server paths."""
        return text if access_of(request.scope).is_admin else self.api.hide_paths(text)

    # -- /mcp --------------------------------------------------------------------------------------

    async def _mcp(self, request: Request, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._authorized(request):
            await self._unauthorized(request)(scope, receive, send)
            return
        access = access_of(scope)
        path, default_toolset = scope["path"], None
        if path == NAMESPACE_MCP:  # ReadmeDB's endpoint: its tool set, at the folder of a one-folder key
            try:
                path = "/mcp/" + quote(namespace_of(access, NAMESPACE_MCP), safe="")
            except Refusal as err:
                await refused(err)(scope, receive, send)
                return
            default_toolset = NAMESPACE_TOOLSET
        found = self._mcp_scope(path, access)
        if found is None:
            body = NOT_FOUND_MCP if scope["path"] != "/mcp" else {"error": "Pick a folder: /mcp/<folder>"}
            if default_toolset is not None:
                body = {"error": "this key's folder is not served over MCP: its settings' `mcp` is off"}
            await error(NO_ROUTE, body["error"])(scope, receive, send)
            return
        doc_scope, name, title, folder_toolset = found
        try:
            asked = request.query_params.get("toolset") or default_toolset
            selection = self._tools_for(doc_scope, asked, folder_toolset)
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
            access=access,
            base_url=self.runtime.settings.public_url or str(request.base_url).rstrip("/"),
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
            return toolsets.select_root(asked)
        return toolsets.select(asked or folder_toolset or self.runtime.settings.toolset)

    def _mcp_scope(self, path: str, access: Access) -> tuple[DocScope, str, str, str | None] | None:
        """The scope an MCP path names, the server's name and title, and the folder's own tool set; None
        for a folder that is not there, or that this caller's key does not see (the same 404)."""
        root = self.runtime.engine.root
        parts = [p for p in path.split("/")[2:] if p != ""]
        if not parts:
            if not self.runtime.root_mcp:
                return None
            doc_scope = DocScope(root=root, folder="", folders=(), allowed=access.folders)
            return doc_scope, "ragdown", "every", None
        try:
            folder = unquote(parts[0], errors="strict")
            sub = "/".join(unquote(p, errors="strict") for p in parts[1:])
        except UnicodeDecodeError:
            return None
        if not access.sees(folder) or folder not in list_folders(root):
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

    def _static_file(self, path: str) -> Path | None:
        """The web UI's file a path names, or None."""
        try:
            rel = unquote(path, errors="strict").lstrip("/")
        except UnicodeDecodeError:
            return None
        if not rel:
            return None
        candidate = (WEB_DIR / rel).resolve()
        return candidate if WEB_DIR in candidate.parents and candidate.is_file() else None

    def _static(self, request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            return error(NO_ROUTE, "not found")
        candidate = self._static_file(request.url.path) or WEB_DIR / "index.html"
        if not candidate.is_file():
            return error(NO_ROUTE, "the web UI is not installed")
        return FileResponse(candidate, headers={"cache-control": "no-cache"})


async def _rpc_id(request: Request) -> Any:
    """The JSON-RPC id of an MCP request refused before the server reads it (None when there is none)."""
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > RPC_ID_BYTES:
            return None
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return body.get("id") if isinstance(body, dict) else None
