"""The version history as the tools see it: a document followed by its scope path, live or deleted, and its
versions. Shared by `ragdown_history`, `ragdown_diff`, `ragdown_restore`, `ragdown_read_doc` (`version`) and
the `readmedb` tool set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragdown.core.errors import not_found, unavailable
from ragdown.core.paths import split_safe
from ragdown.core.times import iso_seconds
from ragdown.history import HistoryStore, TrashEntry, Version
from ragdown.tools.context import ToolContext
from ragdown.vault.sandbox import read_plain


@dataclass(frozen=True)
class Followed:
    """A document as the history follows it: its docs-relative path, id, whether it is in the trash, and its
    versions newest first."""

    docs_path: str
    doc_id: int
    deleted: bool
    versions: list[Version]

    def version(self, number: int, display: str) -> Version:
        for v in self.versions:
            if v.version == number:
                return v
        newest = self.versions[0].version if self.versions else 0
        raise not_found(
            f"{display} has no version {number}: its versions are 1 to {newest} (ragdown_history)"
        )


def history_of(ctx: ToolContext) -> HistoryStore:
    store = ctx.engine.history
    if store is None:
        raise unavailable("the version history is off on this server (RAGDOWN_HISTORY=false)")
    return store


def docs_path_of(ctx: ToolContext, raw: str) -> str:
    """A scope path as the docs-relative path the history keys it by (no wikilinks: the history outlives them)."""
    return ctx.scope.docs_path("/".join(split_safe(raw)))


def followed(ctx: ToolContext, raw: str) -> Followed:
    store = history_of(ctx)
    docs_path = docs_path_of(ctx, raw)
    doc_id = store.find_doc(docs_path)
    if doc_id is None:
        on_disk = read_plain(ctx.docs_root, docs_path) is not None
        if on_disk:
            raise not_found(
                f"{raw} has no recorded versions yet: the file on disk is its only one (a version is recorded "
                "when it first changes)"
            )
        raise not_found(f"no document {raw} in the history, live or deleted")
    return Followed(docs_path, doc_id, store.is_deleted(doc_id), store.versions(doc_id))


def version_bytes(ctx: ToolContext, version: Version) -> bytes:
    return history_of(ctx).data(version)


def version_json(v: Version) -> dict[str, Any]:
    out: dict[str, Any] = {
        "version": v.version,
        "at": iso_seconds(v.at),
        "size": v.size,
        "lines": v.lines,
        "who": v.who,
        "event": v.event,
        "hash": v.hash,
    }
    if v.session:
        out["session"] = v.session
    return out


def trashed(ctx: ToolContext, prefix: str, since: float | None = None) -> list[TrashEntry]:
    """The deleted documents the scope holds under a docs-relative `prefix`, most recently deleted first
    (only those deleted at or after `since`, a Unix time, when given)."""
    return [
        e
        for e in history_of(ctx).trash(prefix)
        if ctx.scope.contains(e.path) and (since is None or e.deleted_at >= since)
    ]


def trash_json(ctx: ToolContext, e: TrashEntry) -> dict[str, Any]:
    """One trash entry as JSON: its scope path, when it was deleted, and its last version."""
    return {
        "path": ctx.scope.view(e.path),
        "deleted_at": iso_seconds(e.deleted_at),
        "last": version_json(e.last),
    }


def who_text(v: Version) -> str:
    return v.who + (f" (session {v.session})" if v.session else "")
