"""The write tools: remember, write, edit, move, delete, reindex.

`documents` computes each new text (pure); this module is the one door to the disk: paths sandboxed to
the scope, every write atomic (temp file, fsync, rename), `base_hash` checked under a per-file lock, and
the index synced before the tool answers.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import Field

from ragdown import atomic
from ragdown.atomic import SHORT_HASH, check_base, path_lock, sha256_hex
from ragdown.documents import is_markdown_path
from ragdown.documents.errors import DocumentError
from ragdown.documents.move import plan_move
from ragdown.documents.remember import default_note_name, note_names, remember_text
from ragdown.documents.replacements import Edit, apply_replacements
from ragdown.documents.writes import append_text, prepare_write
from ragdown.errors import Refusal, bad_request, conflict, not_found
from ragdown.linking import attachments, folder_files
from ragdown.sandbox import resolve_in, split_safe
from ragdown.tools.base import Annotations, Args, ToolSpec
from ragdown.tools.context import ToolContext
from ragdown.tools.read import compact

MAX_NAME_TRIES = 1000
W = TypeVar("W", bound=Args)


def _refusal(err: DocumentError) -> Refusal:
    return Refusal(err.status, err.message, err.code)


def _decode(data: bytes, display: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise bad_request(f"{display} is not UTF-8 text; edit it in an editor instead") from None


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise bad_request(f"{path.name} is a folder, not a document") from None


def _short(data: bytes) -> str:
    return sha256_hex(data)[:SHORT_HASH]


def synced(write: Callable[[ToolContext, W], str]) -> Callable[[ToolContext, W], Awaitable[str]]:
    """A tool handler that runs a blocking write off the event loop, then syncs the index before answering."""

    async def handler(ctx: ToolContext, a: W) -> str:
        await ctx.ready()
        answer = await ctx.run(write, ctx, a)
        await ctx.engine.sync_async()
        return answer

    return handler


def _doc_path(ctx: ToolContext, raw: str, *, create_dirs: bool = False) -> Path:
    return resolve_in(ctx.scope.dir, raw, markdown=True, create_dirs=create_dirs)


def _rel(ctx: ToolContext, path: Path) -> str:
    return path.relative_to(ctx.scope.dir).as_posix()


# -- ragdown_remember -----------------------------------------------------------------------------


class RememberArgs(Args):
    title: Annotated[str, Field(min_length=1)]
    content: str
    tags: list[str] | None = None
    name: Annotated[
        str | None, Field(description="File name without .md; default <date>-<slug of title>.")
    ] = None
    supersedes: Annotated[
        list[str] | None, Field(description="Paths of documents this one replaces; search then hides them.")
    ] = None
    session_id: str | None = None


def _notes_dir(ctx: ToolContext) -> str:
    """Where remember writes, relative to the scope: the subfolder itself, else `RAGDOWN_NOTES_DIR`."""
    if ctx.scope.is_subfolder:
        return ""
    notes = ctx.runtime.settings.notes_dir
    return "" if notes == "." else notes


def remember_file(ctx: ToolContext, a: RememberArgs) -> str:
    notes = _notes_dir(ctx)
    base = a.name.strip() if a.name else default_note_name(a.title)
    if base.lower().endswith(".md"):
        base = base[:-3]
    try:
        split_safe(f"{base}.md")
    except Refusal as err:
        raise bad_request(f"name {a.name!r} cannot be used: {err.message}") from None
    replaced: list[str] = []
    for raw in a.supersedes or []:
        try:
            target = resolve_in(ctx.scope.dir, raw, markdown=True)
        except Refusal as err:
            raise bad_request(
                f"supersedes {raw!r} is outside the folder or not a document: {err.message}"
            ) from None
        if not target.is_file():
            raise not_found(f"supersedes {raw!r} names no document")
        replaced.append(_rel(ctx, target))
    for name in itertools.islice(note_names(base), MAX_NAME_TRIES):
        rel = f"{notes}/{name}.md" if notes else f"{name}.md"
        path = resolve_in(ctx.scope.dir, rel, markdown=True, create_dirs=True)
        text = remember_text(
            a.title, a.content, note_path=rel, tags=a.tags or (), supersedes=replaced, session_id=a.session_id
        )
        try:
            atomic.write_new(path, text.encode())
        except Refusal:
            continue
        suffix = f" (supersedes {', '.join(replaced)})" if replaced else ""
        return f"saved {rel}{suffix}"
    raise conflict(f"no free name for {base!r} after {MAX_NAME_TRIES} tries")


REMEMBER = ToolSpec(
    name="ragdown_remember",
    description=(
        "Save a new document (title, content, optional tags) under the notes folder and index it before "
        "returning. Never overwrites: returns the path it chose. supersedes lists documents this one "
        "replaces, which search then hides; session_id is recorded as provenance."
    ),
    args=RememberArgs,
    annotations=Annotations(read_only=False, destructive=False),
    handler=synced(remember_file),
)


# -- ragdown_write --------------------------------------------------------------------------------


class WriteArgs(Args):
    path: Annotated[str, Field(min_length=1)]
    text: str
    base_hash: Annotated[
        str | None, Field(description="The hash ragdown_read_doc gave; needed to replace.")
    ] = None
    append: bool = False
    heading: Annotated[str | None, Field(description="With append: add at the end of this section.")] = None
    session_id: str | None = None


def write_file(ctx: ToolContext, a: WriteArgs) -> str:
    if a.heading is not None and not a.append:
        raise bad_request("heading only works with append: true")
    path = _doc_path(ctx, a.path, create_dirs=not a.append)
    display = _rel(ctx, path)
    with path_lock(path):
        old = _read(path)
        current = sha256_hex(old) if old is not None else None
        if a.append:
            if old is None:
                raise not_found(f"no such document: {display} (append needs an existing document)")
            check_base(path, a.base_hash, current, display)
            try:
                new_text = append_text(_decode(old, display), a.text, a.heading)
            except DocumentError as err:
                raise _refusal(err) from None
        elif old is not None:
            if a.base_hash is None:
                raise conflict(
                    f"{display} exists: pass base_hash (the hash ragdown_read_doc gave) to replace it, "
                    "or append: true to add to it"
                )
            check_base(path, a.base_hash, current, display)
            new_text = prepare_write(a.text, old_text=_decode(old, display), session_id=a.session_id)
        else:
            check_base(path, a.base_hash, None, display)
            data = prepare_write(a.text, old_text=None, session_id=a.session_id).encode()
            atomic.write_new(path, data)
            return f"created {display} (hash {_short(data)})"
        data = new_text.encode()
        check_base(path, current, atomic.file_hash(path), display)
        atomic.replace(path, data)
    return f"wrote {display} (hash {_short(data)})"


WRITE = ToolSpec(
    name="ragdown_write",
    description=(
        "Create a document at `path`, or replace one: replacing needs base_hash (from ragdown_read_doc), so "
        "you never overwrite a version you have not read. append: true adds text at the end instead, or "
        "with heading at the end of that section. New documents record created_by and session_id. "
        "Returns the new hash."
    ),
    args=WriteArgs,
    annotations=Annotations(read_only=False, destructive=True),
    handler=synced(write_file),
)


# -- ragdown_edit ---------------------------------------------------------------------------------


class EditItem(Args):
    old_text: Annotated[str, Field(min_length=1)]
    new_text: str
    replace_all: bool = False


class EditArgs(Args):
    path: Annotated[str, Field(min_length=1)]
    edits: Annotated[list[EditItem], Field(min_length=1)]
    base_hash: str | None = None


def edit_file(ctx: ToolContext, a: EditArgs) -> str:
    path = _doc_path(ctx, a.path)
    display = _rel(ctx, path)
    with path_lock(path):
        old = _read(path)
        if old is None:
            raise not_found(f"no such document: {display}")
        current = sha256_hex(old)
        check_base(path, a.base_hash, current, display)
        try:
            new_text, count = apply_replacements(
                _decode(old, display), [Edit(e.old_text, e.new_text, e.replace_all) for e in a.edits]
            )
        except DocumentError as err:
            raise _refusal(err) from None
        data = new_text.encode()
        check_base(path, current, atomic.file_hash(path), display)
        atomic.replace(path, data)
    return f"edited {display} (replaced {count}, hash {_short(data)})"


EDIT = ToolSpec(
    name="ragdown_edit",
    description=(
        "Change parts of a document without sending the rest: each edit swaps one exact passage "
        "(old_text, matched once unless replace_all) for new_text, in order, all or nothing. A passage "
        "not found is answered with the nearest one the document has. base_hash is optional. Returns the "
        "count replaced and the new hash."
    ),
    args=EditArgs,
    annotations=Annotations(read_only=False, destructive=True),
    handler=synced(edit_file),
)


# -- ragdown_move ---------------------------------------------------------------------------------


class MoveArgs(Args):
    source: Annotated[str, Field(alias="from", min_length=1, description="A document or a subfolder.")]
    to: Annotated[str, Field(min_length=1, description="The whole new path, name included.")]


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def move_path(ctx: ToolContext, a: MoveArgs) -> tuple[str, str, list[str]]:
    """Move a document or subfolder and rewrite the links to it: (from, to, documents updated)."""
    scope = ctx.scope
    src = resolve_in(scope.dir, a.source, markdown=False)
    if not src.exists():
        raise not_found(f"nothing at {a.source}")
    is_dir = src.is_dir()
    dst = resolve_in(scope.dir, a.to, markdown=not is_dir)
    if not is_dir and not is_markdown_path(src.name):
        raise bad_request(f"{a.source} is not a Markdown document; only documents and subfolders move")
    src_rel, dst_rel = _rel(ctx, src), _rel(ctx, dst)
    if src == dst:
        raise bad_request(f"{src_rel} is already there")
    if is_dir and (dst_rel + "/").startswith(src_rel + "/"):
        raise bad_request(f"cannot move {src_rel} into itself")
    case_only = _same_file(src, dst)
    if dst.exists() and not case_only:
        raise conflict(f"{dst_rel} already exists")
    store = ctx.store()
    texts: dict[str, str] = {}
    aliases: dict[str, tuple[str, ...]] = {}
    for f in folder_files(store, scope):
        try:
            texts[scope.folder_path(f.path)] = (ctx.docs_root / f.path).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        aliases[scope.folder_path(f.path)] = f.aliases
    move_from = scope.folder_path(scope.docs_path(src_rel))
    move_to = scope.folder_path(scope.docs_path(dst_rel))
    rewrites = plan_move(
        texts, {move_from: move_to}, attachments=attachments(scope.folder_dir), aliases=aliases
    )
    dst.parent.mkdir(parents=True, exist_ok=True)
    if is_dir or case_only:
        if dst.exists() and not case_only:
            raise conflict(f"{dst_rel} already exists")
        os.rename(src, dst)
    else:
        try:
            os.link(src, dst)
        except FileExistsError:
            raise conflict(f"{dst_rel} already exists") from None
        os.unlink(src)
    updated: list[str] = []
    for rw in rewrites:
        target = scope.folder_dir / rw.new_path
        with path_lock(target):
            try:
                on_disk = target.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if on_disk != texts[rw.path]:
                continue  # changed meanwhile: their version wins
            atomic.replace(target, rw.text.encode())
        updated.append(scope.view(scope.from_folder_path(rw.new_path)))
    return src_rel, dst_rel, sorted(updated)


def move_answer(ctx: ToolContext, a: MoveArgs) -> str:
    src, dst, updated = move_path(ctx, a)
    return f"moved {src} to {dst}" + (f"; links updated in {', '.join(updated)}" if updated else "")


MOVE = ToolSpec(
    name="ragdown_move",
    description=(
        "Rename or move a document, or a subfolder with everything in it, from `from` to `to` (the whole "
        "new path), rewriting every wikilink and relative Markdown link that pointed at what moved. Never "
        "overwrites. Returns the documents whose links were updated."
    ),
    args=MoveArgs,
    annotations=Annotations(read_only=False, destructive=False),
    handler=synced(move_answer),
)


# -- ragdown_delete -------------------------------------------------------------------------------


class DeleteArgs(Args):
    path: Annotated[str, Field(min_length=1)]
    recursive: Annotated[bool, Field(description="Needed to delete a subfolder that holds anything.")] = False
    base_hash: str | None = None


def delete_path(ctx: ToolContext, a: DeleteArgs) -> str:
    if a.path.strip().strip("/") in ("", ".", ".."):
        raise bad_request("name a document or a subfolder to delete, not the folder itself")
    path = resolve_in(ctx.scope.dir, a.path, markdown=False)
    display = _rel(ctx, path)
    if path.is_dir():
        if a.base_hash is not None:
            raise bad_request(f"{display} is a subfolder: base_hash is for documents")
        if any(path.iterdir()):
            if not a.recursive:
                raise conflict(
                    f"{display} is a subfolder that holds files: pass recursive: true to delete it all"
                )
            shutil.rmtree(path)
        else:
            path.rmdir()
        return f"deleted {display}"
    if not is_markdown_path(path.name):
        raise bad_request(
            f"{display} is not a Markdown document; only documents and subfolders can be deleted"
        )
    with path_lock(path):
        data = _read(path)
        if data is None:
            raise not_found(f"no such document: {display}")
        if a.base_hash is not None and not atomic.hash_matches(a.base_hash, sha256_hex(data)):
            raise Refusal(
                409,
                f"{display} changed since you read it (base_hash {a.base_hash}): read it again",
                "changed",
            )
        path.unlink()
    return f"deleted {display}"


DELETE = ToolSpec(
    name="ragdown_delete",
    description=(
        "Delete a document or a subfolder at `path`, for good (no trash). A subfolder that holds anything "
        "needs recursive: true. With base_hash, a document is deleted only if unchanged since you read it. "
        "Links to it are left as they are."
    ),
    args=DeleteArgs,
    annotations=Annotations(read_only=False, destructive=True, idempotent=False),
    handler=synced(delete_path),
)


# -- ragdown_reindex ------------------------------------------------------------------------------


class ReindexArgs(Args):
    full: Annotated[bool, Field(description="Re-embed everything instead of syncing changes.")] = False


async def reindex(ctx: ToolContext, a: ReindexArgs) -> str:
    await ctx.ready()
    return compact(await ctx.engine.sync_async(a.full))


REINDEX = ToolSpec(
    name="ragdown_reindex",
    description="Sync the index with the files now; full: true re-embeds everything. Returns the sync report.",
    args=ReindexArgs,
    annotations=Annotations(read_only=False, destructive=False),
    handler=reindex,
)
