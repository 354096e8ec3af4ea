"""Footnote definitions of a document (`[^1]: …`, `[^note]: …`), found outside code, with their lines.

Read by markdown-it's footnote extension (mdit-py-plugins), as CommonMark and Obsidian read them: a
definition goes on over the lines indented by four spaces (blank lines between them included) and over
lazy continuation lines of its paragraph; one inside a code block is none. Labels are found as written and,
failing that, case-insensitively (as GitHub matches them). Each definition knows the web addresses its
links go to, reference-style ones (`[spec][s]` with `[s]: https://…` anywhere in the document) included.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragdown.documents.blocks import MAX_NESTING
from ragdown.documents.frontmatter import frontmatter_end
from ragdown.documents.text import is_blank, normalize_text, split_lines

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_LABEL_PREFIX = re.compile(r"^ *\[\^[^\]]+\]:[ \t]?")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


@dataclass(frozen=True)
class Footnote:
    label: str
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str  # the definition's text, its `[^label]:` and the continuation indent dropped
    urls: tuple[str, ...] = ()  # where its links to the web go (http:, mailto:, …), in order, once each


@functools.cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.footnote import footnote_plugin

    parser = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING}).use(footnote_plugin)
    parser.disable("footnote_tail")  # the definitions stay where they are written, with their lines
    parser.parse("warm[^1]\n\n[^1]: up\n")
    return parser


def footnotes(text: str) -> list[Footnote]:
    """Every footnote definition, in document order (a label defined twice: the first counts, as in CommonMark)."""
    lines = split_lines(normalize_text(text))
    body = frontmatter_end(lines)
    source = "\n".join(lines[body:])
    if "[^" not in source:
        return []
    tokens = _parser().parse(source, {})
    found: list[Footnote] = []
    seen: set[str] = set()
    for index, token in enumerate(tokens):
        if token.type != "footnote_reference_open" or token.map is None:
            continue
        label = str(token.meta.get("label", ""))
        first, end = token.map[0] + body, token.map[1] + body
        while end - 1 > first and is_blank(lines[end - 1]):
            end -= 1
        if label in seen:
            continue
        seen.add(label)
        found.append(
            Footnote(label, first + 1, end, _definition_text(lines[first:end]), _urls(tokens, index))
        )
    return found


def _definition_text(lines: Sequence[str]) -> str:
    """A definition's lines without its `[^label]:` and each continuation line's indent (up to four)."""
    parts = [_LABEL_PREFIX.sub("", lines[0], count=1)]
    for line in lines[1:]:
        parts.append(line[1:] if line.startswith("\t") else line[min(4, len(line) - len(line.lstrip(" "))) :])
    return "\n".join(parts).strip()


def _urls(tokens: Sequence[Token], start: int) -> tuple[str, ...]:
    """The web addresses the links of the definition opened at `tokens[start]` go to."""
    urls: dict[str, None] = {}
    depth = 0
    for position in range(start, len(tokens)):  # not `tokens[start:]`: a copy of the rest for each footnote
        token = tokens[position]
        if token.type == "footnote_reference_open":
            depth += 1
        elif token.type == "footnote_reference_close":
            depth -= 1
            if depth == 0:
                break
        for child in token.children or ():
            href = child.attrGet("href") if child.type == "link_open" else None
            if isinstance(href, str) and _SCHEME.match(href):
                urls.setdefault(href, None)
    return tuple(urls)


def footnote_label(wanted: str) -> str:
    """The label a caller means by `1`, `^1` or `[^1]`."""
    return wanted.strip().removeprefix("[").removeprefix("^").removesuffix("]")


def find_footnote(notes: Sequence[Footnote], wanted: str) -> Footnote | None:
    """The footnote `wanted` names (`footnote_label`): as written, else the one label equal to it ignoring
    case."""
    label = footnote_label(wanted)
    exact = next((n for n in notes if n.label == label), None)
    if exact is not None:
        return exact
    folded = [n for n in notes if n.label.casefold() == label.casefold()]
    return folded[0] if len(folded) == 1 else None


def without_footnotes(lines: list[str], notes: list[Footnote]) -> list[tuple[int, str]]:
    """(1-based number, line) of every line that is not part of a footnote definition."""
    skipped = {n for note in notes for n in range(note.start_line, note.end_line + 1)}
    return [(n, line) for n, line in enumerate(lines, 1) if n not in skipped]
