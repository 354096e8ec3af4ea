"""The version routes: a document's history, one version, a diff, a restore, the trash (and deleting from it
for good: one entry, or a folder's whole trash)."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ragdown.access.scope import Scope
from ragdown.core.errors import bad_request, conflict, not_found
from ragdown.core.paths import split_safe
from ragdown.core.times import iso_seconds
from ragdown.documents import decode_text
from ragdown.http.api.base import WEB, Api, int_param, json_body, param
from ragdown.http.errors import ok
from ragdown.tools.context import ToolContext
from ragdown.tools.history import diff_text, restore
from ragdown.tools.versions import followed, version_bytes, version_json
from ragdown.vault.sandbox import resolve_in
from ragdown.writes import door


def _history_scope(api: Api, request: Request, path: str) -> tuple[ToolContext, str]:
    """A folder-prefixed path of a document that may be deleted: its folder's context and the rest."""
    parts = split_safe(path)
    if len(parts) < 2 or not api.sees(request, parts[0]):
        raise not_found(f"no such document: {path}")
    return api.ctx(Scope(root=api.root, folder=parts[0])), "/".join(parts[1:])


async def history(api: Api, request: Request) -> Response:
    """A document's versions, newest first (live or in the trash)."""
    path = param(request, "path")
    ctx, rel = _history_scope(api, request, path)
    f = await asyncio.to_thread(followed, ctx, rel)
    return ok({"path": path, "deleted": f.deleted, "versions": [version_json(v) for v in f.versions]})


async def version(api: Api, request: Request) -> Response:
    """One version's text."""
    path = param(request, "path")
    number = int_param(request, "version")
    assert number is not None
    ctx, rel = _history_scope(api, request, path)

    def read() -> dict[str, Any]:
        f = followed(ctx, rel)
        v = f.version(number, path)
        text, _ = decode_text(version_bytes(ctx, v))
        return {"path": path, **version_json(v), "text": text}

    return ok(await asyncio.to_thread(read))


async def diff(api: Api, request: Request) -> Response:
    """A unified diff between two versions, or a version and the file on disk (`to` left out)."""
    path = param(request, "path")
    first = int_param(request, "from")
    assert first is not None
    second = int_param(request, "to", required=False)
    raw_context = request.query_params.get("context_lines", "3")
    if not raw_context.isdigit() or int(raw_context) > 20:
        raise bad_request("context_lines must be a whole number from 0 to 20")
    ctx, rel = _history_scope(api, request, path)
    text = await asyncio.to_thread(diff_text, ctx, rel, first, second, int(raw_context))
    return ok({"path": path, "from": first, "to": second, "diff": text})


async def restore_version(api: Api, request: Request) -> Response:
    """Write a version back (a new version), re-creating a deleted document, through the write door."""
    api.refuse_read_only("Restoring a version")
    body = await json_body(request)
    if not isinstance(body, dict) or not isinstance(body.get("path"), str):
        raise bad_request("send {path, version, base_hash?}")
    number = body.get("version")
    base_hash = body.get("base_hash")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise bad_request("version must be a whole number from 1")
    if base_hash is not None and not isinstance(base_hash, str):
        raise bad_request("base_hash must be text")
    ctx, rel = _history_scope(api, request, body["path"])
    with door.recording() as changed:
        restored = await asyncio.to_thread(restore, ctx, rel, number, base_hash, WEB)
    sync = await api.synced(changed, request, ctx.scope.folder)
    return ok(
        {
            "path": body["path"],
            "version": number,
            "new_version": restored.new_version,
            "hash": restored.written.hash,
            "sync": sync,
            **api.quota_fields(ctx.scope.folder),
        }
    )


async def trash(api: Api, request: Request) -> Response:
    """The deleted documents of one folder, or of all, most recently deleted first."""
    folder = request.query_params.get("folder")
    if folder:
        api.folder_scope(request, folder)
    store = api.engine.history
    if store is None:
        return ok({"enabled": False, "trash": []})
    folders = set(api.folders(request))
    entries = await asyncio.to_thread(store.trash, folder or "")
    return ok(
        {
            "enabled": True,
            "trash": [
                {"path": e.path, "deleted_at": iso_seconds(e.deleted_at), "last": version_json(e.last)}
                for e in entries
                if e.path.split("/", 1)[0] in folders
            ],
        }
    )


async def purge_trash(api: Api, request: Request) -> Response:
    """Delete for good what a folder's trash holds: the entry `path` (folder-prefixed), or with `folder`
    alone every entry; each with all its versions (`door.purge`, `door.empty_trash`)."""
    api.refuse_read_only("Deleting for good")
    path = request.query_params.get("path")
    if path:
        ctx, rel = _history_scope(api, request, path)
        target = resolve_in(ctx.scope.dir, rel, markdown=False)
        if target.exists() or target.is_symlink():
            raise conflict(f"{path} is not in the trash any more (it is on disk): delete it first")
        journal = api.journal(ctx.scope.folder)
        purged = await asyncio.to_thread(door.purge, target, path, journal=journal)
        return ok({"path": path, "forgotten": purged.forgotten})
    folder = param(request, "folder")
    scope = api.folder_scope(request, folder)
    forgotten = await asyncio.to_thread(door.empty_trash, scope.dir, api.journal(folder))
    return ok({"folder": folder, "forgotten": forgotten})
