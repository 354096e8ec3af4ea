"""The write tools: remember, write, edit, move, delete, reindex.

`documents` computes each new text (pure); this module is the one door to the disk: paths sandboxed to
the scope, every write atomic (temp file, fsync, rename), `base_hash` checked under a per-file lock, and
the index synced before the tool answers.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import Field

from ragdown.core.atomic import sha256_hex
from ragdown.core.errors import Refusal, bad_request, conflict, not_found
from ragdown.core.paths import is_document, is_plain_text, split_safe
from ragdown.documents.lint import lint
from ragdown.documents.move import plan_move
from ragdown.documents.remember import default_note_name, note_names, note_tags, remember_text
from ragdown.documents.replacements import Edit, apply_replacements
from ragdown.documents.writes import append_text, prepare_write
from ragdown.search.linking import attachments, folder_files, folder_resolver
from ragdown.tools.base import Annotations, Args, ToolSpec
from ragdown.tools.context import ToolContext
from ragdown.tools.read import compact
from ragdown.vault import quota
from ragdown.vault.ignore import refuse_ignored
from ragdown.vault.sandbox import read_plain, resolve_in
from ragdown.writes import door

MAX_NAME_TRIES = 1000
REMEMBER_NAME, WRITE_NAME, EDIT_NAME = "ragdown_remember", "ragdown_write", "ragdown_edit"
MOVE_NAME, DELETE_NAME = "ragdown_move", "ragdown_delete"
W = TypeVar("W", bound=Args)
log = logging.getLogger(__name__)


def lint_warnings(ctx: ToolContext, path: Path, data: bytes) -> list[str]:
    """The advisory lints of a document just written (`documents/lint.py`), its links resolved in its folder.
    Never a refusal: the write is made, so an index that cannot be read now leaves the links unchecked.
    Plain text (`todo.txt`) is not Markdown: nothing to lint."""
    if is_plain_text(path.name):
        return []
    folder_rel = ctx.scope.folder_path(path.relative_to(ctx.docs_root).as_posix())
    text = data.decode("utf-8", "replace")
    try:
        resolver = folder_resolver(ctx.store(), ctx.scope.folder, ctx.scope.folder_dir)
    except MemoryError:
        raise
    except Exception as err:  # the index unavailable, or not ready yet
        log.warning("%s: its links were not linted: %s", folder_rel, err)
        return [*lint(text, folder_rel), f"line 1: links not checked: the index could not be read ({err})"]
    return lint(text, folder_rel, resolver)


def notes_suffix(notes: list[str]) -> str:
    """What a write's answer adds about its follow-ups (an index.md left alone)."""
    return "".join(f"\nnote: {n}" for n in notes)


@dataclass(frozen=True)
class Answer:
    """A write's answer before the index has synced: its text, the documents to lint once it has (so links
    to what the write just made resolve), and the notes of its follow-ups."""

    text: str
    linted: tuple[tuple[Path, bytes], ...] = ()
    notes: tuple[str, ...] = ()


def lint_suffix(ctx: ToolContext, written: Sequence[tuple[Path, bytes]], notes_of: Sequence[str] = ()) -> str:
    """The lines a write's answer ends with: lint warnings of what it wrote (never a refusal), and the notes
    of its follow-ups."""
    notes = notes_suffix(list(notes_of))
    lines: list[str] = []
    for path, data in written:
        warnings = lint_warnings(ctx, path, data)
        if warnings:
            name = ctx.scope.view(path.relative_to(ctx.docs_root).as_posix())
            lines.extend(f"- {name} {w}" for w in warnings)
    if not lines:
        return notes
    return "\nwarnings (the write was made; fix what you did not mean):\n" + "\n".join(lines) + notes


def synced(write: Callable[[ToolContext, W], str | Answer]) -> Callable[[ToolContext, W], Awaitable[str]]:
    """A tool handler that runs a blocking write off the event loop, then syncs the paths it changed before
    answering (and lints what it wrote against the synced index)."""

    async def handler(ctx: ToolContext, a: W) -> str:
        await ctx.ready()
        with door.recording() as changed:
            answer = await ctx.run(write, ctx, a)
        indexed = await ctx.sync_after_write_async(changed)
        usage = await ctx.run(quota_suffix, ctx) + notes_suffix(indexed.notes())
        if isinstance(answer, str):
            return answer + usage
        return answer.text + await ctx.run(lint_suffix, ctx, answer.linted, answer.notes) + usage

    return handler


def quota_suffix(ctx: ToolContext) -> str:
    """The folder's usage against its quota (`quota: 13/50 files, 0.05/5 MB`), when it has one."""
    found = quota.report(ctx.scope.folder_dir) if not ctx.scope.is_root else None
    return f"\nquota: {found['text']}" if found else ""


def _doc_path(ctx: ToolContext, raw: str) -> Path:
    """A document the caller may write: sandboxed, and not left out by the ignore rules."""
    path = resolve_in(ctx.scope.dir, raw, markdown=True)
    refuse_ignored(ctx.docs_root, path, raw, folders=ctx.engine.folders)
    return path


def _rel(ctx: ToolContext, path: Path) -> str:
    return path.relative_to(ctx.scope.dir).as_posix()


# -- ragdown_remember -----------------------------------------------------------------------------


class RememberArgs(Args):
    title: Annotated[str, Field(min_length=1)]
    content: str
    tags: Annotated[
        list[str] | None,
        Field(
            description="Each of letters, digits, _, - and / (nested: project/alpha); a leading # is dropped."
        ),
    ] = None
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


def remember_file(ctx: ToolContext, a: RememberArgs) -> Answer:
    notes = _notes_dir(ctx)
    base = a.name.strip() if a.name else default_note_name(a.title)
    if base.lower().endswith(".md"):
        base = base[:-3]
    try:
        split_safe(f"{base}.md")
    except Refusal as err:
        raise bad_request(f"name {a.name!r} cannot be used: {err.message}") from None
    try:
        tags = note_tags(a.tags or ())
    except ValueError as err:
        raise bad_request(str(err)) from None
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
        path = _doc_path(ctx, rel)
        text = remember_text(
            a.title, a.content, note_path=rel, tags=tags, supersedes=replaced, session_id=a.session_id
        )
        try:
            journal = ctx.journal(REMEMBER_NAME, a.session_id)
            door.create(path, text.encode(), rel, journal=journal)
        except Refusal as err:
            if err.kind != "conflict":
                raise
            continue
        suffix = f" (supersedes {', '.join(replaced)})" if replaced else ""
        return Answer(f"saved {rel}{suffix}", ((path, text.encode()),), tuple(journal.notes))
    raise conflict(f"no free name for {base!r} after {MAX_NAME_TRIES} tries")


REMEMBER = ToolSpec(
    name=REMEMBER_NAME,
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


def write_file(ctx: ToolContext, a: WriteArgs) -> Answer:
    if a.heading is not None and not a.append:
        raise bad_request("heading only works with append: true")
    path = _doc_path(ctx, a.path)
    display = _rel(ctx, path)

    def change(old: bytes | None) -> bytes:
        if a.append:
            if old is None:
                raise not_found(f"no such document: {display} (append needs an existing document)")
            return append_text(door.decode(old, display), a.text, a.heading).encode()
        if old is not None and a.base_hash is None:
            raise conflict(
                f"{display} exists: pass base_hash (the hash ragdown_read_doc gave) to replace it, "
                "or append: true to add to it"
            )
        previous = door.decode(old, display) if old is not None else None
        return prepare_write(a.text, old_text=previous, session_id=a.session_id).encode()

    written = door.save(
        path,
        display,
        change,
        base_hash=a.base_hash,
        journal=(journal := ctx.journal(WRITE_NAME, a.session_id)),
    )
    verb = "created" if written.created else "wrote"
    return Answer(
        f"{verb} {display} (hash {written.short_hash})", ((path, written.data),), tuple(journal.notes)
    )


WRITE = ToolSpec(
    name=WRITE_NAME,
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


def edit_file(ctx: ToolContext, a: EditArgs) -> Answer:
    path = _doc_path(ctx, a.path)
    display = _rel(ctx, path)
    count = 0

    def change(old: bytes | None) -> bytes:
        nonlocal count
        if old is None:
            raise not_found(f"no such document: {display}")
        edits = [Edit(e.old_text, e.new_text, e.replace_all) for e in a.edits]
        text, count = apply_replacements(door.decode(old, display), edits)
        return text.encode()

    journal = ctx.journal(EDIT_NAME)
    written = door.save(path, display, change, base_hash=a.base_hash, journal=journal)
    return Answer(
        f"edited {display} (replaced {count}, hash {written.short_hash})",
        ((path, written.data),),
        tuple(journal.notes),
    )


EDIT = ToolSpec(
    name=EDIT_NAME,
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


def move_path(
    ctx: ToolContext,
    a: MoveArgs,
    who: str = MOVE_NAME,
    rewritten: list[tuple[Path, bytes]] | None = None,
    notes: list[str] | None = None,
) -> tuple[str, str, list[str]]:
    """Move a document or subfolder and rewrite the links to it: (from, to, documents updated); the history
    records `who` moved it."""
    scope = ctx.scope
    src = resolve_in(scope.dir, a.source, markdown=False)
    if not src.exists():
        raise not_found(f"nothing at {a.source}")
    is_dir = src.is_dir()
    dst = resolve_in(scope.dir, a.to, markdown=not is_dir, text=True)
    refuse_ignored(ctx.docs_root, dst, a.to, folders=ctx.engine.folders)
    if not is_dir and not is_document(src.name):
        raise bad_request(f"{a.source} is not a document; only documents and subfolders move")
    src_rel, dst_rel = _rel(ctx, src), _rel(ctx, dst)
    if src == dst:
        raise bad_request(f"{src_rel} is already there")
    if is_dir and (dst_rel + "/").startswith(src_rel + "/"):
        raise bad_request(f"cannot move {src_rel} into itself")
    if dst.exists() and not door.same_file(src, dst):
        raise conflict(f"{dst_rel} already exists")
    store = ctx.store()
    texts: dict[str, str] = {}
    aliases: dict[str, tuple[str, ...]] = {}
    for f in folder_files(store, scope.folder):
        if is_plain_text(f.path):  # plain text holds no links to rewrite
            continue
        data = read_plain(ctx.docs_root, f.path)
        try:
            text = data.decode("utf-8") if data is not None else None
        except UnicodeDecodeError:
            text = None
        if text is not None:
            texts[scope.folder_path(f.path)] = text
            aliases[scope.folder_path(f.path)] = f.aliases
    move_from = scope.folder_path(scope.docs_path(src_rel))
    move_to = scope.folder_path(scope.docs_path(dst_rel))
    rewrites = plan_move(
        texts, {move_from: move_to}, attachments=attachments(scope.folder_dir), aliases=aliases
    )
    journal = ctx.journal(who)
    door.move(src, dst, dst_rel, journal=journal)
    updated: list[str] = []
    for rw in rewrites:
        target = scope.folder_dir / rw.new_path
        display = scope.view(scope.from_folder_path(rw.new_path))
        planned_from = sha256_hex(texts[rw.path].encode())
        try:  # only over the text the plan was made from: a document changed meanwhile keeps its version
            door.save(
                target, display, door.becomes(rw.text.encode()), base_hash=planned_from, journal=journal
            )
        except Refusal as err:
            if err.kind in ("over_quota", "too_large"):  # the move is made: say what its quota kept out
                journal.notes.append(f"the links in {display} were not rewritten: {err.message}")
                continue
            if err.code != "changed":
                raise
            continue
        updated.append(display)
        if rewritten is not None:
            rewritten.append((target, rw.text.encode()))
    if notes is not None:
        notes.extend(journal.notes)
    return src_rel, dst_rel, sorted(updated)


def move_answer(ctx: ToolContext, a: MoveArgs) -> Answer:
    rewritten: list[tuple[Path, bytes]] = []
    notes: list[str] = []
    src, dst, updated = move_path(ctx, a, rewritten=rewritten, notes=notes)
    links = f"; links updated in {', '.join(updated)}" if updated else ""
    return Answer(f"moved {src} to {dst}{links}", tuple(rewritten), tuple(notes))


MOVE = ToolSpec(
    name=MOVE_NAME,
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
    purge: Annotated[
        bool,
        Field(
            description="Delete for good: no trash, and every version of it forgotten (of everything under a "
            "subfolder). Also forgets a document already in the trash. Irreversible."
        ),
    ] = False


def delete_path(ctx: ToolContext, a: DeleteArgs) -> str:
    if a.path.strip().strip("/") in ("", ".", ".."):
        raise bad_request("name a document or a subfolder to delete, not the folder itself")
    path = resolve_in(ctx.scope.dir, a.path, markdown=False)
    display = _rel(ctx, path)
    if path.is_dir():
        if a.base_hash is not None:
            raise bad_request(f"{display} is a subfolder: base_hash is for documents")
        if any(path.iterdir()) and not a.recursive:
            raise conflict(
                f"{display} is a subfolder that holds files: pass recursive: true to delete it all"
            )
        if a.purge:
            return purged_text(ctx, display, door.purge(path, display, journal=ctx.journal(DELETE_NAME)))
        door.delete_folder(path, journal=(journal := ctx.journal(DELETE_NAME)))
        return f"deleted {display}" + notes_suffix(journal.notes)
    gone = not (path.exists() or path.is_symlink())  # with purge: what the trash holds there
    if not is_document(path.name) and not (a.purge and gone):
        raise bad_request(f"{display} is not a document; only documents and subfolders can be deleted")
    if a.purge:
        journal = ctx.journal(DELETE_NAME)
        return purged_text(ctx, display, door.purge(path, display, base_hash=a.base_hash, journal=journal))
    door.delete(path, display, base_hash=a.base_hash, journal=(journal := ctx.journal(DELETE_NAME)))
    return f"deleted {display}" + notes_suffix(journal.notes)


def purged_text(ctx: ToolContext, display: str, purged: door.Purged) -> str:
    """A delete for good's answer: what went from disk, and how many documents' histories were forgotten."""
    what = "deleted" if purged.on_disk else "removed from the trash"
    n = len(purged.forgotten)
    if ctx.engine.history is None:
        return f"{what} {display} for good (the version history is off)"
    return f"{what} {display} for good: {n} document{'s' if n != 1 else ''} and all their versions forgotten"


DELETE = ToolSpec(
    name=DELETE_NAME,
    description=(
        "Delete a document or a subfolder at `path`. By default into ragdown's trash (ragdown's own "
        "extension: ragdown_list deleted: true lists it, ragdown_restore brings it back); purge: true "
        "deletes for good instead, with every version (also of a document already in the trash). A "
        "subfolder that holds anything needs recursive: true. With base_hash, a document is deleted only if "
        "unchanged since you read it. Links to it are left as they are."
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
    return compact(await ctx.run(ctx.sync, a.full))


REINDEX = ToolSpec(
    name="ragdown_reindex",
    description=(
        "Sync the index with this endpoint's files now; full: true re-embeds them all. Returns the sync "
        "report (of these files only)."
    ),
    args=ReindexArgs,
    annotations=Annotations(read_only=False, destructive=False),
    handler=reindex,
)
