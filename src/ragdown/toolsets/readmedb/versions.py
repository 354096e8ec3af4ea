"""The readmedb version tools over ragdown's history: get_file_history, get_file_version, diff_versions,
restore_version (a version id is the history's global `Version.id`)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ragdown.core.errors import Refusal
from ragdown.history import Version
from ragdown.tools.base import Args
from ragdown.tools.context import ToolContext
from ragdown.tools.history import restore, unified_diff
from ragdown.tools.versions import Followed, followed, version_bytes
from ragdown.toolsets.readmedb.base import (
    Answer,
    NameArgs,
    check_size,
    fail,
    iso_ms,
    no_file,
    target,
    text_of,
    updated_ms,
)
from ragdown.toolsets.readmedb.docs import CONTEXT_LINES, HISTORY_SHOWN
from ragdown.vault.sandbox import read_plain

# -- get_file_history, get_file_version, diff_versions, restore_version ---------------------------


def _followed(ctx: ToolContext, raw: str) -> Followed | None:
    """The file's history, live or in the trash; None for a file on disk with no versions yet."""
    _path, name, docs_path = target(ctx, raw)
    try:
        return followed(ctx, name)
    except Refusal as err:
        if err.kind != "not_found":
            raise
        if read_plain(ctx.docs_root, docs_path) is not None:
            return None
        raise no_file(name) from None


def _version(ctx: ToolContext, raw: str, version_id: int) -> tuple[Followed, Version]:
    f = _followed(ctx, raw)
    found = next((v for v in f.versions if v.id == version_id), None) if f is not None else None
    if f is not None and found is not None:
        return f, found
    raise fail(
        "not_found",
        "VERSION_NOT_FOUND",
        f'"{raw}" has no version {version_id}: get_file_history lists its version ids',
    )


def file_history(ctx: ToolContext, a: NameArgs) -> list[dict[str, Any]]:
    f = _followed(ctx, a.name)
    versions = f.versions[:HISTORY_SHOWN] if f is not None else []
    return [{"id": v.id, "savedAt": round(v.at * 1000), "contentLength": v.size} for v in versions]


class VersionArgs(Args):
    name: Annotated[str, Field(min_length=1)]
    version_id: Annotated[int, Field(ge=1, description="From get_file_history.")]


def file_version(ctx: ToolContext, a: VersionArgs) -> dict[str, Any]:
    _f, v = _version(ctx, a.name, a.version_id)
    data = version_bytes(ctx, v)
    return {
        "versionId": v.id,
        "savedAt": round(v.at * 1000),
        "sizeBytes": len(data),
        "content": text_of(data),
    }


class DiffArgs(Args):
    name: Annotated[str, Field(min_length=1)]
    version_id_a: Annotated[int, Field(ge=1, description='The "before" version.')]
    version_id_b: Annotated[
        int | None, Field(ge=1, description='The "after" version; left out, the current file.')
    ] = None
    context_lines: Annotated[int, Field(ge=CONTEXT_LINES[0], le=CONTEXT_LINES[1])] = 3


def diff_versions(ctx: ToolContext, a: DiffArgs) -> dict[str, Any]:
    f, va = _version(ctx, a.name, a.version_id_a)
    shown_name = ctx.scope.view(f.docs_path)
    a_text = text_of(version_bytes(ctx, va))
    a_label = f"version {va.id} (savedAt: {iso_ms(round(va.at * 1000))})"
    if a.version_id_b is None:
        data = read_plain(ctx.docs_root, f.docs_path)
        if data is None:
            raise fail(
                "not_found",
                "FILE_NOT_FOUND",
                f'"{shown_name}" is in the trash, so it has no current content: give version_id_b',
            )
        b_text = text_of(data)
        b_label = f"current (updatedAt: {iso_ms(updated_ms(ctx, ctx.store(), f.docs_path))})"
    else:
        _f, vb = _version(ctx, a.name, a.version_id_b)
        b_text = text_of(version_bytes(ctx, vb))
        b_label = f"version {vb.id} (savedAt: {iso_ms(round(vb.at * 1000))})"
    diff = unified_diff(a_text, b_text, "a", "b", a.context_lines)
    return {"file": shown_name, "a": a_label, "b": b_label, "diff": diff}


def restore_version(ctx: ToolContext, a: VersionArgs) -> Answer:
    f, v = _version(ctx, a.name, a.version_id)
    shown_name = ctx.scope.view(f.docs_path)
    check_size(v.size, shown_name)
    before = f.versions[0].id
    # Another file now at a deleted one's name is a conflict: FILE_EXISTS (readmedb_code).
    restore(ctx, shown_name, v.version, None, "readmedb:restore_version")
    newest = followed(ctx, shown_name).versions[0].id
    saved = f"saved as new version {newest}" if newest != before else "it already had that content"
    return lambda: f'OK: restored "{shown_name}" to version {v.id} ({saved})'
