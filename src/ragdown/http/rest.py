"""REST API v1 (`/api/v1`): ragdown for programs, every route under a folder, JSON in and out.

ReadmeDB's file routes (`GET/POST /files`, `GET/PUT/DELETE /files/{path}`, its names: `name`, `content`,
`sizeBytes`, `updatedAt`…) plus the rest of what the tools do (search, outline, history, one version, diff,
restore, append, patch, edit, move), each under `/api/v1/folders/{folder}/`. Each route is one `Endpoint`:
its argument model (a tool's own `Args` model wherever one fits, so MCP, REST, the OpenAPI document and the
CLI client validate alike), its answer model (what `http/openapi.py` documents and every answer is dumped
through), and the function that runs it: a tool's handler through its `ToolSpec` (search, history,
outline), or the engine functions the tools call (the sandbox, the write door, `move_path`, `restore`,
`diff_text`, `patch_text`, `apply_replacements`, `append_text`).

Every route checks the caller's `Access` (`access.py`, resolved by `http/app.py`'s dispatch): a folder it
does not see answers the same 404 as a missing folder, a write without write access a 403. Writes go
through the write door (recorded in the history as `rest`, with the caller as the session) and answer after
the index synced, with the write's lints. Errors are `{error, code}` with the status of the refusal's kind
(`http/errors.py`).

A `PUT` replaces a document outright, as ReadmeDB's does (the version it replaced stays in the history);
with `base_hash` it replaces only the version that hash names (409 `changed` otherwise). `POST /files`
creates only (409 when the name is taken).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import quote, unquote

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request
from starlette.responses import Response

from ragdown.access.caller import Access, access_of
from ragdown.access.scope import Scope
from ragdown.core.atomic import sha256_hex
from ragdown.core.errors import Refusal, bad_request, forbidden, not_found
from ragdown.core.paths import is_text, normalise_prefix, shown, split_safe
from ragdown.core.times import iso_seconds
from ragdown.documents import decode_text
from ragdown.documents.replacements import Edit, apply_replacements
from ragdown.documents.writes import append_text
from ragdown.history.journal import Journal
from ragdown.http.api import Api, json_body
from ragdown.http.errors import ok, refused
from ragdown.tools.base import Args, describe_validation, not_unicode
from ragdown.tools.context import ToolContext
from ragdown.tools.history import HISTORY, DiffArgs, RestoreArgs, diff_text, restore
from ragdown.tools.outline import OUTLINE, OutlineArgs
from ragdown.tools.read import RECALL, RecallArgs, file_lines
from ragdown.tools.versions import followed, trash_json, trashed, version_bytes
from ragdown.tools.write import EditArgs, MoveArgs, lint_warnings, move_path
from ragdown.toolsets.readmedb.base import created_ms, head, ms, updated_ms
from ragdown.toolsets.readmedb.files import ListArgs, PatchArgs, ReadArgs, line_range, patch_text
from ragdown.vault import quota
from ragdown.vault.folders import folder_settings, list_folders
from ragdown.vault.ignore import refuse_ignored
from ragdown.vault.sandbox import read_plain, resolve_in
from ragdown.writes import door

PREFIX = "/api/v1"
WHO = "rest"  # who the version history says made a change through these routes (the caller is the session)
PATH_MAX_CHARS = 1024


# -- answers --------------------------------------------------------------------------------------


class Answer(BaseModel):
    """Base of every answer model: what `openapi.py` documents is exactly what is sent."""

    model_config = ConfigDict(populate_by_name=True)


class ErrorAnswer(Answer):
    error: str = Field(description="What went wrong, in words.")
    code: str | None = Field(
        None,
        description="A tag a program can test, on every error: the refusal's kind (`invalid`, `forbidden`, "
        "`not_found`, `conflict`, `too_large`, `over_quota`, `unavailable`, `internal`), a narrower code "
        "(`changed`: base_hash is stale; `RATE_LIMIT_EXCEEDED`), or the dispatch's (`unauthorized`, "
        "`no_route`, `method_not_allowed`, `misdirected`).",
    )


class WhoAnswer(Answer):
    who: str = Field(description="`admin`, `key:<name>`, `oauth:<client>`, or `open` (no token configured).")
    role: Literal["read", "write", "admin"]
    folders: list[str] | None = Field(description="The folders this caller sees; null: every folder.")
    key_id: str | None = None


class FolderEntry(Answer):
    name: str
    title: str
    files: int
    writable: bool = Field(description="Whether this caller may change documents in it.")


class FoldersAnswer(Answer):
    folders: list[FolderEntry]


class FileEntry(Answer):
    name: str = Field(description="The document's path inside the folder.")
    sizeBytes: int
    createdAt: int = Field(description="Unix milliseconds: the first recorded version, else updatedAt.")
    updatedAt: int = Field(description="Unix milliseconds: when the content last changed.")
    preview: str | None = None


class FilesAnswer(Answer):
    files: list[FileEntry]
    limit: int
    offset: int
    returned: int
    total: int = Field(description="Documents matching, before limit and offset.")


class FileAnswer(Answer):
    name: str
    content: str
    hash: str = Field(description="SHA-256 of the file's bytes: pass it as base_hash to change this version.")
    sizeBytes: int
    createdAt: int
    updatedAt: int
    totalLines: int
    partial: bool
    start_line: int | None = None
    end_line: int | None = None


class QuotaAnswer(Answer):
    """The folder's usage against its quota (`quota.py`), in a write's answer when it has one."""

    files: int
    bytes: int
    max_files: int | None = None
    max_bytes: int | None = None
    max_file_bytes: int | None = None
    text: str = Field(description='In words: "13/50 files, 0.05/5 MB".')


class WriteAnswer(Answer):
    ok: Literal[True] = True
    name: str
    hash: str = Field(description="SHA-256 of what is on disk now.")
    sizeBytes: int
    created: bool
    replaced: int | None = Field(None, description="patch and edit: how many passages were replaced.")
    warnings: list[str] = Field(description="Advisory lints of what was written; the write was made.")
    notes: list[str] = Field(description="What the write's follow-ups said (an index.md left alone).")
    quota: QuotaAnswer | None = Field(None, description="Left out (null) when the folder has no quota.")


class DeleteAnswer(Answer):
    ok: Literal[True] = True
    name: str
    trash: bool = Field(description="Whether the history keeps it (restore brings it back).")
    notes: list[str] = Field(description="What the change's follow-ups said (the index still syncing).")


class MoveAnswer(Answer):
    ok: Literal[True] = True
    from_: str = Field(alias="from")
    to: str
    updated: list[str] = Field(description="Documents whose links to it were rewritten.")
    notes: list[str] = Field(description="What the change's follow-ups said (the index still syncing).")


class RestoreAnswer(Answer):
    ok: Literal[True] = True
    name: str
    version: int
    new_version: int | None
    hash: str
    sizeBytes: int
    notes: list[str] = Field(description="What the change's follow-ups said (the index still syncing).")


class Hit(Answer):
    """One hit as `ragdown_recall`'s JSON gives it."""

    path: str
    title: str
    heading: str
    line_start: int
    line_end: int
    similarity: float | None
    score: float
    sources: list[str]
    tags: list[str]
    modified: str
    created_by: str | None = None
    text: str
    node_id: str | None


class SearchAnswer(Answer):
    hits: list[Hit]


class VersionEntry(Answer):
    version: int
    at: str
    size: int
    lines: int
    who: str
    event: str
    hash: str
    session: str | None = None


class HistoryAnswer(Answer):
    """`ragdown_history`'s JSON."""

    path: str
    deleted: bool
    versions: list[VersionEntry]


class TrashEntryAnswer(Answer):
    path: str
    deleted_at: str
    last: VersionEntry = Field(description="Its last version: what a restore of it brings back.")


class TrashAnswer(Answer):
    enabled: bool = Field(description="False when the version history is off: a delete keeps nothing.")
    trash: list[TrashEntryAnswer] = Field(description="Deleted documents, most recently deleted first.")


class VersionAnswer(VersionEntry):
    name: str
    content: str


class DiffAnswer(Answer):
    name: str
    from_: int = Field(alias="from")
    to: int | None
    diff: str


class OutlineNode(Answer):
    id: str
    kind: str
    title: str
    level: int
    lines: list[int]
    own_end: int
    own_tokens: int
    tokens: int
    key_items: list[str] | None = None
    children: list[OutlineNode] | None = None


class TreeAnswer(Answer):
    name: str
    tree: OutlineNode


class OutlineAnswer(Answer):
    text: str = Field(description="`ragdown_outline`'s answer.")


# -- arguments the tools have no model for ----------------------------------------------------------


class Named(Args):
    name: Annotated[str, Field(min_length=1, max_length=PATH_MAX_CHARS)]


class FolderArgs(Args):
    pass


class ListFilesArgs(ListArgs):
    """readmedb's `list_files`, and a subfolder to list."""

    prefix: Annotated[
        str | None, Field(max_length=PATH_MAX_CHARS, description="Only documents under this subfolder.")
    ] = None


class CreateArgs(Named):
    content: str


class PutArgs(Named):
    content: str
    base_hash: Annotated[
        str | None,
        Field(
            max_length=64,
            description="Replace only this version (the hash a read gave); left out, overwrite.",
        ),
    ] = None


class DeleteArgs(Named):
    base_hash: Annotated[
        str | None, Field(max_length=64, description="Delete only if the document still has this hash.")
    ] = None


class AppendArgs(Named):
    content: Annotated[str, Field(min_length=1)]
    heading: Annotated[
        str | None, Field(max_length=PATH_MAX_CHARS, description="Add at the end of this section instead.")
    ] = None


class PatchRestArgs(PatchArgs):
    base_hash: Annotated[str | None, Field(max_length=64)] = None


class VersionArgs(Named):
    version: Annotated[int, Field(ge=1, description="A version number (history).")]


# -- one call ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    ctx: ToolContext
    access: Access

    def journal(self) -> Journal:
        return self.ctx.journal(WHO, self.access.who)


@dataclass(frozen=True)
class Reply:
    body: Answer
    status: int = 200


Run = Callable[[Call, Any], Awaitable[Reply]]


@dataclass(frozen=True)
class Endpoint:
    method: Literal["GET", "POST", "PUT", "DELETE"]
    path: str  # a template: `{folder}` one segment, `{path}` one or more, `{version}` one
    operation_id: str
    summary: str
    args: type[Args]
    answer: type[Answer]
    run: Run
    writes: bool = False
    status: int = 200  # the success status; a PUT answers 201 when it created the document
    url_fields: Mapping[str, str] = field(default_factory=dict)  # URL parameter -> argument field
    fixed: Mapping[str, Any] = field(default_factory=dict)  # arguments the route sets (not documented)
    tool: str | None = None  # the MCP tool whose argument model it takes (and, for some, its handler)
    index: bool = True  # waits for the index (whoami does not: it answers during a first index too)

    @property
    def in_body(self) -> bool:
        return self.method in ("POST", "PUT")

    @property
    def under_folder(self) -> bool:
        return "{folder}" in self.path

    @property
    def hidden(self) -> frozenset[str]:
        """Argument fields the request does not carry in its query or body."""
        return frozenset(self.url_fields.values()) | frozenset(self.fixed)

    async def __call__(self, api: Api, request: Request) -> Response:
        """The route `http/app.py` dispatches to (after its Host/Origin checks and auth)."""
        try:
            reply = await self._reply(api, request)
        except Refusal as err:
            return refused(err, coded=True)
        return ok(reply.body.model_dump(mode="json", by_alias=True), reply.status)

    async def _reply(self, api: Api, request: Request) -> Reply:
        access = access_of(request.scope)
        params = decoded_params(request.path_params)
        folder = params.get("folder", "")
        if self.under_folder:
            if not access.sees(folder) or not is_text(folder) or folder not in list_folders(api.root):
                raise not_found(f"no such folder: {shown(folder)}")
            if self.writes:
                api.refuse_read_only("Changing documents")
                if not access.writes(folder):
                    raise forbidden(f"this key may not change documents in {folder} (it reads only)")
        raw: dict[str, Any] = await self._arguments(request)
        for param, name in self.url_fields.items():
            raw[name] = params[param]
        raw.update(self.fixed)
        args = parse(self.args, raw)
        ctx = ToolContext(runtime=api.runtime, scope=Scope(root=api.root, folder=folder))
        if self.index:
            await ctx.ready()
        return await self.run(Call(ctx, access), args)

    async def _arguments(self, request: Request) -> dict[str, Any]:
        if not self.in_body:
            return {k: v for k, v in request.query_params.items() if k not in self.hidden}
        body = await json_body(request)
        if not isinstance(body, dict):
            raise bad_request("send a JSON object")
        return {k: v for k, v in body.items() if k not in self.hidden}


def parse(model: type[Args], raw: dict[str, Any]) -> Any:
    """A request's arguments validated by the model (a tool's own, or one of the above)."""
    bad = not_unicode(raw)
    if bad is not None:
        raise bad_request(f"arguments must be Unicode text, and {bad[:40]!r} is not")
    try:
        return model.model_validate(raw)
    except ValidationError as err:
        raise bad_request(describe_validation(err)) from None


def decoded_params(raw: Mapping[str, str]) -> dict[str, str]:
    """The URL's parameters, percent-decoded (strictly: bytes that are not UTF-8 are refused)."""
    out: dict[str, str] = {}
    for key, value in raw.items():
        try:
            out[key] = "/".join(unquote(part, errors="strict") for part in value.split("/"))
        except UnicodeDecodeError:
            if key == "folder":
                raise not_found("no such folder: (a name that is not UTF-8)") from None
            raise bad_request(f"{key} is not UTF-8 text") from None
    return out


# -- the routes' work -------------------------------------------------------------------------------


def _doc(ctx: ToolContext, raw: str, *, write: bool = False) -> tuple[Path, str, str]:
    """A document's (absolute path, name in the folder, docs-relative path), sandboxed; for a write, its
    folders made and a name the ignore rules leave out refused."""
    path = resolve_in(ctx.scope.dir, raw, markdown=True)
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
    wrote = await ctx.run(work)
    indexed = await ctx.engine.sync_after_write_async()
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
        door.delete(path, name, base_hash=a.base_hash, journal=call.journal())
        return name

    name = await ctx.run(work)
    indexed = await ctx.engine.sync_after_write_async()
    return Reply(DeleteAnswer(name=name, trash=ctx.engine.history is not None, notes=indexed.notes()))


async def move_file(call: Call, a: MoveArgs) -> Reply:
    """`ragdown_move`: links to it rewritten; never over a document that is there."""
    ctx = call.ctx
    src, dst, updated = await ctx.run(move_path, ctx, a, WHO)
    indexed = await ctx.engine.sync_after_write_async()
    return Reply(
        MoveAnswer.model_validate({"from": src, "to": dst, "updated": updated, "notes": indexed.notes()})
    )


async def restore_file(call: Call, a: RestoreArgs) -> Reply:
    """`ragdown_restore`: the version written back as a new one; a deleted document re-created."""
    ctx = call.ctx
    done = await ctx.run(restore, ctx, a.path, a.version, a.base_hash, WHO, call.access.who)
    indexed = await ctx.engine.sync_after_write_async()
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


async def history(call: Call, a: Any) -> Reply:
    """`ragdown_history`, through its ToolSpec, in its JSON format."""
    text = await HISTORY.handler(call.ctx, a)
    return Reply(HistoryAnswer.model_validate(json.loads(str(text))))


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


# -- the table --------------------------------------------------------------------------------------

FOLDER = f"{PREFIX}/folders/{{folder}}"
FILE = f"{FOLDER}/files/{{path}}"
NAME = {"path": "name"}

ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("GET", f"{PREFIX}/whoami", "whoami", "Who this key is: its role and folders.", FolderArgs,
             WhoAnswer, whoami, index=False),
    Endpoint("GET", f"{PREFIX}/folders", "listFolders", "The folders this key sees.", FolderArgs,
             FoldersAnswer, folders),
    Endpoint("GET", f"{FOLDER}/files", "listFiles", "List documents (limit, offset, a subfolder prefix).",
             ListFilesArgs, FilesAnswer, list_files, tool="list_files (readmedb)"),
    Endpoint("POST", f"{FOLDER}/files", "createFile", "Create a document; 409 when the name is taken.",
             CreateArgs, WriteAnswer, create_file, writes=True, status=201),
    Endpoint("GET", f"{FOLDER}/search", "search", "Hybrid search in the folder (ragdown_recall's hits).",
             RecallArgs, SearchAnswer, search, fixed={"format": "json"}, tool=RECALL.name),
    Endpoint("GET", f"{FOLDER}/outline", "outline",
             "The folder's documents, or one document's sections (ragdown_outline).",
             OutlineArgs, OutlineAnswer, outline, tool=OUTLINE.name),
    Endpoint("GET", f"{FOLDER}/trash", "listTrash",
             "The folder's deleted documents, most recently deleted first (restore brings one back).",
             FolderArgs, TrashAnswer, trash, tool="ragdown_list (deleted)", index=False),
    # Routes below a document come before the document's own: `{path}` takes one segment or more.
    Endpoint("GET", f"{FILE}/history", "history", "A document's versions, newest first (live or deleted).",
             HISTORY.args, HistoryAnswer, history, url_fields={"path": "path"}, fixed={"format": "json"},
             tool=HISTORY.name),
    Endpoint("GET", f"{FILE}/versions/{{version}}", "getVersion", "One version's content.", VersionArgs,
             VersionAnswer, version, url_fields={"path": "name", "version": "version"}),
    Endpoint("GET", f"{FILE}/diff", "diff",
             "A unified diff between version `from` and `to` (left out: the file on disk).",
             DiffArgs, DiffAnswer, diff, url_fields={"path": "path"}, tool="ragdown_diff"),
    Endpoint("GET", f"{FILE}/outline", "documentTree", "A document's whole section tree.", Named,
             TreeAnswer, tree, url_fields=NAME),
    Endpoint("POST", f"{FILE}/restore", "restore",
             "Bring a version back, as a new version; re-creates a deleted document.",
             RestoreArgs, RestoreAnswer, restore_file, writes=True, url_fields={"path": "path"},
             tool="ragdown_restore"),
    Endpoint("POST", f"{FILE}/append", "append",
             "Add content at the end, or at the end of a section; creates a missing document.",
             AppendArgs, WriteAnswer, append_file, writes=True, url_fields=NAME),
    Endpoint("POST", f"{FILE}/patch", "patch",
             "Replace literal text: the first occurrence, the n-th, or all.",
             PatchRestArgs, WriteAnswer, patch_file, writes=True, url_fields=NAME, tool="patch_file (readmedb)"),
    Endpoint("POST", f"{FILE}/edit", "edit", "Replace exact passages, in order, all or nothing.",
             EditArgs, WriteAnswer, edit_file, writes=True, url_fields={"path": "path"},
             tool="ragdown_edit"),
    Endpoint("POST", f"{FILE}/move", "move", "Move or rename a document, rewriting the links to it.",
             MoveArgs, MoveAnswer, move_file, writes=True, url_fields={"path": "from"},
             tool="ragdown_move"),
    Endpoint("GET", FILE, "readFile", "Read a document, or lines start_line to end_line.", ReadArgs,
             FileAnswer, read_file, url_fields=NAME, tool="read_file (readmedb)"),
    Endpoint("PUT", FILE, "writeFile",
             "Write a document: creates it, or replaces it (only the version base_hash names, if given).",
             PutArgs, WriteAnswer, put_file, writes=True, url_fields=NAME),
    Endpoint("DELETE", FILE, "deleteFile", "Delete a document, into the trash (restore brings it back).",
             DeleteArgs, DeleteAnswer, delete_file, writes=True, url_fields=NAME),
)  # fmt: skip


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"(\{\w+\})", template)
    regex = "".join(
        f"(?P<{p[1:-1]}>.+)"
        if p == "{path}"
        else f"(?P<{p[1:-1]}>[^/]+)"
        if p.startswith("{")
        else re.escape(p)
        for p in parts
    )
    return re.compile(f"^{regex}$")


# template -> method -> endpoint, in matching order (the table's)
ROUTES: dict[str, dict[str, Endpoint]] = {}
for _ep in ENDPOINTS:
    ROUTES.setdefault(_ep.path, {})[_ep.method] = _ep
_PATTERNS = [(_pattern(t), t) for t in ROUTES]


def match(raw_path: str) -> tuple[str, dict[str, str]] | None:
    """The template a request path (percent-encoded, as sent) falls under, and its raw parameters."""
    path = raw_path.rstrip("/")
    for pattern, template in _PATTERNS:
        found = pattern.match(path)
        if found:
            return template, found.groupdict()
    return None


def is_v1(path: str) -> bool:
    """Whether a request path is REST v1's (whose every error answer carries a `code`)."""
    return path == PREFIX or path.startswith(PREFIX + "/")


def route_of(request: Request) -> tuple[str, dict[str, Endpoint]] | None:
    """The template of a `/api/v1` request and its endpoints by method; its URL parameters are put in
    the request's `path_params` (still percent-encoded: each endpoint decodes them)."""
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1").split("?", 1)[0] if isinstance(raw, bytes) else quote(request.url.path)
    found = match(path)
    if found is None:
        return None
    template, params = found
    request.scope["path_params"] = params
    return template, ROUTES[template]


# What each route needs of its caller, for `http/app.py`'s `NEEDS` (folders are the endpoints' own check).
NEEDS: dict[str, dict[str, Literal["open", "read", "write", "admin"]]] = {
    template: {method: "write" if ep.writes else "read" for method, ep in methods.items()}
    for template, methods in ROUTES.items()
}


__all__ = ["ENDPOINTS", "NEEDS", "PREFIX", "ROUTES", "Endpoint", "ErrorAnswer", "is_v1", "match", "route_of"]
