"""MarkIndex's command line (seed 001) with `ragdown` in place of `markindex`: `tree DIR DOC`, `mcp DIR
[--reindex-on-start]`, and the options its commands share: `--db PATH` (where the index lives) and
`--setext` / `--no-setext` (stored in the index: `engine/setext.py`).

`ragdown mcp DIR` is `ragdown stdio` on DIR with the `markindex` tool set (its five read-only tools and its
agent instructions), unless `RAGDOWN_TOOLSET` names another. It always brings the index up to date on start
and keeps it current while it runs, so `--reindex-on-start` (the MCP Registry's launch line) is accepted and
changes nothing.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragdown.core.config import ConfigError, Settings

MARKINDEX_TOOLSET = "markindex"


def add_db(parser: argparse.ArgumentParser, dest: str = "db") -> None:
    parser.add_argument(
        "--db",
        dest=dest,
        type=Path,
        metavar="PATH",
        default=argparse.SUPPRESS if dest != "db" else None,
        help="where the index lives: a directory for its files (default: RAGDOWN_DATA_DIR, else one per "
        "folder in the cache); a local disk, not a network share",
    )


def add_setext(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--setext",
        dest="setext",
        action="store_true",
        default=None,
        help="read a line of --- or === under a paragraph as a heading (the default); stored in the index",
    )
    group.add_argument(
        "--no-setext",
        dest="setext",
        action="store_false",
        help="--- is a thematic break and === plain text (converted PDF/HTML with page breaks); stored in "
        "the index, so later runs keep it until --setext",
    )


def add_ignore(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="PATTERN",
        help="leave out paths matching this gitignore-style pattern (repeatable; only excludes)",
    )


def register(sub: Any) -> None:
    """`tree` and `mcp` (`sub` is the parser's subparsers action)."""
    from ragdown.search.outline import DEFAULT_DEPTH

    tr = sub.add_parser("tree", help="one document's section tree (MarkIndex's `tree`; syncs first)")
    tr.add_argument("dir", type=Path)
    tr.add_argument("doc", help="the document (a path relative to DIR, or a wikilink target)")
    tr.add_argument("--depth", type=int, default=DEFAULT_DEPTH, help="levels shown, 1-10 (default 2)")
    tr.add_argument("--json", action="store_true", help="the tree as JSON")
    add_db(tr)

    mc = sub.add_parser(
        "mcp", help="serve DIR to agents over MCP on stdio with MarkIndex's read-only tools (`markindex mcp`)"
    )
    mc.add_argument("dir", type=Path)
    mc.add_argument(
        "--reindex-on-start",
        action="store_true",
        help="accepted for MarkIndex's launch line: the index is always brought up to date on start",
    )
    add_ignore(mc)
    add_setext(mc)
    add_db(mc)


def with_db(settings: Settings, db: Path | None) -> Settings:
    """`settings` with the index kept in `db` (`--db`, over `RAGDOWN_DATA_DIR`)."""
    if db is None:
        return settings
    path = db.expanduser()
    if path.exists() and not path.is_dir():
        raise ConfigError(
            f"--db {db} is a file (MarkIndex's own index?): ragdown keeps an index in a directory (the index, "
            f"its history and its lock), so give a directory, new or ragdown's, e.g. --db {db}.ragdown"
        )
    return replace(settings, data_dir_override=path.resolve())


def run_mcp(settings: Settings, args: argparse.Namespace) -> int:
    import asyncio

    from ragdown.mcpserver.server import run_stdio

    directory: Path = args.dir
    if not directory.is_dir():
        raise ConfigError(f"not a directory: {directory}")
    settings = replace(
        settings.with_docs_dir(directory.resolve()), toolset=settings.toolset or MARKINDEX_TOOLSET
    )
    asyncio.run(run_stdio(settings, ignore=tuple(args.ignore), setext=args.setext))
    return 0
