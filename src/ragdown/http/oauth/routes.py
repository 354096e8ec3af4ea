"""OAuth 2.1 for hosted MCP clients (Claude.ai's custom connectors and others), on the `mcp` SDK's server auth.

The SDK does the protocol: `create_auth_routes` answers the authorization-server metadata (RFC 8414),
dynamic client registration (RFC 7591), `/authorize` (PKCE with S256 only: its request model refuses
`plain`), `/token` (the authorization_code grant, with the PKCE, redirect_uri, client and expiry checks, and
the refresh_token grant) and `/revoke` (RFC 7009: the SDK's handler, but for its request model, which
requires a `client_secret` that a public client has not; `Revocation` here takes one without); its
`ProtectedResourceMetadata` model and handler answer the protected-resource metadata (RFC 9728). What the SDK leaves to a server is here and in two modules
beside it:

- `Provider` (`http/oauth/provider.py`), the SDK's `OAuthAuthorizationServerProvider`. An access token IS a scoped key
  (`KeyStore.create(kind="oauth", expires_at=...)`), so the bearer auth of `http/app.py` accepts it on every
  route with a key's checks; `ragdown keys list` shows it as `oauth-<grant>`, and `keys revoke` ends it and
  its grant (a refresh never brings a revoked key back). A refresh rotates both tokens: the old access key
  is revoked and the old refresh token stops working. A code used twice revokes what it gave.
- The consent page (`/oauth/consent`), where `/authorize` sends the browser. First the server's owner
  gives the admin token (`RAGDOWN_TOKEN`, compared in constant time; a wrong one gets the page again and
  grants nothing; five drop the request); only then are the folders shown, to pick some or every one, and
  the role (read, or read and write). Its form is posted with the page's own `Origin` (its
  `Referrer-Policy: same-origin`; the app's Origin check refuses any other, `null` included), and the
  choice carries the ticket the token step gave (compared in constant time). A code is made only then, bound to the PKCE challenge, the client,
  its redirect_uri and the scopes picked. A server without a token (SECURE_LOCAL_NET: every caller is
  trusted anyway) asks no token: the page goes straight to the choice.
- `OAuth`, the ASGI face the app's dispatch mounts before auth: the SDK's routes for each base URL
  (`RAGDOWN_PUBLIC_URL`, else the request's own scheme and Host), the consent page, the metadata, and the
  `WWW-Authenticate` challenge of every 401 (`challenge`).

Kept by `OAuthStore` (`http/oauth/grants.py`) in `<docs>/.ragdown/oauth.json` (mode 0600, atomic writes under the file's lock), so a restart breaks
no connector: the registered clients (as the SDK records them; a confidential client's secret is compared
by the SDK as it was issued, and alone opens nothing: a token needs a grant) and the grants (each its
refresh token's SHA-256, its client, folders, role and the id of its current access key). Consent requests
and authorization codes live in memory for 10 minutes: a restart in the middle of a consent only means
starting it again.

Scopes: `read`, `write` (a write grant holds both), and `folder:<name>` per folder (percent-encoded) or
`folder:*` for every folder, those made later included. A refresh may ask for fewer.
"""

from __future__ import annotations

import hmac
import html
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast
from urllib.parse import quote, unquote, urlsplit

from anyio import to_thread
from mcp.server.auth.errors import stringify_pydantic_error
from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.handlers.revoke import RevocationErrorResponse, RevocationHandler, RevocationRequest
from mcp.server.auth.json_response import PydanticJSONResponse
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.provider import AccessToken, RefreshToken
from mcp.server.auth.routes import (
    AUTHORIZATION_PATH,
    REGISTRATION_PATH,
    REVOCATION_PATH,
    TOKEN_PATH,
    _body_limited,
    _cors,
    cors_middleware,
    create_auth_routes,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl, ConfigDict, TypeAdapter, ValidationError
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route, Router, request_response
from starlette.status import HTTP_303_SEE_OTHER
from starlette.types import Message, Receive, Scope, Send

from ragdown.access.caller import Role
from ragdown.access.keys import KeyStore
from ragdown.core.errors import Refusal, bad_request, forbidden, internal, not_found, printable, unavailable
from ragdown.http.errors import refused, status_of
from ragdown.http.oauth.grants import ROLE_SCOPES
from ragdown.http.oauth.provider import BASE, CONSENT_PATH, Pending, Provider
from ragdown.vault.folders import list_folders

log = logging.getLogger(__name__)

CONSENT_TRIES = 5  # wrong admin tokens before a consent request is dropped
RESOURCE_METADATA = "/.well-known/oauth-protected-resource"
SERVER_METADATA = "/.well-known/oauth-authorization-server"
SDK_PATHS = frozenset({SERVER_METADATA, AUTHORIZATION_PATH, TOKEN_PATH, REGISTRATION_PATH, REVOCATION_PATH})
# ReadmeDB's reference names `/oauth/authorize` and `/oauth/token`: the same endpoints as the metadata's.
ALIASES = {"/oauth/authorize": AUTHORIZATION_PATH, "/oauth/token": TOKEN_PATH}
PATHS = SDK_PATHS | {CONSENT_PATH, RESOURCE_METADATA, *ALIASES}  # and RESOURCE_METADATA/<resource path>
# The resources a ReadmeDB client calls (`/api/mcp`, `/api/v1/files…`): their 401 names ReadmeDB's realm.
READMEDB_PATHS = ("/api/mcp", "/api/v1/files")
FORM_BYTES = 64 * 1024
ROUTERS_KEPT = 8  # base URLs whose routes are kept built (more than one only without RAGDOWN_PUBLIC_URL)
_URL = TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True))
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
PAGE_HEADERS = {
    **NO_STORE,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    # Not no-referrer: under it a browser posts the page's form with `Origin: null`, which the app's Origin
    # check refuses like any foreign page's. same-origin sends the page's own origin on its own form (what
    # proves the post came from this page) and no Referer to anyone else: not the client it goes back to.
    "Referrer-Policy": "same-origin",
    # No form-action: after the owner's answer the page is redirected to the client, which it must allow.
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; "
    "base-uri 'none'",
}


# -- the consent page --------------------------------------------------------------------------------

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · ragdown</title>
<style>
body {{ font: 16px/1.5 system-ui, sans-serif; max-width: 38rem; margin: 2rem auto; padding: 0 1rem;
  color: #1b1b1b; background: #fff; }}
fieldset {{ border: 1px solid #888; border-radius: 6px; margin: 1rem 0; padding: .5rem 1rem 1rem; }}
legend {{ font-weight: 600; padding: 0 .25rem; }}
label {{ display: block; margin: .35rem 0; }}
input[type=password] {{ width: 100%; font: inherit; padding: .4rem; box-sizing: border-box; }}
button {{ font: inherit; padding: .5rem 1.25rem; margin: .5rem .5rem 0 0; }}
.error {{ border: 2px solid #b00020; color: #b00020; padding: .5rem 1rem; border-radius: 6px; }}
.note {{ color: #555; font-size: .9rem; }}
code {{ word-break: break-all; }}
@media (prefers-color-scheme: dark) {{
  body {{ background: #161616; color: #eee; }} .note {{ color: #bbb; }}
  .error {{ color: #ff8a8a; border-color: #ff8a8a; }}
}}
</style>
</head>
<body>
<main>
<h1>{title}</h1>
{body}
</main>
</body>
</html>
"""


def _e(text: object) -> str:
    return html.escape(printable(str(text)), quote=True)


def _page(title: str, body: str, refusal: Refusal | None = None) -> HTMLResponse:
    alert = f'<p class="error" role="alert">{_e(refusal.message)}</p>\n' if refusal is not None else ""
    content = PAGE.format(title=_e(title), body=alert + body)
    if refusal is None:
        return HTMLResponse(content, headers=PAGE_HEADERS)
    return HTMLResponse(content, status_code=status_of(refusal), headers=PAGE_HEADERS)


def _who(pending: Pending, base: str) -> str:
    redirect = urlsplit(str(pending.params.redirect_uri))
    back = f"{redirect.scheme}://{redirect.netloc}" if redirect.netloc else f"{redirect.scheme}:"
    lines = [
        f"<p><strong>{_e(pending.client_name)}</strong> asks to use the notes of the ragdown server at "
        f"<code>{_e(base)}</code>.</p>",
        f'<p class="note">If you allow it, it is sent back to <code>{_e(back)}</code>'
        + (f" to use <code>{_e(pending.params.resource)}</code>" if pending.params.resource else "")
        + ". Allow it only if you started this from that client.</p>",
    ]
    return "\n".join(lines)


def _asked_folder(pending: Pending, base: str) -> str | None:
    """The folder of the MCP endpoint the client asked for (`…/mcp/<folder>…`), to tick it first."""
    resource = pending.params.resource
    if not resource or not resource.startswith(base):
        return None
    parts = [p for p in urlsplit(resource).path.split("/") if p]
    return unquote(parts[1]) if len(parts) >= 2 and parts[0] == "mcp" else None


# -- /revoke -------------------------------------------------------------------------------------------


class PublicRevocationRequest(RevocationRequest):
    """RFC 7009's request. The SDK's model requires a `client_secret` field even of a public client
    (`token_endpoint_auth_method: none`), which has none to send: here it may be left out."""

    client_secret: str | None = None


class Revocation(RevocationHandler):
    """The SDK's `/revoke` handler with `PublicRevocationRequest` for its request, and nothing else changed:
    the client is authenticated by the SDK's `ClientAuthenticator` first (a confidential client by its
    secret, posted or in a Basic header; a public one by its `client_id`), and a token is revoked only when
    it is that client's. An unknown token, or another client's, is answered 200 and left alone."""

    async def handle(self, request: Request) -> Response:
        try:
            client = await self.client_authenticator.authenticate_request(request)
        except AuthenticationError as err:
            return PydanticJSONResponse(
                status_code=401,
                content=RevocationErrorResponse(error="unauthorized_client", error_description=err.message),
            )
        try:
            asked = PublicRevocationRequest.model_validate(dict(await request.form()))
        except ValidationError as err:
            return PydanticJSONResponse(
                status_code=400,
                content=RevocationErrorResponse(
                    error="invalid_request", error_description=stringify_pydantic_error(err)
                ),
            )
        token: AccessToken | RefreshToken | None
        if asked.token_type_hint == "refresh_token":
            token = await self.provider.load_refresh_token(client, asked.token)
            token = token or await self.provider.load_access_token(asked.token)
        else:
            token = await self.provider.load_access_token(asked.token)
            token = token or await self.provider.load_refresh_token(client, asked.token)
        if token is not None and token.client_id == client.client_id:
            await self.provider.revoke_token(token)
        return Response(status_code=200, headers=NO_STORE)


def _revocation_route(provider: Provider) -> Route:
    """`/revoke` as the SDK mounts it (its CORS, its body limit), on `Revocation`."""
    handler = Revocation(provider, ClientAuthenticator(provider))
    endpoint = _cors(_body_limited(request_response(handler.handle)), ["POST", "OPTIONS"])
    return Route(REVOCATION_PATH, endpoint=endpoint, methods=["POST", "OPTIONS"])


def _with_revocation(routes: list[BaseRoute], provider: Provider) -> list[BaseRoute]:
    """The SDK's routes, its `/revoke` replaced by `_revocation_route`'s (one that a public client can use)."""
    out = [r for r in routes if not (isinstance(r, Route) and r.path == REVOCATION_PATH)]
    if len(out) != len(routes) - 1:
        raise RuntimeError(f"the mcp SDK's auth routes hold no single {REVOCATION_PATH} route to replace")
    return [*out, _revocation_route(provider)]


@dataclass(frozen=True)
class Choice:
    role: str
    every: bool
    folders: frozenset[str]


class OAuth:
    """The OAuth routes (open: the dispatch mounts them before auth) and the challenge of every 401."""

    def __init__(
        self,
        docs_root: Path,
        keys: KeyStore,
        *,
        is_admin: Callable[[str], bool] | None,
        public_url: str | None,
        access_ttl_s: int,
        refresh_ttl_s: int,
    ) -> None:
        self.docs_root = docs_root
        self.provider = Provider(docs_root, keys, access_ttl_s=access_ttl_s, refresh_ttl_s=refresh_ttl_s)
        self._is_admin = is_admin  # the Guard's constant-time check of RAGDOWN_TOKEN; None: no token
        self.public_url = public_url.rstrip("/") if public_url else None
        self._routers: dict[str, Router] = {}

    @staticmethod
    def handles(path: str) -> bool:
        """Its routes, and every other `/.well-known/` path too: those answer 404 here rather than the web
        UI's page (a client probing `openid-configuration` must not read HTML as metadata)."""
        return path in PATHS or path.startswith("/.well-known/")

    # -- URLs ----------------------------------------------------------------------------------------

    def base_url(self, scope: Scope) -> str:
        """`RAGDOWN_PUBLIC_URL`, else this request's scheme and Host (behind a proxy, set the variable)."""
        if self.public_url:
            return self.public_url
        return str(Request(scope).base_url).rstrip("/")

    def resource_metadata_url(self, scope: Scope) -> str:
        """RFC 9728's metadata URL for the resource a request asked for: the MCP endpoint, or `/api`."""
        path: str = scope["path"]
        if path in ("/mcp", READMEDB_PATHS[0]) or path.startswith("/mcp/"):
            resource = quote(path.rstrip("/"), safe="/", errors="surrogateescape")
        else:
            resource = "/api"
        return f"{self.base_url(scope)}{RESOURCE_METADATA}{resource}"

    def challenge(self, scope: Scope, *, presented: bool) -> str:
        """`WWW-Authenticate` for a 401 (RFC 6750's syntax): that a token sent is no good, where to
        authenticate (RFC 9728's `resource_metadata`, what MCP clients follow), and, as ReadmeDB's 401 says
        it, the `realm` (`readmedb` on its routes, else `ragdown`) and the `authorization_server`."""
        fields = ['error="invalid_token"', 'error_description="the token is unknown, expired or revoked"']
        path: str = scope["path"]
        readmedb = any(path == p or path.startswith(p + "/") for p in READMEDB_PATHS)
        fields = [*fields] if presented else []
        fields += [
            f'resource_metadata="{self.resource_metadata_url(scope)}"',
            f'realm="{"readmedb" if readmedb else "ragdown"}"',
            f'authorization_server="{self.base_url(scope)}"',
        ]
        return "Bearer " + ", ".join(fields)

    # -- dispatch ------------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        base = self.base_url(scope)
        try:
            router = self._router(base)
        except ValueError:
            await refused(
                unavailable(
                    f"OAuth needs an https address, or a loopback one; this request came to {base}: set "
                    "RAGDOWN_PUBLIC_URL to the server's public https URL (behind a TLS proxy)"
                )
            )(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        if scope["path"] in ALIASES:
            scope = {**scope, "path": ALIASES[scope["path"]]}
        reset = BASE.set(base)
        try:
            await router(scope, receive, tracked)
        except Refusal as err:  # a damaged oauth.json or keys.json
            if started:
                raise
            await refused(err)(scope, receive, send)
        except Exception as err:
            log.exception("OAuth %s failed", printable(scope["path"]))
            if started:
                raise
            await refused(internal(f"internal error: {err}"))(scope, receive, send)
        finally:
            BASE.reset(reset)

    def _router(self, base: str) -> Router:
        router = self._routers.get(base)
        if router is None:
            sdk_routes = create_auth_routes(
                self.provider,
                issuer_url=_URL.validate_python(base),
                client_registration_options=ClientRegistrationOptions(
                    enabled=True, default_scopes=list(ROLE_SCOPES)
                ),
                revocation_options=RevocationOptions(enabled=True),
            )
            routes = _with_revocation(list(sdk_routes), self.provider)
            routes += [
                Route(CONSENT_PATH, self._consent, methods=["GET", "POST"], max_body_size=FORM_BYTES),
                Route(
                    RESOURCE_METADATA + "{rest:path}",
                    cors_middleware(self._resource_metadata, ["GET", "OPTIONS"]),
                    methods=["GET", "OPTIONS"],
                ),
            ]
            if len(self._routers) >= ROUTERS_KEPT:
                self._routers.clear()
            router = self._routers[base] = Router(routes=routes, redirect_slashes=False, default=_not_found)
        return router

    async def _resource_metadata(self, request: Request) -> Response:
        rest = request.url.path[len(RESOURCE_METADATA) :].rstrip("/")
        if rest and not any(rest == p or rest.startswith(p + "/") for p in ("/mcp", "/api")):
            return refused(not_found(f"no protected resource at {printable(rest)}"))
        base = BASE.get()
        metadata = ProtectedResourceMetadata(
            resource=_URL.validate_python(base + quote(rest, safe="/", errors="surrogateescape")),
            authorization_servers=[_URL.validate_python(base)],
            scopes_supported=list(ROLE_SCOPES),
            resource_name="ragdown",
        )
        return await ProtectedResourceMetadataHandler(metadata).handle(request)

    # -- the consent page ----------------------------------------------------------------------------

    async def _consent(self, request: Request) -> Response:
        base = BASE.get()
        if request.method in ("GET", "HEAD"):
            pending = self.provider.consent(request.query_params.get("request"))
            if pending is None:
                return self._gone()
            if self._is_admin is not None:
                return self._token_page(pending, base)
            return self._choice_page(pending, base, self._ticket(pending), None)
        form = await request.form(max_files=0, max_fields=1000)
        try:
            return await self._answer(form, base)
        finally:
            await form.close()

    async def _answer(self, form: FormData, base: str) -> Response:
        pending = self.provider.consent(_field(form, "request"))
        if pending is None:
            return self._gone()
        if _field(form, "decision") == "deny":
            return _redirect(self.provider.deny(pending))
        if _field(form, "step") == "token":
            return self._check_token(pending, base, _field(form, "token"))
        ticket = _field(form, "ticket")
        if pending.ticket is None or ticket is None or not hmac.compare_digest(ticket, pending.ticket):
            return self._gone(forbidden("this consent was not unlocked here: start again from your client"))
        choice = Choice(
            role=_field(form, "role") or "",
            every=_field(form, "every") == "on",
            folders=frozenset(v for v in form.getlist("folder") if isinstance(v, str)),
        )
        existing = await to_thread.run_sync(list_folders, self.docs_root)
        problem: Refusal | None = None
        if choice.role not in ROLE_SCOPES:
            problem = bad_request("pick a role: read, or read and write")
        elif not choice.every and not choice.folders:
            problem = bad_request("pick at least one folder, or every folder")
        elif not choice.every and not choice.folders <= set(existing):
            missing = ", ".join(sorted(choice.folders - set(existing)))
            problem = bad_request(f"no such folder: {missing}")
        if problem is not None:
            return self._choice_page(pending, base, pending.ticket, choice, problem)
        folders = None if choice.every else tuple(sorted(choice.folders))
        return _redirect(self.provider.approve(pending, cast(Role, choice.role), folders))

    def _check_token(self, pending: Pending, base: str, given: str | None) -> Response:
        if self._is_admin is None:
            return self._choice_page(pending, base, self._ticket(pending), None)
        if given is not None and self._is_admin(given):
            pending.failures = 0
            return self._choice_page(pending, base, self._ticket(pending), None)
        pending.failures += 1
        if pending.failures >= CONSENT_TRIES:
            self.provider.forget(pending)
            return self._gone(
                forbidden(f"{CONSENT_TRIES} wrong tokens: this request is dropped. Start again.")
            )
        return self._token_page(
            pending,
            base,
            forbidden("That is not this server's admin token (RAGDOWN_TOKEN). Nothing was granted."),
        )

    @staticmethod
    def _ticket(pending: Pending) -> str:
        if pending.ticket is None:
            pending.ticket = secrets.token_urlsafe(32)
        return pending.ticket

    def _gone(self, refusal: Refusal | None = None) -> HTMLResponse:
        refusal = refusal or not_found("This request is unknown or has expired (10 minutes).")
        body = "<p>Nothing was granted. Start again from your client (Claude.ai: Settings → Connectors).</p>"
        return _page("Nothing to allow", body, refusal)

    def _token_page(self, pending: Pending, base: str, refusal: Refusal | None = None) -> HTMLResponse:
        body = f"""{_who(pending, base)}
<form method="post" action="{CONSENT_PATH}">
<input type="hidden" name="request" value="{_e(pending.id)}">
<input type="hidden" name="step" value="token">
<label for="token">This server's admin token (<code>RAGDOWN_TOKEN</code>), to choose what it may use</label>
<input type="password" id="token" name="token" autocomplete="current-password" required autofocus>
<button type="submit" name="decision" value="continue">Continue</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</form>"""
        return _page(f"Allow {pending.client_name}?", body, refusal)

    def _choice_page(
        self, pending: Pending, base: str, ticket: str, choice: Choice | None, refusal: Refusal | None = None
    ) -> HTMLResponse:
        folders = list_folders(self.docs_root)
        if choice is None:
            asked = _asked_folder(pending, base)
            choice = Choice(role="read", every=False, folders=frozenset({asked} if asked in folders else ()))
        checked = ' checked="checked"'
        boxes = "\n".join(
            f'<label><input type="checkbox" name="folder" value="{_e(f)}"'
            f"{checked if f in choice.folders else ''}> {_e(f)}</label>"
            for f in folders
        )
        minutes = self.provider.access_ttl_s // 60
        days = self.provider.refresh_ttl_s // 86_400
        open_note = (
            ""
            if self._is_admin is not None
            else '<p class="note">This server has no admin token (SECURE_LOCAL_NET): it trusts its network, '
            "so no token is asked.</p>\n"
        )
        body = f"""{_who(pending, base)}
{open_note}<form method="post" action="{CONSENT_PATH}">
<input type="hidden" name="request" value="{_e(pending.id)}">
<input type="hidden" name="ticket" value="{_e(ticket)}">
<input type="hidden" name="step" value="choice">
<fieldset>
<legend>Folders it may use</legend>
<label><input type="checkbox" name="every"{checked if choice.every else ""}> Every folder, and folders made later</label>
{boxes or '<p class="note">There are no folders yet.</p>'}
</fieldset>
<fieldset>
<legend>What it may do</legend>
<label><input type="radio" name="role" value="read"{checked if choice.role != "write" else ""}> Read: search and read</label>
<label><input type="radio" name="role" value="write"{checked if choice.role == "write" else ""}> Read and write: also create, edit, move and delete documents</label>
</fieldset>
<p class="note">It gets a token that works for {minutes} minutes and renews itself while it is used (a renewal
unused for {days} days lapses). It is listed by <code>ragdown keys list</code> as an <code>oauth-…</code> key;
revoking that key ends it.</p>
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>"""
        return _page(f"Allow {pending.client_name}?", body, refusal)


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    await refused(not_found(f"no such path: {printable(scope['path'])}"))(scope, receive, send)


def _field(form: FormData, name: str) -> str | None:
    value = form.get(name)
    return value if isinstance(value, str) else None


def _redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=HTTP_303_SEE_OTHER, headers=NO_STORE)


__all__ = ["OAuth"]
