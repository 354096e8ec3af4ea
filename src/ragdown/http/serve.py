"""`ragdown serve`: run the app on uvicorn with the spec's keep-alive and refuse to start unprotected."""

from __future__ import annotations

import logging

import uvicorn

from ragdown import commands
from ragdown.config import ConfigError, Settings
from ragdown.engine import Engine
from ragdown.http import serversettings
from ragdown.http.app import RagdownApp
from ragdown.http.security import Guard
from ragdown.index.progress_log import ProgressLog
from ragdown.keys import KeyStore
from ragdown.mcpserver import warn_about_min_score
from ragdown.runtime import Runtime

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


def run(settings: Settings) -> None:
    app = build_app(settings)
    keep_alive = app.keep_alive_s if app.keep_alive_s > 0 else 365 * 24 * 3600
    log.info("serving %s on http://%s:%d", app.runtime.engine.root, settings.host, settings.port)
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        timeout_keep_alive=int(keep_alive),
        log_level=settings.log_level.lower(),
        access_log=False,
        lifespan="on",
    )
