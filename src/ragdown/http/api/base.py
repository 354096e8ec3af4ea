"""The `/api` routes behind the web UI (behaviour spec A12).

Every `path` here includes its folder (`work/notes/a.md`). Each route sees only the folders its caller's
key sees (`access.access_of(request.scope)`, set by `app.py`, which also checks the route's role): every
other folder answers exactly as a missing one does, and lists leave it out. Writes go through the write
door (`door.py`) as the tools' do, and answer after the index has synced. Every read checks, at the moment it reads, that
the path is a plain file inside its folder (`sandbox.read_plain`). Errors are `{error, code?}` with the
status `http/errors.py` gives the refusal's kind; anything else is a 500.
"""

from __future__ import annotations

import asyncio
import functools
import json
import mimetypes
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from ragdown import __version__, toolsets
from ragdown.access.caller import SCOPE_KEY, Access, access_of
from ragdown.access.keys import KeyStore
from ragdown.access.scope import Scope
from ragdown.core import config
from ragdown.core.atomic import sha256_hex
from ragdown.core.config import HOOK_KEYS
from ragdown.core.errors import Refusal, bad_request, conflict, forbidden, not_found, too_large
from ragdown.core.paths import is_markdown, split_safe
from ragdown.core.times import iso_seconds
from ragdown.documents import LinkResolver, decode_text, has_crlf, to_crlf
from ragdown.embedders import EmbedderError
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.history.journal import Journal
from ragdown.http import serversettings
from ragdown.http.errors import error, ok
from ragdown.http.oauth.grants import OAuthStore
from ragdown.http.render import render_document
from ragdown.search.format import log_hits, web_hit_json
from ragdown.search.linking import folder_resolver
from ragdown.search.tags import normalise_tag
from ragdown.storage.filter_sql import FileFilter
from ragdown.tools.context import ToolContext
from ragdown.tools.history import diff_text, restore
from ragdown.tools.read import backlinks_of, file_lines
from ragdown.tools.root import create_folder
from ragdown.tools.versions import followed, version_bytes, version_json
from ragdown.tools.write import MoveArgs, lint_warnings, move_path
from ragdown.vault import quota
from ragdown.vault.folders import (
    folder_settings,
    hook_value_error,
    list_folders,
    settings_to_change,
    validate_folder_name,
    write_settings_file,
)
from ragdown.vault.ignore import refuse_ignored
from ragdown.vault.sandbox import read_plain, resolve_in
from ragdown.vault.walk import loose_markdown
from ragdown.writes import door
from ragdown.writes.wiki import new_journal

WEB = "web"  # who the version history says made a change through these routes
MAX_UPLOAD_BYTES = 4 * 1024 * 1024  # a request body (the spec's 4 MiB); a document's own limit is the door's

Handler = Callable[["Api", Request], Awaitable[Response]]

__all__ = ["Api", "error", "ok"]


async def json_body(request: Request, limit: int = MAX_UPLOAD_BYTES) -> Any:
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise too_large(f"the body is larger than {limit // (1024 * 1024)} MiB")
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > limit:
            raise too_large(f"the body is larger than {limit // (1024 * 1024)} MiB")
    try:
        return json.loads(raw or b"null")
    except RecursionError:
        raise bad_request("the body is nested too deeply to be read") from None
    except ValueError:
        raise bad_request("the body is not valid JSON") from None


def _param(request: Request, name: str) -> str:
    value = request.query_params.get(name)
    if value is None or value == "":
        raise bad_request(f"{name} is required")
    return value


@dataclass
class Api:
    runtime: Runtime
    auth_required: bool
    keys: KeyStore | None = None

    @property
    def engine(self) -> Engine:
        return self.runtime.engine

    @property
    def root(self) -> Path:
        return self.engine.root

    @property
    def read_only(self) -> bool:
        return self.runtime.settings.read_only

    def refuse_read_only(self, what: str) -> None:
        if self.read_only:
            raise forbidden(f"{what} is not allowed: the server is read-only (RAGDOWN_READ_ONLY)")

    async def synced(self) -> dict[str, Any]:
        """The sync after a write: its report, or `{pending: why}` when the index has not caught up in time."""
        return (await self.engine.sync_after_write_async()).as_dict()

    def folders(self, request: Request) -> list[str]:
        """The folders on disk that this request's caller sees (a key's own, or every one)."""
        return access_of(request.scope).visible(list_folders(self.root))

    def sees(self, request: Request, folder: str) -> bool:
        """Whether `folder` exists for this request's caller."""
        return access_of(request.scope).sees(folder) and folder in list_folders(self.root)

    def folder_scope(self, request: Request, name: str) -> Scope:
        if not self.sees(request, name):
            raise not_found(f"no such folder: {name}")
        return Scope(root=self.root, folder=name)

    def locate(self, request: Request, path: str, *, markdown: bool = True) -> tuple[Scope, str, Path]:
        """A folder-prefixed path as (folder scope, path inside the folder, absolute path); 400 otherwise."""
        parts = split_safe(path)
        if len(parts) < 2:
            raise bad_request(f"{path!r} is not inside a folder: paths start with the folder name")
        if not self.sees(request, parts[0]):
            raise bad_request(f"{path!r} is not inside an existing folder")
        scope = Scope(root=self.root, folder=parts[0])
        rel = "/".join(parts[1:])
        return scope, rel, resolve_in(scope.dir, rel, markdown=markdown)

    def ctx(self, scope: Scope) -> ToolContext:
        return ToolContext(runtime=self.runtime, scope=scope)

    def forget_folder(self, name: str) -> None:
        """The keys and OAuth grants that named a folder renamed or deleted here no longer do."""
        if self.keys is not None:
            self.keys.forget_folder(name)
        OAuthStore(self.root).forget_folder(name)

    def journal(self, folder: str | None) -> Journal:
        """The web UI's writes (`web` in the history) in a folder, with its index.md upkeep if it asks."""
        return new_journal(self.engine.history, self.root, self.root / folder if folder else self.root, WEB)

    def folder_json(self, name: str, counts: dict[str, tuple[int, int]] | None = None) -> dict[str, Any]:
        fs = folder_settings(self.root / name, name)
        files, chunks = (counts if counts is not None else self.store_counts()).get(name, (0, 0))
        out: dict[str, Any] = {
            "name": name,
            "title": fs.title,
            "mcp": fs.mcp,
            "hook": fs.hook.as_dict(),
            "mcp_path": "/mcp/" + quote(name, safe=""),
            "files": files,
            "chunks": chunks,
        }
        if fs.created_by:
            out["created_by"] = fs.created_by
        if fs.toolset:
            out["toolset"] = fs.toolset
        for key in ("include", "exclude", "index_md"):
            if key in fs.raw:
                out[key] = fs.raw[key]
        limits = quota.parse_quota(fs.raw)
        if limits.set:
            out.update(limits.as_dict())
            out["quota"] = quota.usage_of(self.root / name).report(limits)
        return out

    def quota_fields(self, folder: str) -> dict[str, Any]:
        """What a write answer adds when the folder has a quota: `{"quota": {files, bytes, max_*, text}}`."""
        found = quota.report(self.root / folder)
        return {"quota": found} if found else {}

    def store_counts(self) -> dict[str, tuple[int, int]]:
        try:
            return self.engine.require_store().folder_counts()
        except Exception:
            return {}

    def loose_files(self) -> list[str]:
        return loose_markdown(self.root)

    def settings_json(self) -> dict[str, Any]:
        """The tuning values in effect, those saved from the UI, the variables', and the schema of each."""
        rt = self.runtime
        env = rt.settings
        return {
            **{key: rt.value(key) for key in config.SERVER_KEYS},
            "hook": {**rt.server_hook(), "unrelated_score": rt.unrelated_score()},
            "saved": rt.saved,
            "env": {
                **{key: getattr(env, key) for key in config.SERVER_KEYS},
                "hook": {key: getattr(env.hook, key) for key in config.HOOK_KEYS},
            },
            "schema": config.schema(),
            "toolset": env.toolset or "ragdown",  # RAGDOWN_TOOLSET: the tool set of folders without their own
        }


# -- status and settings --------------------------------------------------------------------------


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
    engine = api.engine
    ready = engine.wait_ready(0)
    files = chunks = 0
    if ready and engine.store is not None:
        try:
            files, chunks = engine.store.counts(FileFilter(hide_superseded=False))
        except Exception:
            files = chunks = 0
    body: dict[str, Any] = {
        "name": "ragdown",
        "version": __version__,
        "ready": ready and engine.error is None,
        "auth_required": api.auth_required,
        "access": access_json(request.scope.get(SCOPE_KEY)),
        "read_only": api.read_only,
        "history": engine.history is not None,
        "role": engine.role,
        "index": engine.backend.name,
        "embedder": engine.embedder.name if engine.embedder else None,
        "files": files,
        "chunks": chunks,
        "syncing": engine.syncing,
        "last_sync": engine.last_sync.as_dict() if engine.last_sync else None,
        "settings": api.settings_json(),
    }
    if engine.embedder_error:
        body["embedder_error"] = engine.embedder_error
    if engine.embedder_notice:
        body["embedder_notice"] = engine.embedder_notice
    progress = engine.progress
    if progress is not None:
        body["progress"] = progress.as_dict()
    if engine.sync_error:
        body["sync_error"] = engine.sync_error
    if engine.error:
        body["error"] = engine.error
    return ok(body)


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


# -- folders --------------------------------------------------------------------------------------


async def get_folders(api: Api, request: Request) -> Response:
    counts = api.store_counts()
    return ok(
        {
            "folders": [api.folder_json(name, counts) for name in api.folders(request)],
            # Files outside every folder are the admin's business alone.
            "loose_files": api.loose_files() if access_of(request.scope).is_admin else [],
        }
    )


async def post_folder(api: Api, request: Request) -> Response:
    api.refuse_read_only("Creating a folder")
    body = await json_body(request)
    if not isinstance(body, dict):
        raise bad_request("send a JSON object: {name, title?, mcp?}")
    title = body.get("title")
    mcp = body.get("mcp", False)
    if title is not None and not isinstance(title, str):
        raise bad_request("title must be text")
    if not isinstance(mcp, bool):
        raise bad_request("mcp must be true or false")
    name = validate_folder_name(body.get("name"))
    await asyncio.to_thread(create_folder, api.root, name, title, mcp=mcp, created_by=None)
    return ok({"folder": api.folder_json(name)}, 201)


async def patch_folder(api: Api, request: Request, name: str) -> Response:
    if name not in list_folders(api.root):
        raise not_found(f"no such folder: {name}")
    body = await json_body(request)
    if not isinstance(body, dict):
        raise bad_request(
            "send a JSON object: {title?, mcp?, hook?, toolset?, include?, exclude?, index_md?, "
            "max_files?, max_bytes?, max_file_bytes?, name?}"
        )
    directory = api.root / name
    data = settings_to_change(directory)
    if "title" in body:
        if body["title"] is not None and not isinstance(body["title"], str):
            raise bad_request("title must be text")
        if body["title"]:
            data["title"] = body["title"].strip()
        else:
            data.pop("title", None)
    if "mcp" in body:
        if not isinstance(body["mcp"], bool):
            raise bad_request("mcp must be true or false")
        data["mcp"] = body["mcp"]
    if "hook" in body:
        data = _patched_hook(data, body["hook"])
    for key in ("include", "exclude"):
        if key in body:
            patterns = body[key]
            if patterns is None or patterns == []:
                data.pop(key, None)
            elif not isinstance(patterns, list) or not all(
                isinstance(p, str) and p.strip() for p in patterns
            ):
                raise bad_request(f"{key} must be a list of gitignore-style patterns (text), or null")
            else:
                data[key] = [p.strip() for p in patterns]
    for key in quota.QUOTA_KEYS:
        if key in body:
            value = quota.quota_value(key, body[key])
            if value is None:
                data.pop(key, None)
            else:
                data[key] = value
    if "index_md" in body:
        if body["index_md"] is None:
            data.pop("index_md", None)
        elif not isinstance(body["index_md"], bool):
            raise bad_request("index_md must be true or false")
        else:
            data["index_md"] = body["index_md"]
    if "toolset" in body:
        toolset = body["toolset"]
        if toolset is None or toolset == "":
            data.pop("toolset", None)
        elif not isinstance(toolset, str):
            raise bad_request("toolset must be text: a tool set's name, or several comma-separated")
        else:
            data["toolset"] = ",".join(toolsets.select(toolset).names)
    new_name = body.get("name")
    if new_name is not None and new_name != name:
        api.refuse_read_only("Renaming a folder")
        new_name = validate_folder_name(new_name)
        if (api.root / new_name).exists():
            raise conflict(f"a folder named {new_name} already exists")
    rules_changed = any(key in body for key in ("include", "exclude"))
    await asyncio.to_thread(write_settings_file, directory, data)
    if rules_changed and (new_name is None or new_name == name):
        await api.synced()  # which files count changed: the index follows before the answer
    if new_name is not None and new_name != name:  # through the door: the folder's history follows it
        move = functools.partial(door.move, journal=api.journal(None))
        await asyncio.to_thread(move, api.root / name, api.root / new_name, new_name)
        await asyncio.to_thread(api.forget_folder, name)
        await api.synced()
        name = new_name
    return ok({"folder": api.folder_json(name)})


def _patched_hook(data: dict[str, Any], hook: Any) -> dict[str, Any]:
    if hook is None:
        data.pop("hook", None)
        return data
    if not isinstance(hook, dict):
        raise bad_request("hook must be an object")
    current = dict(data.get("hook") or {}) if isinstance(data.get("hook"), dict) else {}
    for key, value in hook.items():
        if key not in HOOK_KEYS:
            raise bad_request(f"hook.{key} is not a hook setting (use {', '.join(HOOK_KEYS)})")
        if value is None:
            current.pop(key, None)
            continue
        problem = hook_value_error(key, value)
        if problem:
            raise bad_request(problem)
        current[key] = value
    if current and hook:
        data["hook"] = current
    else:
        data.pop("hook", None)
    return data


async def delete_folder(api: Api, request: Request, name: str) -> Response:
    api.refuse_read_only("Deleting a folder")
    if request.query_params.get("confirm") != name:
        raise bad_request("confirm must repeat the folder's name exactly")
    if name not in list_folders(api.root):
        raise not_found(f"no such folder: {name}")
    await asyncio.to_thread(functools.partial(door.delete_folder, journal=api.journal(None)), api.root / name)
    await asyncio.to_thread(api.forget_folder, name)
    return ok({"name": name, "sync": await api.synced()})


async def delete_loose(api: Api, request: Request) -> Response:
    api.refuse_read_only("Deleting a file")
    name = _param(request, "name")
    if name not in api.loose_files():
        raise not_found(f"no loose Markdown file named {name}")
    await asyncio.to_thread(functools.partial(door.delete, journal=api.journal(None)), api.root / name, name)
    return ok({"name": name})


# -- documents ------------------------------------------------------------------------------------


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
    superseded = store.superseded_by()
    return ok({"docs": [_doc_json(d, superseded) for d in files]})


def _file_url(path: str) -> str:
    return "/api/file?path=" + quote(path, safe="/")


def _resolver_of(api: Api, scope: Scope) -> LinkResolver:
    return folder_resolver(api.engine.require_store(), scope.folder, scope.folder_dir)


def _render(api: Api, scope: Scope, path: str, text: str) -> str:
    return render_document(text, path=path, resolver=_resolver_of(api, scope), file_url=_file_url)


async def get_doc(api: Api, request: Request) -> Response:
    path = _param(request, "path")
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
    target = resolve_in(scope.dir, rel, markdown=True)
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
    path, written = await asyncio.to_thread(_save_doc, api, request, body)
    sync = await api.synced()
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
    path = _param(request, "path")
    scope, _, target = api.locate(request, path)
    await asyncio.to_thread(functools.partial(door.delete, journal=api.journal(scope.folder)), target, path)
    sync = await api.synced()
    return ok({"path": path, "sync": sync, **api.quota_fields(scope.folder)})


async def search(api: Api, request: Request) -> Response:
    query = _param(request, "q")
    folder = request.query_params.get("folder")
    raw_top = request.query_params.get("top_k", "10")
    low, high = config.SEARCH_TOP_K
    if not raw_top.isdigit() or not low <= int(raw_top) <= high:
        raise bad_request(f"top_k must be a whole number from {low} to {high}")
    tag = request.query_params.get("tag")
    folders = (folder,) if folder else tuple(api.folders(request))
    if folder:
        api.folder_scope(request, folder)
    flt = FileFilter(folders=folders, tag=normalise_tag(tag) if tag else None)
    rt = api.runtime
    opts = rt.search_options(int(raw_top))
    hits = await asyncio.to_thread(api.engine.search, query, flt, opts)
    rt.log("search", scope=folder or "*", query=query, filters={"tag": tag}, hits=log_hits(hits, str))
    return ok({"hits": [web_hit_json(h) for h in hits]})


async def resolve(api: Api, request: Request) -> Response:
    source = _param(request, "from")
    link = _param(request, "link")
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
    src, dst, updated = await asyncio.to_thread(move_path, api.ctx(scope), args, WEB)
    sync = await api.synced()
    prefix = scope.folder + "/"
    return ok(
        {
            "from": prefix + src,
            "to": prefix + dst,
            "updated": [prefix + u for u in updated],
            "sync": sync,
            **api.quota_fields(scope.folder),
        }
    )


async def backlinks(api: Api, request: Request) -> Response:
    path = _param(request, "path")
    parts = path.split("/", 1)
    if len(parts) < 2 or not api.sees(request, parts[0]):
        raise not_found(f"no such document: {path}")
    scope = Scope(root=api.root, folder=parts[0])
    result = await asyncio.to_thread(backlinks_of, api.ctx(scope), parts[1])
    prefix = scope.folder + "/"
    for item in result["backlinks"]:
        item["path"] = prefix + item["path"]
    return ok({"path": path, "backlinks": result["backlinks"]})


def _history_scope(api: Api, request: Request, path: str) -> tuple[ToolContext, str]:
    """A folder-prefixed path of a document that may be deleted: its folder's context and the rest."""
    parts = split_safe(path)
    if len(parts) < 2 or not api.sees(request, parts[0]):
        raise not_found(f"no such document: {path}")
    return api.ctx(Scope(root=api.root, folder=parts[0])), "/".join(parts[1:])


def _int_param(request: Request, name: str, *, required: bool = True) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        if required:
            raise bad_request(f"{name} is required")
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise bad_request(f"{name} must be a whole number from 1")
    return int(raw)


async def history(api: Api, request: Request) -> Response:
    """A document's versions, newest first (live or in the trash)."""
    path = _param(request, "path")
    ctx, rel = _history_scope(api, request, path)
    f = await asyncio.to_thread(followed, ctx, rel)
    return ok({"path": path, "deleted": f.deleted, "versions": [version_json(v) for v in f.versions]})


async def version(api: Api, request: Request) -> Response:
    """One version's text."""
    path = _param(request, "path")
    number = _int_param(request, "version")
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
    path = _param(request, "path")
    first = _int_param(request, "from")
    assert first is not None
    second = _int_param(request, "to", required=False)
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
    restored = await asyncio.to_thread(restore, ctx, rel, number, base_hash, WEB)
    sync = await api.synced()
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


async def outline(api: Api, request: Request) -> Response:
    """One indexed document's section tree, whole: the web UI's outline beside the document."""
    path = _param(request, "path")
    store = api.engine.require_store()
    tree = await asyncio.to_thread(store.tree_of, path) if api.sees(request, path.split("/", 1)[0]) else None
    if tree is None:
        raise not_found(f"no such document: {path}")
    return ok({"path": path, "tree": tree.as_json()})


async def get_file(api: Api, request: Request) -> Response:
    path = _param(request, "path")
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
