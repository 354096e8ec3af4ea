"""Hit formatting: one formatter per output shape of the behaviour spec (A3), shared by MCP, HTTP and CLI."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from ragdown.search.hybrid import Hit

PathView = Callable[[str], str]
# A docs-relative path as the JSON keys that name it to the endpoint's tools (`access.Scope.place`): a hit's
# `folder` and `path` at the root endpoint, its `path` alone elsewhere. Text shows `view`'s `[work] a.md`.
Place = Callable[[str], dict[str, str]]


def _same(path: str) -> str:
    return path


def _place(view: PathView, place: Place | None) -> Place:
    return place if place is not None else (lambda path: {"path": view(path)})


def day(mtime_ns: int) -> str:
    """The UTC day of a file's mtime, `YYYY-MM-DD`."""
    return datetime.fromtimestamp(mtime_ns / 1e9, tz=UTC).strftime("%Y-%m-%d")


def iso(mtime_ns: int) -> str:
    """An ISO 8601 UTC timestamp with milliseconds, like JavaScript's `toISOString()`."""
    stamp = datetime.fromtimestamp(mtime_ns / 1e9, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def clip(text: str, limit: int, where: Mapping[str, str], start: int, end: int) -> str:
    """The first `limit` characters and a pointer to the rest, a `ragdown_read_doc` call with `where`'s keys
    (`Place`: a `folder` too at the root endpoint); `limit` 0 never clips."""
    if limit <= 0 or len(text) <= limit:
        return text
    names = "".join(f'{key}: "{value}", ' for key, value in where.items())
    return (
        f"{text[:limit]}… [clipped: {limit} of {len(text)} characters — ragdown_read_doc "
        f"{{{names}start_line: {start}, end_line: {end}}}]"
    )


def tags_suffix(tags: Sequence[str]) -> str:
    return f" [{' '.join('#' + t for t in tags)}]" if tags else ""


def agent_suffix(created_by: str | None) -> str:
    return f", written by an agent with {created_by}" if created_by else ""


def similarity_text(hit: Hit) -> str:
    """`similarity 0.62`, or `lexical` for a hit found by words alone (no embedder scored the query)."""
    return f"similarity {hit.similarity:.2f}" if hit.has_similarity else "lexical"


def similarity_value(hit: Hit) -> float | None:
    return round(hit.similarity, 4) if hit.has_similarity else None


def hit_header(index: int, hit: Hit, view: PathView = _same) -> str:
    c = hit.chunk
    return (
        f"[{index}] {view(c.path)}:{c.start_line}-{c.end_line} — {c.breadcrumb}{tags_suffix(c.file.tags)} "
        f"({similarity_text(hit)}, changed {day(c.file.mtime_ns)}{agent_suffix(c.file.created_by)})"
    )


def hit_block(index: int, hit: Hit, limit: int, view: PathView = _same, place: Place | None = None) -> str:
    c = hit.chunk
    where = _place(view, place)(c.path)
    return f"{hit_header(index, hit, view)}\n{clip(c.text, limit, where, c.start_line, c.end_line)}"


ORDER_NOTE = (
    "(Hits are ranked by relevance: the query's words and meaning together, with evidence from each section's "
    "page and links. The similarity shown is the cosine of the query and the section alone, so it need not "
    "fall down the list.)"
)


def out_of_order(hits: Sequence[Hit]) -> bool:
    """Whether a hit shows a higher similarity (as printed, 2 decimals) than one ranked above it."""
    lowest: float | None = None
    for hit in hits:
        if not hit.has_similarity:
            continue
        shown = round(hit.similarity, 2)
        if lowest is not None and shown > lowest:
            return True
        lowest = shown if lowest is None else min(lowest, shown)
    return False


def recall_text(hits: Sequence[Hit], limit: int, view: PathView = _same, place: Place | None = None) -> str:
    """The spec's hit blocks; when the shown similarities do not fall down the list, a closing line says why."""
    if not hits:
        return "No matching documents."
    text = "\n\n".join(hit_block(i, hit, limit, view, place) for i, hit in enumerate(hits, 1))
    return f"{text}\n\n{ORDER_NOTE}" if out_of_order(hits) else text


def hit_json(hit: Hit, limit: int, view: PathView = _same, place: Place | None = None) -> dict[str, Any]:
    """A hit as JSON; its `folder` (where `place` gives one) and `path` are what `ragdown_read_doc` takes."""
    c = hit.chunk
    where = _place(view, place)(c.path)
    out: dict[str, Any] = {
        **where,
        "title": c.file.title,
        "heading": c.heading,
        "line_start": c.start_line,
        "line_end": c.end_line,
        "similarity": similarity_value(hit),
        "score": round(hit.score, 5),
        "sources": list(hit.sources),
        "tags": list(c.file.tags),
        "modified": iso(c.file.mtime_ns),
    }
    if c.file.created_by:
        out["created_by"] = c.file.created_by
    out["text"] = clip(c.text, limit, where, c.start_line, c.end_line)
    out["node_id"] = c.node_id  # the section-tree node the hit starts in (ragdown_outline, read_doc node_id)
    return out


def recall_json(hits: Sequence[Hit], limit: int, view: PathView = _same, place: Place | None = None) -> str:
    """Compact JSON, as every non-string tool result is."""
    return json.dumps(
        {"hits": [hit_json(h, limit, view, place) for h in hits]}, ensure_ascii=False, separators=(",", ":")
    )


def cli_line(hit: Hit, view: PathView = _same) -> str:
    """`path:start-end — breadcrumb (similarity 0.62)`: the CLI's one line per hit."""
    c = hit.chunk
    return f"{view(c.path)}:{c.start_line}-{c.end_line} — {c.breadcrumb} ({similarity_text(hit)})"


def web_hit_json(hit: Hit) -> dict[str, Any]:
    """A hit as `/api/search` answers it for the web UI (behaviour spec A12's field names), never clipped."""
    c = hit.chunk
    return {
        "path": c.path,
        "title": c.file.title,
        "heading": c.heading,
        "breadcrumb": c.breadcrumb,
        "start_line": c.start_line,
        "end_line": c.end_line,
        "similarity": similarity_value(hit),
        "text": c.text,
        "tags": list(c.file.tags),
        "mtime_ms": c.file.mtime_ns // 1_000_000,
        "created_by": c.file.created_by,
    }


def log_place(folder: str, docs_path: str) -> dict[str, str]:
    """Where a document is, as the query log names it on every face: its folder ('' for stdio's docs dir)
    and its path in that folder, so a read matches a hit of the same document only (`querylog.summarise`)."""
    return {"folder": folder, "path": docs_path[len(folder) + 1 :] if folder else docs_path}


def log_hits(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    """What the query log keeps of each hit: where it is and how it scored, never its text."""
    return [
        {
            **log_place(h.chunk.folder, h.path),
            "start_line": h.chunk.start_line,
            "end_line": h.chunk.end_line,
            "similarity": similarity_value(h),
            "score": round(h.score, 5),
        }
        for h in hits
    ]
