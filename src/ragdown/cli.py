"""The `ragdown` command: `stdio`, `serve`, `index`, `search`, `eval`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ragdown import __version__
from ragdown.config import SEARCH_TOP_K, ConfigError, Settings
from ragdown.engine import Engine
from ragdown.errors import Refusal
from ragdown.index.store import FileFilter
from ragdown.index.sync import SyncProgress
from ragdown.logs import setup_logging
from ragdown.paths import normalise_prefix
from ragdown.runtime import Runtime
from ragdown.search.format import cli_line, recall_json
from ragdown.search.outline import DEFAULT_DEPTH, check_depth
from ragdown.search.scope import normalise_tag


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ragdown", description="Folders of Markdown as searchable knowledge for agents."
    )
    p.add_argument("--version", action="version", version=f"ragdown {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    sub.add_parser(
        "stdio", help="the MCP server an MCP client launches (serves RAGDOWN_DOCS_DIR as one folder)"
    )
    sub.add_parser(
        "serve",
        help="HTTP: each folder of RAGDOWN_DOCS_DIR as an MCP endpoint, the /api routes and the web UI",
    )

    ix = sub.add_parser("index", help="index (or re-sync) a folder of Markdown")
    ix.add_argument("dir", type=Path)
    ix.add_argument("--full", action="store_true", help="drop every chunk and re-embed everything")
    ix.add_argument("--json", action="store_true", help="print the sync report as JSON on the last line")
    ix.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="PATTERN",
        help="leave out paths matching this gitignore-style pattern (repeatable; only excludes)",
    )

    se = sub.add_parser("search", help="hybrid search over a folder (syncs it first)")
    se.add_argument("dir", type=Path)
    se.add_argument("query")
    se.add_argument("--top-k", type=int, default=8)
    se.add_argument("--path-prefix")
    se.add_argument("--tag")
    se.add_argument("--json", action="store_true", help="ragdown_recall's JSON format")

    ol = sub.add_parser("outline", help="a folder's documents, or a document's sections (syncs first)")
    ol.add_argument("dir", type=Path)
    ol.add_argument(
        "path", nargs="?", help="a document (a path or wikilink target); left out, the folder tree"
    )
    ol.add_argument("--depth", type=int, default=DEFAULT_DEPTH, help="levels shown, 1-10 (default 2)")
    ol.add_argument("--node", help="open this node's subtree")
    ol.add_argument("--json", action="store_true", help="the tree as JSON")

    from ragdown.evaluation.command import add_parser as add_eval_parser

    add_eval_parser(sub)
    return p


def _engine(settings: Settings, directory: Path, ignore: Sequence[str] = ()) -> Engine:
    if not directory.is_dir():
        raise ConfigError(f"not a directory: {directory}")
    engine = Engine(settings.with_docs_dir(directory), "stdio", docs_dir=directory, ignore=tuple(ignore))
    engine.start(background=False, initial_sync=False, watch=False)
    if engine.error:
        raise SystemExit(f"ragdown: {engine.error}")
    return engine


def _index(settings: Settings, args: argparse.Namespace) -> int:
    engine = _engine(settings, args.dir, args.ignore)
    try:
        if engine.indexer is not None and sys.stderr.isatty():
            report = _index_with_progress(engine, args.full)
        else:
            report = engine.sync(args.full)
    finally:
        engine.close()
    if args.json:
        print(json.dumps(report, separators=(",", ":")))
    else:
        print(
            f"{report['added']} added, {report['updated']} updated, {report['removed']} removed, "
            f"{report['unchanged']} unchanged; {report['chunks']} chunks in {report['ms']} ms"
        )
    return 0


def _index_with_progress(engine: Engine, full: bool) -> dict[str, int]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    assert engine.indexer is not None
    with Progress(
        TextColumn("indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files · {task.fields[chunks]} chunks"),
        TimeRemainingColumn(),
        console=None,
        transient=True,
    ) as bar:
        task = bar.add_task("index", total=None, chunks=0)

        def show(p: SyncProgress) -> None:
            bar.update(task, total=p.files_total or None, completed=p.files_done, chunks=p.chunks)

        engine.indexer.add_progress_listener(show)
        return engine.indexer.request_sync(full).result().as_dict()


def _search(settings: Settings, args: argparse.Namespace) -> int:
    engine = _engine(settings, args.dir)
    try:
        if engine.indexer is not None:
            engine.sync()
        flt = FileFilter(
            prefixes=(normalise_prefix(args.path_prefix),) if args.path_prefix else (),
            tag=normalise_tag(args.tag) if args.tag else None,
        )
        low, high = SEARCH_TOP_K
        opts = Runtime(settings, engine).search_options(max(low, min(high, args.top_k)))
        hits = engine.search(args.query, flt, opts)
    finally:
        engine.close()
    if args.json:
        print(recall_json(hits, settings.text_limit))
    elif not hits:
        print("No matching documents.")
    else:
        for hit in hits:
            print(cli_line(hit))
    return 0


def _outline(settings: Settings, args: argparse.Namespace) -> int:
    from ragdown.scope import Scope
    from ragdown.tools.context import ToolContext
    from ragdown.tools.outline import OutlineArgs, outline_text
    from ragdown.tools.read import locate_document

    engine = _engine(settings, args.dir)
    try:
        if engine.indexer is not None:
            engine.sync()
        check_depth(args.depth)
        ctx = ToolContext(runtime=Runtime(settings, engine), scope=Scope(root=engine.root, folder=""))
        if not args.json:
            print(outline_text(ctx, OutlineArgs(path=args.path, depth=args.depth, node_id=args.node)))
            return 0
        store = engine.require_store()
        if args.path:
            docs_path, _anchor, _via = locate_document(ctx, store, args.path)
            tree = store.tree_of(docs_path)
            if tree is None:
                raise Refusal("not_found", f"{args.path} is not indexed")
            body: dict[str, object] = {"path": docs_path, "tree": tree.as_json()}
        else:
            tokens = store.document_tokens(FileFilter(hide_superseded=False))
            body = {
                "documents": [
                    {
                        "path": f.path,
                        "title": f.title,
                        "description": f.description,
                        "tokens": tokens.get(f.path, 0),
                    }
                    for f in store.list_files(FileFilter(hide_superseded=False))
                ]
            }
        print(json.dumps(body, ensure_ascii=False))
    finally:
        engine.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = Settings.from_env()
        setup_logging(settings.log_level if args.command in {"stdio", "serve"} else "WARNING")
        if args.command == "stdio":
            import asyncio

            from ragdown.mcpserver import run_stdio

            asyncio.run(run_stdio(settings))
            return 0
        if args.command == "serve":
            from ragdown.http.serve import run

            run(settings)
            return 0
        if args.command == "index":
            return _index(settings, args)
        if args.command == "search":
            return _search(settings, args)
        if args.command == "outline":
            return _outline(settings, args)
        if args.command == "eval":
            from ragdown.evaluation.command import run as run_eval

            return run_eval(settings, args)
    except ConfigError as err:
        print(f"ragdown: {err}", file=sys.stderr)
        return 2
    except Refusal as err:
        print(f"ragdown: {err.message}", file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"ragdown: {err}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
