"""`ragdown_changes`: what changed since a time or a version, from the version history.

Each change is one recorded version, newest first: the document, what happened to it (created, changed,
moved, deleted, restored), who did it (a tool and its session, the web UI, the REST API, an edit made
outside ragdown), its size and how much it grew or shrank, and the headings of the sections it touched
(the lines that differ from the version before, placed in the section tree of the newer one).
"""

from __future__ import annotations

import difflib
import json
from typing import Annotated, Any, Literal

from pydantic import Field

from ragdown.core.paths import normalise_prefix
from ragdown.core.times import iso_seconds, parse_since
from ragdown.documents import decode_text
from ragdown.documents.text import normalize_text, split_lines
from ragdown.documents.tree import heading_tree
from ragdown.history import HistoryStore, Version
from ragdown.tools.base import Annotations, Args, ToolSpec
from ragdown.tools.context import ToolContext
from ragdown.tools.versions import history_of, who_text

CHANGES_NAME = "ragdown_changes"
DEFAULT_SINCE = "7d"
SECTIONS_SHOWN = 8
SECTIONS_MAX_BYTES = 1 << 20  # versions larger than this are listed without the sections they touched
USER_WHO = frozenset({"web", "external"})  # a person: the web UI, or an editor outside ragdown
NOT_AGENT_WHO = USER_WHO | {"rest", "before", "restore"}


class ChangesArgs(Args):
    since: Annotated[
        str | None,
        Field(
            max_length=64,
            description="A span back from now (30m, 2h, 7d, 1w) or an ISO date or time; default 7d.",
        ),
    ] = None
    after_version: Annotated[
        int | None,
        Field(ge=0, description="Only changes recorded after this version id (a change's `id`)."),
    ] = None
    path_prefix: Annotated[
        str | None, Field(max_length=1024, description="Only documents under this folder.")
    ] = None
    who: Annotated[
        str | None,
        Field(
            max_length=256,
            description="agent, user (web UI or an outside edit), web, rest, external, a tool name, or a session.",
        ),
    ] = None
    limit: Annotated[
        int, Field(ge=1, le=200, description="Changes to return, newest first (default 50).")
    ] = 50
    format: Literal["text", "json"] = "text"


def matches_who(v: Version, who: str | None) -> bool:
    if not who:
        return True
    if who == "agent":
        return v.who not in NOT_AGENT_WHO
    if who == "user":
        return v.who in USER_WHO
    return who in (v.who, v.who.split(":", 1)[0], v.session)


def _previous(store: HistoryStore, v: Version) -> Version | None:
    return store.version(v.doc_id, v.version - 1) if v.version > 1 else None


def touched_sections(before: bytes | None, after: bytes, path: str) -> list[str]:
    """The headings of the sections of `after` whose lines differ from `before` (None: every section)."""
    new_text = normalize_text(decode_text(after)[0])
    new_lines = split_lines(new_text)
    old_lines = split_lines(normalize_text(decode_text(before)[0])) if before is not None else []
    tree = heading_tree(new_text, path)
    lines: list[int] = []
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(
        None, old_lines, new_lines, autojunk=False
    ).get_opcodes():
        if tag == "equal":
            continue
        lines.extend(range(j1 + 1, j2 + 1) if j2 > j1 else [max(1, min(j1, len(new_lines)))])
    titles: list[str] = []
    for line in lines:
        node = tree.deepest_at(line)
        title = node.title.strip() or tree.title
        if title and title not in titles:
            titles.append(title)
            if len(titles) == SECTIONS_SHOWN:
                break
    return titles


def change_json(ctx: ToolContext, store: HistoryStore, v: Version) -> dict[str, Any]:
    previous = _previous(store, v)
    out: dict[str, Any] = {
        "id": v.id,
        "at": iso_seconds(v.at),
        "path": ctx.scope.view(v.path),
        "event": v.event,
        "who": v.who,
        "version": v.version,
        "size": v.size,
        "delta": v.size - (previous.size if previous is not None else 0),
        "lines": v.lines,
    }
    if v.session:
        out["session"] = v.session
    if v.event == "moved" and previous is not None and previous.path != v.path:
        out["moved_from"] = ctx.scope.view(previous.path)
    if v.event in ("created", "changed", "restored") and v.size <= SECTIONS_MAX_BYTES:
        before = (
            store.data(previous) if previous is not None and previous.size <= SECTIONS_MAX_BYTES else None
        )
        if previous is None or before is not None:
            out["sections"] = touched_sections(before, store.data(v), v.path)
    return out


def _line(c: dict[str, Any], v: Version) -> str:
    delta = f"{c['delta']:+,} bytes" if c["event"] != "deleted" else "last version"
    where = f"{c['moved_from']} → {c['path']}" if "moved_from" in c else c["path"]
    text = f"{c['at']} {c['event']} {where} by {who_text(v)}: v{c['version']}, {c['size']:,} bytes ({delta})"
    if c.get("sections"):
        text += "; sections: " + "; ".join(c["sections"])
    return text


def changes_text(ctx: ToolContext, a: ChangesArgs) -> str:
    store = history_of(ctx)
    since_raw = a.since or (DEFAULT_SINCE if a.after_version is None else None)
    since = parse_since(since_raw) if since_raw else 0.0
    prefix = ctx.scope.docs_path(normalise_prefix(a.path_prefix)) if a.path_prefix else ctx.scope.prefix
    after_id = a.after_version or 0
    # Filtered in Python too (the scope's folders, who): read larger pages until `limit` pass or none are left.
    batch = a.limit * 4
    while True:
        candidates = store.recorded(since, after_id=after_id, prefix=prefix, limit=batch)
        found = [v for v in candidates if ctx.scope.contains(v.path) and matches_who(v, a.who)]
        if len(found) >= a.limit or len(candidates) < batch:
            break
        batch *= 4
    more = len(found) > a.limit
    found = found[: a.limit]
    changes = [change_json(ctx, store, v) for v in found]
    if a.format == "json":
        body = {
            "since": iso_seconds(since) if since_raw else None,
            "after_version": a.after_version,
            "changes": changes,
            "more": more,
        }
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    window = f"since {iso_seconds(since)}" if since_raw else f"after version id {a.after_version}"
    if not changes:
        return f"No changes {window}."
    head = f"{len(changes)} change{'s' if len(changes) != 1 else ''} {window}, newest first:"
    tail = "Compare one with ragdown_diff (path, from=version-1, to=version); the newest id is " + str(
        changes[0]["id"]
    )
    return "\n".join([head, *(_line(c, v) for c, v in zip(changes, found, strict=True)), tail + "."])


async def changes(ctx: ToolContext, a: ChangesArgs) -> str:
    await ctx.ready()
    return await ctx.run(changes_text, ctx, a)


CHANGES = ToolSpec(
    name=CHANGES_NAME,
    description=(
        "What changed since a time (since: 2h, 7d, an ISO date; default 7d) or a version id (after_version): "
        "documents created, changed, moved, deleted or restored, newest first, with who (a tool and session, "
        "the web UI, an edit outside), size change and the sections touched. Filters: path_prefix, who. "
        "format json for structure."
    ),
    args=ChangesArgs,
    annotations=Annotations(read_only=True),
    handler=changes,
)
