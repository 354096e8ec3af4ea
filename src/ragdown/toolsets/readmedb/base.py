"""What every readmedb tool shares: ReadmeDB's error codes (the one mapping from ragdown's refusals), names
checked as ReadmeDB names over the sandbox, times in milliseconds, usage, and the handlers that run a read
or a write (the index synced before the answer) off the event loop.
"""

from __future__ import annotations

import math
import os
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from ragdown.core.errors import Kind, Refusal
from ragdown.core.paths import is_document, shown, split_safe
from ragdown.documents import decode_text
from ragdown.history.journal import Journal
from ragdown.storage.backend import IndexStore
from ragdown.storage.records import FileRecord
from ragdown.tools.base import Annotations, Args, Failure
from ragdown.tools.context import ToolContext
from ragdown.tools.read import compact
from ragdown.toolsets.readmedb.docs import ERROR_CODES, MAX_FILE_BYTES, MB, NAME_RULE
from ragdown.vault import quota
from ragdown.vault.ignore import refuse_ignored
from ragdown.vault.sandbox import read_plain, resolve_in
from ragdown.writes import door

READ_ONLY = Annotations(read_only=True)

# A ragdown refusal's kind, as ReadmeDB's code, when the refusal carries none of its own.
_KIND_CODES: dict[Kind | str, str] = {
    "invalid": "INVALID_INPUT",
    "forbidden": "FORBIDDEN",
    "not_found": "FILE_NOT_FOUND",
    "conflict": "FILE_EXISTS",
    "too_large": "FILE_TOO_LARGE",
    "unavailable": "UNAVAILABLE",
    "over_quota": "QUOTA_EXCEEDED",
    "rate_limited": "RATE_LIMIT_EXCEEDED",
    "internal": "INTERNAL_ERROR",
}


def readmedb_code(kind: str, code: str | None) -> str:
    """The one mapping of a ragdown refusal (kind and code) to ReadmeDB's error code."""
    if code in ERROR_CODES:
        return code
    if code == "changed":  # the door's base check: an editor saved the file meanwhile
        return "CONFLICT"
    return _KIND_CODES.get(kind, "INTERNAL_ERROR")


def error_text(kind: str, code: str | None, message: str) -> str:
    return f"{readmedb_code(kind, code)}: {message}"


def failure_text(failure: Failure) -> str:
    """How a failed call answers: `FILE_NOT_FOUND: no file "x.md" in this namespace`, as an isError result."""
    return error_text(failure.kind, failure.code, failure.message)


def fail(kind: Kind, code: str, message: str) -> Refusal:
    return Refusal(kind, message, code)


class NameArgs(Args):
    name: Annotated[str, Field(min_length=1)]


# -- names, times, usage --------------------------------------------------------------------------


def check_name(raw: str) -> list[str]:
    try:
        parts = split_safe(raw)
    except Refusal as err:
        raise fail("invalid", "INVALID_NAME", f"{err.message} ({NAME_RULE})") from None
    if not is_document(parts[-1]):
        raise fail(
            "invalid",
            "INVALID_NAME",
            f"{shown(raw)} is not a document's name: this store keeps Markdown and plain-text documents, "
            f"so {NAME_RULE} (name it {parts[-1]}.md)",
        )
    return parts


def target(ctx: ToolContext, raw: str, *, write: bool = False) -> tuple[Path, str, str]:
    """A name as (absolute path, name in the namespace, docs-relative path); for a write, its folders are
    made and a name the ignore rules leave out is refused."""
    check_name(raw)
    try:
        path = resolve_in(ctx.scope.dir, raw, markdown=True, text=True)
        if write:
            refuse_ignored(ctx.docs_root, path, raw, folders=ctx.engine.folders)
    except Refusal as err:
        if err.kind != "invalid":
            raise
        raise fail("invalid", "INVALID_NAME", err.message) from None
    name = path.relative_to(ctx.scope.dir).as_posix()
    return path, name, ctx.scope.docs_path(name)


def no_file(name: str) -> Refusal:
    return fail("not_found", "FILE_NOT_FOUND", f'no file "{name}" in this namespace')


def read_existing(ctx: ToolContext, raw: str) -> tuple[str, str, bytes]:
    """(name, docs path, bytes) of a file that exists; FILE_NOT_FOUND otherwise."""
    _path, name, docs_path = target(ctx, raw)
    data = read_plain(ctx.docs_root, docs_path)
    if data is None:
        raise no_file(name)
    return name, docs_path, data


def ms(ns: int) -> int:
    return ns // 1_000_000


def iso_ms(ms: int) -> str:
    stamp = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def updated_ms(ctx: ToolContext, store: IndexStore, docs_path: str) -> int:
    """When the content last changed: the index's record, else (not indexed yet) the file's mtime."""
    record = store.get_file(docs_path)
    if record is not None:
        return ms(record.mtime_ns)
    try:
        return ms(os.lstat(ctx.docs_root / docs_path).st_mtime_ns)
    except OSError:
        return 0


def created_ms(ctx: ToolContext, docs_path: str, updated_ms: int) -> int:
    """The first recorded version's time, else when the content last changed."""
    history = ctx.engine.history
    doc_id = history.find_doc(docs_path, deleted=False) if history is not None else None
    versions = history.versions(doc_id) if history is not None and doc_id is not None else []
    return min(round(versions[-1].at * 1000), updated_ms) if versions else updated_ms


def records_of(ctx: ToolContext, store: IndexStore) -> list[FileRecord]:
    return store.list_files(ctx.scope.file_filter(hide_superseded=False))


# ReadmeDB's usage strings (its reference's `"storage": "0.05/5 MB"`, `"files": "13/50"`, `"storageMB":
# "0.05"`, `"maxMB": "5"`), for this set only: ragdown's own answers say `13/50 files, 0.05/5 MB`
# (`quota.Usage.report`). Sizes are always in MB, as every example of ReadmeDB's is: usage with 2 decimals,
# a limit with its trailing zeros dropped. A limit under 0.01 MB (a quota ReadmeDB's plans never have) takes
# the decimals its first two significant digits need (200 bytes: `"0.00019"`), never `"0"`, and the usage
# beside it as many, so the two stay comparable (`"0.00017/0.00019 MB"`).


def mb_decimals(limit: int | None) -> int:
    """The decimals of the MB figures measured against `limit`: 2, or more for a limit under 0.01 MB."""
    if not limit or limit >= MB / 100:
        return 2
    return max(2, 1 - math.floor(math.log10(limit / MB)))


def used_mb(size: int, limit: int | None = None) -> str:
    """A usage in MB, as `storageMB` and a `storage` string's first half: `"0.05"`, `"1.00"`."""
    return f"{size / MB:.{mb_decimals(limit)}f}"


def limit_mb(limit: int) -> str:
    """A limit in MB, as `maxMB` and a `storage` string's second half: `"5"`, `"0.5"`, `"0.00019"`."""
    return f"{limit / MB:.{mb_decimals(limit)}f}".rstrip("0").rstrip(".")


def storage_text(used: int, limit: int | None) -> str:
    """`"0.05/5 MB"`; `"0.05 MB"` without a limit."""
    return f"{used_mb(used, limit)}/{limit_mb(limit)} MB" if limit else f"{used_mb(used)} MB"


def files_text(used: int, limit: int | None) -> str:
    """`"13/50"`; `"13"` without a limit."""
    return f"{used}/{limit}" if limit else str(used)


def usage(ctx: ToolContext) -> dict[str, str]:
    """A write answer's `storage` and `files`, as ReadmeDB writes them (`"0.05/5 MB"`, `"13/50"`): when the
    folder has a quota, the folder's usage against it; without one, the namespace's usage against the
    server's ceilings (`quota.Quota.or_ceilings`: `"13/10000000"`), so a limit is always there to parse."""
    limits = quota.quota_of(ctx.scope.folder_dir)
    ceilings = limits.or_ceilings()
    if not limits.set:
        records = records_of(ctx, ctx.store())
        used = quota.Usage(len(records), sum(r.size for r in records))
    else:
        used = quota.usage_of(ctx.scope.folder_dir)
    return {
        "storage": storage_text(used.bytes, ceilings.max_bytes),
        "files": files_text(used.files, ceilings.max_files),
    }


def text_of(data: bytes) -> str:
    return decode_text(data)[0]


def check_size(size: int, name: str) -> None:
    if size > MAX_FILE_BYTES:
        raise fail(
            "too_large",
            "FILE_TOO_LARGE",
            f'"{name}" would be {size:,} bytes: a file is limited to 1 MB ({MAX_FILE_BYTES:,} bytes)',
        )


def head(data: bytes, limit: int) -> str:
    """The first `limit` bytes as text, without a character cut in half at the end."""
    part = data[:limit]
    for cut in range(4):
        try:
            return part[: len(part) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return part.decode("utf-8", errors="replace")


def age(ms: int, now_ms: int) -> str:
    seconds = max(0, (now_ms - ms) // 1000)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return "just now"


Handler = Callable[[ToolContext, Any], Awaitable[str]]


def reader(fn: Callable[[ToolContext, Any], Any]) -> Handler:
    async def handler(ctx: ToolContext, a: Any) -> str:
        await ctx.ready()
        return compact(await ctx.run(fn, ctx, a))

    return handler


Answer = Callable[[], Any]


def writer(fn: Callable[[ToolContext, Any], Answer]) -> Handler:
    """A write off the event loop, then the index synced, then its answer (which may count the files). When
    the write answers before the index has it (a long sync running), its answer says so: a `note:` line
    after a text answer, `notes` in a JSON one; ReadmeDB's shapes are unchanged otherwise."""

    async def handler(ctx: ToolContext, a: Any) -> str:
        await ctx.ready()
        with door.recording() as changed:
            answer = await ctx.run(fn, ctx, a)
        indexed = await ctx.sync_after_write_async(changed)
        result = await ctx.run(answer)
        if isinstance(result, str):
            return "\n".join([result, *(f"note: {note}" for note in indexed.notes())])
        if indexed.pending:
            result = {**result, "notes": indexed.notes()}
        return compact(result)

    return handler


def journal_for(ctx: ToolContext, tool: str) -> Journal | None:
    return ctx.journal(f"readmedb:{tool}")
