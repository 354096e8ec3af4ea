"""What BM25 reads: a chunk's text (and a query) with each CJK run split into overlapping bigrams.

FTS5's unicode61 tokenizer splits on spaces and punctuation, and Chinese and Japanese put none between
words, so a whole CJK sentence became one token that no query could match. Each run of Han, kana or Hangul
is rewritten as its overlapping character bigrams (`附件默认` → `附件 件默 默认`; a single character stays
itself), the standard CJK segmentation of search engines without a dictionary. The same function runs on
the indexed text (through the SQL function `ragdown_lexical` in the FTS triggers) and on the query, so
both sides agree. Text without CJK characters is returned unchanged.
"""

from __future__ import annotations

import re

SQL_FUNCTION = "ragdown_lexical"

_CJK = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han, extension A, compatibility ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\U00020000-\U0002fa1f"  # Han extensions B-F, compatibility supplement
)
_CJK_RUN = re.compile(f"[{_CJK}]+")
_CJK_CHAR = re.compile(f"[{_CJK}]")


def is_cjk(ch: str) -> bool:
    return bool(_CJK_CHAR.match(ch))


def _bigrams(match: re.Match[str]) -> str:
    run = match.group(0)
    if len(run) == 1:
        return f" {run} "
    return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "


def lexical_text(text: str | None) -> str:
    """`text` as the BM25 index reads it: CJK runs as space-separated overlapping bigrams."""
    if not text:
        return text or ""
    if not _CJK_CHAR.search(text):
        return text
    return _CJK_RUN.sub(_bigrams, text)
