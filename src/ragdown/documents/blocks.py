"""Block structure of a Markdown body, from one markdown-it pass: headings and code regions.

Only the block level is parsed (the inline rule is off), which is what chunking, tags, links and
heading ranges need. Line numbers here are 0-based indices into the whole document's lines, with
half-open ranges.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported on the first parse: a search of an unchanged folder parses nothing
    from markdown_it import MarkdownIt

# Deep enough for any real outline (about 50 nested lists), shallow enough that 2,000-deep nesting
# stays cheap and never nears Python's recursion limit.
MAX_NESTING = 100

_PARSERS: dict[bool, MarkdownIt] = {}  # by whether setext headings are read (`read_setext`)
_PARSER_LOCK = threading.Lock()
_SETEXT = True
# A setext heading over this many characters, or over several lines, is likely a converter's page break: a
# paragraph followed by a bare `---` (MarkIndex's rule, which the parse warns about).
SETEXT_SUSPECT_CHARS = 120


def read_setext(enabled: bool) -> None:
    """Whether this process reads setext headings (`RAGDOWN_SETEXT`, true by default): off, `---` under a
    paragraph is a thematic break and `===` plain text, for libraries converted from PDF or HTML."""
    global _SETEXT
    _SETEXT = enabled


def reads_setext() -> bool:
    return _SETEXT


def _parser() -> MarkdownIt:
    """The block parser for the current setext choice, built on first use under a lock: its rule chains
    are compiled (by a warm-up parse) before any thread shares it."""
    setext = _SETEXT
    parser = _PARSERS.get(setext)
    if parser is None:
        with _PARSER_LOCK:
            parser = _PARSERS.get(setext)
            if parser is None:
                from markdown_it import MarkdownIt

                built = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING})
                built.disable("inline")
                if not setext:
                    built.disable("lheading")
                built.parse("# warm\n")
                _PARSERS[setext] = parser = built
    return parser


@dataclass(frozen=True)
class HeadingBlock:
    """A top-level ATX or setext heading: its level, its text on one line, and the lines it takes."""

    level: int
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class BlockScan:
    """What one parse of a body found. Ranges are 0-based, half-open document line indices."""

    headings: tuple[HeadingBlock, ...] = ()
    # Closed fenced blocks: never split. An unclosed fence runs to the end of its container and is
    # listed with the indented code blocks instead, so a forgotten closing fence cannot turn the
    # rest of a document into one chunk.
    fences: tuple[tuple[int, int], ...] = ()
    code_blocks: tuple[tuple[int, int], ...] = ()
    code_lines: frozenset[int] = field(default_factory=frozenset)
    # Level-2 setext headings that look like a converter's page break (several lines, or long): warned of.
    suspect_setext: tuple[HeadingBlock, ...] = ()

    def is_code(self, line: int) -> bool:
        """Whether the line lies inside a fenced or indented code block."""
        return line in self.code_lines


def scan_blocks(lines: Sequence[str], body_start: int) -> BlockScan:
    """Parse `lines[body_start:]` once and report the headings and code regions, in document lines."""
    body = "\n".join(lines[body_start:])
    if not body.strip():
        return BlockScan()
    tokens = _parser().parse(body)
    headings: list[HeadingBlock] = []
    suspects: list[HeadingBlock] = []
    fences: list[tuple[int, int]] = []
    code_blocks: list[tuple[int, int]] = []
    for index, token in enumerate(tokens):
        if token.map is None:
            continue
        start, end = token.map[0] + body_start, token.map[1] + body_start
        if token.type == "heading_open" and token.level == 0:
            content = tokens[index + 1].content if index + 1 < len(tokens) else ""
            text = " ".join(part.strip() for part in content.split("\n") if part.strip())
            heading = HeadingBlock(int(token.tag[1:]), text, start, end)
            headings.append(heading)
            if token.markup == "-" and ("\n" in content.strip() or len(text) > SETEXT_SUSPECT_CHARS):
                suspects.append(heading)
        elif token.type == "fence":
            end = _trim_blank_tail(lines, start, end)
            closed = end - 1 > start and _closes(lines[end - 1], token.markup)
            (fences if closed else code_blocks).append((start, end))
        elif token.type == "code_block":
            code_blocks.append((start, end))
    code_lines: set[int] = set()
    for start, end in (*fences, *code_blocks):
        code_lines.update(range(start, end))
    return BlockScan(
        tuple(headings), tuple(fences), tuple(code_blocks), frozenset(code_lines), tuple(suspects)
    )


def _closes(line: str, markup: str) -> bool:
    """Whether a line is a closing fence for an opening `markup` (same character, at least as long)."""
    text = line.strip()
    return len(text) >= len(markup) and text == markup[0] * len(text)


def _trim_blank_tail(lines: Sequence[str], start: int, end: int) -> int:
    """The end of a range once trailing blank lines are dropped (an unclosed fence runs to the end of
    its container, blank lines included)."""
    while end - 1 > start and not lines[end - 1].strip():
        end -= 1
    return end
