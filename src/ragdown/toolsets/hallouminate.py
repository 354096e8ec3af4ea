"""The `hallouminate` tool set: hallouminate's nine tools, names and shapes, over ragdown's engine.

hallouminate's corpora are here the folders the endpoint can see: a folder endpoint sees one (its folder, or
the docs dir under stdio), named `repo:<folder>:wiki` as hallouminate's clients name a wiki (`list_corpora`;
`repo:<folder>:corpus` and `<folder>` name it too). Its tools call what ragdown's own call: the walk and
the ignore rules for the file lists, hybrid search for `ground` (rolled up per file, with breadcrumbs), the
write door for `add_markdown` and `delete_markdown` (so writes are atomic, checked, recorded in the history,
and answered with the advisory lints), the folder's `index.md` upkeep (on for this set unless the folder
sets `"index_md": false`, as hallouminate keeps its wiki indexes), footnotes as `ragdown_read_doc` reads
them. Errors are JSON-RPC errors, as hallouminate's: bad input `-32602`, internal faults `-32603`; a tool
the endpoint does not offer is `-32602` too (`toolsets.ToolSet.unknown`).
An `absolute_path` (and `list_corpora`'s `paths`) is the file's path on the server for the local user and the
admin; a key is told the folder-named path instead (`work/guides/a.md`), and `index` syncs and counts the
endpoint's folder only.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from typing import Annotated, Any

from pydantic import Field

from ragdown.core.errors import bad_request, conflict, not_found
from ragdown.core.paths import is_markdown
from ragdown.documents import decode_text
from ragdown.documents.footnotes import footnotes
from ragdown.history.journal import Journal
from ragdown.search.hybrid import Hit
from ragdown.tools.base import Annotations, Args, Failure, ProtocolError, Structured, ToolSpec
from ragdown.tools.context import ToolContext
from ragdown.tools.read import footnote_named
from ragdown.tools.write import lint_warnings
from ragdown.vault import quota
from ragdown.vault.folders import read_settings_file
from ragdown.vault.ignore import IgnoreRules, refuse_ignored
from ragdown.vault.sandbox import read_plain, resolve_in
from ragdown.vault.walk import walk_markdown
from ragdown.writes import door
from ragdown.writes.wiki import MARKERS, upkeep

INVALID_PARAMS = -32602
HALLOUMINATE_MARKERS = MARKERS[1]
INTERNAL_ERROR = -32603
READ_ONLY = Annotations(read_only=True)
WRITES = Annotations(read_only=False, destructive=True)
MAX_ARG = 4096

INSTRUCTIONS = (
    "This server is a Markdown wiki (hallouminate's tools). Call list_corpora first. Navigate with list_tree "
    "(progressive disclosure), search with ground, read_markdown before add_markdown with overwrite: true. "
    "One topic per file; the first non-blank line is `# Title`; file names are kebab-case .md. Mutating tools "
    "and read_markdown need an explicit corpus."
)


def jsonrpc_failure(failure: Failure) -> str:
    """hallouminate's error mapping: caller input → -32602 (InvalidParams), anything else → -32603."""
    if failure.kind == "internal" or failure.kind == "unavailable":
        raise ProtocolError(INTERNAL_ERROR, failure.message)
    raise ProtocolError(INVALID_PARAMS, failure.message)


def _folder_name(ctx: ToolContext) -> str:
    return ctx.scope.folder or ctx.scope.root.name


def _corpus_name(ctx: ToolContext) -> str:
    """The corpus as hallouminate's clients name a repository's wiki: `repo:<folder>:wiki`."""
    return f"repo:{_folder_name(ctx)}:wiki"


def _corpus_names(ctx: ToolContext) -> list[str]:
    """Every name the endpoint's corpus answers to: `repo:<folder>:wiki` (list_corpora's), hallouminate's
    `repo:<folder>:corpus` (a repository's own Markdown: here the same folder) and the plain folder name."""
    folder = _folder_name(ctx)
    return [f"repo:{folder}:wiki", f"repo:{folder}:corpus", folder]


def _check_corpus(ctx: ToolContext, corpus: str | None, *, required: bool) -> None:
    if corpus is None or corpus == "":
        if required:
            raise bad_request("corpus is required for this tool: call list_corpora for the names")
        return
    if corpus not in _corpus_names(ctx):
        raise bad_request(
            f"unknown corpus {corpus!r}: this endpoint serves {_corpus_name(ctx)!r} (list_corpora)"
        )


def _files(ctx: ToolContext) -> list[str]:
    """The Markdown files the corpus counts, as the index's walk finds them (hidden names, symlinks and
    ignored paths left out), scope-relative."""
    rules = IgnoreRules(ctx.docs_root, folders=ctx.engine.folders)
    prefix = ctx.scope.prefix
    found = walk_markdown(
        ctx.docs_root, folders=ctx.engine.folders, rules=rules, under=f"{prefix}/" if prefix else ""
    )
    markdown = (f.path for f in found.files if is_markdown(f.path))  # not plain text (`todo.txt`)
    return sorted((ctx.scope.view(p) for p in markdown), key=str.lower)


def _entry(ctx: ToolContext, rel: str) -> dict[str, str]:
    return {"path": rel, "absolute_path": ctx.location(ctx.scope.dir / rel)}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# -- list_corpora, list_files, list_tree ----------------------------------------------------------


class NoArgs(Args):
    pass


def list_corpora(ctx: ToolContext, _: NoArgs) -> str:
    settings = ctx.scope.settings()
    corpus = {
        "name": _corpus_name(ctx),
        "aliases": _corpus_names(ctx)[1:],
        "title": settings.title,
        "paths": [ctx.location(ctx.scope.dir)],
        "kind": "folder",
    }
    return _json([corpus])


class CorpusArgs(Args):
    corpus: Annotated[
        str | None, Field(max_length=MAX_ARG, description="A corpus of list_corpora (repo:<folder>:wiki).")
    ] = None


def list_files(ctx: ToolContext, a: CorpusArgs) -> str:
    _check_corpus(ctx, a.corpus, required=False)
    return _json([_entry(ctx, rel) for rel in _files(ctx)])


def list_tree(ctx: ToolContext, a: CorpusArgs) -> str:
    _check_corpus(ctx, a.corpus, required=False)

    def node(path: str) -> dict[str, Any]:
        return {
            "path": path,
            "absolute_path": ctx.location(ctx.scope.dir / path if path else ctx.scope.dir),
            "files": [],
            "subdirs": [],
        }

    root = node("")
    for rel in _files(ctx):  # only directories on the way to a Markdown file appear: the rest is pruned
        parts = rel.split("/")
        here = root
        for depth in range(1, len(parts)):
            path = "/".join(parts[:depth])
            sub = next((s for s in here["subdirs"] if s["path"] == path), None)
            if sub is None:
                sub = node(path)
                here["subdirs"].append(sub)
            here = sub
        here["files"].append(_entry(ctx, rel))
    return _json(root)


# -- ground ---------------------------------------------------------------------------------------


class GroundArgs(Args):
    query: Annotated[str, Field(min_length=1, max_length=MAX_ARG)]
    corpus: Annotated[str | None, Field(max_length=MAX_ARG)] = None
    top_files: Annotated[int, Field(ge=1, le=50, description="Files in the answer.")] = 5
    chunks_per_file: Annotated[int, Field(ge=1, le=20, description="Sections shown per file.")] = 3
    limit: Annotated[
        int, Field(ge=1, le=100, description="Sections searched before rolling up per file.")
    ] = 40
    snippet_chars: Annotated[int, Field(ge=40, le=4000)] = 300


def ground(ctx: ToolContext, a: GroundArgs) -> Structured:
    _check_corpus(ctx, a.corpus, required=False)
    rt = ctx.runtime
    # The sections per file are the caller's own `chunks_per_file`, never the server's per-document cap.
    opts = dataclasses.replace(rt.search_options(a.limit), max_per_document=0)
    hits = ctx.engine.search(a.query, ctx.scope.file_filter(), opts)
    by_file: dict[str, list[Hit]] = {}
    for hit in hits:
        by_file.setdefault(hit.path, []).append(hit)
    docs: list[dict[str, Any]] = []
    outline: list[str] = []
    for path, file_hits in list(by_file.items())[: a.top_files]:
        shown = ctx.scope.view(path)
        chunks = []
        outline.append(f"{shown}")
        for hit in file_hits[: a.chunks_per_file]:
            c = hit.chunk
            snippet = " ".join(c.text.split())[: a.snippet_chars]
            chunks.append(
                {
                    "breadcrumb": c.breadcrumb.split(" › "),
                    "start_line": c.start_line,
                    "end_line": c.end_line,
                    "score": round(hit.score, 5),
                    "similarity": round(hit.similarity, 4) if hit.has_similarity else None,
                    "snippet": snippet,
                }
            )
            outline.append(f"{c.start_line}-{c.end_line}: {c.breadcrumb}: {snippet}")
        docs.append(
            {
                "path": shown,
                "absolute_path": ctx.location(ctx.docs_root / path),
                "title": file_hits[0].chunk.file.title,
                "score": round(max(h.score for h in file_hits), 5),
                "chunks": chunks,
            }
        )
        outline.append("")
    text = "\n".join(outline).strip() or "No matches."
    return Structured(text, {"query": a.query, "corpus": _corpus_name(ctx), "docs": docs})


# -- add_markdown, read_markdown, delete_markdown -------------------------------------------------


class AddArgs(Args):
    corpus: Annotated[str, Field(min_length=1, max_length=MAX_ARG)]
    path: Annotated[str, Field(min_length=1, max_length=MAX_ARG)]
    content: str
    overwrite: bool = False


def _journal(ctx: ToolContext, who: str) -> Journal:
    """A write's journal, with the index.md upkeep hallouminate does unless the folder sets it off; an
    index.md it makes carries hallouminate's markers, as hallouminate's own would."""
    journal = ctx.journal(who)
    if journal.after is not None or read_settings_file(ctx.scope.folder_dir).get("index_md") is not False:
        journal.after = functools.partial(
            upkeep, ctx.scope.folder_dir, folders=ctx.engine.folders, scaffold=HALLOUMINATE_MARKERS
        )
    return journal


def add_markdown(ctx: ToolContext, a: AddArgs) -> str:
    _check_corpus(ctx, a.corpus, required=True)
    target = resolve_in(ctx.scope.dir, a.path, markdown=True)
    refuse_ignored(ctx.docs_root, target, a.path, folders=ctx.engine.folders)
    journal = _journal(ctx, "hallouminate:add_markdown")

    def change(old: bytes | None) -> bytes:
        if old is not None and not a.overwrite:
            raise conflict(
                f"{a.path} already exists: read_markdown it first, then add_markdown with overwrite: true"
            )
        return a.content.encode()

    with door.recording() as changed:
        written = door.save(target, a.path, change, journal=journal)
    indexed = ctx.sync_after_write(changed)
    warnings = lint_warnings(ctx, target, written.data)
    return _json(
        {
            "path": a.path,
            "absolute_path": ctx.location(target),
            "created": written.created,
            "bytes": len(written.data),
            "warnings": warnings,
            "notes": [*journal.notes, *indexed.notes()],
            **({"quota": used} if (used := quota.report(ctx.scope.folder_dir)) else {}),
        }
    )


class PathArgs(Args):
    corpus: Annotated[str, Field(min_length=1, max_length=MAX_ARG)]
    path: Annotated[str, Field(min_length=1, max_length=MAX_ARG)]


def read_markdown(ctx: ToolContext, a: PathArgs) -> str:
    _check_corpus(ctx, a.corpus, required=True)
    target = resolve_in(ctx.scope.dir, a.path, markdown=True)
    data = read_plain(ctx.docs_root, target.relative_to(ctx.docs_root).as_posix())
    if data is None:
        raise not_found(f"no markdown file {a.path} in corpus {a.corpus}")
    text, _ = decode_text(data)
    return text


def delete_markdown(ctx: ToolContext, a: PathArgs) -> str:
    _check_corpus(ctx, a.corpus, required=True)
    target = resolve_in(ctx.scope.dir, a.path, markdown=True)
    if not target.is_file() or target.is_symlink():  # a file in ragdown's trash is not in the corpus
        raise not_found(f"no markdown file {a.path} in corpus {a.corpus}")
    journal = _journal(ctx, "hallouminate:delete_markdown")
    with door.recording() as changed:  # irreversible, as hallouminate's: no trash, no versions kept
        door.purge(target, a.path, journal=journal)
    indexed = ctx.sync_after_write(changed)
    return _json(
        {"path": a.path, "deleted": True, "trash": False, "notes": [*journal.notes, *indexed.notes()]}
    )


# -- index, get_footnote --------------------------------------------------------------------------


def index(ctx: ToolContext, a: CorpusArgs) -> str:
    _check_corpus(ctx, a.corpus, required=False)
    return _json({"corpus": _corpus_name(ctx), **ctx.sync()})


class FootnoteArgs(Args):
    corpus: Annotated[str | None, Field(max_length=MAX_ARG)] = None
    page: Annotated[
        str, Field(min_length=1, max_length=MAX_ARG, description="The wiki page's relative path.")
    ]
    footnote_number: Annotated[
        str, Field(min_length=1, max_length=128, description='"1" for [^1], "note" for [^note].')
    ]


def get_footnote(ctx: ToolContext, a: FootnoteArgs) -> str:
    _check_corpus(ctx, a.corpus, required=False)
    target = resolve_in(ctx.scope.dir, a.page, markdown=True)
    data = read_plain(ctx.docs_root, target.relative_to(ctx.docs_root).as_posix())
    if data is None:
        raise not_found(f"no page {a.page}")
    text, _ = decode_text(data)
    note = footnote_named(footnotes(text), a.footnote_number, a.page)
    return _json(
        {"page": a.page, "footnote": note.label, "text": note.text, "lines": [note.start_line, note.end_line]}
    )


def _tool(
    name: str, description: str, args: type[Args], fn: Any, annotations: Annotations = READ_ONLY
) -> ToolSpec[Any, ToolContext]:
    async def handler(ctx: ToolContext, a: Any) -> str | Structured:
        await ctx.ready()
        result: str | Structured = await ctx.run(fn, ctx, a)
        return result

    return ToolSpec(name, description, args, annotations, handler, failure=jsonrpc_failure)


TOOLS: tuple[ToolSpec[Any, ToolContext], ...] = (
    _tool(
        "list_corpora",
        "Every corpus this server knows (repo:<folder>:wiki, with its aliases): call this first.",
        NoArgs,
        list_corpora,
    ),
    _tool(
        "list_files",
        "The Markdown files of a corpus (its ignore rules honoured): [{path, absolute_path}].",
        CorpusArgs,
        list_files,
    ),
    _tool(
        "list_tree",
        "The files of a corpus as a {path, absolute_path, files, subdirs} tree; folders without Markdown pruned.",
        CorpusArgs,
        list_tree,
    ),
    _tool(
        "ground",
        "Search (meaning and words), rolled up per file with breadcrumbs: a ripgrep-style outline, and the "
        "full answer as structuredContent.docs. query, corpus, top_files, chunks_per_file, limit, snippet_chars.",
        GroundArgs,
        ground,
    ),
    _tool(
        "add_markdown",
        "Write a Markdown file atomically (overwrite: true to replace; read_markdown first), keep the index.md "
        "link lists current, and answer advisory lint warnings. Needs corpus.",
        AddArgs,
        add_markdown,
        WRITES,
    ),
    _tool("read_markdown", "A Markdown file's verbatim text. Needs corpus.", PathArgs, read_markdown),
    _tool(
        "delete_markdown",
        "Unlink a Markdown file and prune its rows from the index (and its versions from ragdown's history). "
        "Irreversible. Updates the index.md lists. Needs corpus.",
        PathArgs,
        delete_markdown,
        WRITES,
    ),
    _tool(
        "index",
        "Re-sync the index with the files now (after edits made outside).",
        CorpusArgs,
        index,
        Annotations(read_only=False),
    ),
    _tool(
        "get_footnote",
        'One footnote of a page: page (its path), footnote_number ("1" for [^1], "note" for [^note]).',
        FootnoteArgs,
        get_footnote,
    ),
)
