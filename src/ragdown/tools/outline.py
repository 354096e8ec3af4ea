"""`ragdown_outline`: walk folder → document → section, and read exactly the lines to cite.

Without `path`: the folder tree (subfolders and documents with title, description and tokens) under
`path_prefix`. With `path`: that document's section tree to `depth`, each node with its `node_id`, title,
lines, tokens and how many nodes lie below the cut; `node_id` opens one subtree. Answers over 95,000
characters come in parts (`part`), each saying how to get the next.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ragdown.core.errors import Refusal, bad_request, not_found
from ragdown.core.paths import normalise_prefix
from ragdown.documents import decode_text
from ragdown.documents.tree import Node
from ragdown.search.outline import (
    DEFAULT_DEPTH,
    DEPTH_RANGE,
    document_outline_text,
    folder_outline_text,
    page,
)
from ragdown.storage.backend import IndexStore
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.records import FileRecord
from ragdown.storage.summaries import FILE_NAME as SUMMARIES_FILE
from ragdown.storage.summaries import generated_descriptions, kept_summaries
from ragdown.tools.base import Annotations, Args, ToolSpec
from ragdown.tools.context import ToolContext
from ragdown.tools.read import file_lines, locate_document
from ragdown.vault.sandbox import read_plain


class OutlineArgs(Args):
    path: Annotated[
        str | None,
        Field(
            max_length=1024, description="A document (a path or wikilink target); left out, the folder tree."
        ),
    ] = None
    path_prefix: Annotated[
        str | None, Field(max_length=1024, description="The folder tree under this folder.")
    ] = None
    depth: Annotated[
        int, Field(ge=DEPTH_RANGE[0], le=DEPTH_RANGE[1], description="Levels shown (default 2).")
    ] = DEFAULT_DEPTH
    node_id: Annotated[
        str | None, Field(max_length=64, description="Open this node's subtree (needs path).")
    ] = None
    part: Annotated[int, Field(ge=1, description="Which part of a long answer (default 1).")] = 1


def not_indexed(store: IndexStore, docs_path: str, shown: str) -> Refusal:
    """Why a document on disk has no outline: the reason a sync left it out, or that no sync has read it."""
    skipped = dict(store.skipped_files(FileFilter(paths=(docs_path,))))
    if docs_path in skipped:
        return not_found(f"{shown} is not indexed: {skipped[docs_path]}")
    return not_found(f"{shown} is not indexed yet: sync the index (ragdown_reindex), then try again")


def _summaries(ctx: ToolContext, docs_path: str, tree: Node) -> dict[str, str]:
    """The node summaries `ragdown index --summary-model` kept for this document, if it made any."""
    data_dir = ctx.engine.data_dir
    if not (data_dir / SUMMARIES_FILE).exists():
        return {}
    data = read_plain(ctx.docs_root, docs_path)
    return kept_summaries(data_dir, None if data is None else file_lines(decode_text(data)[0]), tree)


def _descriptions(ctx: ToolContext, records: list[FileRecord]) -> dict[str, str]:
    """The descriptions it made for documents without their own (by path)."""
    data_dir = ctx.engine.data_dir
    return generated_descriptions(data_dir, records) if (data_dir / SUMMARIES_FILE).exists() else {}


def outline_text(ctx: ToolContext, a: OutlineArgs) -> str:
    store = ctx.store()
    scope = ctx.scope
    if a.path:
        docs_path, _anchor, _via_link = locate_document(ctx, store, a.path)
        record, tree = store.get_file(docs_path), store.tree_of(docs_path)
        if record is None or tree is None:
            raise not_indexed(store, docs_path, scope.view(docs_path))
        shown = scope.view(docs_path)
        text = document_outline_text(
            shown, record, tree, a.depth, a.node_id, _summaries(ctx, docs_path, tree)
        )
        node = f" node_id={a.node_id!r}" if a.node_id else ""
        return page(text, a.part, lambda k: f"ragdown_outline path={shown!r}{node} depth={a.depth} part={k}")
    if a.node_id:
        raise bad_request("node_id names a node of one document: give its path too")
    prefix = normalise_prefix(a.path_prefix or "")
    flt = scope.file_filter(prefix, hide_superseded=False)
    records = store.list_files(flt)
    base = "" if scope.is_root else scope.docs_path(prefix) if prefix else scope.prefix
    heading = prefix or (scope.settings().title if scope.folder else scope.root.name)
    made = _descriptions(ctx, records)
    text = folder_outline_text(records, store.document_tokens(flt), scope.view, base, a.depth, heading, made)
    where = f" path_prefix={prefix!r}" if prefix else ""
    return page(text, a.part, lambda k: f"ragdown_outline{where} depth={a.depth} part={k}")


async def outline(ctx: ToolContext, a: OutlineArgs) -> str:
    await ctx.ready()
    return await ctx.run(outline_text, ctx, a)


OUTLINE = ToolSpec(
    name="ragdown_outline",
    description=(
        "Navigate by structure: without path, the folder tree (documents with title, tokens, description); "
        "with path, that document's sections to depth (1-10), each with node_id, lines and tokens. Read a "
        "node with ragdown_read_doc node_id; open one with node_id here. Long answers come in parts."
    ),
    args=OutlineArgs,
    annotations=Annotations(read_only=True),
    handler=outline,
)
