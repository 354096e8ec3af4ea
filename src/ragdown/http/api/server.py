"""The server's own routes: `/api/status` (what the UI shows first, and who calls), the server settings, the
query log."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ragdown import __version__
from ragdown.access.caller import SCOPE_KEY, Access
from ragdown.core.errors import bad_request, conflict
from ragdown.embedders import EmbedderError
from ragdown.http import serversettings
from ragdown.http.api.base import Api, json_body
from ragdown.http.errors import ok
from ragdown.storage.filter_sql import FileFilter
from ragdown.vault.walk import vault_notice


def access_json(access: Access | None) -> dict[str, Any] | None:
    """Who the caller is, as `/api/status` says it (None: no credential this server knows)."""
    if access is None:
        return None
    return {
        "who": access.who,
        "role": access.role,
        "folders": sorted(access.folders) if access.folders is not None else None,
        "admin": access.is_admin,
    }


async def status(api: Api, request: Request) -> Response:
    """Open. To a caller without a credential the server knows (a server with a token), liveness only: who
    it is, `ready`, whether a token is needed. To a key, the index counted in its folders, and errors and
    settings without the server's paths. To the admin (and anyone on a server without a token), all of it."""
    engine = api.engine
    ready = engine.wait_ready(0)
    found = request.scope.get(SCOPE_KEY)
    access = found if isinstance(found, Access) else None
    body: dict[str, Any] = {
        "name": "ragdown",
        "version": __version__,
        "ready": ready and engine.error is None,
        "auth_required": api.auth_required,
        "access": access_json(access),
    }
    if access is None:
        return ok(body)
    admin = access.is_admin
    folders = None if admin else access.folders  # None: every folder (the admin, an all-folders key)
    shown: Callable[[str], str] = (lambda text: text) if admin else api.hide_paths
    files = chunks = 0
    if ready and engine.store is not None:
        try:
            flt = FileFilter(
                hide_superseded=False, folders=tuple(sorted(folders)) if folders is not None else None
            )
            files, chunks = engine.store.counts(flt)
        except Exception:
            files = chunks = 0
    last = engine.last_sync_of(folders)
    if last is not None:
        last.pop("at")
    body.update(
        {
            "read_only": api.read_only,
            "history": engine.history is not None,
            "role": engine.role,
            "index": engine.backend.name,
            "embedder": engine.embedder.name if engine.embedder else None,
            "files": files,
            "chunks": chunks,
            "syncing": engine.syncing,
            "last_sync": last,
            "settings": api.settings_json() if admin else _hidden(api.settings_json(), shown),
        }
    )
    if admin:  # a key cannot change the docs dir: not said to one
        vault = vault_notice(api.root)
        if vault is not None:
            body["docs_notice"] = vault
    if engine.embedder_error:
        body["embedder_error"] = shown(engine.embedder_error)
    if engine.embedder_notice:
        body["embedder_notice"] = shown(engine.embedder_notice)
        reason = engine.embedder_notice_reason
        body["embedder_notice_reason"] = shown(reason) if reason is not None else None
    progress = engine.progress_of(folders)
    if progress is not None:
        body["progress"] = progress.as_dict()
    if engine.sync_error:
        body["sync_error"] = shown(engine.sync_error)
    if engine.error:
        body["error"] = shown(engine.error)
    return ok(body)


def _hidden(value: Any, shown: Callable[[str], str]) -> Any:
    """Every string in `value` as `shown` gives it (a setting such as `onnx:<dir>` without the server's paths)."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {k: _hidden(v, shown) for k, v in value.items()}
    if isinstance(value, list):
        return [_hidden(v, shown) for v in value]
    return value


async def patch_settings(api: Api, request: Request) -> Response:
    api.refuse_read_only("Changing the server settings")
    if api.engine.role != "primary":
        raise conflict("this process does not own the index (it is a reader): change settings on the primary")
    patch = await json_body(request)
    rt = api.runtime
    merged = serversettings.merge(rt.saved, patch)
    new_spec = merged.get("embedder", rt.settings.embedder)
    loaded = None
    if new_spec != rt.embedder_spec or (api.engine.embedder is None and "embedder" in patch):
        try:
            loaded = await asyncio.to_thread(api.engine.load_embedder, new_spec)
        except EmbedderError as err:
            raise bad_request(f"the embedder {new_spec!r} cannot load: {err}") from None
    serversettings.save(api.root, merged)
    rt.saved = merged
    if loaded is not None:
        api.engine.embedder_spec = new_spec
        api.engine.embedder_chosen = True
        await asyncio.to_thread(api.engine.switch_embedder, loaded)
    api.engine.set_watch(rt.watch)
    return ok({"settings": api.settings_json()})


async def query_log(api: Api, _: Request) -> Response:
    rt = api.runtime
    summary = await asyncio.to_thread(rt.query_log.summary, float(rt.server_hook()["min_score"]))
    return ok({"enabled": rt.query_log_enabled, "summary": summary})


async def clear_query_log(api: Api, _: Request) -> Response:
    await asyncio.to_thread(api.runtime.query_log.clear)
    return ok({"cleared": True})
