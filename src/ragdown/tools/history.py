"""Every change recoverable: `ragdown_history`, `ragdown_diff`, `ragdown_restore`, and the history's reads
shared with `ragdown_read_doc` (`version`), `ragdown_list` (`deleted`) and the `readmedb` tool set.

Paths here are the scope's, as everywhere: a document is looked up in the history by its docs-relative
path, live or in the trash. A restore is a new version written through the write door (undoable in turn).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field

from ragdown.core.errors import Refusal, bad_request, conflict, not_found
from ragdown.core.times import iso_seconds
from ragdown.documents import decode_text
from ragdown.tools.base import Annotations, Args, ToolSpec
from ragdown.tools.context import ToolContext
from ragdown.tools.versions import followed, history_of, version_bytes, version_json, who_text
from ragdown.tools.write import synced
from ragdown.vault.ignore import refuse_ignored
from ragdown.vault.sandbox import read_plain, resolve_in
from ragdown.writes import door

RESTORE_NAME = "ragdown_restore"
CONTEXT_LINES = (0, 20)


# -- ragdown_history ------------------------------------------------------------------------------


class HistoryArgs(Args):
    path: Annotated[str, Field(min_length=1, max_length=1024, description="A document, live or deleted.")]
    format: Literal["text", "json"] = "text"


def history_text(ctx: ToolContext, a: HistoryArgs) -> str:
    f = followed(ctx, a.path)
    shown = ctx.scope.view(f.docs_path)
    if a.format == "json":
        body = {"path": shown, "deleted": f.deleted, "versions": [version_json(v) for v in f.versions]}
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    state = " (in the trash: ragdown_restore brings it back)" if f.deleted else ""
    lines = [f"{shown}: {len(f.versions)} version{'s' if len(f.versions) != 1 else ''}{state}"]
    for v in f.versions:
        lines.append(
            f"v{v.version} {iso_seconds(v.at)} {v.event} by {who_text(v)}: {v.size:,} bytes, {v.lines} lines, "
            f"hash {v.hash[:12]}"
        )
    lines.append("Read one with ragdown_read_doc version=N; compare with ragdown_diff from=N.")
    return "\n".join(lines)


async def history_tool(ctx: ToolContext, a: HistoryArgs) -> str:
    await ctx.ready()
    return await ctx.run(history_text, ctx, a)


HISTORY = ToolSpec(
    name="ragdown_history",
    description=(
        "The versions of a document, newest first: version, time, size, lines, who made it (a tool and "
        "session, the web UI, or an edit outside). Finds deleted documents too. format json for structure."
    ),
    args=HistoryArgs,
    annotations=Annotations(read_only=True),
    handler=history_tool,
)


# -- ragdown_diff ---------------------------------------------------------------------------------


class DiffArgs(Args):
    path: Annotated[str, Field(min_length=1, max_length=1024)]
    from_version: Annotated[int, Field(alias="from", ge=1, description="A version (ragdown_history).")]
    to_version: Annotated[
        int | None, Field(alias="to", ge=1, description="A version; left out, the file on disk.")
    ] = None
    context_lines: Annotated[int, Field(ge=CONTEXT_LINES[0], le=CONTEXT_LINES[1])] = 3


def unified_diff(a_text: str, b_text: str, a_label: str, b_label: str, context: int) -> str:
    diff = difflib.unified_diff(
        a_text.splitlines(keepends=True), b_text.splitlines(keepends=True), a_label, b_label, n=context
    )
    out = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff)
    return out.rstrip("\n")


def diff_text(ctx: ToolContext, path: str, a_number: int, b_number: int | None, context: int) -> str:
    f = followed(ctx, path)
    shown = ctx.scope.view(f.docs_path)
    a = f.version(a_number, shown)
    a_text, _ = decode_text(version_bytes(ctx, a))
    if b_number is None:
        data = read_plain(ctx.docs_root, f.docs_path)
        if data is None:
            raise not_found(f"{shown} is not on disk (deleted): compare two versions, to=N")
        b_text, _ = decode_text(data)
        b_label = f"{shown} (on disk)"
    else:
        b = f.version(b_number, shown)
        b_text, _ = decode_text(version_bytes(ctx, b))
        b_label = f"{shown}@v{b.version} ({iso_seconds(b.at)})"
    a_label = f"{shown}@v{a.version} ({iso_seconds(a.at)})"
    diff = unified_diff(a_text, b_text, a_label, b_label, context)
    return diff or f"no differences between {a_label} and {b_label}"


async def diff_tool(ctx: ToolContext, a: DiffArgs) -> str:
    await ctx.ready()
    return await ctx.run(diff_text, ctx, a.path, a.from_version, a.to_version, a.context_lines)


DIFF = ToolSpec(
    name="ragdown_diff",
    description=(
        "A unified diff of a document between version `from` and version `to` (left out: the file on "
        "disk), with context_lines (0-20, default 3)."
    ),
    args=DiffArgs,
    annotations=Annotations(read_only=True),
    handler=diff_tool,
)


# -- ragdown_restore ------------------------------------------------------------------------------


class RestoreArgs(Args):
    path: Annotated[str, Field(min_length=1, max_length=1024)]
    version: Annotated[int, Field(ge=1, description="The version to bring back (ragdown_history).")]
    base_hash: Annotated[
        str | None, Field(description="The hash the document on disk should still have; checked if given.")
    ] = None


@dataclass(frozen=True)
class Restored:
    docs_path: str
    version: int
    new_version: int | None
    written: door.Written


def into_free_path(data: bytes, shown: str) -> door.Change:
    """A deleted document's bytes, written only where nothing is (checked again under the door's lock): the
    record of the write brings the document back from the trash, the one the history follows at that path."""

    def change(old: bytes | None) -> bytes:
        if old is not None:
            raise taken(shown)
        return data

    return change


def taken(shown: str) -> Refusal:
    return conflict(f"another document now lives at {shown}: move it away first, then restore")


def restore(
    ctx: ToolContext, path: str, number: int, base_hash: str | None, who: str, session: str | None = None
) -> Restored:
    """Write version `number` back as a new version; re-create a deleted document. `who` and `session`
    are what the history records as the restore's author."""
    f = followed(ctx, path)
    shown = ctx.scope.view(f.docs_path)
    wanted = f.version(number, shown)
    data = version_bytes(ctx, wanted)
    target = resolve_in(ctx.scope.dir, ctx.scope.view(f.docs_path), markdown=True, text=True)
    refuse_ignored(ctx.docs_root, target, shown, folders=ctx.engine.folders)
    store = history_of(ctx)
    change = into_free_path(data, shown) if f.deleted else door.becomes(data)
    if f.deleted and (target.exists() or target.is_symlink()):
        raise taken(shown)  # before any folder is made for it
    journal = ctx.journal(who, session)
    written = door.save(target, shown, change, base_hash=base_hash, journal=journal, event="restored")
    newest = store.versions(f.doc_id)
    return Restored(f.docs_path, number, newest[0].version if newest else None, written)


def restore_text(ctx: ToolContext, a: RestoreArgs) -> str:
    if a.base_hash is not None and not a.base_hash.strip():
        raise bad_request("base_hash is empty")
    r = restore(ctx, a.path, a.version, a.base_hash, RESTORE_NAME)
    saved = f" (saved as version {r.new_version})" if r.new_version else ""
    return (
        f"restored {ctx.scope.view(r.docs_path)} to version {r.version}{saved}, hash {r.written.short_hash}"
    )


RESTORE = ToolSpec(
    name=RESTORE_NAME,
    description=(
        "Bring back version `version` of a document (ragdown_history): written as a new version, so it "
        "can be undone; re-creates a deleted document. base_hash, if given, must match the file on disk. "
        "Returns the new hash."
    ),
    args=RestoreArgs,
    annotations=Annotations(read_only=False, destructive=True),
    handler=synced(restore_text),
)
