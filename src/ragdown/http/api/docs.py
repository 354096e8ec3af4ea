"""The document routes: the list, one document (rendered), save, delete, a preview, search, link resolution,
moves, backlinks, the outline and the attachments."""

from __future__ import annotations

import asyncio
import functools
import mimetypes
import time
from html import escape
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from ragdown.access.scope import Scope
from ragdown.core import config
from ragdown.core.atomic import sha256_hex
from ragdown.core.errors import Refusal, bad_request, conflict, not_found
from ragdown.core.paths import is_markdown, is_plain_text, split_safe
from ragdown.documents import LinkResolver, decode_text, has_crlf, to_crlf
from ragdown.http.api.base import WEB, Api, json_body, param
from ragdown.http.errors import ok
from ragdown.render.document import render_document
from ragdown.search.format import log_hits, web_hit_json
from ragdown.search.linking import folder_resolver
from ragdown.search.tags import normalise_tag
from ragdown.storage.filter_sql import FileFilter
from ragdown.tools.read import backlinks_of, file_lines
from ragdown.tools.write import MoveArgs, lint_warnings, move_path
from ragdown.vault.ignore import refuse_ignored
from ragdown.vault.sandbox import read_plain, resolve_in
from ragdown.writes import door


def _doc_json(d: Any, superseded: dict[str, list[str]]) -> dict[str, Any]:
    return {
        "path": d.path,
        "folder": d.folder,
        "title": d.title,
        "description": d.description,
        "tags": list(d.tags),
        "aliases": list(d.aliases),
        "created_by": d.created_by,
        "session": d.session,
        "superseded_by": superseded.get(d.path, []),
        "mtime_ms": d.mtime_ns // 1_000_000,
        "size": d.size,
        "chunks": d.chunk_count,
    }


async def get_docs(api: Api, request: Request) -> Response:
    folder = request.query_params.get("folder")
    store = api.engine.require_store()
    if folder:
        api.folder_scope(request, folder)
        flt = FileFilter(folders=(folder,), hide_superseded=False)
    else:
        flt = FileFilter(folders=tuple(api.folders(request)), hide_superseded=False)
    files = await asyncio.to_thread(store.list_files, flt)
    skipped = await asyncio.to_thread(store.skipped_files, flt)
    superseded = store.superseded_by()
    return ok(
        {
            "docs": [_doc_json(d, superseded) for d in files],
            # The files the index left out (too large, not UTF-8, binary), with the reason.
            "skipped": [{"path": path, "reason": reason} for path, reason in skipped],
        }
    )


def _file_url(path: str) -> str:
    return "/api/file?path=" + quote(path, safe="/")


def _resolver_of(api: Api, scope: Scope) -> LinkResolver:
    return folder_resolver(api.engine.require_store(), scope.folder, scope.folder_dir)


def _render(api: Api, scope: Scope, path: str, text: str) -> str:
    """The document as HTML: Markdown rendered, plain text (`todo.txt`) as itself in a `<pre>`."""
    if is_plain_text(path):
        return f'<pre class="plain-text">{escape(text)}</pre>'
    return render_document(text, path=path, resolver=_resolver_of(api, scope), file_url=_file_url)


async def get_doc(api: Api, request: Request) -> Response:
    path = param(request, "path")
    store = api.engine.require_store()
    record = store.get_file(path)
    if record is None or not api.sees(request, record.folder):
        raise not_found(f"no such document: {path}")
    scope = Scope(root=api.root, folder=record.folder)
    data = await asyncio.to_thread(read_plain, api.root, path)
    if data is None:  # gone, or replaced by a symlink or a folder, since it was indexed
        raise not_found(f"no such document: {path}")
    text, _ = decode_text(data)
    lines = file_lines(text)
    html = await asyncio.to_thread(_render, api, scope, path, text)
    return ok(
        {
            "path": path,
            "title": record.title,
            "text": text,
            "start_line": 1,
            "end_line": len(lines),
            "total_lines": len(lines),
            "hash": sha256_hex(data),
            "tags": list(record.tags),
            "aliases": list(record.aliases),
            "created_by": record.created_by,
            "description": record.description,
            "superseded_by": store.superseded_by().get(path, []),
            "html": html,
            "plain": is_plain_text(path),
        }
    )


async def render_preview(api: Api, request: Request) -> Response:
    body = await json_body(request)
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("text"), str)
        or not isinstance(body.get("path"), str)
    ):
        raise bad_request("send {path, text}")
    scope, _, _ = api.locate(request, body["path"])
    html = await asyncio.to_thread(_render, api, scope, body["path"], body["text"])
    return ok({"html": html})


def _save_doc(api: Api, request: Request, body: dict[str, Any]) -> tuple[str, door.Written]:
    path = body.get("path")
    text = body.get("text")
    if not isinstance(path, str) or not path:
        raise bad_request("path is required")
    if not isinstance(text, str):
        raise bad_request("text is required")
    overwrite = body.get("overwrite", False)
    base_hash = body.get("base_hash")
    if not isinstance(overwrite, bool) or (base_hash is not None and not isinstance(base_hash, str)):
        raise bad_request("overwrite must be true or false, base_hash text")
    scope, rel, _ = api.locate(request, path)
    target = resolve_in(scope.dir, rel, markdown=True, text=True)
    canonical = f"{scope.folder}/{rel}"
    refuse_ignored(api.root, target, canonical, folders=True)

    def change(old: bytes | None) -> bytes:
        if old is not None and base_hash is None and not overwrite:
            raise conflict(f"{canonical} already exists: send overwrite: true, or base_hash to save an edit")
        keep_crlf = old is not None and has_crlf(old.decode("utf-8", "replace"))
        return (to_crlf(text) if keep_crlf else text).encode()

    return canonical, door.save(
        target, canonical, change, base_hash=base_hash, journal=api.journal(scope.folder)
    )


async def post_doc(api: Api, request: Request) -> Response:
    api.refuse_read_only("Uploading a document")
    body = await json_body(request)
    if not isinstance(body, dict):
        raise bad_request("send a JSON object: {path, text, overwrite?} or {path, text, base_hash}")
    with door.recording() as changed:
        path, written = await asyncio.to_thread(_save_doc, api, request, body)
    sync = await api.synced(changed, request, path.split("/", 1)[0])
    ctx = api.ctx(Scope(root=api.root, folder=path.split("/", 1)[0]))
    warnings = await asyncio.to_thread(lint_warnings, ctx, written.path, written.data)
    folder = path.split("/", 1)[0]
    return ok(
        {
            "path": path,
            "created": written.created,
            "hash": written.hash,
            "sync": sync,
            "warnings": warnings,
            **api.quota_fields(folder),
        },
        201 if written.created else 200,
    )


async def delete_doc(api: Api, request: Request) -> Response:
    api.refuse_read_only("Deleting a document")
    path = param(request, "path")
    scope, _, target = api.locate(request, path)
    with door.recording() as changed:
        await asyncio.to_thread(
            functools.partial(door.delete, journal=api.journal(scope.folder)), target, path
        )
    sync = await api.synced(changed, request, scope.folder)
    return ok({"path": path, "sync": sync, **api.quota_fields(scope.folder)})


async def search(api: Api, request: Request) -> Response:
    query = param(request, "q")
    folder = request.query_params.get("folder")
    raw_top = request.query_params.get("top_k", "10")
    low, high = config.SEARCH_TOP_K
    if not raw_top.isdigit() or not low <= int(raw_top) <= high:
        raise bad_request(f"top_k must be a whole number from {low} to {high}")
    tag = request.query_params.get("tag")
    folders = (folder,) if folder else tuple(api.folders(request))
    if folder:
        api.folder_scope(request, folder)
    flt = Scope.over(api.root, folders).file_filter(tag=normalise_tag(tag) if tag else None)
    rt = api.runtime
    opts = rt.search_options(int(raw_top))
    started = time.perf_counter()
    hits = await asyncio.to_thread(api.engine.search, query, flt, opts)
    ms = round((time.perf_counter() - started) * 1000, 1)
    rt.log("search", scope=folder or "*", query=query, filters={"tag": tag}, hits=log_hits(hits), ms=ms)
    return ok({"hits": [web_hit_json(h) for h in hits]})


async def resolve(api: Api, request: Request) -> Response:
    source = param(request, "from")
    link = param(request, "link")
    parts = source.split("/", 1)
    if len(parts) < 2 or not api.sees(request, parts[0]):
        raise not_found(f"no such document: {source}")
    scope = Scope(root=api.root, folder=parts[0])
    resolver = await asyncio.to_thread(_resolver_of, api, scope)
    found = resolver.resolve(link, parts[1])
    if found is None or found.path is None:
        raise not_found(f"{link} does not resolve from {source}")
    body: dict[str, Any] = {"path": f"{scope.folder}/{found.path}"}
    if found.anchor:
        body["anchor"] = found.anchor
    return ok(body)


async def move(api: Api, request: Request) -> Response:
    api.refuse_read_only("Moving a document")
    body = await json_body(request)
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("from"), str)
        or not isinstance(body.get("to"), str)
    ):
        raise bad_request("send {from, to}, both starting with the folder name")
    src_parts, dst_parts = split_safe(body["from"]), split_safe(body["to"])
    if src_parts[0] != dst_parts[0]:
        raise bad_request("a move stays inside its folder")
    if len(src_parts) < 2 or len(dst_parts) < 2:
        raise bad_request("name a document or subfolder inside the folder")
    scope = api.folder_scope(request, src_parts[0])
    args = MoveArgs.model_validate({"from": "/".join(src_parts[1:]), "to": "/".join(dst_parts[1:])})
    notes: list[str] = []  # what the move said (a deleted document set apart in the trash)
    with door.recording() as changed:
        src, dst, updated = await asyncio.to_thread(move_path, api.ctx(scope), args, WEB, None, notes)
    sync = await api.synced(changed, request, scope.folder)
    prefix = scope.folder + "/"
    return ok(
        {
            "from": prefix + src,
            "to": prefix + dst,
            "updated": [prefix + u for u in updated],
            "notes": notes,
            "sync": sync,
            **api.quota_fields(scope.folder),
        }
    )


async def backlinks(api: Api, request: Request) -> Response:
    path = param(request, "path")
    parts = path.split("/", 1)
    if len(parts) < 2 or not api.sees(request, parts[0]):
        raise not_found(f"no such document: {path}")
    scope = Scope(root=api.root, folder=parts[0])
    result = await asyncio.to_thread(backlinks_of, api.ctx(scope), parts[1])
    prefix = scope.folder + "/"
    for item in result["backlinks"]:
        item["path"] = prefix + item["path"]
    return ok({"path": path, "backlinks": result["backlinks"]})


async def outline(api: Api, request: Request) -> Response:
    """One indexed document's section tree, whole: the web UI's outline beside the document."""
    path = param(request, "path")
    store = api.engine.require_store()
    tree = await asyncio.to_thread(store.tree_of, path) if api.sees(request, path.split("/", 1)[0]) else None
    if tree is None:
        raise not_found(f"no such document: {path}")
    return ok({"path": path, "tree": tree.as_json()})


async def get_file(api: Api, request: Request) -> Response:
    path = param(request, "path")
    try:
        scope, rel, target = api.locate(request, path, markdown=False)
    except Refusal as err:
        raise not_found(err.message) from None
    data = await asyncio.to_thread(read_plain, scope.dir, rel)
    if data is None:
        raise not_found(f"no such file: {path}")
    kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    if is_markdown(target.name):
        kind = "text/markdown; charset=utf-8"
    return Response(
        data,
        media_type=kind,
        headers={
            "x-content-type-options": "nosniff",
            "content-security-policy": "sandbox",
            "cache-control": "no-cache",
        },
    )
