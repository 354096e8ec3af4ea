"""The read tools: recall, read_doc, backlinks, list, stats."""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from ragdown.core.atomic import SHORT_HASH, sha256_hex
from ragdown.core.config import SEARCH_TOP_K, bounds
from ragdown.core.errors import Refusal, bad_request, not_found
from ragdown.core.paths import is_document, normalise_prefix, printable_name, split_safe
from ragdown.core.times import iso_seconds, parse_since
from ragdown.documents import LinkResolver, decode_text, find_links, heading_range
from ragdown.documents.footnotes import Footnote, find_footnote, footnote_label, footnotes, without_footnotes
from ragdown.documents.tree import build_tree
from ragdown.search import graph
from ragdown.search.format import (
    agent_suffix,
    day,
    log_hits,
    log_place,
    recall_json,
    recall_text,
    tags_suffix,
)
from ragdown.search.hybrid import Hit
from ragdown.search.linking import folder_resolver
from ragdown.search.outline import find_node
from ragdown.search.tags import normalise_tag
from ragdown.storage.backend import IndexStore
from ragdown.storage.records import FileRecord
from ragdown.tools.base import Annotations, Args, ToolSpec
from ragdown.tools.context import ToolContext
from ragdown.tools.versions import followed, trashed, version_bytes, who_text
from ragdown.vault.sandbox import is_plain_file, read_plain

READ_ONLY = Annotations(read_only=True)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
BACKLINK_TEXT_LIMIT = 240


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def file_lines(text: str) -> list[str]:
    """The lines of a file as editors count them: a final line break does not start another line."""
    if text.endswith(("\r\n", "\n", "\r")):
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
    return _LINE_BREAK.split(text)


# -- ragdown_recall -------------------------------------------------------------------------------


class RecallArgs(Args):
    query: Annotated[str, Field(min_length=1, description="What to look for, in words or exact names.")]
    top_k: Annotated[
        int, Field(ge=SEARCH_TOP_K[0], le=SEARCH_TOP_K[1], description="Hits to return (default 8).")
    ] = 8
    path_prefix: Annotated[str | None, Field(description="Only documents under this folder.")] = None
    tag: Annotated[str | None, Field(description="Only documents with this tag or one nested under it.")] = (
        None
    )
    written_by: Literal["agent", "user"] | None = None
    format: Literal["text", "json"] = "text"
    max_chars: Annotated[
        int | None,
        Field(**bounds("text_limit"), description="Characters per hit before clipping; 0 never clips."),
    ] = None

    @field_validator("query")
    @classmethod
    def _not_blank(cls, query: str) -> str:
        if not query.strip():
            raise ValueError("is blank: give words or a name to look for")
        return query


async def recall_hits(ctx: ToolContext, a: RecallArgs) -> list[Hit]:
    """The hits of a recall in `ctx.scope` (one folder, or several as one: `Scope.over`), logged."""
    await ctx.ready()
    flt = ctx.scope.file_filter(
        normalise_prefix(a.path_prefix or ""),
        tag=normalise_tag(a.tag) if a.tag else None,
        written_by=a.written_by,
    )
    rt = ctx.runtime
    opts = rt.search_options(a.top_k)
    started = time.perf_counter()
    hits = await ctx.run(ctx.engine.search, a.query, flt, opts)
    rt.log(
        "recall",
        scope=str(ctx.scope.dir),
        query=a.query,
        filters={"path_prefix": a.path_prefix, "tag": a.tag, "written_by": a.written_by, "top_k": a.top_k},
        hits=log_hits(hits),
        ms=round((time.perf_counter() - started) * 1000, 1),
    )
    return hits


def recall_limit(ctx: ToolContext, a: RecallArgs) -> int:
    """Characters per hit: the call's `max_chars`, else `RAGDOWN_TEXT_LIMIT` (0 never clips)."""
    return a.max_chars if a.max_chars is not None else ctx.runtime.text_limit


async def recall(ctx: ToolContext, a: RecallArgs) -> str:
    hits = await recall_hits(ctx, a)
    limit = recall_limit(ctx, a)
    if a.format == "json":
        return recall_json(hits, limit, ctx.scope.view, ctx.scope.place)
    return recall_text(hits, limit, ctx.scope.view, ctx.scope.place)


RECALL = ToolSpec(
    name="ragdown_recall",
    description=(
        "Search the user's Markdown documents (hybrid: meaning + exact words). Call it before answering "
        "anything the documents might cover. Each hit: path:start-end, heading breadcrumb, tags, cosine "
        "similarity, the day the file changed, and whether an agent wrote it, then the section's text. "
        "Read around a hit with ragdown_read_doc. Filters: path_prefix (a folder), tag (nested tags "
        "match), written_by agent|user. format json gives structured hits."
    ),
    args=RecallArgs,
    annotations=READ_ONLY,
    handler=recall,
)


# -- ragdown_read_doc -----------------------------------------------------------------------------


MAX_PATHS = 10


class ReadDocArgs(Args):
    path: Annotated[
        str | None,
        Field(
            min_length=1, description="A path, or a wikilink target: Note, Note#Heading, sub/Note, an alias."
        ),
    ] = None
    paths: Annotated[
        list[Annotated[str, Field(min_length=1)]] | None,
        Field(max_length=MAX_PATHS, description="Up to 10 documents, read in turn (instead of path)."),
    ] = None
    version: Annotated[int | None, Field(ge=1, description="That version's text (ragdown_history).")] = None
    start_line: Annotated[int | None, Field(ge=1)] = None
    end_line: Annotated[int | None, Field(ge=1)] = None
    node_id: Annotated[
        str | None,
        Field(max_length=64, description="A node of ragdown_outline: its lines, subsections included."),
    ] = None
    line_numbers: Annotated[
        bool, Field(description="Prefix each line with its number (`12│ `) for citing.")
    ] = False
    footnote: Annotated[
        str | None, Field(max_length=128, description='One footnote: "1" for [^1], "note" for [^note].')
    ] = None
    footnotes: Annotated[
        Literal["include", "exclude"], Field(description="exclude: read without the footnote definitions.")
    ] = "include"


LINE_MARK = "│ "


def numbered(lines: Sequence[str], first: int) -> list[str]:
    """Lines prefixed with their 1-based numbers, right-aligned: `  9│ text`, ` 10│ text`."""
    width = len(str(first + len(lines) - 1))
    return [f"{n:>{width}}{LINE_MARK}{line}" for n, line in enumerate(lines, first)]


def _no_such(raw: str) -> Refusal:
    return not_found(
        f"no such document: {printable_name(raw)} (not a path, and no document by that name or alias)"
    )


def scope_resolver(ctx: ToolContext, store: IndexStore) -> LinkResolver:
    """Links resolve among every document of the scope's folder (not just the scope), and its attachments."""
    return folder_resolver(store, ctx.scope.folder, ctx.scope.folder_dir)


def locate_document(ctx: ToolContext, store: IndexStore, raw: str) -> tuple[str, str | None, bool]:
    """The docs-relative path `raw` names (a path or a wikilink target), its anchor, and whether it was a link."""
    scope = ctx.scope
    try:
        parts = split_safe(raw.split("#", 1)[0] if "#" in raw and not raw.startswith("#") else raw)
    except Refusal as err:
        if "outside" in err.message:
            raise bad_request(f"{raw!r} is outside the docs folder") from None
        parts = []
    if parts:
        rel = "/".join(parts)
        if is_document(rel) and is_plain_file(scope.dir, rel):
            anchor = raw.split("#", 1)[1] if "#" in raw else None
            return scope.docs_path(rel), anchor, False
    resolver = scope_resolver(ctx, store)
    from_path = scope.folder_path(scope.docs_path("_")) if scope.sub else None
    resolved = resolver.resolve(raw, from_path)
    if resolved is None or resolved.path is None or not is_document(resolved.path):
        raise _no_such(raw)
    docs_path = scope.from_folder_path(resolved.path)
    if not scope.contains(docs_path):
        raise _no_such(raw)
    return docs_path, resolved.anchor, True


def read_doc_text(
    ctx: ToolContext,
    raw: str,
    start: int | None,
    end: int | None,
    *,
    node_id: str | None = None,
    line_numbers: bool = False,
    version: int | None = None,
    footnote: str | None = None,
    exclude_footnotes: bool = False,
) -> str:
    store = ctx.store()
    notes: list[str] = []
    if version is not None:  # from the history: the document may be deleted, or elsewhere now
        f = followed(ctx, raw)
        shown_version = f.version(version, ctx.scope.view(f.docs_path))
        docs_path, anchor, via_link = f.docs_path, None, False
        data = version_bytes(ctx, shown_version)
        notes.append(
            f"version {version} of {len(f.versions)}, {iso_seconds(shown_version.at)}, by {who_text(shown_version)}"
        )
    else:
        docs_path, anchor, via_link = locate_document(ctx, store, raw)
        found = read_plain(ctx.docs_root, docs_path)
        if found is None:  # gone, or replaced by a symlink, since it was indexed
            raise _no_such(raw)
        data = found
    text, _ = decode_text(data)
    lines = file_lines(text)
    total = len(lines)
    if footnote is not None:
        return footnote_text(ctx, store, docs_path, text, footnote, sha256_hex(data))
    if node_id is not None:
        if start is not None or end is not None:
            raise bad_request("give node_id or start_line/end_line, not both")
        # The tree of the text just read, so the node's lines are this text's even if the index lags behind.
        node = find_node(build_tree(text, docs_path), node_id, ctx.scope.view(docs_path))
        start, end = node.start_line, node.end_line
    elif start is None and end is None and anchor:
        span = heading_range(lines, anchor)
        if span is not None:
            start, end = span
    first = min(max(start or 1, 1), total)
    last = min(max(end or total, 1), total)
    if first > last:
        raise bad_request(f"start_line {start} is after end_line {end}")
    notes.insert(0, f"hash {sha256_hex(data)[:SHORT_HASH]}")
    if via_link:
        notes.append(f'resolved from "{raw}"')
    superseding = store.superseded_by().get(docs_path)
    if superseding:
        notes.append("superseded by " + ", ".join(ctx.scope.view(p) for p in superseding))
    if exclude_footnotes:
        notes.append("footnote definitions left out")
        kept = [(n, line) for n, line in without_footnotes(lines, footnotes(text)) if first <= n <= last]
        body = [f"{n}{LINE_MARK}{line}" for n, line in kept] if line_numbers else [line for _, line in kept]
    else:
        shown = lines[first - 1 : last]
        body = numbered(shown, first) if line_numbers else shown
    header = f"{ctx.scope.view(docs_path)}:{first}-{last} of {total} ({', '.join(notes)})"
    # The text as it is in the file: a read that reaches its end keeps the file's final line break.
    verbatim = not (line_numbers or exclude_footnotes)
    tail = "\n" if verbatim and last == total and body and text.endswith(("\n", "\r")) else ""
    return header + "\n" + "\n".join(body) + tail


def footnote_named(notes: list[Footnote], label: str, shown: str) -> Footnote:
    """The footnote `label` names in the document shown as `shown`, or a refusal naming the labels it has."""
    note = find_footnote(notes, label)
    if note is None:
        have = ", ".join(n.label for n in notes) or "none"
        raise not_found(f"{shown} has no footnote [^{footnote_label(label)}]: its footnotes are {have}")
    return note


def footnote_text(
    ctx: ToolContext, store: IndexStore, docs_path: str, text: str, label: str, digest: str
) -> str:
    """One footnote's text and where its links go, or a refusal naming the labels the document has."""
    shown = ctx.scope.view(docs_path)
    note = footnote_named(footnotes(text), label, shown)
    resolver = scope_resolver(ctx, store)
    from_path = ctx.scope.folder_path(docs_path)
    targets = []
    for link in find_links(note.text):
        found = resolver.resolve_link(link, from_path)
        where = ctx.scope.view(ctx.scope.from_folder_path(found.path)) if found else "(nothing: missing)"
        targets.append(f"- {link.raw if link.kind == 'wiki' else link.target} → {where}")
    targets += [f"- {url} → (on the web)" for url in note.urls]
    header = (
        f"{shown}:{note.start_line}-{note.end_line} (hash {digest[:SHORT_HASH]}, footnote [^{note.label}])"
    )
    links = "\nlinks:\n" + "\n".join(targets) if targets else ""
    return f"{header}\n{note.text}{links}"


def read_many(ctx: ToolContext, a: ReadDocArgs) -> str:
    """Each of `paths` in turn, whole; a path that cannot be read says why without failing the others."""
    assert a.paths is not None
    parts = []
    for raw in a.paths:
        try:
            # One blank line between documents, whatever each file's last line break.
            parts.append(read_doc_text(ctx, raw, None, None, line_numbers=a.line_numbers).rstrip("\n"))
        except Refusal as err:
            parts.append(f"{raw}: error: {err.message}")
    return "\n\n".join(parts)


async def read_doc(ctx: ToolContext, a: ReadDocArgs) -> str:
    await ctx.ready()
    if (a.path is None) == (a.paths is None):
        raise bad_request("give path (one document) or paths (up to 10), not both and not neither")
    if a.paths is not None:
        if a.start_line or a.end_line or a.node_id or a.version:
            raise bad_request(
                "paths reads whole documents: start_line, end_line, node_id and version go with path"
            )
        text = await ctx.run(read_many, ctx, a)
        for raw in a.paths:
            log_read(ctx, raw, raw)
        return text
    assert a.path is not None
    text = await ctx.run(
        functools.partial(
            read_doc_text,
            node_id=a.node_id,
            line_numbers=a.line_numbers,
            version=a.version,
            footnote=a.footnote,
            exclude_footnotes=a.footnotes == "exclude",
        ),
        ctx,
        a.path,
        a.start_line,
        a.end_line,
    )
    log_read(ctx, text.split(":", 1)[0], a.path)
    return text


def log_read(ctx: ToolContext, shown: str, raw: str) -> None:
    """A read in the query log, named as its hits are (`log_place`: folder and the path in it)."""
    place = log_place(ctx.scope.folder, ctx.scope.docs_path(shown))
    ctx.runtime.log("read", scope=str(ctx.scope.dir), **place, raw=raw)


READ_DOC = ToolSpec(
    name="ragdown_read_doc",
    description=(
        "Read a document, or lines start_line-end_line of it, or one node of ragdown_outline (node_id), "
        "straight from disk, never clipped; version reads an older one (ragdown_history); paths reads up to "
        "10 in turn. path may be a wikilink target (Note, Note#Heading, an alias). line_numbers prefixes "
        "`12│ ` for citing [path, L12-20]. The first line is `path:start-end of total (hash h)`; pass that "
        "hash as base_hash to change the file."
    ),
    args=ReadDocArgs,
    annotations=READ_ONLY,
    handler=read_doc,
)


# -- ragdown_backlinks ----------------------------------------------------------------------------


class BacklinksArgs(Args):
    path: Annotated[str, Field(min_length=1, description="The document linked to.")]


def _clip_line(text: str) -> str:
    text = text.strip()
    return text if len(text) <= BACKLINK_TEXT_LIMIT else text[: BACKLINK_TEXT_LIMIT - 1] + "…"


def backlinks_of(ctx: ToolContext, raw: str) -> dict[str, Any]:
    store = ctx.store()
    scope = ctx.scope
    try:
        parts = split_safe(raw)
    except Refusal as err:
        if "outside" in err.message:
            raise bad_request(f"{raw!r} is outside the docs folder") from None
        raise
    target = scope.docs_path("/".join(parts))
    record = store.get_file(target)
    if record is None:
        raise not_found(f"no such document: {raw}")
    found: list[dict[str, Any]] = []
    by_source: dict[str, dict[str, Any]] = {}
    for edge in graph.backlinks(store, scope.folder, target, record.aliases):
        if not scope.contains(edge.source):
            continue
        entry = by_source.get(edge.source)
        if entry is None:
            source = store.get_file(edge.source)
            entry = {"path": scope.view(edge.source), "title": source.title if source else "", "lines": []}
            by_source[edge.source] = entry
            found.append(entry)
        if all(seen["line"] != edge.line for seen in entry["lines"]):
            entry["lines"].append({"line": edge.line, "text": _clip_line(edge.text)})
    return {"path": scope.view(target), "backlinks": found}


async def backlinks(ctx: ToolContext, a: BacklinksArgs) -> str:
    await ctx.ready()
    return compact(await ctx.run(backlinks_of, ctx, a.path))


BACKLINKS = ToolSpec(
    name="ragdown_backlinks",
    description=(
        "The documents that link to `path` (by wikilink, alias or relative Markdown link), with each "
        "linking line. Links inside code do not count."
    ),
    args=BacklinksArgs,
    annotations=READ_ONLY,
    handler=backlinks,
)


# -- ragdown_list ---------------------------------------------------------------------------------


class ListArgs(Args):
    path_prefix: str | None = None
    tag: str | None = None
    written_by: Literal["agent", "user"] | None = None
    session_id: Annotated[str | None, Field(description="Only documents this session wrote.")] = None
    sort: Literal["path", "recent"] = "path"
    limit: Annotated[int, Field(ge=1, le=1000)] = 100
    since: Annotated[
        str | None, Field(max_length=64, description="Only documents changed since: 2h, 3d, or an ISO time.")
    ] = None
    deleted: Annotated[
        bool, Field(description="List the trash instead: deleted documents ragdown_restore can bring back.")
    ] = False


def list_line(ctx: ToolContext, f: FileRecord, superseded: dict[str, list[str]]) -> str:
    extras = [f"changed {day(f.mtime_ns)}"]
    suffix = agent_suffix(f.created_by)
    if suffix:
        extras.append(suffix[2:])
    if f.session:
        extras.append(f"session {f.session}")
    if f.aliases:
        extras.append("aliases " + ", ".join(f.aliases))
    if f.path in superseded:
        extras.append("superseded by " + ", ".join(ctx.scope.view(p) for p in superseded[f.path]))
    line = f"{ctx.scope.view(f.path)} — {f.title}{tags_suffix(f.tags)} ({', '.join(extras)})"
    return f"{line}: {f.description}" if f.description else line


def trash_documents(ctx: ToolContext, a: ListArgs) -> str:
    prefix = ctx.scope.docs_path(normalise_prefix(a.path_prefix or "")) if a.path_prefix else ctx.scope.prefix
    since = parse_since(a.since) if a.since else None
    entries = trashed(ctx, prefix, since)
    if not entries:
        return "The trash is empty."
    lines = [f"deleted documents: {len(entries)}"]
    for e in entries[: a.limit]:
        lines.append(
            f"{ctx.scope.view(e.path)} (deleted {iso_seconds(e.deleted_at)}, last version {e.last.version} by "
            f"{who_text(e.last)}, {e.last.size:,} bytes)"
        )
    lines.append("Bring one back with ragdown_restore path=… version=….")
    return "\n".join(lines)


def list_documents(ctx: ToolContext, a: ListArgs) -> str:
    if a.deleted:
        return trash_documents(ctx, a)
    store = ctx.store()
    since_ns = int(parse_since(a.since) * 1e9) if a.since else None
    flt = ctx.scope.file_filter(
        normalise_prefix(a.path_prefix or ""),
        tag=normalise_tag(a.tag) if a.tag else None,
        written_by=a.written_by,
        session=a.session_id,
        hide_superseded=False,
        changed_since_ns=since_ns,
    )
    total = store.count_files(flt)
    if total == 0:
        return "No documents."
    files = store.list_files(flt, sort=a.sort, limit=a.limit)
    superseded = store.superseded_by()
    head = f"documents: {total}" if len(files) == total else f"documents: {len(files)} of {total}"
    return "\n".join([head, *(list_line(ctx, f, superseded) for f in files)])


async def list_docs(ctx: ToolContext, a: ListArgs) -> str:
    await ctx.ready()
    return await ctx.run(list_documents, ctx, a)


LIST = ToolSpec(
    name="ragdown_list",
    description=(
        "Browse documents instead of searching: a count, then one line each with path, title, tags, the "
        "day it changed, who wrote it if an agent did (tool and session), what supersedes it, and its "
        "description. Filters: path_prefix, tag, written_by, session_id, since (2h, 3d, ISO: what changed); "
        "sort path|recent; limit. deleted: true lists the trash."
    ),
    args=ListArgs,
    annotations=READ_ONLY,
    handler=list_docs,
)


# -- ragdown_stats --------------------------------------------------------------------------------


class StatsArgs(Args):
    include_files: bool = False


def stats_of(ctx: ToolContext, include_files: bool) -> dict[str, Any]:
    """The scope's numbers, and of the syncs only what they did in its folders. Where things are (the scope
    root, the data dir) as absolute paths for the local user and the admin; for a key, the folder-named path
    of the scope (`work`, `work/notes`) and no data dir."""
    engine = ctx.engine
    store = ctx.store()
    scope = ctx.scope
    flt = scope.file_filter(hide_superseded=False)
    files, chunks = store.counts(flt)
    out: dict[str, Any] = {
        "docs_dir": ctx.location(scope.dir),
        "data_dir": str(engine.data_dir) if ctx.shows_server_paths else None,
        "role": engine.role,
        "embedder": engine.embedder.name if engine.embedder else "none",
        "read_only": ctx.runtime.settings.read_only,
        "files": files,
        "chunks": chunks,
        "syncing": engine.syncing,
        "last_sync": engine.last_sync_of(ctx.folders),
        "scope": ctx.location(scope.dir) if scope.is_subfolder else None,
    }
    progress = engine.progress_of(ctx.folders)
    if progress is not None:  # how far the running sync is, as /api/status says it
        out["progress"] = progress.as_dict()
    skipped = store.skipped_files(flt)
    out["skipped"] = len(skipped)
    if engine.embedder_error:
        out["embedder_error"] = ctx.redact(engine.embedder_error)
    if engine.embedder_notice:
        out["embedder_notice"] = ctx.redact(engine.embedder_notice)
    if engine.sync_error:
        out["sync_error"] = ctx.redact(engine.sync_error)
    if include_files:
        out["file_list"] = [{**scope.place(p), "chunks": n} for p, n in store.file_chunk_counts(flt)]
        out["skipped_files"] = [{**scope.place(p), "reason": r} for p, r in skipped]
    return out


async def stats(ctx: ToolContext, a: StatsArgs) -> str:
    await ctx.ready()
    return compact(await ctx.run(stats_of, ctx, a.include_files))


STATS = ToolSpec(
    name="ragdown_stats",
    description=(
        "Index status: folder, files and chunks, embedder, role (primary or reader), whether a sync is "
        "running, the last sync. include_files lists each file's chunk count."
    ),
    args=StatsArgs,
    annotations=READ_ONLY,
    handler=stats,
)
