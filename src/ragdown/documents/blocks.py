"""Block structure of a Markdown body, from one markdown-it pass: headings and code regions.

Only the block level is parsed (the inline rule is off), which is what chunking, tags, links and
heading ranges need. Line numbers here are 0-based indices into the whole document's lines, with
half-open ranges.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported on the first parse: a search of an unchanged folder parses nothing
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

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


_GC_LOCK = threading.Lock()
_gc_pauses = 0  # scans running with the cyclic collector paused (threads may scan at once)
_gc_was_enabled = False


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while markdown-it builds a body's tokens, on again after.

    A scan allocates several objects per line that all live until it ends, and each of the collector's full
    passes meanwhile walks every one of them: measured, 1.5x to 2x a heading-dense document's parse. The
    tokens hold no reference cycles (reference counting frees them), so nothing is left for the collector;
    it runs again once the last scan in any thread ends, if it was on when the first began.
    """
    global _gc_pauses, _gc_was_enabled
    with _GC_LOCK:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


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
    with _collector_paused():
        return _scan(lines, body_start, _parser().parse(body))


def _scan(lines: Sequence[str], body_start: int, tokens: Sequence[Token]) -> BlockScan:
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
