"""`ragdown serve`: run the app on uvicorn with the spec's keep-alive and refuse to start unprotected."""

from __future__ import annotations

import errno
import logging
import socket

import uvicorn

from ragdown.access.keys import KeyStore
from ragdown.core.config import ConfigError, Settings
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.http import serversettings
from ragdown.http.app import RagdownApp
from ragdown.http.security import Guard
from ragdown.mcpserver.server import warn_about_min_score
from ragdown.sync.progress_log import ProgressLog
from ragdown.tools import cli_answers as commands
from ragdown.vault.walk import vault_notice

log = logging.getLogger(__name__)


def build_app(settings: Settings) -> RagdownApp:
    if settings.token is None and not settings.secure_local_net:
        raise ConfigError(
            "refusing to serve without protection: set RAGDOWN_TOKEN (clients send it as a bearer token), "
            "or SECURE_LOCAL_NET=true on a trusted network"
        )
    docs = settings.require_docs_dir()
    saved = serversettings.load(docs)
    engine = Engine(settings, "serve", docs_dir=docs, cli_answer=commands.answer)
    engine.add_progress_listener(ProgressLog())
    vault = vault_notice(engine.root)
    if vault is not None:
        log.warning("%s", vault)
    runtime = Runtime(settings, engine, saved)
    engine.embedder_spec = runtime.embedder_spec
    engine.embedder_chosen = settings.embedder_chosen or "embedder" in saved
    engine.set_watch(runtime.watch)
    warn_about_min_score(runtime)
    guard = Guard(
        None if settings.secure_local_net else settings.token,
        settings.allowed_hosts,
        settings.allowed_origins,
        keys=KeyStore(docs),
        public_url=settings.public_url,
    )
    keep_alive_s = settings.keep_alive_timeout_ms / 1000
    return RagdownApp(runtime, guard, keep_alive_s)


def listen(host: str, port: int) -> list[socket.socket]:
    """The server's sockets, bound before anything starts: a port another server holds is a clear error
    at once, instead of an index opened and a model loaded before uvicorn finds out. One socket per
    address the host resolves to (`localhost`: 127.0.0.1 and ::1 where both exist), IPv6 ones IPv6 only,
    as asyncio binds them for uvicorn. `PORT=0` takes a free port (the log says which)."""
    try:
        found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as err:
        raise ConfigError(f"RAGDOWN_HOST {host!r} is not an address of this machine: {err}") from None
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(found):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            # As uvicorn does: a restart binds again at once, past the old sockets' TIME_WAIT.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if port == 0 and len(sockets) > 1:  # every address on the one free port the first one got
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            sock.bind(address)
    except OSError as err:
        for sock in sockets:
            sock.close()
        hint = (
            ": another server (another ragdown serve?) listens there; stop it or set PORT to another port"
            if err.errno == errno.EADDRINUSE
            else ""
        )
        raise ConfigError(f"cannot listen on {host}:{port} ({err.strerror}){hint}") from None
    return sockets


def run(settings: Settings) -> None:
    app = build_app(settings)
    sockets = listen(settings.host, settings.port)
    port = int(sockets[0].getsockname()[1])
    shown = f"[{settings.host}]" if ":" in settings.host else settings.host  # an IPv6 address in a URL
    log.info("serving %s on http://%s:%d", app.runtime.engine.root, shown, port)
    uvicorn.Server(uvicorn_config(app, settings, port)).run(sockets=sockets)


def uvicorn_config(app: RagdownApp, settings: Settings, port: int) -> uvicorn.Config:
    """How uvicorn runs the app. Its own proxy headers are off: by default it believes `X-Forwarded-For`
    from any local client (`FORWARDED_ALLOW_IPS`), and the app reads them itself, from the proxies of
    `RAGDOWN_TRUSTED_PROXIES` only (`security.TrustedProxies`)."""
    keep_alive = app.keep_alive_s if app.keep_alive_s > 0 else 365 * 24 * 3600
    return uvicorn.Config(
        app,
        host=settings.host,
        port=port,
        timeout_keep_alive=int(keep_alive),
        log_level=settings.log_level.lower(),
        access_log=False,
        lifespan="on",
        proxy_headers=False,
    )
