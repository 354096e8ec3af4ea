"""`ragdown_related`: a document's or a section's neighbourhood, each neighbour with why it is related.

Links out and backlinks (with the linking line) come from the index's link table (`search/graph.py`), notes
sharing its tags from the files' tags, the sections nearest in meaning from its own chunk vectors (their
mean, searched against the dense index, itself excluded). Depth 2 adds the links and backlinks of each
linked note. Nothing reads a file: the answer costs a few index look-ups, whatever the folder's size.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field

from ragdown.core.errors import bad_request, not_found
from ragdown.documents.model import HEADING_SEPARATOR
from ragdown.search import graph
from ragdown.search.outline import find_node
from ragdown.storage.backend import IndexStore
from ragdown.storage.records import FileRecord
from ragdown.tools.base import Annotations, Args, ToolSpec
from ragdown.tools.context import ToolContext
from ragdown.tools.read import locate_document

RELATED_NAME = "ragdown_related"
TAG_SCAN = 500  # documents read per shared tag
TEXT_CLIP = 160
SIMILAR_MIN = 0.25  # a cosine below this is noise, not a neighbour


class RelatedArgs(Args):
    path: Annotated[str, Field(min_length=1, max_length=1024, description="The document (path or name).")]
    node_id: Annotated[
        str | None, Field(max_length=64, description="A section, by its id from ragdown_outline.")
    ] = None
    heading: Annotated[str | None, Field(max_length=512, description="A section, by its heading.")] = None
    depth: Annotated[int, Field(ge=1, le=2, description="2: links of links too.")] = 1
    budget: Annotated[int, Field(ge=1, le=100, description="Most neighbours (default 20).")] = 20
    max_chars: Annotated[int, Field(ge=200, le=50_000, description="Most characters of the answer.")] = 8000
    format: Literal["text", "json"] = "text"


@dataclass
class Item:
    path: str  # docs-relative
    why: str
    start: int = 0  # the cited lines (0: the whole document)
    end: int = 0
    text: str = ""
    score: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TEXT_CLIP else text[: TEXT_CLIP - 1] + "…"


@dataclass(frozen=True)
class Section:
    node_id: str
    title: str
    start_line: int
    end_line: int
    level: int = 1


def _section(store: IndexStore, record: FileRecord, a: RelatedArgs, display: str) -> Section | None:
    """The section `node_id` (from the outline) or `heading` (from the chunks' heading paths) names."""
    if a.node_id is None and a.heading is None:
        return None
    if a.node_id is not None:
        tree = store.tree_of(record.path)
        if tree is None:
            raise not_found(f"{display} has no outline")
        node = find_node(tree, a.node_id, display)
        return Section(node.node_id, node.title, node.start_line, node.end_line, node.level)
    wanted = (a.heading or "").strip().lstrip("#").strip().lower()
    chunks = store.chunks_by_id([cid for cid, _ in store.chunk_ids_of_files([record.id])]).values()
    under = [
        c for c in chunks if wanted in (part.strip().lower() for part in c.heading.split(HEADING_SEPARATOR))
    ]
    if not wanted or not under:
        raise not_found(f"no heading {a.heading!r} in {display} (ragdown_outline lists its sections)")
    first = min(under, key=lambda c: c.start_line)
    title = next(
        part.strip() for part in first.heading.split(HEADING_SEPARATOR) if part.strip().lower() == wanted
    )
    return Section(first.node_id, title, first.start_line, max(c.end_line for c in under))


def _links(ctx: ToolContext, store: IndexStore, path: str, section: Section | None) -> list[Item]:
    out: list[Item] = []
    seen: set[str] = set()
    for edge in graph.links_out(store, ctx.scope.folder, path):
        if section is not None and not section.start_line <= edge.line <= section.end_line:
            continue
        if edge.target == path or edge.target in seen or not ctx.scope.contains(edge.target):
            continue
        seen.add(edge.target)
        out.append(Item(edge.target, "link", text=f"line {edge.line}: {_clip(edge.text)}"))
    return out


def _backlinks(
    ctx: ToolContext, store: IndexStore, record: FileRecord, section: Section | None, why: str = "backlink"
) -> list[Item]:
    out: list[Item] = []
    seen: set[str] = set()
    title = section.title.strip().lower() if section is not None and section.level else None
    for edge in graph.backlinks(store, ctx.scope.folder, record.path, record.aliases):
        if title is not None and edge.anchor is not None and edge.anchor.strip().lower() != title:
            continue  # a link to another section of the document
        if edge.source in seen or not ctx.scope.contains(edge.source):
            continue
        seen.add(edge.source)
        out.append(Item(edge.source, why, edge.line, edge.line, _clip(edge.text)))
    return out


def _tagged(ctx: ToolContext, store: IndexStore, record: FileRecord) -> list[Item]:
    shared: dict[str, list[str]] = {}
    tagged = graph.scope_files(store, ctx.scope.file_filter()).tagged
    for tag in record.tags:
        for path in tagged.get(tag, ())[:TAG_SCAN]:
            if path != record.path:
                shared.setdefault(path, []).append(tag)
    ranked = sorted(shared.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [Item(p, "tag: " + ", ".join(tags), extra={"shared_tags": len(tags)}) for p, tags in ranked]


def _similar(
    ctx: ToolContext, store: IndexStore, record: FileRecord, section: Section | None, want: int
) -> list[Item]:
    matrix = ctx.engine.require_searcher().matrix
    if matrix is None:
        return []
    own = [cid for cid, _fid in store.chunk_ids_of_files([record.id])]
    if section is not None:
        chunks = store.chunks_by_id(own)
        own = [
            cid
            for cid, c in chunks.items()
            if c.start_line <= section.end_line and c.end_line >= section.start_line
        ]
    vector = matrix.mean_vector(own)
    if vector is None:
        return []
    exclude = set(own)
    hits = [
        (cid, s)
        for cid, s in matrix.search(vector, want * 3 + len(own), ctx.scope.file_filter())
        if cid not in exclude
    ]
    records = store.chunks_by_id([cid for cid, _ in hits])
    out: list[Item] = []
    seen: set[str] = set()
    for cid, score in hits:
        c = records.get(cid)
        if score < SIMILAR_MIN:
            break
        if c is None or c.path in seen or (section is None and c.path == record.path):
            continue
        seen.add(c.path)
        out.append(
            Item(c.path, f"similar {score:.2f}", c.start_line, c.end_line, c.breadcrumb, round(score, 3))
        )
        if len(out) == want:
            break
    return out


def _second(ctx: ToolContext, store: IndexStore, first: list[Item], budget: int) -> list[Item]:
    out: list[Item] = []
    known = graph.scope_files(store, ctx.scope.file_filter()).by_path
    for near in first[:budget]:
        near_record = known.get(near.path) or store.get_file(near.path)
        if near_record is None:
            continue
        via = ctx.scope.view(near.path)
        for item in _links(ctx, store, near.path, None) + _backlinks(ctx, store, near_record, None):
            item.why = f"{item.why} of {via}"
            out.append(item)
    return out


def _merge(groups: list[list[Item]], start: str, budget: int) -> list[Item]:
    """Round robin over the groups, each path once: a path found again adds its reason to the first."""
    out: list[Item] = []
    found: dict[str, Item] = {}
    queues = [list(g) for g in groups]
    while any(queues):
        for queue in queues:
            while queue:
                item = queue.pop(0)
                if item.path == start:
                    continue
                first = found.get(item.path)
                if first is not None:
                    if item.why not in first.why:
                        first.why += f"; {item.why}"
                    continue
                if len(out) < budget:
                    found[item.path] = item
                    out.append(item)
                break
    return out


def related_items(ctx: ToolContext, a: RelatedArgs) -> tuple[str, Section | None, list[Item], bool]:
    store = ctx.store()
    path, _anchor, _ = locate_document(ctx, store, a.path)
    record = store.get_file(path)
    if record is None:
        raise not_found(f"no such document: {a.path} (not indexed)")
    if a.node_id is not None and a.heading is not None:
        raise bad_request("give node_id or heading, not both")
    section = _section(store, record, a, ctx.scope.view(path))
    links = _links(ctx, store, path, section)
    backs = _backlinks(ctx, store, record, section)
    groups = [links, backs, _tagged(ctx, store, record), _similar(ctx, store, record, section, a.budget)]
    if a.depth == 2:
        groups.append(_second(ctx, store, links + backs, a.budget))
    total = {i.path for g in groups for i in g} - {path}
    items = _merge(groups, path, a.budget)
    return path, section, items, len(total) > len({i.path for i in items})


def _cite(ctx: ToolContext, item: Item) -> str:
    where = ctx.scope.view(item.path)
    if item.start:
        where += f":{item.start}" if item.start == item.end else f":{item.start}-{item.end}"
    return where


def related_text(ctx: ToolContext, a: RelatedArgs) -> str:
    path, section, items, more = related_items(ctx, a)
    store = ctx.store()
    known = graph.scope_files(store, ctx.scope.file_filter()).by_path
    what = ctx.scope.view(path)
    if section is not None:
        what += f":{section.start_line}-{section.end_line} ({section.title.strip() or 'preface'})"
    if a.format == "json":
        body: dict[str, Any] = {
            "path": ctx.scope.view(path),
            "section": None
            if section is None
            else {
                "node_id": section.node_id,
                "title": section.title,
                "lines": [section.start_line, section.end_line],
            },
            "related": [],
            "more": more,
        }
        size = 0
        for item in items:
            f = known.get(item.path) or store.get_file(item.path)
            entry: dict[str, Any] = {
                "path": ctx.scope.view(item.path),
                "why": item.why,
                "cite": _cite(ctx, item),
            }
            if f is not None:
                entry["title"] = f.title
            if item.text:
                entry["text"] = item.text
            if item.score is not None:
                entry["score"] = item.score
            entry.update(item.extra)
            size += len(json.dumps(entry, ensure_ascii=False))
            if size > a.max_chars:
                body["more"] = True
                break
            body["related"].append(entry)
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    if not items:
        return f"Nothing related to {what} found (no links, backlinks, shared tags or similar sections)."
    lines = [f"Related to {what}:"]
    size = len(lines[0])
    for item in items:
        f = known.get(item.path) or store.get_file(item.path)
        line = f"{_cite(ctx, item)} [{item.why}]"
        if f is not None and f.title:
            line += f" {f.title}"
        if item.text:
            line += f" — {item.text}"
        size += len(line) + 1
        if size > a.max_chars:
            more = True
            break
        lines.append(line)
    if more:
        lines.append("(more: raise budget or max_chars)")
    return "\n".join(lines)


async def related(ctx: ToolContext, a: RelatedArgs) -> str:
    await ctx.ready()
    return await ctx.run(related_text, ctx, a)


RELATED = ToolSpec(
    name=RELATED_NAME,
    description=(
        "A note's neighbourhood: links out, backlinks, notes sharing tags and the most similar sections, each "
        "with why (link, backlink, tag: x, similar 0.83). A section by node_id or heading; depth 2 adds links "
        "of links; budget caps items."
    ),
    args=RelatedArgs,
    annotations=Annotations(read_only=True),
    handler=related,
)
