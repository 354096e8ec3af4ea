"""The `ragdown` command: `stdio`, `serve`, `index`, `search`, `outline`, `eval`, and MarkIndex's `tree` and
`mcp` (`cli/markindex.py`, with the options its commands share: `--db`, `--setext` / `--no-setext`).

Each command imports what it uses, in its own function: `--version` loads nothing of the index, `stdio`
nothing of the HTTP face, `index` and `search` nothing of MCP, and the `hash` embedder no ONNX Runtime
(`tests/cli/test_cli_imports.py` holds that line). When a primary already serves the folder (a `ragdown stdio`,
or another `ragdown index`), `index` and `search` ask it over its socket (`tools/cli_answers.py`) instead of loading
the model and the index again; otherwise they work alone. The output is the same either way.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdown import __version__
from ragdown.cli.local import open_engine

if TYPE_CHECKING:
    from ragdown.core.config import Settings
    from ragdown.engine.engine import Engine
    from ragdown.sync.report import SyncProgress

log = logging.getLogger(__name__)

# The commands of this module. Given one of them first, the parser holds that command alone: the others'
# options import their modules (`eval` the evaluation package; the client, keys, MarkIndex's and the LLM's
# commands theirs; `outline` the outline's module), which that command does not need.
OWN_COMMANDS = frozenset({"stdio", "serve", "index", "search", "outline"})


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `command` (the first argument) one of `OWN_COMMANDS`, that command's alone."""
    p = argparse.ArgumentParser(
        prog="ragdown", description="Folders of Markdown as searchable knowledge for agents."
    )
    p.add_argument("--version", action="version", version=f"ragdown {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    only = command if command in OWN_COMMANDS else None

    def wanted(name: str) -> bool:
        return only is None or only == name

    from ragdown.cli import markindex

    if wanted("stdio"):
        sub.add_parser(
            "stdio", help="the MCP server an MCP client launches (serves RAGDOWN_DOCS_DIR as one folder)"
        )
    if wanted("serve"):
        sub.add_parser(
            "serve",
            help="HTTP: each folder of RAGDOWN_DOCS_DIR as an MCP endpoint, the /api routes and the web UI",
        )

    if wanted("index"):
        ix = sub.add_parser("index", help="index (or re-sync) a folder of Markdown")
        ix.add_argument("dir", type=Path)
        ix.add_argument("--full", action="store_true", help="drop every chunk and re-embed everything")
        ix.add_argument("--json", action="store_true", help="print the sync report as JSON on the last line")
        markindex.add_ignore(ix)
        markindex.add_setext(ix)
        markindex.add_db(ix)
        from ragdown.cli import llm

        llm.add_summary_options(ix)

    if wanted("search"):
        se = sub.add_parser(
            "search", help="hybrid search over a folder (syncs it first); the query alone: on the server"
        )
        se.add_argument(
            "dir", metavar="DIR", help="the folder; given alone, the query, searched on the server"
        )
        se.add_argument("query", nargs="?", metavar="QUERY")
        se.add_argument("--top-k", type=int, default=8)
        se.add_argument(
            "--limit", type=int, dest="top_k", default=argparse.SUPPRESS, help="the same as --top-k"
        )
        se.add_argument("--path-prefix")
        se.add_argument("--tag")
        se.add_argument("--json", action="store_true", help="ragdown_recall's JSON format")
        markindex.add_db(se)
        from ragdown.cli import client  # login, whoami, ls, cat, write, …: against a server's /api/v1

        client.add_search_options(se)

    if wanted("outline"):
        from ragdown.search.outline import DEFAULT_DEPTH

        ol = sub.add_parser("outline", help="a folder's documents, or a document's sections (syncs first)")
        ol.add_argument("dir", type=Path)
        ol.add_argument(
            "path", nargs="?", help="a document (a path or wikilink target); left out, the folder tree"
        )
        ol.add_argument("--depth", type=int, default=DEFAULT_DEPTH, help="levels shown, 1-10 (default 2)")
        ol.add_argument("--node", help="open this node's subtree")
        ol.add_argument("--json", action="store_true", help="the tree as JSON")
        markindex.add_db(ol)
    if only is not None:
        return p

    from ragdown.cli import client, llm

    markindex.register(sub)
    llm.register(sub)
    from ragdown.evaluation.command import add_parser as add_eval_parser

    add_eval_parser(sub)
    from ragdown.cli.keys import register as add_keys_parser

    add_keys_parser(sub)
    client.register(sub)
    return p


def _ask_primary(settings: Settings, directory: Path, payload: dict[str, Any]) -> str | None:
    """What a running primary of `directory` answers to a CLI op (`commands.answer`): the exact output.
    None when no process serves the folder, or the one that does declines: the CLI then works alone."""
    if not directory.is_dir():
        return None
    from ragdown.core.config import settings_environment
    from ragdown.storage.sqlite.primary import request, socket_path

    root = directory.resolve()
    path = socket_path(settings.with_docs_dir(root).data_dir("stdio"))
    if not path.exists():
        return None
    try:
        answer = request(path, {**payload, "root": str(root), "env": settings_environment()})
    except (OSError, ValueError) as err:  # no live primary (a stale socket), or a garbled answer
        log.debug("no primary answered on %s: %s", path, err)
        return None
    output = answer.get("output")
    if answer.get("ok") and isinstance(output, str):
        return output
    serves = answer.get("serves")
    if isinstance(serves, str):  # alone, the CLI would read (and sync) that other index: said, not done
        from ragdown.core.config import ConfigError

        what = (
            f"the index a running `ragdown serve` keeps for the folders of {serves}"
            if answer.get("mode") == "serve"
            else f"the index of {serves}, which a running ragdown serves"
        )
        raise ConfigError(
            f"{path.parent} (the data dir for {root}) holds {what}: give {root} a data dir of its own "
            "(unset RAGDOWN_DATA_DIR and each folder has its own)"
        )
    log.debug("the primary declined %s: %s", payload.get("op"), answer.get("error"))
    return None


def _index(settings: Settings, args: argparse.Namespace) -> int:
    from ragdown.cli.llm import check_summary_args, run_summaries

    check_summary_args(args)
    payload = {"op": "index", "full": args.full, "json": args.json}
    alone = args.ignore or args.setext is not None  # a running primary keeps its own rules and setext
    output = None if alone else _ask_primary(settings, args.dir, payload)
    if output is None:
        from ragdown.tools.cli_answers import index_output, sync_warnings

        engine = open_engine(settings, args.dir, args.ignore, args.setext)
        try:
            if engine.indexer is not None and sys.stderr.isatty():
                report = _index_with_progress(engine, args.full)
            else:
                report = engine.sync(args.full)
            warnings = sync_warnings(engine)
        finally:
            engine.close()
        output = index_output(report, args.json, warnings)
    sys.stdout.write(output)
    run_summaries(settings, args)
    return 0


def bar_counts(p: SyncProgress) -> tuple[int, int, str]:
    """What `ragdown index`'s bar counts: the sections of the last file left while a model embeds it (one
    long note is minutes of it, and its file counts as done only at the end), else the files."""
    if p.sections_total and p.files_total - p.files_done <= 1:
        return p.sections_done, p.sections_total, "sections"
    return p.files_done, p.files_total, f"files · {p.chunks:,} chunks"


def _index_with_progress(engine: Engine, full: bool) -> dict[str, int]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    assert engine.indexer is not None
    with Progress(
        TextColumn("{task.fields[step]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[unit]}"),
        TimeRemainingColumn(),
        console=None,
        transient=True,
    ) as bar:
        task = bar.add_task("index", total=None, unit="files · 0 chunks", step="indexing")

        def show(p: SyncProgress) -> None:
            completed, total, unit = bar_counts(p)
            bar.update(task, total=total or None, completed=completed, unit=unit, step=p.doing())

        engine.indexer.add_progress_listener(show)
        return engine.indexer.request_sync(full).result().as_dict()


def _search(settings: Settings, args: argparse.Namespace) -> int:
    """A primary checks the arguments as `ragdown_recall` does and declines bad ones; the CLI alone checks
    them before it opens the index, so either way they are refused with the tool's message (exit 2)."""
    payload = {
        "op": "search",
        "query": args.query,
        "top_k": args.top_k,
        "path_prefix": args.path_prefix,
        "tag": args.tag,
        "json": args.json,
    }
    output = _ask_primary(settings, args.dir, payload)
    if output is None:
        from ragdown.tools.cli_answers import SearchRequest, check_search, search_output

        request = SearchRequest(args.query, args.top_k, args.path_prefix, args.tag, args.json)
        check_search(request)  # before the index (and the model) is opened
        engine = open_engine(settings, args.dir)
        try:
            output = search_output(settings, engine, request)
        finally:
            engine.close()
    sys.stdout.write(output)
    return 0


def _outline(settings: Settings, args: argparse.Namespace) -> int:
    import json

    from ragdown.access.scope import Scope
    from ragdown.core.errors import Refusal
    from ragdown.engine.runtime import Runtime
    from ragdown.search.outline import check_depth
    from ragdown.storage.filter_sql import FileFilter
    from ragdown.tools.context import ToolContext
    from ragdown.tools.outline import OutlineArgs, outline_text
    from ragdown.tools.read import locate_document

    engine = open_engine(settings, args.dir)
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
    given = sys.argv[1:] if argv is None else list(argv)
    if given == ["--version"]:  # before the parser: building it imports every command's options
        print(f"ragdown {__version__}")
        return 0
    first = given[0] if given and not given[0].startswith("-") else None
    args = _parser(first).parse_args(given)
    if args.command == "search" and args.query is not None:
        args.dir = Path(args.dir)
        if args.folder:  # MarkIndex's `search DIR QUERY --folder F`: a folder of DIR, ragdown's path prefix
            if len(args.folder) > 1 or args.path_prefix:
                print("ragdown: give one --folder (or --path-prefix) when searching DIR", file=sys.stderr)
                return 2
            args.path_prefix = args.folder[0]
    elif args.command == "tree":
        args.path, args.node = args.doc, None
    elif getattr(args, "client", None) or args.command == "search":  # `ragdown search QUERY`: remote
        from ragdown.cli.client import run as run_client

        return run_client(args)
    from ragdown.core.config import ConfigError, Settings
    from ragdown.core.errors import Refusal
    from ragdown.core.logs import setup_logging

    try:
        from ragdown.cli.markindex import with_db

        settings = with_db(Settings.from_env(), getattr(args, "db", None))
        setup_logging(settings.log_level if args.command in {"stdio", "serve", "mcp"} else "WARNING")
        if args.command == "stdio":
            import asyncio

            from ragdown.mcpserver.server import run_stdio

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
        if args.command in {"outline", "tree"}:
            return _outline(settings, args)
        if args.command == "retrieve":
            from ragdown.cli.llm import run_retrieve

            return run_retrieve(settings, args)
        if args.command == "mcp":
            from ragdown.cli.markindex import run_mcp

            return run_mcp(settings, args)
        if args.command == "keys":
            from ragdown.cli.keys import run as run_keys

            return run_keys(settings, args)
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
