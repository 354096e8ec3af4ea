"""The CLI client: `ragdown login`, `whoami`, `ls`, `cat`, `write`… against a server's `/api/v1`.

`register` adds the commands to `ragdown`'s parser (argparse alone: building the parser imports nothing
else); `run` carries one out, importing httpx and the commands only then. Each command takes its options
before, between or after its arguments (`ragdown write work/a.md -n "# Text"`); after `--` everything is an
argument, so content that begins with `-` goes there. Documents are named `folder/path.md`, as everywhere in
ragdown's HTTP face. `ragdown search QUERY` (one positional) searches on the server; `ragdown search DIR
QUERY` (two) stays local.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

COMMANDS = (
    "login",
    "logout",
    "whoami",
    "ls",
    "cat",
    "write",
    "append",
    "edit",
    "rm",
    "mv",
    "patch",
    "trash",
    "history",
    "changes",
    "query",
    "related",
    "version",
    "diff",
    "restore",
)


def _lines(text: str) -> tuple[int | None, int | None]:
    """`--lines 1:50`, `10:`, `:20` or `7` as (start_line, end_line)."""
    first, sep, last = text.partition(":")
    try:
        start = int(first) if first.strip() else None
        end = (int(last) if last.strip() else None) if sep else start
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--lines takes START:END (1:50, 10:, :20 or 7), not {text!r}"
        ) from None
    if (start is not None and start < 1) or (end is not None and end < 1):
        raise argparse.ArgumentTypeError("--lines counts from 1")
    return start, end


def _duration(text: str) -> int:
    from ragdown.cli.client.rdb import duration_s  # a small module of the standard library's imports

    return duration_s(text)


class _Intermixed(argparse.ArgumentParser):
    """A client command's parser: its options anywhere among its arguments.

    argparse's own parse fills the arguments of one run between two options at once, so in
    `write work/a.md -n TEXT` the optional CONTENT is taken as left out before `-n`, and TEXT is then
    "unrecognized". `parse_known_intermixed_args` reads the options first and the arguments after; the top
    parser calls `parse_known_args` on a subcommand's parser, which therefore runs that instead.

    Up to Python 3.12.7, the intermixed parse is two `parse_known_args` passes, and the first (options only)
    drops a `--` that no argument precedes (`write -n -- work/a.md -x`), so the second read `-x` as an
    option: the `--` is put back there, in front of what followed it. Later Pythons parse in one pass.
    """

    _intermixing = False
    _passes = 0

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self._intermixing:
            return self._pass(args, namespace)
        self._intermixing, self._passes = True, 0
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False

    def _pass(
        self, args: Sequence[str] | None, namespace: argparse.Namespace | None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._passes += 1
        given = list(args or ())
        parsed, rest = super().parse_known_args(given, namespace)
        if self._passes == 1 and "--" in given and "--" not in rest:
            tail = given[given.index("--") + 1 :]
            if rest[len(rest) - len(tail) :] == tail:
                rest = [*rest[: len(rest) - len(tail)], "--", *tail]
        return parsed, rest


def confirm(parser: argparse.ArgumentParser) -> None:
    """`-y/--yes` on a command that deletes or replaces: accepted, and nothing more (ragdown never asks)."""
    parser.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="accepted and ignored: ragdown never asks before it goes ahead (for scripts that pass -y)",
    )


def register(sub: Any) -> None:
    """Add the client's commands to `ragdown`'s subparsers; each records its name as `args.client`."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print the server's JSON answer")

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text, parents=[common])
        parser.__class__ = _Intermixed  # the top parser's kind, options anywhere (it adds no state)
        parser.set_defaults(client=name)
        return parser

    p = command("login", "client: save a server's URL and key (checked first) for the commands below")
    p.add_argument("--url", help="the server, e.g. https://notes.example.com (default: the saved one)")
    p.add_argument("--key", help="an API key or RAGDOWN_TOKEN (asked for on a terminal when left out)")
    command("logout", "client: forget the saved URL and key")
    command("whoami", "client: who the key is on the server: role and folders")

    p = command("ls", "client: the folders, or a folder's documents (FOLDER or FOLDER/SUBFOLDER)")
    p.add_argument("where", nargs="?", metavar="FOLDER[/SUBFOLDER]")
    p.add_argument("--limit", type=int, default=500, help="most documents (1-500, default 500)")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument(
        "--since",
        type=_duration,
        metavar="DURATION",
        help="only documents changed in the last 30m, 2h, 7d… (newest first; no FOLDER: every folder)",
    )

    p = command("cat", "client: print documents (FOLDER/PATH.md)")
    p.add_argument("paths", nargs="+", metavar="FOLDER/PATH")
    p.add_argument("--lines", type=_lines, metavar="START:END", help="only these lines (1:50, 10:, :20)")

    p = command(
        "write", "client: write a document from CONTENT, --file or stdin (replaces one that is there)"
    )
    p.add_argument("path", metavar="FOLDER/PATH")
    p.add_argument(
        "content", nargs="?", help="the text (after -- when it begins with -); left out: --file, or stdin"
    )
    p.add_argument("--file", help="read the content from this file")
    p.add_argument("-n", "--no-overwrite", action="store_true", help="fail if the document exists")
    p.add_argument("--base-hash", help="replace only the version with this hash (from cat --json)")

    p = command("append", "client: add CONTENT (or --file, or stdin) at the end of a document")
    p.add_argument("path", metavar="FOLDER/PATH")
    p.add_argument(
        "content", nargs="?", help="the text (after -- when it begins with -); left out: --file, or stdin"
    )
    p.add_argument("--file", help="read the content from this file")
    p.add_argument("--heading", help="at the end of this section instead")

    p = command(
        "edit", "client: open a document in $EDITOR and write it back (refused if it changed meanwhile)"
    )
    p.add_argument("path", metavar="FOLDER/PATH")

    p = command("rm", "client: delete a document, into the trash (restore brings it back); --purge: for good")
    p.add_argument("path", metavar="FOLDER/PATH")
    p.add_argument("--base-hash", help="only if it still has this hash")
    p.add_argument(
        "--purge",
        action="store_true",
        help="delete for good, with every version (also a document already in the trash); irreversible",
    )
    confirm(p)

    p = command("mv", "client: move or rename a document inside its folder, rewriting links to it")
    p.add_argument("source", metavar="FOLDER/PATH")
    p.add_argument("target", metavar="FOLDER/NEWPATH")
    p.add_argument(
        "-f", "--force", action="store_true", help="replace a document at NEWPATH (it goes to the trash)"
    )

    p = command("patch", "client: replace literal text in a document (the first occurrence by default)")
    p.add_argument("path", metavar="FOLDER/PATH")
    p.add_argument("find")
    p.add_argument("replace")
    p.add_argument("--all", action="store_true", help="replace every occurrence")
    p.add_argument("--nth", type=int, help="replace the N-th occurrence (from 0)")
    p.add_argument("--base-hash", help="only if the document still has this hash")

    p = command("trash", "client: a folder's deleted documents, most recently deleted first")
    p.add_argument("folder", metavar="FOLDER")
    p.add_argument(
        "--empty", action="store_true", help="delete them all for good, with every version; irreversible"
    )

    p = command("history", "client: a document's versions, newest first (deleted ones too)")
    p.add_argument("path", metavar="FOLDER/PATH")

    p = command("changes", "client: what changed in a folder since a time or a version, newest first")
    p.add_argument("folder", metavar="FOLDER[/SUBFOLDER]")
    p.add_argument("--since", help="a span back from now (30m, 2h, 7d) or an ISO date or time (default 7d)")
    p.add_argument("--after-version", type=int, help="only changes after this version id")
    p.add_argument("--who", help="agent, user, web, rest, external, a tool name, or a session")
    p.add_argument("--limit", type=int, help="changes to list (1-200, default 50)")

    p = command("query", "client: a folder's documents filtered and sorted by their properties, as a table")
    p.add_argument("folder", metavar="FOLDER[/SUBFOLDER]")
    p.add_argument(
        "-w",
        "--where",
        action="append",
        help="a condition, repeatable (all must hold): KEY=VALUE, 'KEY >= 8', 'KEY contains TEXT', 'KEY exists'",
    )
    p.add_argument("--where-json", help="conditions as ragdown_query's JSON (a list or one object)")
    p.add_argument("--tag", action="append", help="only documents with this tag (nested ones too)")
    p.add_argument("--links-to", action="append", help="only documents linking to this note")
    p.add_argument(
        "--sort", action="append", help="a property or column to sort by, repeatable (KEY:desc: descending)"
    )
    p.add_argument("--columns", help="comma-separated columns (default path, title and the where keys)")
    p.add_argument("--base", help="an Obsidian .base file of the folder: answer its view")
    p.add_argument("--view", help="the Base's view (default its first)")
    p.add_argument("--limit", type=int, help="rows (1-500, default 50)")
    p.add_argument("--offset", type=int, help="rows to skip")

    p = command("related", "client: a note's neighbourhood (links, backlinks, shared tags, similar sections)")
    p.add_argument("path", metavar="FOLDER/PATH")
    p.add_argument("--node-id", help="a section, by its id from the outline")
    p.add_argument("--heading", help="a section, by its heading")
    p.add_argument("--depth", type=int, help="2: links of links too")
    p.add_argument("--budget", type=int, help="most neighbours (1-100, default 20)")

    p = command("version", "client: print one version of a document")
    p.add_argument("path", metavar="FOLDER/PATH")
    p.add_argument("number", type=int, metavar="VERSION")

    p = command("diff", "client: a unified diff from version A to B (left out: the document now)")
    p.add_argument("path", metavar="FOLDER/PATH")
    p.add_argument("a", type=int, metavar="A")
    p.add_argument("b", type=int, nargs="?", metavar="B")
    p.add_argument("-C", "--context", type=int, default=3, help="lines of context (0-20, default 3)")

    p = command("restore", "client: bring a version back, as a new version")
    p.add_argument("path", metavar="FOLDER/PATH")
    p.add_argument("number", type=int, metavar="VERSION")
    p.add_argument("--base-hash", help="only if the document still has this hash")
    confirm(p)


def add_search_options(parser: argparse.ArgumentParser) -> None:
    """The remote search's own options on `ragdown search` (shared with the local one's)."""
    parser.add_argument(
        "--folder",
        action="append",
        help="search on the server: only this folder (repeatable; default: every folder the key sees)",
    )


def run(args: argparse.Namespace) -> int:
    """Carry out a client command (`args.client`), or `ragdown search QUERY` on the server."""
    from ragdown.cli.client.commands import main

    return main(args)


__all__ = ["COMMANDS", "add_search_options", "register", "run"]
