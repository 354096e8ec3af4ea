"""The `chatgpt` tool set: the two tools ChatGPT's connectors and deep research call, in OpenAI's shapes.

`search` takes one `query` string and answers `{"results": [{"id", "title", "url"}]}`; `fetch` takes one
`id` from those results and answers `{"id", "title", "text", "url", "metadata"}`. Each answer is one text
item holding that object as JSON, and the same object as `structuredContent` (OpenAI's documented contract).

Results are documents, best first (ragdown's hybrid search, rolled up per document so a deep-research loop
fetches each document once); a result's `title` names the document and its best section. `url` is a stable
link that opens the document at that section in ragdown's web UI (`<public URL>/#/d/<path>?line=N`), so an
answer can cite it; a citation needs a non-empty URL, so under stdio without `RAGDOWN_PUBLIC_URL` the URL is
the file's own `file://` URI. `id` is the document's path as the endpoint shows paths (folder-relative); at
the root endpoint `/mcp?toolset=chatgpt`, which searches every folder the caller sees, it starts with the
folder (`work/guides/restore.md`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from pydantic import Field, field_validator

from ragdown.access.scope import Scope
from ragdown.core.errors import not_found
from ragdown.documents import decode_text
from ragdown.search.format import iso, log_hits
from ragdown.search.hybrid import Hit
from ragdown.tools.base import Annotations, Args, Structured, ToolSpec
from ragdown.tools.context import ToolContext
from ragdown.tools.read import compact
from ragdown.tools.root import mcp_folders
from ragdown.vault.sandbox import read_plain, resolve_in

READ_ONLY = Annotations(read_only=True)
RESULTS = 10  # documents a search answers: deep research reads a few and searches again
SEARCHED = 40  # sections searched before rolling them up per document
MAX_ARG = 4096

INSTRUCTIONS = (
    "This server searches the user's Markdown notes. Call search with what you are looking for (words or a "
    "question), then fetch a result's id to read the whole document; cite a document by its url."
)


def document_url(ctx: ToolContext, docs_path: str, line: int | None = None) -> str:
    """The link that opens a document (at `line`) in ragdown's web UI, or its file's URI where no server
    address is known (stdio without `RAGDOWN_PUBLIC_URL`)."""
    base = ctx.base_url or ctx.runtime.settings.public_url
    if not base:
        return (ctx.docs_root / docs_path).as_uri()
    tail = f"?line={line}" if line else ""
    return f"{base.rstrip('/')}/#/d/{quote(docs_path, safe='/')}{tail}"


# -- search ---------------------------------------------------------------------------------------


class SearchArgs(Args):
    query: Annotated[str, Field(min_length=1, max_length=MAX_ARG, description="What to look for.")]

    @field_validator("query")
    @classmethod
    def _not_blank(cls, query: str) -> str:
        if not query.strip():
            raise ValueError("is blank: give words or a question to look for")
        return query


def _title(hit: Hit) -> str:
    """The document's title and, when the best section is not the document itself, that section's heading."""
    c = hit.chunk
    title = c.file.title or Path(c.path).stem
    section = c.heading.strip()
    return f"{title} › {section}" if section and section != title else title


def _searched(ctx: ToolContext) -> Scope:
    """Where a search looks: the endpoint's folder, or at the root endpoint every folder the caller sees
    with MCP on, ranked together (`Scope.over`)."""
    if ctx.scope.is_root:
        return Scope.over(ctx.scope.root, tuple(mcp_folders(ctx.scope)))
    return ctx.scope


def _id(ctx: ToolContext, docs_path: str) -> str:
    """A document's id: its path as the endpoint shows paths; at the root endpoint, folder first."""
    return docs_path if ctx.scope.is_root else ctx.scope.view(docs_path)


def _target(ctx: ToolContext, doc_id: str) -> Path:
    """The file an id names, inside the endpoint's folder (at the root endpoint, inside the folder the id
    starts with, which the caller must see)."""
    if not ctx.scope.is_root:
        return resolve_in(ctx.scope.dir, doc_id, markdown=True, text=True)
    folder, _, rest = doc_id.strip("/").partition("/")
    if not rest or folder not in mcp_folders(ctx.scope):
        raise not_found(f"no document with id {doc_id!r}: pass an id from search's results")
    return resolve_in(ctx.scope.root / folder, rest, markdown=True, text=True)


async def search(ctx: ToolContext, a: SearchArgs) -> Structured:
    await ctx.ready()
    rt = ctx.runtime
    started = time.perf_counter()
    flt = _searched(ctx).file_filter()
    hits = await ctx.run(ctx.engine.search, a.query, flt, rt.search_options(SEARCHED))
    best: dict[str, Hit] = {}
    for hit in hits:
        best.setdefault(hit.path, hit)
    chosen = list(best.values())[:RESULTS]
    rt.log(
        "recall",
        scope=str(ctx.scope.dir),
        query=a.query,
        filters={"tool": "search (chatgpt)"},
        hits=log_hits(chosen),
        ms=round((time.perf_counter() - started) * 1000, 1),
    )
    results = [
        {
            "id": _id(ctx, hit.path),
            "title": _title(hit),
            "url": document_url(ctx, hit.path, hit.chunk.start_line),
        }
        for hit in chosen
    ]
    data = {"results": results}
    return Structured(compact(data), data)


# -- fetch ----------------------------------------------------------------------------------------


class FetchArgs(Args):
    id: Annotated[str, Field(min_length=1, max_length=MAX_ARG, description="A search result's id.")]


def fetch(ctx: ToolContext, a: FetchArgs) -> Structured:
    target = _target(ctx, a.id)
    docs_path = target.relative_to(ctx.docs_root).as_posix()
    data = read_plain(ctx.docs_root, docs_path)
    if data is None:
        raise not_found(f"no document with id {a.id!r}: pass an id from search's results")
    text, _ = decode_text(data)
    record = ctx.store().get_file(docs_path)
    folder = ctx.scope.folder or (docs_path.split("/", 1)[0] if ctx.scope.is_root else "")
    shown = docs_path.split("/", 1)[1] if ctx.scope.is_root else ctx.scope.view(docs_path)
    metadata: dict[str, Any] = {"path": shown, "lines": text.count("\n") + 1}
    if folder:
        metadata["folder"] = folder
    if record is not None:
        metadata.update(
            {
                "modified": iso(record.mtime_ns),
                "tags": list(record.tags),
                "aliases": list(record.aliases),
                **({"description": record.description} if record.description else {}),
                **({"written_by": record.created_by} if record.created_by else {}),
            }
        )
    title = record.title if record is not None and record.title else target.stem
    answer = {
        "id": a.id,
        "title": title,
        "text": text,
        "url": document_url(ctx, docs_path),
        "metadata": metadata,
    }
    return Structured(compact(answer), answer)


async def _fetch(ctx: ToolContext, a: FetchArgs) -> Structured:
    await ctx.ready()
    return await ctx.run(fetch, ctx, a)


TOOLS: tuple[ToolSpec[Any, ToolContext], ...] = (
    ToolSpec(
        "search",
        "Search the user's Markdown notes (meaning and exact words). Answers {results: [{id, title, url}]}, "
        "best first, one per document; fetch an id to read it.",
        SearchArgs,
        READ_ONLY,
        search,
    ),
    ToolSpec(
        "fetch",
        "A document's full text by a search result's id: {id, title, text, url, metadata}.",
        FetchArgs,
        READ_ONLY,
        _fetch,
    ),
)
