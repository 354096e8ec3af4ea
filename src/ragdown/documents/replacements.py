"""Exact-passage replacements for `ragdown_edit` (A11 `applyReplacements`)."""

from __future__ import annotations

import bisect
import heapq
import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from ragdown.documents.errors import EditError
from ragdown.documents.text import has_crlf

NEAR_RATIO = 0.7  # how alike a span must be (difflib's ratio) to be offered as the passage meant
NEAR_CANDIDATES = 8  # windows compared character by character, after a cheap score picked them
NEAR_MAX_CHARS = 20_000  # a longer old_text is not looked for approximately (the comparison grows with it)
NEAR_PIECES = 64  # three-letter pieces of old_text looked for when none of its words is in the document
NEAR_BY_CHAR = 1_000  # an old_text up to this long is compared character by character, a longer one by words


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
    the first line equal to `old`'s first line (compared trimmed), else the closest span (`_closest`)."""
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
    return _closest(text, old)


def _closest(text: str, old: str) -> _Passage | None:
    """The span of the document most like `old` (a typo, a word changed), if one is close enough
    (`NEAR_RATIO`). Bounded on a large document: each line scores the words it shares with `old` (one
    pass; three-letter pieces when no word is shared), the windows of `old`'s line count with the best sums
    (`NEAR_CANDIDATES`) are narrowed word by word to the part that matches, and only those are compared
    closely: character by character when `old` is short, else word by word."""
    if len(old) > NEAR_MAX_CHARS or not old.strip():
        return None
    lines = text.split("\n")
    count = min(old.strip("\n").count("\n") + 1, len(lines))
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    scores = _line_scores(text, lines, offsets, old)
    sums = [sum(scores[:count])]
    for i in range(1, len(lines) - count + 1):
        sums.append(sums[-1] - scores[i - 1] + scores[i + count - 1])
    starts = heapq.nlargest(NEAR_CANDIDATES, (i for i in range(len(sums)) if sums[i]), key=sums.__getitem__)
    old_words = old.split()
    by_char = len(old) <= NEAR_BY_CHAR
    best: tuple[float, int, int] | None = None
    for i in sorted(starts):
        low, high = _narrow(text, offsets[i], offsets[i + count] - 1, old_words)
        matcher = (
            SequenceMatcher(None, text[low:high], old, autojunk=False)
            if by_char
            else SequenceMatcher(None, text[low:high].split(), old_words, autojunk=False)
        )
        if best is not None and matcher.quick_ratio() <= best[0]:
            continue
        ratio = matcher.ratio()
        if best is None or ratio > best[0]:
            best = (ratio, low, high)
    if best is None or best[0] < NEAR_RATIO:
        return None
    _, low, high = best
    start = text.count("\n", 0, low) + 1
    return _Passage(start, start + text.count("\n", low, high), text[low:high])


def _line_scores(text: str, lines: list[str], offsets: list[int], old: str) -> list[int]:
    """How much of `old` each line holds: the distinct words of `old` in it, or (when no line holds one: a
    typo in `old`'s only word) how many of `old`'s three-letter pieces (`NEAR_PIECES` of them) it holds."""
    words = set(old.split())
    scores = [len(words.intersection(line.split())) for line in lines]
    if any(scores):
        return scores
    low, lowered = old.lower(), text.lower()
    if len(lowered) != len(text):  # a letter whose lower case is longer: match as written, offsets stay true
        low, lowered = old, text
    for piece in sorted({low[i : i + 3] for i in range(len(low) - 2)})[:NEAR_PIECES]:
        holding = {
            bisect.bisect_right(offsets, m.start()) - 1 for m in re.finditer(re.escape(piece), lowered)
        }
        for number in holding:
            scores[number] += 1
    return scores


def _narrow(text: str, low: int, high: int, old_words: list[str]) -> tuple[int, int]:
    """The whole words of `text[low:high]` that match `old_words`: from the first word in common to the
    last, widened by as many words as `old` has before its first and after its last word in common."""
    spans = [(low + m.start(), low + m.end()) for m in re.finditer(r"\S+", text[low:high])]
    matcher = SequenceMatcher(None, [text[a:b] for a, b in spans], old_words, autojunk=False)
    runs = [b for b in matcher.get_matching_blocks() if b.size]
    if not runs:
        return low, high
    first = max(runs[0].a - runs[0].b, 0)
    last = min(runs[-1].a + runs[-1].size + len(old_words) - runs[-1].b - runs[-1].size, len(spans)) - 1
    return spans[first][0], spans[last][1]


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")
