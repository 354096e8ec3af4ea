"""`Provider`, the `mcp` SDK's `OAuthAuthorizationServerProvider` for ragdown (`http/oauth/routes.py`).

An access token IS a scoped key (`KeyStore.create(kind="oauth", expires_at=...)`), so the bearer auth of
`http/app.py` accepts it on every route with a key's checks. A refresh rotates both tokens: the old access
key is revoked and the old refresh token stops working. A code used twice revokes what it gave. Consent
requests (`Pending`) and authorization codes live in memory for 10 minutes. A `code_challenge` that is
not an S256 challenge (43 base64url characters; an empty one) is refused at `/authorize`.
"""

from __future__ import annotations

import hmac
import logging
import re
import secrets
import time
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from anyio import to_thread
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
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp.shared.auth_utils import check_resource_allowed

from ragdown.access.caller import Role
from ragdown.access.keys import KeyRecord, KeyStore, hash_secret
from ragdown.core.errors import Refusal
from ragdown.http.oauth.grants import Grant, OAuthStore, granted, narrowed, scopes_of

log = logging.getLogger(__name__)

CODE_TTL_S = 600  # an authorization code, in memory only
CONSENT_TTL_S = 600  # a consent request (from /authorize to the owner's answer), in memory only
MAX_CLIENTS = 1000  # registered clients kept; past it, those that never got a grant go first, oldest first
REFRESH_PREFIX = "rdr_"
CONSENT_PATH = "/oauth/consent"
S256_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")  # BASE64URL(SHA-256(code_verifier)), unpadded
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
_UNSAFE_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "blob", "about"})
BASE: ContextVar[str] = ContextVar("ragdown_oauth_base")  # the base URL of the request being answered
_REUSED = ""  # in `Provider.spent`: a code presented again while its first exchange was under way


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
        base = BASE.get()
        if params.resource is not None and not check_resource_allowed(params.resource, base):
            raise AuthorizeError("invalid_target", f"{params.resource} is not served here ({base})")
        if not S256_CHALLENGE.fullmatch(params.code_challenge):
            # The SDK takes any text; a grant bound to one no verifier hashes to could never be exchanged.
            raise AuthorizeError(
                "invalid_request",
                "code_challenge must be an S256 challenge: the 43 base64url characters of the SHA-256 of "
                "the code_verifier (RFC 7636)",
            )
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
        role, folders = granted(code.scopes)
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
