"""The readmedb finding tools: search_files, fetch_docs_for_task, list_modified_since."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from ragdown.core.errors import Refusal
from ragdown.core.paths import normalise_prefix
from ragdown.core.times import parse_since
from ragdown.search.query import words
from ragdown.storage.records import FileRecord
from ragdown.tools.base import Args
from ragdown.tools.context import ToolContext
from ragdown.toolsets.readmedb.base import ms, text_of
from ragdown.toolsets.readmedb.docs import FETCH_CHARS, FETCH_DEFAULT, SEARCH_RESULTS
from ragdown.vault.sandbox import read_plain

SEARCH_HITS = 50  # chunks asked of the searcher (its most), grouped into files
SNIPPET_BEFORE, SNIPPET_AFTER = 80, 160

# -- search_files, fetch_docs_for_task ------------------------------------------------------------


class SearchArgs(Args):
    query: Annotated[str, Field(min_length=1, description="Keywords (not regex, not glob).")]


def _snippet(text: str, query: str) -> str:
    flat = " ".join(text.split())
    low = flat.lower()
    spots = [i for i in (low.find(w) for w in words(query)) if i >= 0]
    if not spots:
        return flat[: SNIPPET_BEFORE + SNIPPET_AFTER] + (
            "..." if len(flat) > SNIPPET_BEFORE + SNIPPET_AFTER else ""
        )
    at = min(spots)
    start, end = max(0, at - SNIPPET_BEFORE), min(len(flat), at + SNIPPET_AFTER)
    return ("..." if start else "") + flat[start:end] + ("..." if end < len(flat) else "")


def matching_files(ctx: ToolContext, query: str, prefix: str = "") -> list[tuple[FileRecord, str]]:
    """The files whose text holds the query's words (or substrings of them), in the hybrid search's order,
    each with the text of its best matching chunk."""
    flt = ctx.scope.file_filter(normalise_prefix(prefix), hide_superseded=False)
    hits = ctx.engine.search(query, flt, ctx.runtime.search_options(SEARCH_HITS))
    seen: dict[str, tuple[FileRecord, str]] = {}
    for hit in hits:
        if "lexical" in hit.sources and hit.path not in seen:
            seen[hit.path] = (hit.chunk.file, hit.chunk.text)
    return list(seen.values())


def search_files(ctx: ToolContext, a: SearchArgs) -> list[dict[str, Any]]:
    return [
        {
            "name": ctx.scope.view(record.path),
            "sizeBytes": record.size,
            "updatedAt": ms(record.mtime_ns),
            "snippet": _snippet(text, a.query),
        }
        for record, text in matching_files(ctx, a.query)[:SEARCH_RESULTS]
    ]


class FetchArgs(Args):
    query: Annotated[str, Field(min_length=1, description="Keywords describing the task.")]
    paths_glob: Annotated[
        str | None, Field(description='A file name prefix ("CLAUDE" matches "CLAUDE.md"), or a glob.')
    ] = None
    max_chars: Annotated[
        int, Field(ge=FETCH_CHARS[0], le=FETCH_CHARS[1], description="Max total characters to return.")
    ] = FETCH_DEFAULT


def _name_filter(glob: str | None) -> tuple[str, Callable[[str], bool]]:
    """A paths_glob as (the folder it lies in, for the search filter; whether a name matches it)."""
    if not glob:
        return "", lambda _name: True
    is_glob = any(ch in glob for ch in "*?[")
    fixed = re.split(r"[*?\[]", glob, maxsplit=1)[0] if is_glob else glob
    folder = fixed.rsplit("/", 1)[0] if "/" in fixed else ""
    try:
        folder = normalise_prefix(folder)
    except Refusal:
        folder = ""
    if is_glob:
        return folder, lambda name: fnmatch.fnmatchcase(name, glob)
    return folder, lambda name: name.startswith(glob)


def fetch_docs(ctx: ToolContext, a: FetchArgs) -> dict[str, Any]:
    folder, matches = _name_filter(a.paths_glob)
    budget = a.max_chars
    results: list[dict[str, Any]] = []
    truncated = False
    for record, _text_of_hit in matching_files(ctx, a.query, folder):
        name = ctx.scope.view(record.path)
        if not matches(name):
            continue
        if budget <= 0:
            truncated = True
            break
        data = read_plain(ctx.docs_root, record.path)
        if data is None:  # gone since it was indexed
            continue
        content = text_of(data)
        cut = len(content) > budget
        if cut:
            content = content[:budget]
            truncated = True
        results.append({"name": name, "sizeBytes": len(data), "content": content, "truncated": cut})
        budget -= len(content)
    return {
        "query": a.query,
        "totalChars": sum(len(r["content"]) for r in results),
        "truncated": truncated,
        "results": results,
    }


# -- list_modified_since --------------------------------------------------------------------------


class SinceArgs(Args):
    since_ms: Annotated[
        float | str,
        Field(description="Unix time in milliseconds (ragdown also takes 2h, 3d or an ISO time)."),
    ]


def modified_since(ctx: ToolContext, a: SinceArgs) -> list[dict[str, Any]]:
    if isinstance(a.since_ms, str):
        try:
            since_ns = int(float(a.since_ms) * 1_000_000)
        except ValueError:
            since_ns = int(parse_since(a.since_ms) * 1e9)
    else:
        since_ns = int(a.since_ms * 1_000_000)
    since_ns = min(max(0, since_ns), 2**62)  # within SQLite's integers
    flt = ctx.scope.file_filter(hide_superseded=False, changed_since_ns=since_ns)
    return [
        {"name": ctx.scope.view(r.path), "updatedAt": ms(r.mtime_ns)}
        for r in ctx.store().list_files(flt, sort="recent")
    ]
