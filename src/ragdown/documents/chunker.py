"""Heading-scoped chunks with breadcrumbs and the original file's line numbers (spec A4).

Version 3 differs from the v2 rules of the original in three deliberate ways: headings come from a
CommonMark parse (so setext headings count, and `#` lines inside lists, block quotes, HTML blocks or
indented code do not), a closed fenced code block is never split even when it is longer than the
limit (the seed: "Fenced code blocks are never split"; an unclosed fence is split like text), and a chunk's text is always the original lines
it spans (blank lines between packed paragraphs included) rather than paragraphs re-joined by one
blank line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragdown.documents.blocks import BlockScan, scan_blocks
from ragdown.documents.frontmatter import frontmatter_of_lines
from ragdown.documents.model import HEADING_SEPARATOR, Chunk
from ragdown.documents.text import is_blank, normalize_text, split_lines
from ragdown.documents.title import document_title

CHUNKER_VERSION = 4  # chunks and trees: a change to either (its node ids too) rebuilds the index
MAX_CHUNK_CHARS = 1500


def breadcrumb(title: str, heading: str) -> str:
    """Title and heading path as one line; the title is not repeated when the path starts with it."""
    if not heading or heading == title:
        return title
    if heading.startswith(f"{title}{HEADING_SEPARATOR}"):
        return heading
    return f"{title}{HEADING_SEPARATOR}{heading}"


def chunk_markdown(text: str, path: str, *, max_chunk_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """Split a Markdown document into heading-scoped chunks (see the module docstring for the rules)."""
    lines = split_lines(normalize_text(text))
    front = frontmatter_of_lines(lines)
    body_start = front.body_start_line - 1
    scan = scan_blocks(lines, body_start)
    title = document_title(front.data.get("title"), scan, path)
    return chunk_lines(lines, body_start, scan, title, max_chunk_chars)


@dataclass(frozen=True)
class _Piece:
    """Lines `start`..`end` (0-based, half-open), or a character slice of one line when `cut` is set."""

    start: int
    end: int
    cut: str | None = None


class _Spans:
    """Lengths of line ranges as they would be joined with LF, in O(1) each."""

    def __init__(self, lines: Sequence[str]) -> None:
        self._prefix = [0]
        total = 0
        for line in lines:
            total += len(line)
            self._prefix.append(total)
        self._lines = lines

    def length(self, start: int, end: int) -> int:
        return self._prefix[end] - self._prefix[start] + (end - start - 1)

    def text(self, start: int, end: int) -> str:
        return "\n".join(self._lines[start:end])


def chunk_lines(
    lines: Sequence[str], body_start: int, scan: BlockScan, title: str, max_chunk_chars: int
) -> list[Chunk]:
    """Chunks of a document already split into normalised lines and scanned for blocks."""
    limit = max(1, max_chunk_chars)
    spans = _Spans(lines)
    fence_end = dict(scan.fences)
    chunks: list[Chunk] = []

    def emit(heading: str, piece: _Piece) -> None:
        text = piece.cut if piece.cut is not None else spans.text(piece.start, piece.end)
        chunks.append(
            Chunk(
                index=len(chunks),
                heading=heading,
                breadcrumb=breadcrumb(title, heading),
                text=text,
                start_line=piece.start + 1,
                end_line=piece.end if piece.cut is None else piece.start + 1,
            )
        )

    stack: list[str] = []
    heading = ""
    section_start = body_start
    for block in (*scan.headings, None):
        section_end = block.start if block is not None else len(lines)
        for piece in _pack(
            _paragraphs(lines, section_start, section_end, fence_end), spans, limit, fence_end
        ):
            emit(heading, piece)
        if block is None:
            break
        del stack[block.level - 1 :]
        stack.extend([""] * (block.level - 1 - len(stack)))
        stack.append(block.text)
        heading = HEADING_SEPARATOR.join(name for name in stack if name)
        section_start = block.end

    if not chunks:
        count = len(lines)
        start = min(body_start + 1, count)
        body = "\n".join(lines[body_start:]).strip()
        chunks.append(
            Chunk(
                index=0,
                heading="",
                breadcrumb=title,
                text=body or title,
                start_line=start,
                end_line=max(start, count),
            )
        )
    return chunks


def _paragraphs(
    lines: Sequence[str], start: int, end: int, fence_end: dict[int, int]
) -> list[tuple[int, int]]:
    """Runs of non-blank lines in `start`..`end`; a fenced block is inside one run whatever it holds."""
    paragraphs: list[tuple[int, int]] = []
    open_at = -1
    index = start
    while index < end:
        fence_stop = fence_end.get(index)
        if fence_stop is not None:
            if open_at < 0:
                open_at = index
            index = min(fence_stop, end)
            continue
        if is_blank(lines[index]):
            if open_at >= 0:
                paragraphs.append((open_at, index))
                open_at = -1
        elif open_at < 0:
            open_at = index
        index += 1
    if open_at >= 0:
        paragraphs.append((open_at, end))
    return paragraphs


def _pack(
    paragraphs: list[tuple[int, int]], spans: _Spans, limit: int, fence_end: dict[int, int]
) -> list[_Piece]:
    """Greedy packing of paragraphs into pieces of at most `limit` characters of original text."""
    pieces: list[_Piece] = []
    open_piece: _Piece | None = None
    for start, end in paragraphs:
        parts = (
            [_Piece(start, end)]
            if spans.length(start, end) <= limit
            else _hard_split(start, end, spans, limit, fence_end)
        )
        for part in parts:
            mergeable = (
                open_piece is not None
                and open_piece.cut is None
                and part.cut is None
                and spans.length(open_piece.start, part.end) <= limit
            )
            if mergeable and open_piece is not None:
                open_piece = _Piece(open_piece.start, part.end)
                continue
            if open_piece is not None:
                pieces.append(open_piece)
            open_piece = part
    if open_piece is not None:
        pieces.append(open_piece)
    return pieces


def _hard_split(start: int, end: int, spans: _Spans, limit: int, fence_end: dict[int, int]) -> list[_Piece]:
    """An oversized paragraph cut at line boundaries; a fenced block stays whole, and a single line
    longer than the limit is cut by characters, each piece on that line."""
    atoms: list[tuple[int, int]] = []
    index = start
    while index < end:
        stop = min(fence_end.get(index, index + 1), end)
        atoms.append((index, stop))
        index = stop
    pieces: list[_Piece] = []
    group_start = -1
    group_end = -1
    for atom_start, atom_end in atoms:
        if group_start >= 0 and spans.length(group_start, atom_end) <= limit:
            group_end = atom_end
            continue
        if group_start >= 0:
            pieces.append(_Piece(group_start, group_end))
            group_start = -1
        is_fence = atom_end - atom_start > 1 or atom_start in fence_end
        if spans.length(atom_start, atom_end) <= limit or is_fence:
            group_start, group_end = atom_start, atom_end
            continue
        line = spans.text(atom_start, atom_end)
        pieces.extend(
            _Piece(atom_start, atom_start + 1, line[at : at + limit]) for at in range(0, len(line), limit)
        )
    if group_start >= 0:
        pieces.append(_Piece(group_start, group_end))
    return pieces
