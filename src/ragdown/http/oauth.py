"""OAuth 2.1 for hosted MCP clients (Claude.ai's custom connectors and others), on the `mcp` SDK's server auth.

The SDK does the protocol: `create_auth_routes` answers the authorization-server metadata (RFC 8414),
dynamic client registration (RFC 7591), `/authorize` (PKCE with S256 only: its request model refuses
`plain`), `/token` (the authorization_code grant, with the PKCE, redirect_uri, client and expiry checks, and
the refresh_token grant) and `/revoke` (RFC 7009); its `ProtectedResourceMetadata` model and handler answer
the protected-resource metadata (RFC 9728). This module is what the SDK leaves to a server:

- `Provider`, the SDK's `OAuthAuthorizationServerProvider`. An access token IS a scoped key
  (`KeyStore.create(kind="oauth", expires_at=...)`), so the bearer auth of `http/app.py` accepts it on every
  route with a key's checks; `ragdown keys list` shows it as `oauth-<grant>`, and `keys revoke` ends it and
  its grant (a refresh never brings a revoked key back). A refresh rotates both tokens: the old access key
  is revoked and the old refresh token stops working. A code used twice revokes what it gave.
- The consent page (`/oauth/consent`), where `/authorize` sends the browser. First the server's owner
  gives the admin token (`RAGDOWN_TOKEN`, compared in constant time; a wrong one gets the page again and
  grants nothing; five drop the request); only then are the folders shown, to pick some or every one, and
  the role (read, or read and write). A code is made only then, bound to the PKCE challenge, the client,
  its redirect_uri and the scopes picked. A server without a token (SECURE_LOCAL_NET: every caller is
  trusted anyway) asks no token: the page goes straight to the choice.
- `OAuth`, the ASGI face the app's dispatch mounts before auth: the SDK's routes for each base URL
  (`RAGDOWN_PUBLIC_URL`, else the request's own scheme and Host), the consent page, the metadata, and the
  `WWW-Authenticate` challenge of every 401 (`challenge`).

Kept in `<docs>/.ragdown/oauth.json` (mode 0600, atomic writes under the file's lock), so a restart breaks
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
import json
import logging
import secrets
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar, cast
from urllib.parse import quote, unquote, urlencode, urlsplit

from anyio import to_thread
from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    RegistrationError,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import (
    AUTHORIZATION_PATH,
    REGISTRATION_PATH,
    REVOCATION_PATH,
    TOKEN_PATH,
    cors_middleware,
    create_auth_routes,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken, ProtectedResourceMetadata
from mcp.shared.auth_utils import check_resource_allowed
from pydantic import AnyHttpUrl, ConfigDict, TypeAdapter, ValidationError
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route, Router
from starlette.status import HTTP_303_SEE_OTHER
from starlette.types import Message, Receive, Scope, Send

from ragdown import atomic
from ragdown.access import Role
from ragdown.errors import Refusal, bad_request, forbidden, internal, not_found, printable, unavailable
from ragdown.folders import list_folders
from ragdown.history.store import HISTORY_DIR
from ragdown.http.errors import refused, status_of
from ragdown.keys import KeyRecord, KeyStore, hash_secret

log = logging.getLogger(__name__)

OAUTH_FILE = "oauth.json"
CODE_TTL_S = 600  # an authorization code, in memory only
CONSENT_TTL_S = 600  # a consent request (from /authorize to the owner's answer), in memory only
CONSENT_TRIES = 5  # wrong admin tokens before a consent request is dropped
MAX_CLIENTS = 1000  # registered clients kept; past it, those that never got a grant go first, oldest first
REFRESH_PREFIX = "rdr_"
ROLE_SCOPES = ("read", "write")
ALL_FOLDERS = "folder:*"
FOLDER_SCOPE = "folder:"
CONSENT_PATH = "/oauth/consent"
RESOURCE_METADATA = "/.well-known/oauth-protected-resource"
SERVER_METADATA = "/.well-known/oauth-authorization-server"
SDK_PATHS = frozenset({SERVER_METADATA, AUTHORIZATION_PATH, TOKEN_PATH, REGISTRATION_PATH, REVOCATION_PATH})
PATHS = SDK_PATHS | {CONSENT_PATH, RESOURCE_METADATA}  # and RESOURCE_METADATA/<resource path>
FORM_BYTES = 64 * 1024
ROUTERS_KEPT = 8  # base URLs whose routes are kept built (more than one only without RAGDOWN_PUBLIC_URL)

_URL = TypeAdapter(AnyHttpUrl, config=ConfigDict(url_preserve_empty_path=True))
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
_UNSAFE_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "blob", "about"})
_BASE: ContextVar[str] = ContextVar("ragdown_oauth_base")  # the base URL of the request being answered
_T = TypeVar("_T")
_REUSED = ""  # in `Provider.spent`: a code presented again while its first exchange was under way

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
PAGE_HEADERS = {
    **NO_STORE,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # No form-action: after the owner's answer the page is redirected to the client, which it must allow.
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; "
    "base-uri 'none'",
}


# -- scopes ------------------------------------------------------------------------------------------


def scopes_of(role: Role, folders: tuple[str, ...] | None) -> list[str]:
    """The scopes of a role over folders (None: every folder)."""
    roles = ["read", "write"] if role == "write" else ["read"]
    if folders is None:
        return [*roles, ALL_FOLDERS]
    return [*roles, *(FOLDER_SCOPE + quote(f, safe="") for f in folders)]


def narrowed(
    role: Role, folders: tuple[str, ...] | None, asked: list[str]
) -> tuple[Role, tuple[str, ...] | None]:
    """What a refresh asking for `asked` (a subset of the grant's scopes, as the SDK checked) gets: write only
    when asked, the folders asked for (all of the grant's when it names none)."""
    new_role: Role = "write" if role == "write" and "write" in asked else "read"
    named = sorted(
        {unquote(s[len(FOLDER_SCOPE) :]) for s in asked if s.startswith(FOLDER_SCOPE) and s != ALL_FOLDERS}
    )
    if ALL_FOLDERS in asked or not named:
        return new_role, folders
    return new_role, tuple(named)


def _granted(scopes: list[str]) -> tuple[Role, tuple[str, ...] | None]:
    """The role and folders of a code's scopes (made by `scopes_of`)."""
    return narrowed("write" if "write" in scopes else "read", None, scopes)


# -- what is stored ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Grant:
    """What one consent gave one client: it lives as long as its refresh token is used in time."""

    id: str
    client_id: str
    client_name: str
    role: Role
    folders: tuple[str, ...] | None
    refresh_hash: str
    refresh_expires_at: float
    key_id: str | None  # the current access key; None while a refresh replaces it
    created_at: float

    @property
    def scopes(self) -> list[str]:
        return scopes_of(self.role, self.folders)

    def stored(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "client_id": self.client_id,
            "client_name": self.client_name,
            "role": self.role,
            "folders": list(self.folders) if self.folders is not None else None,
            "refresh_hash": self.refresh_hash,
            "refresh_expires_at": self.refresh_expires_at,
            "key_id": self.key_id,
            "created_at": self.created_at,
        }

    @classmethod
    def of(cls, raw: Any) -> Grant | None:
        """One stored grant, or None when the entry is not one (such an entry opens nothing)."""
        if not isinstance(raw, dict):
            return None
        folders = raw.get("folders")
        try:
            ok = (
                all(isinstance(raw.get(k), str) for k in ("id", "client_id", "client_name", "refresh_hash"))
                and raw.get("role") in ROLE_SCOPES
                and isinstance(raw.get("refresh_expires_at"), int | float)
                and isinstance(raw.get("created_at"), int | float)
                and (raw.get("key_id") is None or isinstance(raw.get("key_id"), str))
                and (
                    folders is None
                    or (isinstance(folders, list) and all(isinstance(f, str) for f in folders))
                )
            )
        except TypeError:
            return None
        if not ok:
            return None
        return cls(
            id=raw["id"],
            client_id=raw["client_id"],
            client_name=raw["client_name"],
            role=cast(Role, raw["role"]),
            folders=tuple(folders) if folders is not None else None,
            refresh_hash=raw["refresh_hash"],
            refresh_expires_at=float(raw["refresh_expires_at"]),
            key_id=raw.get("key_id"),
            created_at=float(raw["created_at"]),
        )


def _empty() -> dict[str, Any]:
    return {"version": 1, "clients": {}, "grants": {}}


class OAuthStore:
    """`<docs>/.ragdown/oauth.json`: the registered clients and the grants. The file is the truth: it is
    read for each question (it is small, and asked only by the OAuth routes) and changed under its lock.
    Never take this lock while holding the key store's, nor the other way round: both lock the same
    directory (`atomic.path_lock`)."""

    def __init__(self, docs_root: Path) -> None:
        self.path = docs_root / HISTORY_DIR / OAUTH_FILE

    def read(self) -> dict[str, Any]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return _empty()
        try:
            doc = json.loads(data)
        except ValueError as err:
            raise unavailable(
                f"{self.path} is not valid JSON ({err}): OAuth is off until it is fixed"
            ) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("clients"), dict):
            raise unavailable(f"{self.path} holds no client list: OAuth is off until it is fixed")
        if not isinstance(doc.get("grants"), dict):
            raise unavailable(f"{self.path} holds no grant list: OAuth is off until it is fixed")
        return doc

    def change(self, apply: Callable[[dict[str, Any]], _T]) -> _T:
        """Read, `apply` (which changes the document in place, or raises to change nothing), write."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic.path_lock(self.path):
            existed = self.path.exists()
            doc = self.read()  # a damaged file is refused, never overwritten
            result = apply(doc)
            body = (json.dumps(doc, indent=2, ensure_ascii=True) + "\n").encode()
            if existed:
                atomic.replace(self.path, body, mode=0o600)
            else:
                atomic.write_new(self.path, body, mode=0o600)
        return result

    def client(self, client_id: str) -> OAuthClientInformationFull | None:
        entry = self.read()["clients"].get(client_id)
        if not isinstance(entry, dict):
            return None
        try:
            return OAuthClientInformationFull.model_validate(entry.get("client"))
        except ValidationError:
            log.warning("%s: the client %s is not readable and is ignored", self.path, printable(client_id))
            return None

    def grants(self) -> list[Grant]:
        return [g for g in map(Grant.of, self.read()["grants"].values()) if g is not None]


# -- the provider ------------------------------------------------------------------------------------


class GrantRefresh(RefreshToken):
    grant_id: str


class GrantAccess(AccessToken):
    grant_id: str


@dataclass
class Pending:
    """A consent request: from /authorize to the owner's answer."""

    id: str
    client_id: str
    client_name: str
    params: AuthorizationParams
    expires_at: float
    failures: int = 0
    ticket: str | None = None  # given to the browser that gave the admin token; the choice must carry it


def client_label(client: OAuthClientInformationFull) -> str:
    """How a client is named to the owner and in `keys list`: its own name, else its id's start."""
    name = "".join(ch for ch in (client.client_name or "") if ch.isprintable()).strip()[:80]
    return name or f"client {client.client_id[:8]}"


def _check_redirect_uris(client: OAuthClientInformationFull) -> None:
    """https anywhere, http to this machine only, an app's own scheme; never a scheme that runs or reads."""
    for uri in client.redirect_uris or []:
        parts = urlsplit(str(uri))
        scheme = parts.scheme.lower()
        if scheme in _UNSAFE_SCHEMES:
            raise RegistrationError("invalid_redirect_uri", f"a redirect_uri may not be a {scheme}: URL")
        if scheme == "http" and (parts.hostname or "").lower() not in _LOOPBACK:
            raise RegistrationError(
                "invalid_redirect_uri", "an http redirect_uri must be to this machine (localhost); use https"
            )
        if parts.fragment:
            raise RegistrationError("invalid_redirect_uri", "a redirect_uri has no fragment")


class Provider(OAuthAuthorizationServerProvider[AuthorizationCode, GrantRefresh, GrantAccess]):
    """Clients and grants in `oauth.json`, access tokens in the key store, codes and consents in memory.

    The SDK calls the async methods on the event loop; the file and key-store work runs in worker threads.
    The in-memory maps are only touched on the event loop, between awaits, so a code is given out once."""

    def __init__(self, docs_root: Path, keys: KeyStore, *, access_ttl_s: int, refresh_ttl_s: int) -> None:
        self.docs_root = docs_root
        self.keys = keys
        self.store = OAuthStore(docs_root)
        self.access_ttl_s = access_ttl_s
        self.refresh_ttl_s = refresh_ttl_s
        self.pending: dict[str, Pending] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.spent: dict[str, tuple[float, str | None]] = {}  # a used code: until when, the grant it gave

    def _sweep(self) -> None:
        now = time.time()
        for key in [k for k, p in self.pending.items() if p.expires_at <= now]:
            del self.pending[key]
        for key in [k for k, c in self.codes.items() if c.expires_at <= now]:
            del self.codes[key]
        for key in [k for k, (until, _) in self.spent.items() if until <= now]:
            del self.spent[key]

    # -- clients -------------------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return await to_thread.run_sync(self.store.client, client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        _check_redirect_uris(client_info)
        await to_thread.run_sync(self._register, client_info)

    def _register(self, client: OAuthClientInformationFull) -> None:
        def apply(doc: dict[str, Any]) -> None:
            clients: dict[str, Any] = doc["clients"]
            if len(clients) >= MAX_CLIENTS:
                granted = {g.client_id for g in map(Grant.of, doc["grants"].values()) if g is not None}
                idle = sorted(
                    (c for c in clients if c not in granted),
                    key=lambda c: (
                        float(clients[c].get("registered_at", 0)) if isinstance(clients[c], dict) else 0
                    ),
                )
                for gone in idle[: len(clients) - MAX_CLIENTS + 1]:
                    del clients[gone]
                if len(clients) >= MAX_CLIENTS:
                    raise RegistrationError(
                        "invalid_client_metadata",
                        f"this server keeps {MAX_CLIENTS} clients and each has a grant: revoke some first",
                    )
            clients[client.client_id] = {
                "registered_at": time.time(),
                "client": client.model_dump(mode="json", exclude_none=True),
            }

        self.store.change(apply)

    # -- authorization -------------------------------------------------------------------------------

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self._sweep()
        base = _BASE.get()
        if params.resource is not None and not check_resource_allowed(params.resource, base):
            raise AuthorizeError("invalid_target", f"{params.resource} is not served here ({base})")
        pending = Pending(
            id=secrets.token_urlsafe(32),
            client_id=client.client_id,
            client_name=client_label(client),
            params=params,
            expires_at=time.time() + CONSENT_TTL_S,
        )
        self.pending[pending.id] = pending
        return f"{base}{CONSENT_PATH}?{urlencode({'request': pending.id})}"

    def consent(self, request_id: str | None) -> Pending | None:
        self._sweep()
        return self.pending.get(request_id or "")

    def approve(self, pending: Pending, role: Role, folders: tuple[str, ...] | None) -> str:
        """The owner said yes: the code, and the client's redirect_uri that carries it."""
        self.pending.pop(pending.id, None)
        params = pending.params
        code = AuthorizationCode(
            code=secrets.token_urlsafe(32),
            scopes=scopes_of(role, folders),
            expires_at=time.time() + CODE_TTL_S,
            client_id=pending.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="owner",
        )
        self.codes[code.code] = code
        return construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)

    def deny(self, pending: Pending) -> str:
        self.pending.pop(pending.id, None)
        return construct_redirect_uri(
            str(pending.params.redirect_uri),
            error="access_denied",
            error_description="the server's owner did not allow it",
            state=pending.params.state,
        )

    def forget(self, pending: Pending) -> None:
        self.pending.pop(pending.id, None)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        """A code works once: loading it spends it, whatever the checks that follow say. Presented again,
        it revokes the grant it gave (RFC 6749 §4.1.2: it may have been stolen)."""
        self._sweep()
        if authorization_code in self.spent:
            until, grant_id = self.spent[authorization_code]
            if grant_id:
                del self.spent[authorization_code]
                log.warning("an authorization code was presented twice: grant %s is revoked", grant_id)
                await to_thread.run_sync(self._drop_grant, grant_id)
            else:  # its first exchange is still under way (it ends the grant it makes), or was refused
                self.spent[authorization_code] = (until, _REUSED)
            return None
        code = self.codes.pop(authorization_code, None)
        if code is not None:
            self.spent[authorization_code] = (code.expires_at, None)
        return code

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        if authorization_code.code not in self.spent:
            raise TokenError("invalid_grant", "authorization code does not exist")
        token, grant_id = await to_thread.run_sync(self._new_grant, client, authorization_code)
        if self.spent.get(authorization_code.code, (0, None))[1] == _REUSED:
            await to_thread.run_sync(self._drop_grant, grant_id)
            raise TokenError("invalid_grant", "authorization code was presented twice")
        self.spent[authorization_code.code] = (authorization_code.expires_at, grant_id)
        return token

    def _new_grant(
        self, client: OAuthClientInformationFull, code: AuthorizationCode
    ) -> tuple[OAuthToken, str]:
        self._purge()
        role, folders = _granted(code.scopes)
        existing = {g.id for g in self.store.grants()}
        grant_id = secrets.token_hex(6)
        while grant_id in existing:
            grant_id = secrets.token_hex(6)
        name = client_label(client)
        secret, record = self._mint(grant_id, name, role, folders)
        refresh = REFRESH_PREFIX + secrets.token_urlsafe(32)
        now = time.time()
        grant = Grant(
            id=grant_id,
            client_id=client.client_id,
            client_name=name,
            role=role,
            folders=folders,
            refresh_hash=hash_secret(refresh),
            refresh_expires_at=now + self.refresh_ttl_s,
            key_id=record.id,
            created_at=now,
        )
        try:
            self.store.change(lambda doc: doc["grants"].__setitem__(grant_id, grant.stored()))
        except BaseException:
            self._revoke_key(record.id)
            raise
        log.info("OAuth: %s was granted %s (grant %s)", name, " ".join(grant.scopes), grant_id)
        return self._token(secret, role, folders, refresh), grant_id

    def _mint(
        self, grant_id: str, client_name: str, role: Role, folders: tuple[str, ...] | None
    ) -> tuple[str, KeyRecord]:
        try:
            return self.keys.create(
                f"oauth-{grant_id}",
                folders,
                role,
                expires_at=time.time() + self.access_ttl_s,
                kind="oauth",
                client=client_name,
            )
        except Refusal as err:  # a folder deleted since the consent, a damaged keys.json
            raise TokenError("invalid_grant", err.message) from None

    def _token(self, secret: str, role: Role, folders: tuple[str, ...] | None, refresh: str) -> OAuthToken:
        return OAuthToken(
            access_token=secret,
            token_type="Bearer",
            expires_in=self.access_ttl_s,
            scope=" ".join(scopes_of(role, folders)),
            refresh_token=refresh,
        )

    # -- refresh -------------------------------------------------------------------------------------

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> GrantRefresh | None:
        if not refresh_token.startswith(REFRESH_PREFIX):
            return None
        return await to_thread.run_sync(self._load_refresh, refresh_token)

    def _load_refresh(self, token: str) -> GrantRefresh | None:
        digest = hash_secret(token)
        grant = next((g for g in self.store.grants() if hmac.compare_digest(g.refresh_hash, digest)), None)
        if grant is None:
            return None
        # Expired OAuth keys stay in the key store until their grant ends (keys.py), so a missing one was
        # revoked (`ragdown keys revoke`, the web UI): the grant ends with it.
        if grant.key_id is None or all(r.id != grant.key_id for r in self.keys.list(kind="oauth")):
            log.info("OAuth grant %s: its access key was revoked, so the grant is", grant.id)
            self._drop_grant(grant.id)
            return None
        return GrantRefresh(
            token=token,
            client_id=grant.client_id,
            scopes=grant.scopes,
            expires_at=int(grant.refresh_expires_at),
            grant_id=grant.id,
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: GrantRefresh, scopes: list[str]
    ) -> OAuthToken:
        return await to_thread.run_sync(self._rotate, refresh_token, scopes)

    def _rotate(self, presented: GrantRefresh, asked: list[str]) -> OAuthToken:
        refresh = REFRESH_PREFIX + secrets.token_urlsafe(32)
        new_hash = hash_secret(refresh)
        old_hash = hash_secret(presented.token)
        now = time.time()

        def swap(doc: dict[str, Any]) -> Grant:
            grant = Grant.of(doc["grants"].get(presented.grant_id))
            if grant is None or not hmac.compare_digest(grant.refresh_hash, old_hash):
                raise TokenError("invalid_grant", "refresh token does not exist")  # used or revoked meanwhile
            swapped = replace(
                grant, refresh_hash=new_hash, refresh_expires_at=now + self.refresh_ttl_s, key_id=None
            )
            doc["grants"][grant.id] = swapped.stored()
            return grant

        grant = self.store.change(swap)
        if grant.key_id is not None:
            self._revoke_key(grant.key_id)
        role, folders = narrowed(grant.role, grant.folders, asked)
        try:
            secret, record = self._mint(grant.id, grant.client_name, role, folders)
        except TokenError:
            self._drop_grant(grant.id)
            raise

        def settle(doc: dict[str, Any]) -> bool:
            raw = doc["grants"].get(grant.id)
            if not isinstance(raw, dict) or raw.get("refresh_hash") != new_hash:
                return False
            raw["key_id"] = record.id
            return True

        if not self.store.change(settle):
            self._revoke_key(record.id)
            raise TokenError("invalid_grant", "the grant was revoked meanwhile")
        return self._token(secret, role, folders, refresh)

    # -- access tokens and revocation ----------------------------------------------------------------

    async def load_access_token(self, token: str) -> GrantAccess | None:
        return await to_thread.run_sync(self._load_access, token)

    def _load_access(self, token: str) -> GrantAccess | None:
        record = self.keys.verify(token)
        if record is None or record.kind != "oauth":
            return None
        grant = next((g for g in self.store.grants() if g.key_id == record.id), None)
        if grant is None:
            return None
        return GrantAccess(
            token=token,
            client_id=grant.client_id,
            scopes=scopes_of(record.role, record.folders),
            expires_at=int(record.expires_at) if record.expires_at is not None else None,
            grant_id=grant.id,
        )

    async def revoke_token(self, token: GrantAccess | GrantRefresh) -> None:
        """Either token ends the whole grant: the access key and the refresh token."""
        await to_thread.run_sync(self._drop_grant, token.grant_id)

    def _drop_grant(self, grant_id: str) -> None:
        grant = self.store.change(lambda doc: Grant.of(doc["grants"].pop(grant_id, None)))
        if grant is not None and grant.key_id is not None:
            self._revoke_key(grant.key_id)
        if grant is not None:
            log.info("OAuth grant %s of %s ended", grant_id, grant.client_name)

    def _revoke_key(self, key_id: str) -> None:
        try:
            self.keys.revoke(key_id)
        except Refusal as err:
            if err.kind != "not_found":
                raise

    def _purge(self) -> None:
        """End the grants whose refresh token expired unused, and remove expired OAuth keys no grant holds."""
        now = time.time()
        if any(g.refresh_expires_at <= now for g in self.store.grants()):

            def apply(doc: dict[str, Any]) -> list[str]:
                grants: dict[str, Any] = doc["grants"]
                keys: list[str] = []
                for grant in map(Grant.of, list(grants.values())):
                    if grant is not None and grant.refresh_expires_at <= now:
                        del grants[grant.id]
                        keys += [grant.key_id] if grant.key_id else []
                return keys

            for key_id in self.store.change(apply):
                self._revoke_key(key_id)
        held = {g.key_id for g in self.store.grants()}
        for record in self.keys.list(kind="oauth"):
            if record.expired(now) and record.id not in held:
                self._revoke_key(record.id)


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
        if path == "/mcp" or path.startswith("/mcp/"):
            resource = quote(path.rstrip("/"), safe="/", errors="surrogateescape")
        else:
            resource = "/api"
        return f"{self.base_url(scope)}{RESOURCE_METADATA}{resource}"

    def challenge(self, scope: Scope, *, presented: bool) -> str:
        """`WWW-Authenticate` for a 401: where to authenticate, and (a token was sent) that it is no good."""
        fields = ['error="invalid_token"', 'error_description="the token is unknown, expired or revoked"']
        url = f'resource_metadata="{self.resource_metadata_url(scope)}"'
        return "Bearer " + ", ".join([*fields, url] if presented else [url])

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

        reset = _BASE.set(base)
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
            _BASE.reset(reset)

    def _router(self, base: str) -> Router:
        router = self._routers.get(base)
        if router is None:
            routes = create_auth_routes(
                self.provider,
                issuer_url=_URL.validate_python(base),
                client_registration_options=ClientRegistrationOptions(
                    enabled=True, default_scopes=list(ROLE_SCOPES)
                ),
                revocation_options=RevocationOptions(enabled=True),
            )
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
        base = _BASE.get()
        metadata = ProtectedResourceMetadata(
            resource=_URL.validate_python(base + quote(rest, safe="/", errors="surrogateescape")),
            authorization_servers=[_URL.validate_python(base)],
            scopes_supported=list(ROLE_SCOPES),
            resource_name="ragdown",
        )
        return await ProtectedResourceMetadataHandler(metadata).handle(request)

    # -- the consent page ----------------------------------------------------------------------------

    async def _consent(self, request: Request) -> Response:
        base = _BASE.get()
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


__all__ = ["CONSENT_PATH", "OAUTH_FILE", "OAuth", "OAuthStore", "Provider", "scopes_of"]
