"""What a query holds: its words for BM25, whether it names an identifier, which aliases it says."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

# Common English words that match most chunks: dropping them from the OR query keeps BM25 cost
# proportional to the words that carry meaning (FTS5 scores every row an OR query matches).
STOP_WORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have how i if in into is it
    its me my no not of on or our should so that the their them then there these they this to was we were
    what when where which who whom why will with would you your""".split()
)


def _is_word_char(ch: str) -> bool:
    return ch == "_" or unicodedata.category(ch)[0] in "LN"


def words(text: str) -> list[str]:
    """Lowercased runs of letters, digits and `_`: the same units FTS5's unicode61 tokenizer indexes."""
    out: list[str] = []
    current: list[str] = []
    for ch in text.lower():
        if _is_word_char(ch):
            current.append(ch)
        elif current:
            out.append("".join(current))
            current = []
    if current:
        out.append("".join(current))
    return out


def fts_match(query: str) -> str | None:
    """An FTS5 MATCH expression OR-ing the query's words, each quoted; None when there are no words.

    `_` is a separator for unicode61, so `pg_restore` becomes the phrase "pg restore". Stop words are
    dropped unless nothing else is left.
    """
    tokens = [t for t in words(query) if t]
    if not tokens:
        return None
    meaningful = [t for t in tokens if t not in STOP_WORDS] or tokens
    seen: dict[str, None] = {}
    for token in meaningful:
        seen.setdefault(" ".join(p for p in token.split("_") if p), None)
    terms = [t for t in seen if t]
    if not terms:
        return None
    return " OR ".join(f'"{t}"' for t in terms)


_BACKTICK = re.compile(r"`([^`\n]{2,})`")
_SNAKE = re.compile(r"(?<![\w])[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+(?![\w])")
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+(?![\w])")
_SLASHED = re.compile(r"(?<![\w/])/?[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+/?")
_FLAG = re.compile(r"(?<!\S)--?[A-Za-z][A-Za-z0-9_-]*")
_CAMEL = re.compile(
    r"(?<![\w])[A-Za-z][a-z0-9]+[A-Z][A-Za-z0-9]*(?![\w])|(?<![\w])[a-z]+[A-Z][A-Za-z0-9]*(?![\w])"
)
_MIXED = re.compile(r"(?<![\w])(?=[A-Za-z_]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]+(?![\w])")


def _dotted_is_name(match: str) -> bool:
    parts = match.split(".")
    if any(p == "" for p in parts):
        return False
    if all(p.isdigit() for p in parts):
        return False  # a version or a decimal number, not a name
    return sum(len(p) >= 2 for p in parts) >= 2


def _slashed_is_name(match: str) -> bool:
    parts = [p for p in match.split("/") if p]
    if len(parts) < 2:
        return False
    return not all(p.isdigit() for p in parts)  # 10/30 is a date


def identifier_spans(query: str) -> list[str]:
    """The names a query holds: quoted commands, snake_case, dotted/slashed paths, flags, camelCase, a1b2."""
    found: list[str] = [m.group(1) for m in _BACKTICK.finditer(query)]
    found += [m.group(0) for m in _SNAKE.finditer(query)]
    found += [m.group(0) for m in _DOTTED.finditer(query) if _dotted_is_name(m.group(0))]
    found += [m.group(0) for m in _SLASHED.finditer(query) if _slashed_is_name(m.group(0))]
    found += [m.group(0) for m in _FLAG.finditer(query)]
    found += [m.group(0) for m in _CAMEL.finditer(query)]
    found += [m.group(0) for m in _MIXED.finditer(query)]
    return found


def names_identifier(query: str) -> bool:
    """True when the query should lean on BM25 (score fusion) rather than rank fusion."""
    return bool(identifier_spans(query))


def holds_phrase(query_lower: str, phrase: str) -> bool:
    """`phrase` occurs in the (lowercased) query as whole words, case-insensitively."""
    needle = phrase.lower().strip()
    if not needle:
        return False
    start = 0
    while True:
        i = query_lower.find(needle, start)
        if i < 0:
            return False
        before = query_lower[i - 1] if i > 0 else " "
        end = i + len(needle)
        after = query_lower[end] if end < len(query_lower) else " "
        if not _is_word_char(before) and not _is_word_char(after):
            return True
        start = i + 1


def aliases_in(query: str, aliases: Iterable[tuple[str, str]]) -> set[str]:
    """Paths whose alias (3+ characters) the query holds whole, case-insensitively."""
    lowered = query.lower()
    return {path for alias, path in aliases if len(alias.strip()) >= 3 and holds_phrase(lowered, alias)}
