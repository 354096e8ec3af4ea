"""The readmedb file tools: the summary, listing, reading, writing, patching, appending, deleting, moving."""

from __future__ import annotations

import time
from typing import Annotated, Any, NamedTuple

from pydantic import Field

from ragdown.core.errors import Refusal, bad_request
from ragdown.history.store import count_lines
from ragdown.tools.base import Args
from ragdown.tools.context import ToolContext
from ragdown.tools.read import file_lines
from ragdown.tools.write import MoveArgs, move_path
from ragdown.toolsets.readmedb.base import (
    Answer,
    NameArgs,
    age,
    check_name,
    check_size,
    created_ms,
    error_text,
    fail,
    files_text,
    head,
    journal_for,
    limit_mb,
    ms,
    no_file,
    read_existing,
    records_of,
    storage_text,
    target,
    text_of,
    updated_ms,
    usage,
    used_mb,
)
from ragdown.toolsets.readmedb.docs import (
    LIST_LIMIT,
    MAX_READ_FILES,
    MB,
    PLAN,
    PREVIEW_BYTES,
    RECENT_FILES,
    SMALL_MAX_BYTES,
    SMALL_MAX_FILES,
)
from ragdown.vault import quota
from ragdown.vault.sandbox import is_plain_file, read_plain
from ragdown.writes import door

# -- get_namespace_summary ------------------------------------------------------------------------


class NoArgs(Args):
    pass


def recommended_action(count: int, size: int) -> str:
    if count == 0:
        return "Empty namespace — no files yet. Create one with write_file (or append_to_file)."
    if count <= SMALL_MAX_FILES and size <= SMALL_MAX_BYTES:
        return (
            f"Small namespace ({count} file{'s' if count != 1 else ''}) — call list_files for a full listing, "
            f"then read_files (up to {MAX_READ_FILES} names per call) to load the files you need."
        )
    return (
        f"Large namespace ({count} files, {size / MB:.2f} MB) — don't load everything: call search_files to "
        "find files by keyword, or fetch_docs_for_task to get the content a task needs in one call; "
        "list_files pages with limit and offset."
    )


def _pct(used: int, limit: int | None) -> int:
    return round(100 * used / limit) if limit else 0


def summary(ctx: ToolContext, _a: NoArgs) -> dict[str, Any]:
    """ReadmeDB's summary of the namespace, the endpoint's scope.

    Which scope each field describes. At a subfolder endpoint (`/mcp/<folder>/<sub>`) the namespace is
    the subfolder, but the quota is the folder's: the write door counts the whole folder against it. So:

    - the namespace's own documents (what list_files and search_files see): `fileCount`, `storageBytes`,
      `storageMB`, `recentFiles`, `recommended_action`;
    - the folder's usage against the folder's quota, every field that compares usage with a limit:
      `maxFiles`, `maxStorageBytes`, `maxMB`, `filesUsedPct`, `storageUsedPct`, and `files` and `storage`
      (`"0.05/5 MB"`, `"13/50"`, the same strings a write answers);
    - `quotaUsage` (with a quota set; a field ReadmeDB's shape lacks and its clients ignore) labels it:
      `{folder, fileCount, storageBytes}`, the folder those fields describe and the counts behind them.

    At a folder endpoint both are the same folder (the quota counts the Markdown documents on disk, the
    namespace's fields what the index holds, which a moment ago's edit can make differ). Every field is a
    number (or ReadmeDB's string of one), always: without a quota the limits are the server's ceilings
    (`quota.Quota.or_ceilings`: 10,000,000 files, 1 PiB), measured against the namespace's own usage, so a
    client computing `fileCount / maxFiles` works. `storageMB` takes as many decimals as `maxMB` needs
    (`limit_mb`), so the two compare.
    """
    records = records_of(ctx, ctx.store())
    size = sum(r.size for r in records)
    now_ms = int(time.time() * 1000)
    recent = sorted(records, key=lambda r: (-r.mtime_ns, r.path))[:RECENT_FILES]
    limits = quota.quota_of(ctx.scope.folder_dir)
    ceilings = limits.or_ceilings()
    max_files, max_bytes = ceilings.max_files or 0, ceilings.max_bytes or 0
    # what the quota counts: the folder on disk; without one, the namespace itself
    used = quota.usage_of(ctx.scope.folder_dir) if limits.set else quota.Usage(len(records), size)
    folder_usage: dict[str, Any] = {}
    if limits.set:
        folder_usage = {
            "quotaUsage": {
                "folder": ctx.scope.folder or ctx.scope.root.name,
                "fileCount": used.files,
                "storageBytes": used.bytes,
            },
        }
    return {
        "fileCount": len(records),
        "maxFiles": max_files,
        "filesUsedPct": _pct(used.files, max_files),
        "storageBytes": size,
        "maxStorageBytes": max_bytes,
        "storageUsedPct": _pct(used.bytes, max_bytes),
        "storageMB": used_mb(size, max_bytes),
        "maxMB": limit_mb(max_bytes),
        "storage": storage_text(used.bytes, max_bytes),
        "files": files_text(used.files, max_files),
        **folder_usage,
        "plan": PLAN,
        "recentFiles": [
            {
                "name": ctx.scope.view(r.path),
                "updatedAt": ms(r.mtime_ns),
                "age": age(ms(r.mtime_ns), now_ms),
            }
            for r in recent
        ],
        "recommended_action": recommended_action(len(records), size),
    }


# -- list_files -----------------------------------------------------------------------------------


class ListArgs(Args):
    limit: Annotated[int, Field(ge=LIST_LIMIT[0], le=LIST_LIMIT[1], description="Max files to return.")] = 100
    offset: Annotated[int, Field(ge=0, description="Pagination offset.")] = 0
    preview_bytes: Annotated[
        int | None,
        Field(ge=PREVIEW_BYTES[0], le=PREVIEW_BYTES[1], description="Include the first N bytes inline."),
    ] = None


def list_files(ctx: ToolContext, a: ListArgs) -> dict[str, Any]:
    records = records_of(ctx, ctx.store())[a.offset : a.offset + a.limit]
    files = []
    for r in records:
        updated = ms(r.mtime_ns)
        entry: dict[str, Any] = {
            "name": ctx.scope.view(r.path),
            "sizeBytes": r.size,
            "createdAt": created_ms(ctx, r.path, updated),
            "updatedAt": updated,
        }
        if a.preview_bytes is not None:
            data = read_plain(ctx.docs_root, r.path)
            entry["preview"] = head(data, a.preview_bytes) if data is not None else ""
        files.append(entry)
    return {"files": files, "limit": a.limit, "offset": a.offset, "returned": len(files)}


# -- read_file, read_files ------------------------------------------------------------------------


class ReadArgs(Args):
    name: Annotated[str, Field(min_length=1)]
    start_line: Annotated[int | None, Field(ge=1, description="1-indexed first line.")] = None
    end_line: Annotated[int | None, Field(ge=1, description="1-indexed last line (inclusive).")] = None


def read_file(ctx: ToolContext, a: ReadArgs) -> dict[str, Any]:
    name, docs_path, data = read_existing(ctx, a.name)
    text = text_of(data)
    lines = file_lines(text) if text else []
    total = len(lines)
    out: dict[str, Any] = {
        "content": text,
        "sizeBytes": len(data),
        "updatedAt": updated_ms(ctx, ctx.store(), docs_path),
        "totalLines": total,
        "partial": False,
    }
    if a.start_line is None and a.end_line is None:
        return out
    part = line_range(lines, a.start_line, a.end_line, f'"{name}"')
    if part.content is not None:
        out["content"], out["partial"] = part.content, part.partial
    out["start_line"], out["end_line"] = part.first, part.last
    return out


class LineRange(NamedTuple):
    content: str | None  # the lines asked for; None when the file has none
    partial: bool
    first: int
    last: int


def line_range(lines: list[str], start: int | None, end: int | None, shown: str) -> LineRange:
    """Lines `start`..`end` (1-based, inclusive, `end` capped at the last line) of a file's `lines`, as
    `read_file` and REST's `GET /files/{path}` answer them; a range that is backwards or past the end is
    refused, naming the file (`shown`)."""
    total = len(lines)
    first = start or 1
    last = min(end or total, total)
    if end is not None and end < first:
        raise bad_request(f"start_line {first} is after end_line {end}")
    if total and first > total:
        raise bad_request(f"start_line {first} is past the end: {shown} has {total} lines")
    if not total:
        return LineRange(None, False, first, last)
    return LineRange("\n".join(lines[first - 1 : last]), first > 1 or last < total, first, last)


class ReadManyArgs(Args):
    names: Annotated[
        list[Annotated[str, Field(min_length=1)]], Field(min_length=1, max_length=MAX_READ_FILES)
    ]


def read_files(ctx: ToolContext, a: ReadManyArgs) -> list[dict[str, Any]]:
    store = ctx.store()
    out: list[dict[str, Any]] = []
    for raw in a.names:
        try:
            name, docs_path, data = read_existing(ctx, raw)
        except Refusal as err:
            out.append({"name": raw, "error": error_text(err.kind, err.code, err.message)})
            continue
        out.append(
            {
                "name": name,
                "content": text_of(data),
                "sizeBytes": len(data),
                "updatedAt": updated_ms(ctx, store, docs_path),
            }
        )
    return out


# -- write_file, append_to_file, patch_file -------------------------------------------------------


class WriteArgs(Args):
    name: Annotated[str, Field(min_length=1)]
    content: Annotated[str, Field(description="At most 1 MB.")]
    if_not_exists: Annotated[bool, Field(description="No-op if the file already exists.")] = False


def write_file(ctx: ToolContext, a: WriteArgs) -> Answer:
    data = a.content.encode()
    check_name(a.name)
    check_size(len(data), a.name)
    path, name, docs_path = target(ctx, a.name, write=True)
    journal = journal_for(ctx, "write_file")
    skipped = False
    if a.if_not_exists:
        if path.is_dir():
            raise fail("invalid", "INVALID_NAME", f'"{name}" is a folder, not a file')
        try:
            door.create(path, data, name, journal=journal)
        except Refusal as err:
            if err.kind != "conflict":
                raise
            skipped = True
    else:
        door.save(path, name, door.becomes(data), journal=journal)

    def answer() -> dict[str, Any]:
        size = len(read_plain(ctx.docs_root, docs_path) or b"") if skipped else len(data)
        body: dict[str, Any] = {"ok": True, "name": name, "sizeBytes": size, **usage(ctx)}
        if skipped:
            body["skipped"] = True
        return body

    return answer


class AppendArgs(Args):
    name: Annotated[str, Field(min_length=1)]
    content: str


def append_to_file(ctx: ToolContext, a: AppendArgs) -> Answer:
    path, name, _docs_path = target(ctx, a.name, write=True)

    def change(old: bytes | None) -> bytes:
        addition = a.content.encode()
        if old and not old.endswith((b"\n", b"\r")):
            addition = b"\n" + addition
        new = (old or b"") + addition
        check_size(len(new), name)
        return new

    written = door.save(path, name, change, journal=journal_for(ctx, "append_to_file"))

    def answer() -> dict[str, Any]:
        return {
            "ok": True,
            "name": name,
            "sizeBytes": len(written.data),
            "lines": count_lines(written.data),
            **usage(ctx),
        }

    return answer


class PatchArgs(Args):
    name: Annotated[str, Field(min_length=1)]
    find: Annotated[str, Field(min_length=1, description="Literal text to find (not a regex).")]
    replace: Annotated[str, Field(description="The replacement text.")]
    all: Annotated[bool, Field(description="Replace every occurrence.")] = False
    occurrence_index: Annotated[
        int | None, Field(ge=0, description="0-based occurrence to replace when all is false (default 0).")
    ] = None


def patch_text(
    text: str, find: str, replace: str, every: bool, index: int | None, name: str
) -> tuple[str, int]:
    """ReadmeDB's patch: literal `find`, every occurrence, or the `index`-th (from 0; the first by default)."""
    count = text.count(find)
    if count == 0:
        raise fail(
            "not_found",
            "PATCH_NOT_FOUND",
            f'the text to find does not occur in "{name}" (it is matched exactly, case and whitespace '
            "included: read_file to see the file)",
        )
    if every:
        return text.replace(find, replace), count
    wanted = index or 0
    if wanted >= count:
        raise fail(
            "invalid",
            "PATCH_OUT_OF_RANGE",
            f'occurrence_index {wanted} is out of range: the text occurs {count} time(s) in "{name}" '
            f"(indexes 0 to {count - 1})",
        )
    at = -len(find)
    for _ in range(wanted + 1):
        at = text.find(find, at + len(find))
    return text[:at] + replace + text[at + len(find) :], 1


def patch_file(ctx: ToolContext, a: PatchArgs) -> Answer:
    path, name, _docs_path = target(ctx, a.name)
    replaced = 0

    def change(old: bytes | None) -> bytes:
        nonlocal replaced
        if old is None:
            raise no_file(name)
        text, replaced = patch_text(
            door.decode(old, name), a.find, a.replace, a.all, a.occurrence_index, name
        )
        new = text.encode()
        check_size(len(new), name)
        return new

    door.save(path, name, change, journal=journal_for(ctx, "patch_file"))
    return lambda: f'OK: replaced {replaced} occurrence(s) in "{name}"'


# -- delete_file, move_file -----------------------------------------------------------------------


def delete_file(ctx: ToolContext, a: NameArgs) -> Answer:
    """ReadmeDB's delete: the file and all its version history, for good (`door.purge`)."""
    path, name, docs_path = target(ctx, a.name)
    if not is_plain_file(ctx.docs_root, docs_path):
        raise no_file(name)
    door.purge(path, name, journal=journal_for(ctx, "delete_file"))
    return lambda: f'OK: file "{name}" deleted permanently'


class MoveFileArgs(Args):
    source: Annotated[str, Field(alias="from", min_length=1)]
    to: Annotated[str, Field(min_length=1)]
    overwrite: Annotated[
        bool, Field(description="Replace a file already at `to` (it goes to the trash).")
    ] = False


def move_file(ctx: ToolContext, a: MoveFileArgs) -> Answer:
    src, src_name, src_docs = target(ctx, a.source)
    if not is_plain_file(ctx.docs_root, src_docs):
        raise no_file(src_name)
    dst, dst_name, dst_docs = target(ctx, a.to, write=True)
    taken = dst.exists() or dst.is_symlink()
    if taken and not door.same_file(src, dst):
        if not a.overwrite:
            raise fail(
                "conflict", "FILE_EXISTS", f'"{dst_name}" already exists: pass overwrite: true to replace it'
            )
        if not is_plain_file(ctx.docs_root, dst_docs):
            raise fail("invalid", "INVALID_NAME", f'"{dst_name}" is not a file that can be replaced')
        door.delete(dst, dst_name, journal=journal_for(ctx, "move_file"))
    move = MoveArgs.model_validate({"from": src_name, "to": dst_name})
    notes: list[str] = []  # a deleted document set apart in the trash
    _from, _to, updated = move_path(ctx, move, who="readmedb:move_file", notes=notes)
    links = f" (links updated in {', '.join(updated)})" if updated else ""
    said = "".join(f"; {note}" for note in notes)
    return lambda: f'OK: moved "{src_name}" → "{dst_name}"{links}{said}'
