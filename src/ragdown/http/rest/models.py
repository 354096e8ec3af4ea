"""What the REST routes take and give: the answer models (what every answer is dumped through and
`http/openapi.py` documents) and the argument models the tools' own models do not cover."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragdown.tools.base import Args
from ragdown.tools.read import RecallArgs
from ragdown.tools.write import DeleteArgs as DeleteToolArgs
from ragdown.tools.write import MoveArgs
from ragdown.toolsets.readmedb.files import ListArgs, PatchArgs

PATH_MAX_CHARS = 1024


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
    """The folder's usage against its quota (`vault/quota.py`), in a write's answer when it has one."""

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
    trash: bool = Field(
        description="Whether the history keeps it (restore brings it back); false after purge."
    )
    notes: list[str] = Field(description="What the change's follow-ups said (the index still syncing).")


class EmptyTrashAnswer(Answer):
    ok: Literal[True] = True
    forgotten: list[str] = Field(description="The documents deleted for good, with all their versions.")


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


class FolderHit(Hit):
    """A hit of a search over several folders: its path names its folder first."""

    path: str = Field(description="The document's path with its folder first: `work/backups.md`.")
    folder: str


class FoldersSearchAnswer(Answer):
    hits: list[FolderHit] = Field(description="Best first, ranked together: one search over the folders.")


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


class ChangeEntry(Answer):
    """One recorded change (`ragdown_changes`): a version of a document and what made it."""

    id: int = Field(description="The version's id: pass it as after_version to see only newer changes.")
    at: str
    path: str
    event: str = Field(description="created, changed, moved, deleted or restored.")
    who: str
    version: int
    size: int
    delta: int = Field(description="Bytes gained (or lost) since the version before.")
    lines: int
    session: str | None = None
    moved_from: str | None = None
    sections: list[str] | None = Field(None, description="The headings of the sections the change touched.")


class ChangesAnswer(Answer):
    """`ragdown_changes`'s JSON: newest first."""

    since: str | None
    after_version: int | None
    changes: list[ChangeEntry]
    more: bool = Field(description="More changes match than `limit` returned.")


class RelatedEntry(Answer):
    """One neighbour of a note (`ragdown_related`) and why it is related."""

    path: str
    why: str = Field(description="link, backlink, tag: x, similar 0.83 (several joined by '; ').")
    cite: str = Field(description="path, or path:start-end of the lines that relate it.")
    title: str | None = None
    text: str | None = Field(None, description="The linking line, or the similar section's heading path.")
    score: float | None = None
    shared_tags: int | None = None


class RelatedSection(Answer):
    node_id: str
    title: str
    lines: list[int]


class RelatedAnswer(Answer):
    """`ragdown_related`'s JSON: a note's neighbours, within the budget."""

    path: str
    section: RelatedSection | None
    related: list[RelatedEntry]
    more: bool = Field(description="More neighbours than the budget or max_chars let through.")


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
    purge: Annotated[bool, Field(description=DeleteToolArgs.model_fields["purge"].description)] = False


class AppendArgs(Named):
    content: Annotated[str, Field(min_length=1)]
    heading: Annotated[
        str | None, Field(max_length=PATH_MAX_CHARS, description="Add at the end of this section instead.")
    ] = None


class MoveRestArgs(MoveArgs):
    """`ragdown_move`'s arguments, and ReadmeDB's `overwrite` (`rdb mv --force`)."""

    overwrite: Annotated[
        bool,
        Field(
            description="Replace a document at `to` (it goes to the trash); left out, 409 when `to` is taken."
        ),
    ] = False


class PatchRestArgs(PatchArgs):
    base_hash: Annotated[str | None, Field(max_length=64)] = None


class SearchFoldersArgs(RecallArgs):
    """`ragdown_recall`'s arguments, and the folders to search."""

    folder: Annotated[
        list[Annotated[str, Field(min_length=1)]] | None,
        Field(
            description="Only these folders (repeat it: folder=a&folder=b); left out, every folder this key sees."
        ),
    ] = None


class VersionArgs(Named):
    version: Annotated[int, Field(ge=1, description="A version number (history).")]


class QueryAnswer(Answer):
    """`ragdown_query`'s JSON: one page of the documents that match, each row by column name."""

    total: int = Field(description="Documents that match.")
    offset: int
    columns: list[str]
    rows: list[dict[str, Any]]
    more: bool = Field(description="More documents match after this page.")
    view: str | None = Field(None, description="The Base and view answered, for a `base` query.")
