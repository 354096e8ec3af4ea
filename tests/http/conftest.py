"""`ragdown serve`'s app driven over HTTP, two ways with one interface (`Server`):

- `start_app`: the app `ragdown serve` runs (`build_app`), in this process, with its lifespan running on an
  event loop of its own; requests reach it through httpx's ASGI transport, never a socket. Most tests.
- `start_server`: `ragdown serve` as a real process on a free loopback port, for what only a real server
  shows (uvicorn's keep-alive, a second process on the same index, third-party clients).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from starlette.types import ASGIApp

from ragdown.core.config import Settings
from ragdown.http.app import RagdownApp
from ragdown.http.serve import build_app
from tests.conftest import ServeProcess, isolated_env, start_serve, write

TOKEN = "test-token-0123456789"
APP_URL = "http://127.0.0.1:3000"
"""The in-process app's address: only its Host header is ever used, nothing connects to it."""


class PortalTransport(httpx.BaseTransport):
    """A synchronous httpx transport that hands each request to an ASGI app on a portal's event loop
    (httpx's `ASGITransport` is asynchronous only), so sync tests drive the app as they drive a server."""

    def __init__(self, portal: BlockingPortal, app: ASGIApp) -> None:
        self.portal = portal
        self.asgi = httpx.ASGITransport(app=app)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()

        async def send() -> tuple[int, list[tuple[bytes, bytes]], bytes]:
            forwarded = httpx.Request(request.method, request.url, headers=request.headers, content=body)
            response = await self.asgi.handle_async_request(forwarded)
            return response.status_code, response.headers.raw, await response.aread()

        status, headers, content = self.portal.call(send)
        return httpx.Response(status, headers=headers, content=content, request=request)


@dataclass
class Server:
    url: str
    token: str | None
    docs: Path
    data: Path
    process: ServeProcess | None = None
    """The `ragdown serve` process (`start_server`), or None for the in-process app."""
    app: RagdownApp | None = None
    """The in-process app (`start_app`), or None for a real process."""
    transport: httpx.BaseTransport | None = None
    clients: list[httpx.Client] = field(default_factory=list)

    @property
    def log(self) -> Path:
        assert self.process is not None, "the in-process app logs through pytest's log capture"
        return self.process.log

    def client(self, *, token: str | None = "default") -> httpx.Client:
        """A client that sends the server's token (`token="default"`), another one, or none (None)."""
        headers = {}
        use = self.token if token == "default" else token
        if use:
            headers["Authorization"] = f"Bearer {use}"
        client = httpx.Client(base_url=self.url, headers=headers, timeout=60, transport=self.transport)
        self.clients.append(client)
        return client

    @property
    def api(self) -> httpx.Client:
        return self.client()

    @property
    def anonymous(self) -> httpx.Client:
        """A client without a token, as a browser or an unconfigured MCP client is."""
        return self.client(token=None)

    def mcp_http(self, headers: dict[str, str]) -> httpx2.AsyncClient:
        """The HTTP client for the MCP SDK's streamable-HTTP transport: to the app in-process, or the socket."""
        transport = httpx2.ASGITransport(app=self.app) if self.app is not None else None
        return httpx2.AsyncClient(headers=headers, timeout=60, transport=transport)

    def wait_synced(self, timeout: float = 90) -> dict[str, Any]:
        """Wait until the first sync has finished (status shows `last_sync` and no sync running)."""
        if self.process is not None:
            return dict(self.process.wait_synced(timeout))
        assert self.app is not None
        deadline = time.monotonic() + timeout
        engine = self.app.runtime.engine
        # The engine itself, not /api/status: polled without the token, that says only whether it is ready.
        while not (engine.wait_ready(0) and engine.last_sync and not engine.syncing):
            assert engine.error is None, f"the engine could not start: {engine.error}"
            assert time.monotonic() < deadline, "the app never finished its first sync"
            time.sleep(0.02)
        with self.client() as client:
            body: dict[str, Any] = client.get("/api/status").json()
            return body

    def close_clients(self) -> None:
        for client in self.clients:
            client.close()

    def stop(self) -> None:
        self.close_clients()
        if self.process is not None:
            self.process.stop()


StartServer = Callable[..., Server]


def _server_env(docs: Path, data: Path, token: str | None, env: dict[str, str]) -> dict[str, str]:
    extra = {"RAGDOWN_DOCS_DIR": str(docs), "RAGDOWN_DATA_DIR": str(data)}
    if token:
        extra["RAGDOWN_TOKEN"] = token
    extra.update(env)
    return extra


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[StartServer]:
    """`start_server(docs, token=TOKEN, wait=True, data=None, **env)`: a real `ragdown serve` process."""
    servers: list[Server] = []

    def start(
        docs: Path, *, token: str | None = TOKEN, wait: bool = True, data: Path | None = None, **env: str
    ) -> Server:
        data_dir = data or tmp_path / "data"
        process = start_serve(tmp_path, _server_env(docs, data_dir, token, env))
        server = Server(process.url, token, docs, data_dir, process=process)
        servers.append(server)
        if wait:
            server.wait_synced()
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def start_app(tmp_path: Path) -> Iterator[StartServer]:
    """`start_app(docs, token=TOKEN, wait=True, data=None, **env)`: the app of `ragdown serve` with the
    same environment, in-process; its lifespan (the engine) is stopped after the test."""
    with ExitStack() as stack:
        portals: list[BlockingPortal] = []

        def start(
            docs: Path, *, token: str | None = TOKEN, wait: bool = True, data: Path | None = None, **env: str
        ) -> Server:
            if not portals:
                portals.append(stack.enter_context(start_blocking_portal("asyncio", name="ragdown-app")))
            portal = portals[0]
            data_dir = data or tmp_path / "data"
            environ = isolated_env(
                tmp_path, RAGDOWN_HOST="127.0.0.1", **_server_env(docs, data_dir, token, env)
            )
            app = build_app(Settings.from_env(environ))
            stack.enter_context(portal.wrap_async_context_manager(app.lifespan(app)))
            # As a stopped process would, but never while the engine is still starting (wait=False).
            stack.callback(app.runtime.engine.wait_ready, 60)
            server = Server(APP_URL, token, docs, data_dir, app=app, transport=PortalTransport(portal, app))
            stack.callback(server.close_clients)
            if wait:
                server.wait_synced()
            return server

        yield start


def ops_folder(docs: Path, *, mcp: bool = True, title: str = "Operations") -> None:
    write(docs, "ops/backups.md", "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.")
    write(docs, "ops/.ragdown.json", json.dumps({"title": title, "mcp": mcp}))
