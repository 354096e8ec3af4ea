"""Advisory lints on what a writer just wrote (hallouminate's, and a few more). A write is never refused for
them: they come back with the write's answer so an agent can fix its own Markdown.

- a heading more than one level deeper than the heading before it (`heading level jumps from h1 to h3`),
- a link or image with an empty destination (`[text]()`),
- a mermaid fence with nothing in it,
- a wikilink that resolves to nothing, or to several documents,
- a relative link or embed to a file that does not exist,
- frontmatter the index ignores (not valid YAML, or past the limits of `frontmatter.py`),
- a `supersedes` entry that names no document of this folder.

Pure: the caller gives the folder's `LinkResolver` (its documents and attachments). Advisory by construction:
a lint that fails on some text (a RecursionError, a value Python cannot hold) is logged and said as a
warning of its own; `lint` never raises for any text (MemoryError aside).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence

from ragdown.documents.blocks import BlockScan, scan_blocks
from ragdown.documents.frontmatter import frontmatter_end, read_yaml_mapping
from ragdown.documents.links import LinkResolver, find_links
from ragdown.documents.meta import resolve_supersedes, supersedes_entries
from ragdown.documents.text import mask_code_spans, normalize_text, split_lines

log = logging.getLogger(__name__)

# `(`, blanks, an optional `<>` with blanks after it, `)`: one way to match each blank, so a run of them with no
# `)` after it is read once (`\(\s*(?:<\s*>)?\s*\)` tried every split of the run: O(n²), hours for a 4 MiB line).
_EMPTY_DESTINATION = re.compile(r"(!?)\[([^\[\]\n]*)\]\(\s*(?:<\s*>\s*)?\)")
_MERMAID = re.compile(r"^\s{0,3}(```+|~~~+)\s*mermaid\b", re.IGNORECASE)
_SUPERSEDES_KEY = re.compile(r"^supersedes\s*:")
MAX_WARNINGS = 50


def lint(text: str, path: str, resolver: LinkResolver | None = None) -> list[str]:
    """Warnings for `text`, the document at folder-relative `path`, each `line N: what`; at most 50."""
    lines: list[str] = []
    body = 0
    scans: list[BlockScan] = []

    def split() -> list[str]:
        nonlocal lines, body
        lines = split_lines(normalize_text(text))
        body = frontmatter_end(lines)
        return []

    def scan() -> BlockScan:
        if not scans:
            scans.append(scan_blocks(lines, body))
        return scans[0]

    warnings = _advisory("the text", path, split)
    if warnings:
        return warnings
    checks: list[tuple[str, Callable[[], list[str]]]] = [
        ("frontmatter", lambda: _frontmatter(lines, body, path, resolver)),
        ("heading", lambda: _headings(scan())),
        ("empty link", lambda: _empty_destinations(lines, body, scan())),
        ("mermaid", lambda: _empty_mermaid(lines, scan().fences)),
    ]
    if resolver is not None:
        checks.append(("link", lambda: _links(text, path, resolver)))
    for name, check in checks:
        warnings.extend(_advisory(name, path, check))
    warnings.sort(key=_line_number)  # by line, stable within one
    return warnings[:MAX_WARNINGS]


def _advisory(name: str, path: str, check: Callable[[], list[str]]) -> list[str]:
    """One lint's warnings; a lint that fails is logged and said, never the write's failure."""
    try:
        return check()
    except MemoryError:
        raise
    except Exception as error:
        log.warning("%s: the %s lint failed: %s: %s", path, name, type(error).__name__, error)
        return [f"line 1: the {name} lint could not check this document ({type(error).__name__})"]


def _line_number(warning: str) -> int:
    try:
        return int(warning.split(":", 1)[0].split()[1])
    except (IndexError, ValueError):
        return 0


def _headings(scan: BlockScan) -> list[str]:
    out: list[str] = []
    previous = 0
    for heading in scan.headings:
        if previous and heading.level > previous + 1:
            out.append(f"line {heading.start + 1}: heading level jumps from h{previous} to h{heading.level}")
        previous = heading.level
    return out


def _empty_destinations(lines: Sequence[str], body: int, scan: BlockScan) -> list[str]:
    out: list[str] = []
    for number, line in enumerate(lines, 1):
        if number - 1 < body or scan.is_code(number - 1):
            continue
        for match in _EMPTY_DESTINATION.finditer(mask_code_spans(line)):
            what = "an image" if match.group(1) else "a link"
            out.append(f"line {number}: {what} with an empty destination: {match.group(0)}")
    return out


def _frontmatter(lines: Sequence[str], body: int, path: str, resolver: LinkResolver | None) -> list[str]:
    if body == 0 or not lines or lines[0].strip() != "---":
        return []
    read = read_yaml_mapping("\n".join(lines[1 : body - 1]))
    if read.problem is not None:
        where = f"line {read.line + 2}" if read.line is not None else "line 1"
        if read.syntax is not None:
            return [f"{where}: the frontmatter is not valid YAML ({read.syntax})"]
        return [f"{where}: the frontmatter is ignored: {read.problem}"]
    if resolver is None or "supersedes" not in read.data:
        return []
    number = next((i + 1 for i in range(1, body - 1) if _SUPERSEDES_KEY.match(lines[i])), 1)
    directory = path.rpartition("/")[0]
    out: list[str] = []
    for entry in supersedes_entries(read.data["supersedes"]):
        resolved = resolve_supersedes(entry, directory)
        if resolved is None or resolved not in resolver.documents:
            out.append(f"line {number}: supersedes {entry} names no document in this folder")
    return out


def _empty_mermaid(lines: Sequence[str], fences: tuple[tuple[int, int], ...]) -> list[str]:
    out = []
    for start, end in fences:
        if _MERMAID.match(lines[start]) and not any(line.strip() for line in lines[start + 1 : end - 1]):
            out.append(f"line {start + 1}: an empty mermaid diagram")
    return out


def _links(text: str, path: str, resolver: LinkResolver) -> list[str]:
    out = []
    for link in find_links(text):
        if link.kind == "wiki":
            found = resolver.candidates(link.raw, path)
            if not found:
                out.append(f"line {link.line}: {link.raw} links to nothing in this folder")
            elif len(found) > 1:
                out.append(
                    f"line {link.line}: {link.raw} could mean several documents: {', '.join(found[:5])}"
                )
            continue
        target = link.target.strip()
        if not target or target.startswith(("#", "/")) or re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:", target):
            continue
        if resolver.resolve_link(link, path) is None:
            what = "an embed" if link.embed else "a link"
            out.append(f"line {link.line}: {what} to a missing file: {target}")
    return out
