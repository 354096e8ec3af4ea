"""Hit formatting: one formatter per output shape of the behaviour spec (A3), shared by MCP, HTTP and CLI."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from ragdown.search.hybrid import Hit

PathView = Callable[[str], str]


def _same(path: str) -> str:
    return path


def day(mtime_ns: int) -> str:
    """The UTC day of a file's mtime, `YYYY-MM-DD`."""
    return datetime.fromtimestamp(mtime_ns / 1e9, tz=UTC).strftime("%Y-%m-%d")


def iso(mtime_ns: int) -> str:
    """An ISO 8601 UTC timestamp with milliseconds, like JavaScript's `toISOString()`."""
    stamp = datetime.fromtimestamp(mtime_ns / 1e9, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def clip(text: str, limit: int, path: str, start: int, end: int) -> str:
    """The first `limit` characters and a pointer to the rest; `limit` 0 never clips."""
    if limit <= 0 or len(text) <= limit:
        return text
    return (
        f"{text[:limit]}… [clipped: {limit} of {len(text)} characters — ragdown_read_doc "
        f'{{path: "{path}", start_line: {start}, end_line: {end}}}]'
    )


def tags_suffix(tags: Sequence[str]) -> str:
    return f" [{' '.join('#' + t for t in tags)}]" if tags else ""


def agent_suffix(created_by: str | None) -> str:
    return f", written by an agent with {created_by}" if created_by else ""


def hit_header(index: int, hit: Hit, view: PathView = _same) -> str:
    c = hit.chunk
    return (
        f"[{index}] {view(c.path)}:{c.start_line}-{c.end_line} — {c.breadcrumb}{tags_suffix(c.file.tags)} "
        f"(similarity {hit.similarity:.2f}, changed {day(c.file.mtime_ns)}{agent_suffix(c.file.created_by)})"
    )


def hit_block(index: int, hit: Hit, limit: int, view: PathView = _same) -> str:
    c = hit.chunk
    return f"{hit_header(index, hit, view)}\n{clip(c.text, limit, view(c.path), c.start_line, c.end_line)}"


def recall_text(hits: Sequence[Hit], limit: int, view: PathView = _same) -> str:
    if not hits:
        return "No matching documents."
    return "\n\n".join(hit_block(i, hit, limit, view) for i, hit in enumerate(hits, 1))


def hit_json(hit: Hit, limit: int, view: PathView = _same) -> dict[str, Any]:
    c = hit.chunk
    out: dict[str, Any] = {
        "path": view(c.path),
        "title": c.file.title,
        "heading": c.heading,
        "line_start": c.start_line,
        "line_end": c.end_line,
        "similarity": round(hit.similarity, 4),
        "score": round(hit.score, 5),
        "sources": list(hit.sources),
        "tags": list(c.file.tags),
        "modified": iso(c.file.mtime_ns),
    }
    if c.file.created_by:
        out["created_by"] = c.file.created_by
    out["text"] = clip(c.text, limit, view(c.path), c.start_line, c.end_line)
    return out


def recall_json(hits: Sequence[Hit], limit: int, view: PathView = _same) -> str:
    """Compact JSON, as every non-string tool result is."""
    return json.dumps(
        {"hits": [hit_json(h, limit, view) for h in hits]}, ensure_ascii=False, separators=(",", ":")
    )


def cli_line(hit: Hit, view: PathView = _same) -> str:
    """`path:start-end — breadcrumb (similarity 0.00)`: the CLI's one line per hit."""
    c = hit.chunk
    return f"{view(c.path)}:{c.start_line}-{c.end_line} — {c.breadcrumb} (similarity {hit.similarity:.2f})"
