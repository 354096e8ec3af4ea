"""What a query holds: its terms for BM25, whether it names an identifier, what it quotes, which aliases it says."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from ragdown.storage.lexical import has_cjk, is_cjk, lexical_text, query_pieces, query_text

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


_JOINER = "-_./:+"
# A word: letters and digits, or the private-use characters of a joined symbol name (`lexical.query_text`).
_WORD = r"(?:[^\W_]|[\ue000-\uf8ff])+"
_TERM = re.compile(f"{_WORD}(?:[-_./:+]{_WORD})*")
_SPLIT = re.compile(r"[-_./:+]")


def _terms(text: str) -> list[str]:
    singles: list[tuple[int, str]] = []
    phrases: list[tuple[int, str]] = []
    for position, match in enumerate(_TERM.finditer(text.lower())):
        parts = [p for p in _SPLIT.split(match.group(0)) if p]
        if len(parts) > 1:
            phrases.append((position, " ".join(parts)))
        elif parts:
            singles.append((position, parts[0]))
    meaningful = [(i, t) for i, t in singles if t not in STOP_WORDS]
    if meaningful or phrases:
        singles = meaningful
    seen: dict[str, None] = {}
    for _, term in sorted(singles + phrases):
        seen.setdefault(term, None)
    return list(seen)


def fts_terms(query: str) -> list[str]:
    """The query's BM25 terms in order: words, and each compound as one phrase of its parts.

    A compound is a run of letters and digits joined by `-`, `_`, `.`, `/`, `:` or `+` with no space
    (`db-curlew-indexer`, `pg_restore`, `v1.2.3`, `Ctrl+Shift+T`): it is matched as the phrase of its
    parts, which unicode61 indexes as separate tokens, so a chunk holding the name whole outranks one that
    only shares its common parts. Stop words are dropped from the single words unless nothing else is left.
    CJK runs become the tokens of `lexical.query_text` first (words, and the bigrams and characters of the
    pieces between Chinese stop words, which are dropped unless nothing else is left); a symbol name that
    unicode61 would strip (`C++`, `.obsidian`) becomes its joined token, as in the index.
    """
    terms = _terms(query_text(query))
    if not terms and has_cjk(query):
        terms = _terms(query_text(query, keep_stop_words=True))
    return terms


_INDEX_TOKEN = re.compile(_WORD)


def coverage(terms: list[str], text: str) -> float:
    """The share of a query's BM25 terms (`fts_terms`) that `text` holds as the index reads it.

    A word must be one of the text's tokens, a compound's phrase a run of them; CJK terms are matched
    against the text's words, bigrams and characters (`lexical.lexical_text`). 0 for a query without terms.
    """
    if not terms:
        return 0.0
    tokens = " " + " ".join(_INDEX_TOKEN.findall(lexical_text(text).lower())) + " "
    return sum(f" {term} " in tokens for term in terms) / len(terms)


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts_match(query: str) -> str | None:
    """An FTS5 MATCH expression OR-ing the query's terms (`fts_terms`), each quoted; None when there are none."""
    terms = fts_terms(query)
    if not terms:
        return None
    return " OR ".join(_quoted(t) for t in terms)


_SUBSTRING = re.compile(r"\.?[^\W_]+(?:[-_./:+#][^\W_]+)*(?:\+\+|#)?")


def substring_match(query: str) -> str | None:
    """An FTS5 MATCH expression for the trigram table: the substrings of the query worth looking for.

    Each CJK piece between stop words (`lexical.query_pieces`) gives its three-character substrings; each
    other word or compound of three or more characters is looked for as written (`workspace`, `iso-27001`,
    `.obsidian`), and so is each part of a compound (`27001`, found in `ISO27001` too), stop words aside.
    The trigram tokenizer matches nothing shorter than three characters.
    """
    grams: list[str] = []
    for piece in query_pieces(query):
        grams += [piece[i : i + 3] for i in range(len(piece) - 2)]
    latin = "".join(" " if is_cjk(ch) else ch for ch in query.lower())
    for match in _SUBSTRING.finditer(latin):
        word = match.group(0)
        parts = [p for p in _SPLIT.split(word.strip(".+#")) if p]
        for sub in (word, *parts) if len(parts) > 1 else (word,):
            if len(sub) >= 3 and sub not in STOP_WORDS:
                grams.append(sub)
    seen = list(dict.fromkeys(grams))
    return " OR ".join(_quoted(t) for t in seen) if seen else None


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


def is_single_term(query: str) -> bool:
    """A query of one word or one compound (`kowalczyk`, `db-curlew-indexer`): a lookup, not a question."""
    text = query.strip()
    return bool(text) and len(text.split()) == 1 and len(fts_terms(text)) == 1


def names_identifier(query: str) -> bool:
    """True when the query names an identifier, so it leans on BM25 (score fusion instead of rank fusion)."""
    return bool(identifier_spans(query))


_QUOTED = re.compile(r"`([^`\n]+)`|\"([^\"\n]+)\"|“([^”\n]+)”")


def quoted_spans(query: str) -> list[str]:
    """What the query quotes in backticks or double quotes, stripped; empty spans dropped."""
    spans: list[str] = []
    for match in _QUOTED.finditer(query):
        span = next(g for g in match.groups() if g is not None).strip()
        if span and span not in spans:
            spans.append(span)
    return spans


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
        # CJK has no spaces between words: a CJK edge of the phrase needs no boundary there.
        starts_ok = is_cjk(needle[0]) or not _is_word_char(before)
        ends_ok = is_cjk(needle[-1]) or not _is_word_char(after)
        if starts_ok and ends_ok:
            return True
        start = i + 1


def aliases_in(query: str, aliases: Iterable[tuple[str, str]]) -> set[str]:
    """Paths whose alias (3+ characters) the query holds whole, case-insensitively."""
    lowered = query.lower()
    return {path for alias, path in aliases if len(alias.strip()) >= 3 and holds_phrase(lowered, alias)}


# A clause ends at `;` before a space, at a sentence's end (`.?!`) before a capital or CJK, or at a full-width
# `；。？！`; a colon does not end one (what follows it often elaborates the topic rather than asking). A
# clause counts with three words or more, or four CJK characters.
_CLAUSE_END = re.compile(r"(?<=;)\s+|(?<=[.?!])\s+(?=[A-Z\u3040-\u30ff\u3400-\u9fff])|(?<=[；。？！])\s*")


def _is_clause(text: str) -> bool:
    return len(words(text)) >= 3 or sum(map(is_cjk, text)) >= 4


ASK_MAX_CLAUSES = 3
ASK_MAX_WORDS = 40
ASK_MIN_TERMS = 2


def ask_clause(query: str) -> str | None:
    """The last clause of a compound question ("Sync skips hidden folders; how do I open that one?"), or None.

    A question in two parts says its context first and what it asks last: the asking clause alone finds the
    section that answers, which the context's words can outrank (the context often matches the note that
    links to the answer). None when the query is one clause, or a part is too short to count as one, or
    when it is longer than a question (over `ASK_MAX_CLAUSES` clauses or `ASK_MAX_WORDS` words: a prompt
    the hook reads, whose last sentence is as likely a closing remark as what it asks), or when the asking
    clause holds fewer than `ASK_MIN_TERMS` words that carry meaning.
    """
    parts = [p.strip() for p in _CLAUSE_END.split(query.strip()) if p and p.strip()]
    if not 2 <= len(parts) <= ASK_MAX_CLAUSES or len(words(query)) > ASK_MAX_WORDS:
        return None
    if not all(_is_clause(p) for p in (parts[0], parts[-1])):
        return None
    # "What should I do?" or "how do I use it?" says too little to be searched on its own: the clause must hold
    # two words that carry meaning (not `STOP_WORDS`), or CJK text.
    ask = parts[-1]
    if sum(w not in STOP_WORDS for w in words(ask)) < ASK_MIN_TERMS and not has_cjk(ask):
        return None
    return ask
