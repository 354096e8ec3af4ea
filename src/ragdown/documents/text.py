"""Small text helpers shared by the parsers: line endings, Markdown paths, inline code spans."""

from __future__ import annotations

import posixpath
import re

from ragdown.core.paths import MARKDOWN_EXTENSIONS

BOM = "\ufeff"

_NEWLINES = re.compile(r"\r\n?")
_BACKTICKS = re.compile(r"`+")


def normalize_text(text: str) -> str:
    """The text links and chunks are measured in: a leading BOM dropped, CRLF and CR turned into LF."""
    if text.startswith(BOM):
        text = text[1:]
    if "\r" in text:
        text = _NEWLINES.sub("\n", text)
    return text


def split_lines(text: str) -> list[str]:
    """Lines of an already normalised text, split on LF only (never on other Unicode breaks)."""
    return text.split("\n")


def is_blank(line: str) -> bool:
    """True for an empty or whitespace-only line."""
    return not line.strip()


def has_crlf(text: str) -> bool:
    """Whether the text uses CRLF line endings anywhere."""
    return "\r\n" in text


def to_crlf(text: str) -> str:
    """The text with every line ending written as CRLF."""
    return _NEWLINES.sub("\n", text).replace("\n", "\r\n")


def strip_markdown_extension(path: str) -> str:
    """The path without its Markdown extension, or unchanged when it has none."""
    lower = path.lower()
    for extension in MARKDOWN_EXTENSIONS:
        if lower.endswith(extension):
            return path[: -len(extension)]
    return path


def stem(path: str) -> str:
    """The file name without its extension: `notes/todo-list.md` gives `todo-list`."""
    name = posixpath.basename(path.replace("\\", "/"))
    root, _ = posixpath.splitext(name)
    return root or name


def code_spans(line: str) -> list[tuple[int, int]]:
    """Half-open ranges of the inline code spans in one line, found in linear time.

    A run of N backticks opens a span that the next run of exactly N backticks closes; a run with no
    partner is literal text.
    """
    if "`" not in line:
        return []
    runs = [(match.start(), match.end()) for match in _BACKTICKS.finditer(line)]
    following: list[int] = [-1] * len(runs)
    last_of_length: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        following[index] = last_of_length.get(length, -1)
        last_of_length[length] = index
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        partner = following[index]
        if partner == -1:
            index += 1
            continue
        spans.append((runs[index][0], runs[partner][1]))
        index = partner + 1
    return spans


def mask_code_spans(line: str) -> str:
    """The line with each inline code span replaced by spaces, so offsets are kept."""
    spans = code_spans(line)
    if not spans:
        return line
    pieces: list[str] = []
    at = 0
    for start, end in spans:
        pieces.append(line[at:start])
        pieces.append(" " * (end - start))
        at = end
    pieces.append(line[at:])
    return "".join(pieces)
