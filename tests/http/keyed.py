"""Helpers for the keys, access, rate-limit and quota tests: an in-process app that a whole module shares
(its first sync is the expensive part), the kinds of key, and an MCP client to the app."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

from anyio.from_thread import start_blocking_portal
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ragdown.access.keys import SECRET_PREFIX, KeyStore
from ragdown.core.config import Settings
from ragdown.http.serve import build_app
from tests.conftest import isolated_env
from tests.http.conftest import APP_URL, TOKEN, PortalTransport, Server, _server_env


@contextmanager
def shared_app(home: Path, docs: Path, *, token: str | None = TOKEN, **env: str) -> Iterator[Server]:
    """`start_app`'s app, for a module-scoped fixture: started once, its first sync waited for."""
    with ExitStack() as stack:
        portal = stack.enter_context(start_blocking_portal("asyncio", name="ragdown-keyed-app"))
        data = home / "data"
        environ = isolated_env(home, RAGDOWN_HOST="127.0.0.1", **_server_env(docs, data, token, env))
        app = build_app(Settings.from_env(environ))
        stack.enter_context(portal.wrap_async_context_manager(app.lifespan(app)))
        stack.callback(app.runtime.engine.wait_ready, 60)
        server = Server(APP_URL, token, docs, data, app=app, transport=PortalTransport(portal, app))
        stack.callback(server.close_clients)
        # Not through /api/status: a test's small RAGDOWN_RATE_LIMIT would run out on the polling.
        engine = app.runtime.engine
        deadline = time.monotonic() + 90
        while not (engine.wait_ready(0) and engine.last_sync and not engine.syncing):
            assert engine.error is None, engine.error
            assert time.monotonic() < deadline, "the app never finished its first sync"
            time.sleep(0.02)
        yield server


@dataclass(frozen=True)
class Keys:
    """One secret of each kind of caller (None: no Authorization header)."""

    admin: str
    write_a: str
    read_a: str
    read_all: str
    revoked: str
    expired: str
    oauth_expired: str  # an OAuth access token past its expiry (its grant not refreshed)
    wrong: str  # a key's shape, never issued

    def kinds(self) -> dict[str, str | None]:
        return {
            "admin": self.admin,
            "write_a": self.write_a,
            "read_a": self.read_a,
            "read_all": self.read_all,
            "revoked": self.revoked,
            "expired": self.expired,
            "oauth_expired": self.oauth_expired,
            "wrong": self.wrong,
            "none": None,
        }


DEAD = ("revoked", "expired", "oauth_expired", "wrong", "none")  # the kinds every non-open route answers 401


def make_keys(docs: Path, folder: str = "a") -> Keys:
    store = KeyStore(docs)
    write_a, _ = store.create("write-a", [folder], "write")
    read_a, _ = store.create("read-a", [folder], "read")
    read_all, _ = store.create("read-all", None, "read")
    revoked, _ = store.create("revoked", [folder], "write")
    store.revoke("revoked")
    # OAuth access tokens are keys of kind `oauth` with an expiry (http/oauth.py); the store keeps an expired
    # one until its grant goes, so it stays a known, expired token.
    soon = time.time() + 3600
    oauth_expired, _ = store.create(
        "oauth-walk", [folder], "write", expires_at=soon, kind="oauth", client="walk client"
    )
    expired, _ = store.create("expired", [folder], "write", expires_at=soon)
    # No key is made expired: their hour is over in the file, the key store's truth (re-read when it
    # changes). Last: a later create would drop an expired key from the file, and it would be unknown.
    data = json.loads(store.path.read_text())
    for key in data["keys"]:
        if key["name"] in ("oauth-walk", "expired"):
            key["expires_at"] = time.time() - 1
    store.path.write_text(json.dumps(data))
    wrong = SECRET_PREFIX + secrets.token_urlsafe(32)
    return Keys(TOKEN, write_a, read_a, read_all, revoked, expired, oauth_expired, wrong)


@asynccontextmanager
async def mcp_client(server: Server, path: str, token: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        server.mcp_http(headers) as http,
        Client(streamable_http_client(server.url + path, http_client=http)) as client,
    ):
        yield client
