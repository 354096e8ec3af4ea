"""What every `/api` route of the web UI stands on: `Api` (the runtime, the keys, the folders a caller sees,
its tool context) and reading a request's JSON body and parameters."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from ragdown.access.caller import access_of
from ragdown.access.keys import KeyStore
from ragdown.access.scope import Scope
from ragdown.core import config
from ragdown.core.errors import bad_request, forbidden, not_found, too_large
from ragdown.core.paths import split_safe, without_server_paths
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.history.journal import Journal
from ragdown.http.errors import error, ok
from ragdown.http.oauth.grants import OAuthStore
from ragdown.tools.context import ToolContext
from ragdown.vault import quota
from ragdown.vault.folders import folder_settings, list_folders
from ragdown.vault.sandbox import resolve_in
from ragdown.vault.walk import loose_markdown
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


def param(request: Request, name: str) -> str:
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

    async def synced(
        self, changed: Sequence[Path] = (), request: Request | None = None, folder: str | None = None
    ) -> dict[str, Any]:
        """The sync after a write of `changed` (`door.recording`; none: of the whole tree): its report, or
        `{pending: why}` when the index has not caught up in time; of the writer's `folder` only when given
        (its tree synced and counted: a key hears of its own folder), and said to a key without the
        server's paths."""
        folders = frozenset({folder}) if folder else None
        done = await self.engine.sync_after_write_async(changed, folders)
        if done.pending and request is not None and not access_of(request.scope).is_admin:
            return {"pending": self.hide_paths(done.pending)}
        return done.as_dict()

    def hide_paths(self, text: str) -> str:
        """An error's words without the server's absolute paths (`paths.without_server_paths`), for a key."""
        return without_server_paths(text, str(self.root), str(self.engine.data_dir), str(Path.home()))

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
        """A folder-prefixed path as (folder scope, path inside the folder, absolute path); 400 otherwise.
        With `markdown`, a document's: Markdown or plain text (`todo.txt`), which the web UI shows and edits."""
        parts = split_safe(path)
        if len(parts) < 2:
            raise bad_request(f"{path!r} is not inside a folder: paths start with the folder name")
        if not self.sees(request, parts[0]):
            raise bad_request(f"{path!r} is not inside an existing folder")
        scope = Scope(root=self.root, folder=parts[0])
        rel = "/".join(parts[1:])
        return scope, rel, resolve_in(scope.dir, rel, markdown=markdown, text=True)

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
        """The tuning values in effect (the embedder in use), where each comes from (`sources`), those saved
        from the UI, the variables' (null where one is not set), and the schema of each."""
        rt = self.runtime
        env = rt.settings
        return {
            **{key: rt.shown_value(key) for key in config.SERVER_KEYS},
            "hook": {**rt.server_hook(), "unrelated_score": rt.unrelated_score()},
            "sources": {key: rt.source(key) for key in config.SERVER_KEYS},
            "saved": rt.saved,
            "env": env.environment(),
            "schema": config.schema(),
            "folder_schema": config.folder_schema(),
            "toolset": env.toolset or "ragdown",  # RAGDOWN_TOOLSET: the tool set of folders without their own
        }


# -- status and settings --------------------------------------------------------------------------


# -- folders --------------------------------------------------------------------------------------


# -- documents ------------------------------------------------------------------------------------


def int_param(request: Request, name: str, *, required: bool = True) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        if required:
            raise bad_request(f"{name} is required")
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise bad_request(f"{name} must be a whole number from 1")
    return int(raw)
