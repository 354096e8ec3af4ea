"""Exact-passage replacements for `ragdown_edit` (A11 `applyReplacements`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragdown.documents.errors import EditError
from ragdown.documents.text import has_crlf


@dataclass(frozen=True)
class Edit:
    """One passage to swap: `old_text` exactly as in the document, `new_text` (may be empty)."""

    old_text: str
    new_text: str
    replace_all: bool = False


@dataclass(frozen=True)
class _Passage:
    start: int
    end: int
    text: str


def apply_replacements(text: str, edits: Sequence[Edit]) -> tuple[str, int]:
    """`text` with every edit made in order, each on the result of the one before, and the number of
    passages replaced. All or nothing: the first edit that cannot apply raises `EditError`.

    Matching is literal on LF text; a text with CRLF line endings comes back with CRLF endings.
    Refuses (`invalid`) an edit that changes nothing, (`not_found`) one whose `old_text` is missing (naming
    the nearest passage) and (`conflict`) one whose `old_text` is there more than once without `replace_all`.
    """
    crlf = has_crlf(text)
    current = _lf(text)
    replaced = 0
    total = len(edits)
    for index, edit in enumerate(edits):
        which = f"edit {index + 1} of {total}"
        old = _lf(edit.old_text)
        new = _lf(edit.new_text)
        if not old:
            raise EditError("invalid", f"{which}: old_text is empty, so nothing was written")
        if old == new:
            raise EditError("invalid", f"{which}: old_text and new_text are the same, so nothing was written")
        occurrences = current.count(old)
        if occurrences == 0:
            raise EditError(
                "not_found",
                f"{which}: old_text is not in the document, so nothing was written. {_hint(current, old, index == 0)}",
            )
        if occurrences > 1 and not edit.replace_all:
            raise EditError(
                "conflict",
                f"{which}: old_text is in the document {occurrences} times, so nothing was written. "
                "Add the text around the one you mean until it matches once, or pass replace_all: true",
            )
        current = current.replace(old, new)
        replaced += occurrences
    return (current.replace("\n", "\r\n") if crlf else current), replaced


def _hint(text: str, old: str, with_lines: bool) -> str:
    nearest = _nearest_passage(text, old)
    if nearest is None:
        return (
            "It must match character for character, whitespace included: "
            "read the document again and copy the passage from it"
        )
    lines = f" (lines {nearest.start}-{nearest.end})" if with_lines else ""
    return f"The nearest passage{lines} follows; copy old_text from it exactly:\n{nearest.text}"


def _nearest_passage(text: str, old: str) -> _Passage | None:
    """The passage `old` most likely meant: one that differs only in whitespace, else the lines from
    the first line equal to `old`'s first line (compared trimmed)."""
    words = old.split()
    if not words:
        return None
    spaced = re.search(r"\s+".join(re.escape(word) for word in words), text)
    if spaced is not None:
        start = text.count("\n", 0, spaced.start()) + 1
        return _Passage(start, start + spaced.group().count("\n"), spaced.group())
    old_lines = old.strip().split("\n")
    first = old_lines[0].strip()
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if line.strip() == first:
            passage = lines[number : number + len(old_lines)]
            return _Passage(number + 1, number + len(passage), "\n".join(passage))
    return None


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")
