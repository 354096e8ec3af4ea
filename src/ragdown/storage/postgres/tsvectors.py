"""What PostgreSQL's full-text search reads: the same tokens FTS5 makes of `lexical.py`'s text, made in Python.

The SQLite index tokenises `lexical.lexical_text` (CJK runs as words, bigrams and characters; symbol names
joined as private-use characters) with FTS5's `unicode61` tokenizer. PostgreSQL's parser would cut that text
differently (it keeps `-`-compounds and e-mail addresses whole, splits private-use characters off, folds
case by the database's locale), so the PostgreSQL store does not let it parse anything: each chunk's
`tsvector` and each query's `tsquery` are written here as literals (the `simple` configuration's job, done
before PostgreSQL sees it), with `unicode61`'s rules: a token is a run of letters, digits and private-use
characters, lowercased, Latin diacritics removed (`remove_diacritics 2`). So a word matches in PostgreSQL
exactly where it matches in SQLite.

- `tsvector_literal`: the breadcrumb's tokens with weight A, the text's with D, the aliases' with B, one
  position apart per token and a gap between the parts (a phrase never spans two of them). PostgreSQL keeps
  positions up to 16383 and 256 per word; a section is at most a few thousand tokens.
- `match_terms` reads the store interface's query language (`search.query.fts_match`: quoted terms joined by
  `OR`), `term_query` makes one term a `tsquery` (a phrase of its tokens `<->` joined).
- `trigram_literal`: the distinct three-character substrings of each part, lowercased, for the substring
  pass (FTS5's `trigram` tokenizer); a candidate is then checked against the stored folded text.

Ranking is BM25 like FTS5's (`k1 = 1.2`, `b = 0.75`, the same IDF), computed in SQL by `storage/postgres/store.py` from
`ts_rank_cd` per term (for one word or phrase, the sum of its occurrences' weights: the weighted term
frequency) and each chunk's token count.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from ragdown.storage.lexical import lexical_text
from ragdown.storage.lexical import signature as lexical_signature

TOKENS_VERSION = 1
MAX_POSITION = 16383
MAX_TOKEN_BYTES = 1000  # PostgreSQL refuses a word over 2046 bytes; both sides cut tokens alike
_GAP = 2  # positions between the breadcrumb, the text and the aliases
FOLD_SEPARATOR = "\x1f"  # between the folded breadcrumb, text and aliases in the `fold` column


def signature() -> str:
    """What makes the tokens: `lexical.py`'s rules and segmenter, and this module's."""
    return f"{lexical_signature()};pg{TOKENS_VERSION}"


def _token_char(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat[0] in "LN" or cat == "Co"


def _fold_char(ch: str) -> str:
    low = ch.lower()
    if ord(ch) < 0x250 and not low.isascii():  # Latin letters lose their diacritics, as remove_diacritics 2
        low = "".join(c for c in unicodedata.normalize("NFD", low) if unicodedata.category(c) != "Mn")
    return low


_ASCII_WORD = re.compile(r"[A-Za-z0-9]+")


def tokens(text: str) -> list[str]:
    """`text` cut as FTS5's `unicode61 remove_diacritics 2` cuts it: lowercased runs of token characters."""
    if text.isascii():
        return [t[:MAX_TOKEN_BYTES] for t in _ASCII_WORD.findall(text.lower())]
    out: list[str] = []
    current: list[str] = []
    for ch in text:
        if _token_char(ch):
            current.append(_fold_char(ch))
        elif current:
            out.append(_cut("".join(current)))
            current = []
    if current:
        out.append(_cut("".join(current)))
    return [t for t in out if t]


def _cut(token: str) -> str:
    data = token.encode()
    if len(data) <= MAX_TOKEN_BYTES:
        return token
    return data[:MAX_TOKEN_BYTES].decode(errors="ignore")


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def lexical_tokens(breadcrumb: str, text: str, aliases: str) -> tuple[list[str], list[str], list[str]]:
    return tokens(lexical_text(breadcrumb)), tokens(lexical_text(text)), tokens(lexical_text(aliases))


def tsvector_literal(parts: Sequence[tuple[Sequence[str], str]]) -> tuple[str, int]:
    """A `tsvector` of (tokens, weight letter) parts, and the number of tokens (BM25's document length)."""
    positions: dict[str, list[str]] = {}
    pos = 0
    count = 0
    for toks, weight in parts:
        suffix = "" if weight == "D" else weight
        for tok in toks:
            pos = min(pos + 1, MAX_POSITION)
            count += 1
            positions.setdefault(tok, []).append(f"{pos}{suffix}")
        pos += _GAP
    # A token is letters, digits and private-use characters only: nothing in it needs quoting.
    literal = " ".join(f"'{tok}':{','.join(ps[:256])}" for tok, ps in positions.items())
    return literal, count


def fold(text: str) -> str:
    """What the substring pass compares: lowercased (as FTS5's `trigram` tokenizer folds case), no NUL."""
    return text.lower().replace(FOLD_SEPARATOR, " ")


def trigrams(folded: str) -> set[str]:
    return {folded[i : i + 3] for i in range(len(folded) - 2)}


def trigram_literal(parts: Iterable[str]) -> str:
    """The distinct trigrams of each (folded, NUL-free) part, as a `tsvector` without positions."""
    grams: set[str] = set()
    for part in parts:
        grams |= {part[i : i + 3] for i in range(len(part) - 2)}
    if not grams:
        return ""
    body = "\x00".join(grams)  # quoted all at once: a NUL is in no text PostgreSQL stores
    if "'" in body or "\\" in body:
        body = body.replace("\\", "\\\\").replace("'", "''")
    return "'" + body.replace("\x00", "' '") + "'"


_TERM = re.compile(r'"((?:[^"]|"")*)"')


def match_terms(match: str) -> list[str]:
    """The terms of a match expression (`"a b" OR "c"`): each quoted string, unescaped, in order."""
    return [m.group(1).replace('""', '"') for m in _TERM.finditer(match)]


def term_query(term: str) -> str | None:
    """One term as a `tsquery`: its tokens as a phrase; None when it holds none."""
    toks = tokens(term)
    if not toks:
        return None
    return " <-> ".join(_quote(t) for t in toks)


def substring_query(term: str) -> tuple[str, str] | None:
    """A substring as (the `tsquery` AND-ing its trigrams, the folded substring); None under 3 characters."""
    folded = fold(term)
    grams = sorted(trigrams(folded))
    if not grams:
        return None
    return " & ".join(_quote(g) for g in grams), folded


def clean(text: str) -> str:
    """Text PostgreSQL can store: no NUL character (a file may hold one past the indexer's binary check)."""
    return text.replace("\x00", "\ufffd") if "\x00" in text else text
