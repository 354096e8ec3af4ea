"""What each REST route does: a tool's handler through its `ToolSpec`, or the engine functions the tools
call (the sandbox, the write door, moves, restores, diffs, patches), every write answered after the index
synced, with its lints."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdown.access.scope import Scope
from ragdown.core.atomic import sha256_hex
from ragdown.core.errors import Refusal, bad_request, not_found
from ragdown.core.paths import normalise_prefix, shown, split_safe
from ragdown.core.times import iso_seconds
from ragdown.documents import decode_text
from ragdown.documents.replacements import Edit, apply_replacements
from ragdown.documents.writes import append_text
from ragdown.http.rest.endpoint import WHO, Call, Reply
from ragdown.http.rest.models import (
    AppendArgs,
    ChangesAnswer,
    CreateArgs,
    DeleteAnswer,
    DeleteArgs,
    DiffAnswer,
    EmptyTrashAnswer,
    FileAnswer,
    FileEntry,
    FilesAnswer,
    FolderArgs,
    FolderEntry,
    FolderHit,
    FoldersAnswer,
    FoldersSearchAnswer,
    HistoryAnswer,
    ListFilesArgs,
    MoveAnswer,
    MoveRestArgs,
    Named,
    OutlineAnswer,
    OutlineNode,
    PatchRestArgs,
    PutArgs,
    QueryAnswer,
    QuotaAnswer,
    RelatedAnswer,
    RestoreAnswer,
    SearchAnswer,
    SearchFoldersArgs,
    TrashAnswer,
    TreeAnswer,
    VersionAnswer,
    VersionArgs,
    WhoAnswer,
    WriteAnswer,
)
from ragdown.search.format import hit_json
from ragdown.tools.changes import CHANGES
from ragdown.tools.context import ToolContext
from ragdown.tools.history import HISTORY, DiffArgs, RestoreArgs, diff_text, restore
from ragdown.tools.outline import OUTLINE, OutlineArgs
from ragdown.tools.query import QUERY
from ragdown.tools.read import RECALL, RecallArgs, file_lines, recall_hits, recall_limit
from ragdown.tools.versions import followed, trash_json, trashed, version_bytes
from ragdown.tools.write import EditArgs, lint_warnings, move_path
from ragdown.toolsets.readmedb.base import created_ms, head, ms, updated_ms
from ragdown.toolsets.readmedb.files import ReadArgs, line_range, patch_text
from ragdown.vault import quota
from ragdown.vault.folders import folder_settings, list_folders
from ragdown.vault.ignore import refuse_ignored
from ragdown.vault.sandbox import is_plain_file, read_plain, resolve_in
from ragdown.writes import door


def _doc(ctx: ToolContext, raw: str, *, write: bool = False) -> tuple[Path, str, str]:
    """A document's (absolute path, name in the folder, docs-relative path), sandboxed; for a write, its
    folders made and a name the ignore rules leave out refused."""
    path = resolve_in(ctx.scope.dir, raw, markdown=True, text=True)
    if write:
        refuse_ignored(ctx.docs_root, path, raw, folders=True)
    name = path.relative_to(ctx.scope.dir).as_posix()
    return path, name, ctx.scope.docs_path(name)


def _no_doc(ctx: ToolContext, name: str) -> Refusal:
    return not_found(f"no such document: {ctx.scope.folder}/{name}")


async def whoami(call: Call, _a: FolderArgs) -> Reply:
    a = call.access
    folders = sorted(a.folders) if a.folders is not None else None
    return Reply(WhoAnswer(who=a.who, role=a.role, folders=folders, key_id=a.key_id))


async def folders(call: Call, _a: FolderArgs) -> Reply:
    ctx = call.ctx

    def work() -> FoldersAnswer:
        root = ctx.docs_root
        counts = ctx.store().folder_counts()
        return FoldersAnswer(
            folders=[
                FolderEntry(
                    name=name,
                    title=folder_settings(root / name, name).title,
                    files=counts.get(name, (0, 0))[0],
                    writable=call.access.writes(name) and not ctx.runtime.settings.read_only,
                )
                for name in call.access.visible(list_folders(root))
            ]
        )

    return Reply(await ctx.run(work))


async def list_files(call: Call, a: ListFilesArgs) -> Reply:
    ctx = call.ctx

    def work() -> FilesAnswer:
        store = ctx.store()
        flt = ctx.scope.file_filter(normalise_prefix(a.prefix or ""), hide_superseded=False)
        records = store.list_files(flt)
        files = []
        for r in records[a.offset : a.offset + a.limit]:
            updated = ms(r.mtime_ns)
            preview = None
            if a.preview_bytes is not None:
                data = read_plain(ctx.docs_root, r.path)
                preview = head(data, a.preview_bytes) if data is not None else ""
            files.append(
                FileEntry(
                    name=ctx.scope.view(r.path),
                    sizeBytes=r.size,
                    createdAt=created_ms(ctx, r.path, updated),
                    updatedAt=updated,
                    preview=preview,
                )
            )
        return FilesAnswer(
            files=files, limit=a.limit, offset=a.offset, returned=len(files), total=len(records)
        )

    return Reply(await ctx.run(work))


async def read_file(call: Call, a: ReadArgs) -> Reply:
    """readmedb's `read_file`, with the hash of exactly the bytes read (for a later `base_hash`)."""
    ctx = call.ctx

    def work() -> FileAnswer:
        _path, name, docs_path = _doc(ctx, a.name)
        data = read_plain(ctx.docs_root, docs_path)
        if data is None:
            raise _no_doc(ctx, name)
        text = decode_text(data)[0]
        lines = file_lines(text) if text else []
        total = len(lines)
        updated = updated_ms(ctx, ctx.store(), docs_path)
        out = FileAnswer(
            name=name,
            content=text,
            hash=sha256_hex(data),
            sizeBytes=len(data),
            createdAt=created_ms(ctx, docs_path, updated),
            updatedAt=updated,
            totalLines=total,
            partial=False,
        )
        if a.start_line is None and a.end_line is None:
            return out
        part = line_range(lines, a.start_line, a.end_line, name)
        if part.content is not None:
            out.content, out.partial = part.content, part.partial
        out.start_line, out.end_line = part.first, part.last
        return out

    return Reply(await ctx.run(work))


@dataclass(frozen=True)
class Wrote:
    """A write that happened, before the index synced: what to lint and answer once it has."""

    path: Path
    name: str
    written: door.Written
    notes: tuple[str, ...]
    replaced: int | None = None


async def _answer_write(call: Call, work: Callable[[], Wrote], status: int | None = None) -> Reply:
    ctx = call.ctx
    with door.recording() as changed:
        wrote = await ctx.run(work)
    indexed = await ctx.sync_after_write_async(changed)
    warnings = await ctx.run(lint_warnings, ctx, wrote.path, wrote.written.data)
    usage = await ctx.run(quota.report, ctx.scope.folder_dir)
    body = WriteAnswer(
        name=wrote.name,
        hash=wrote.written.hash,
        sizeBytes=len(wrote.written.data),
        created=wrote.written.created,
        replaced=wrote.replaced,
        warnings=warnings,
        notes=[*wrote.notes, *indexed.notes()],
        quota=QuotaAnswer.model_validate(usage) if usage else None,
    )
    return Reply(body, status if status is not None else 201 if wrote.written.created else 200)


async def create_file(call: Call, a: CreateArgs) -> Reply:
    def work() -> Wrote:
        path, name, _ = _doc(call.ctx, a.name, write=True)
        journal = call.journal()
        written = door.create(path, a.content.encode(), name, journal=journal)
        return Wrote(path, name, written, tuple(journal.notes))

    return await _answer_write(call, work, 201)


async def put_file(call: Call, a: PutArgs) -> Reply:
    def work() -> Wrote:
        path, name, _ = _doc(call.ctx, a.name, write=True)
        journal = call.journal()
        written = door.save(
            path, name, door.becomes(a.content.encode()), base_hash=a.base_hash, journal=journal
        )
        return Wrote(path, name, written, tuple(journal.notes))

    return await _answer_write(call, work)


async def append_file(call: Call, a: AppendArgs) -> Reply:
    """Add at the end (or at the end of a section), as `ragdown_write` append does; a document that is not
    there yet is created with the content, as ReadmeDB's append does."""

    def work() -> Wrote:
        path, name, _ = _doc(call.ctx, a.name, write=True)

        def change(old: bytes | None) -> bytes:
            if old is None:
                if a.heading is not None:
                    raise _no_doc(call.ctx, name)
                return a.content.encode()
            return append_text(door.decode(old, name), a.content, a.heading).encode()

        journal = call.journal()
        written = door.save(path, name, change, journal=journal)
        return Wrote(path, name, written, tuple(journal.notes))

    return await _answer_write(call, work, 200)


async def patch_file(call: Call, a: PatchRestArgs) -> Reply:
    """readmedb's `patch_file` (literal find, the n-th occurrence or all), checked against base_hash."""

    def work() -> Wrote:
        path, name, _ = _doc(call.ctx, a.name)
        replaced = 0

        def change(old: bytes | None) -> bytes:
            nonlocal replaced
            if old is None:
                raise _no_doc(call.ctx, name)
            text, replaced = patch_text(
                door.decode(old, name), a.find, a.replace, a.all, a.occurrence_index, name
            )
            return text.encode()

        journal = call.journal()
        written = door.save(path, name, change, base_hash=a.base_hash, journal=journal)
        return Wrote(path, name, written, tuple(journal.notes), replaced)

    return await _answer_write(call, work, 200)


async def edit_file(call: Call, a: EditArgs) -> Reply:
    """`ragdown_edit`: exact passages replaced in order, all or nothing."""

    def work() -> Wrote:
        path, name, _ = _doc(call.ctx, a.path)
        replaced = 0

        def change(old: bytes | None) -> bytes:
            nonlocal replaced
            if old is None:
                raise _no_doc(call.ctx, name)
            edits = [Edit(e.old_text, e.new_text, e.replace_all) for e in a.edits]
            text, replaced = apply_replacements(door.decode(old, name), edits)
            return text.encode()

        journal = call.journal()
        written = door.save(path, name, change, base_hash=a.base_hash, journal=journal)
        return Wrote(path, name, written, tuple(journal.notes), replaced)

    return await _answer_write(call, work, 200)


async def delete_file(call: Call, a: DeleteArgs) -> Reply:
    ctx = call.ctx

    def work() -> str:
        path, name, _ = _doc(ctx, a.name)
        if a.purge:  # for good: the file and every version; also a document already in the trash
            door.purge(path, name, base_hash=a.base_hash, journal=call.journal())
        else:
            door.delete(path, name, base_hash=a.base_hash, journal=call.journal())
        return name

    with door.recording() as changed:
        name = await ctx.run(work)
    indexed = await ctx.sync_after_write_async(changed)
    kept = ctx.engine.history is not None and not a.purge
    return Reply(DeleteAnswer(name=name, trash=kept, notes=indexed.notes()))


async def empty_trash(call: Call, _a: FolderArgs) -> Reply:
    """Every document in the folder's trash deleted for good, with all its versions."""
    ctx = call.ctx
    forgotten = await ctx.run(door.empty_trash, ctx.scope.dir, call.journal())
    return Reply(EmptyTrashAnswer(forgotten=[ctx.scope.view(p) for p in forgotten]))


async def move_file(call: Call, a: MoveRestArgs) -> Reply:
    """`ragdown_move`: links to it rewritten; over a document that is there only with `overwrite`
    (ReadmeDB's, `rdb mv --force`: that document is deleted first, into the trash)."""
    ctx = call.ctx
    notes: list[str] = []  # what the move said (a deleted document set apart in the trash)

    def work() -> tuple[str, str, list[str]]:
        if a.overwrite:
            _replace_target(call, a)
        return move_path(ctx, a, WHO, None, notes)

    with door.recording() as changed:
        src, dst, updated = await ctx.run(work)
    indexed = await ctx.sync_after_write_async(changed)
    return Reply(
        MoveAnswer.model_validate(
            {"from": src, "to": dst, "updated": updated, "notes": [*notes, *indexed.notes()]}
        )
    )


def _replace_target(call: Call, a: MoveRestArgs) -> None:
    """Delete the document at a move's `to` (not the moved one itself), so the move can take its place."""
    ctx = call.ctx
    src = resolve_in(ctx.scope.dir, a.source, markdown=False)
    if not src.is_file():
        return  # a subfolder, or nothing: the move says what is wrong
    dst, name, docs_path = _doc(ctx, a.to)
    if not (dst.exists() or dst.is_symlink()) or door.same_file(src, dst):
        return
    if not is_plain_file(ctx.docs_root, docs_path):
        raise bad_request(f"{name} is not a document a move can replace")
    door.delete(dst, name, journal=call.journal())


async def restore_file(call: Call, a: RestoreArgs) -> Reply:
    """`ragdown_restore`: the version written back as a new one; a deleted document re-created."""
    ctx = call.ctx
    with door.recording() as changed:
        done = await ctx.run(restore, ctx, a.path, a.version, a.base_hash, WHO, call.access.who)
    indexed = await ctx.sync_after_write_async(changed)
    name = ctx.scope.view(done.docs_path)
    body = RestoreAnswer(
        name=name,
        version=done.version,
        new_version=done.new_version,
        hash=done.written.hash,
        sizeBytes=len(done.written.data),
        notes=indexed.notes(),
    )
    return Reply(body)


async def search(call: Call, a: RecallArgs) -> Reply:
    """`ragdown_recall`, through its ToolSpec, in its JSON format."""
    text = await RECALL.handler(call.ctx, a)
    return Reply(SearchAnswer.model_validate(json.loads(str(text))))


async def search_folders(call: Call, a: SearchFoldersArgs) -> Reply:
    """`ragdown_recall` over several folders at once (`Scope.over`): one search, one ranking, so a hit's
    score means the same whichever folder it is in. A folder the key does not see is a missing one."""
    ctx = call.ctx
    seen = call.access.visible(await ctx.run(list_folders, ctx.docs_root))
    asked = list(dict.fromkeys(a.folder or ()))
    for name in asked:
        if name not in seen:
            raise not_found(f"no such folder: {shown(name)}")
    scope = Scope.over(ctx.docs_root, tuple(asked or seen))
    over = dataclasses.replace(ctx, scope=scope)
    hits = await recall_hits(over, a)
    limit = recall_limit(over, a)
    found = [FolderHit.model_validate({**hit_json(h, limit), "folder": h.chunk.folder}) for h in hits]
    return Reply(FoldersSearchAnswer(hits=found))


async def history(call: Call, a: Any) -> Reply:
    """`ragdown_history`, through its ToolSpec, in its JSON format."""
    text = await HISTORY.handler(call.ctx, a)
    return Reply(HistoryAnswer.model_validate(json.loads(str(text))))


async def changes(call: Call, a: Any) -> Reply:
    """`ragdown_changes`, through its ToolSpec, in its JSON format."""
    text = await CHANGES.handler(call.ctx, a)
    return Reply(ChangesAnswer.model_validate(json.loads(str(text))))


async def related(call: Call, a: Any) -> Reply:
    """`ragdown_related`, through its ToolSpec, in its JSON format."""
    from ragdown.tools.related import RELATED

    text = await RELATED.handler(call.ctx, a)
    return Reply(RelatedAnswer.model_validate(json.loads(str(text))))


async def query(call: Call, a: Any) -> Reply:
    """`ragdown_query`, through its ToolSpec, in its JSON format."""
    text = await QUERY.handler(call.ctx, a)
    return Reply(QueryAnswer.model_validate(json.loads(str(text))))


async def trash(call: Call, _a: FolderArgs) -> Reply:
    """The folder's deleted documents (`ragdown_list` with `deleted: true`), each with its last version."""
    ctx = call.ctx

    def work() -> TrashAnswer:
        if ctx.engine.history is None:
            return TrashAnswer(enabled=False, trash=[])
        entries = trashed(ctx, ctx.scope.prefix)
        return TrashAnswer.model_validate({"enabled": True, "trash": [trash_json(ctx, e) for e in entries]})

    return Reply(await ctx.run(work))


async def version(call: Call, a: VersionArgs) -> Reply:
    ctx = call.ctx

    def work() -> VersionAnswer:
        f = followed(ctx, a.name)
        name = ctx.scope.view(f.docs_path)
        v = f.version(a.version, name)
        data = version_bytes(ctx, v)
        return VersionAnswer(
            name=name,
            content=decode_text(data)[0],
            version=v.version,
            at=iso_seconds(v.at),
            size=v.size,
            lines=v.lines,
            who=v.who,
            event=v.event,
            hash=v.hash,
            session=v.session,
        )

    return Reply(await ctx.run(work))


async def diff(call: Call, a: DiffArgs) -> Reply:
    ctx = call.ctx
    text = await ctx.run(diff_text, ctx, a.path, a.from_version, a.to_version, a.context_lines)
    return Reply(
        DiffAnswer.model_validate(
            {"name": "/".join(split_safe(a.path)), "from": a.from_version, "to": a.to_version, "diff": text}
        )
    )


async def tree(call: Call, a: Named) -> Reply:
    """A document's whole section tree (the nodes `ragdown_outline` shows, their ids for `node_id`)."""
    ctx = call.ctx

    def work() -> TreeAnswer:
        _path, name, docs_path = _doc(ctx, a.name)
        found = ctx.store().tree_of(docs_path)
        if found is None:
            raise _no_doc(ctx, name)
        return TreeAnswer(name=name, tree=OutlineNode.model_validate(found.as_json()))

    return Reply(await ctx.run(work))


async def outline(call: Call, a: OutlineArgs) -> Reply:
    """`ragdown_outline`, through its ToolSpec: the folder tree, or a document's sections to a depth."""
    return Reply(OutlineAnswer(text=str(await OUTLINE.handler(call.ctx, a))))
