"""What BM25 reads: a chunk's text (and a query) with CJK runs cut into words, and symbol names kept whole.

FTS5's unicode61 tokenizer splits on spaces and punctuation; Chinese and Japanese put no space between words,
so a whole CJK clause would be one token that no query matches. `lexical_text` (the index side, run by the
FTS triggers through the SQL function `ragdown_lexical`) rewrites each run of Han, kana or Hangul as
space-separated tokens:

- its words of three or more characters: Han stretches cut by a dictionary segmenter (`rjieba`, jieba's
  dictionary and algorithm in Rust), katakana and Hangul stretches whole;
- its overlapping character bigrams (`附件默认` → `附件 件默 默认`): two-character words, and a word the
  segmenter cut another way in the query still match;
- its Han characters one by one, so a one-character word of the query (`装`, `删`) and a partial match
  (`开启` / `启用`) count a little (their BM25 weight is low: every common character is in many chunks).

`query_text` does the same to a query, except that each run is first cut into words and split at the words
that carry no meaning (`STOP_WORDS`: question words, particles, pronouns; a hiragana stretch, in Japanese, is
grammar too): only the pieces between give bigrams and characters, so `怎么` or `的` no longer match every
chunk that says them.

Symbol names that unicode61 would strip of their symbols (`C++` and `C#` become `c`, `.obsidian` becomes the
`obsidian` of every sentence about the app) get a joined token too: the name with its symbols as private-use
characters, which unicode61 keeps inside a token. `lexical_text` appends one per name to the text, and
`query_text` puts it in place of the name, so the query `C++` matches only `C++`. Compounds of two or more
parts (`ISO-27001`, `v2.1`, `Ctrl+Shift+T`) need nothing: a query matches them as the phrase of their parts
(`ragdown.search.query.fts_terms`). Full-width letters and digits are folded (NFKC) first on both sides.

The segmenter is imported the first time a text with Han characters is read (about 0.1 s: its dictionary is
built in memory), so an index without CJK never loads it. Without it (not installed), Han runs get bigrams
and characters only, and a query's bigrams only. `signature()` names what made the tokens: the store
re-tokenises the FTS table when it changes, since the delete trigger must produce the tokens the insert did
(so a segmenter that is installed but fails to import is an error, not a quiet fall-back).

`SEGMENTATION = "bigrams"` brings back the rewriting before (bigrams only, on both sides; no joined names),
for the comparison in `bench/retrieval_cjk.py`.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
import unicodedata
from collections.abc import Callable, Iterator
from importlib import util
from typing import Literal

log = logging.getLogger(__name__)

SQL_FUNCTION = "ragdown_lexical"
SEGMENTER = "rjieba"
LEXICAL_VERSION = 2  # 2: words, bigrams and Han characters; joined symbol names (1: bigrams)

Segmentation = Literal["words", "bigrams"]
SEGMENTATION: Segmentation = "words"

_HAN = "\u3005\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f"
_HIRAGANA = "\u3041-\u309f"
_KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff"  # not ・ (U+30FB), a separator
_HANGUL = "\uac00-\ud7af"
_CJK = _HAN + _HIRAGANA + _KATAKANA + _HANGUL


# The patterns over the CJK ranges are compiled when first used (`_cjk`): `re` walks every code point of a
# range to build a character set, ~10 ms for these four, which a process that reads no CJK (an English
# search: ASCII text never holds a CJK character) never pays.
@functools.cache
def _cjk(name: str) -> re.Pattern[str]:
    return re.compile(
        {
            "run": f"[{_CJK}]+",
            "char": f"[{_CJK}]",
            "han": f"[{_HAN}]",
            "scripts": f"([{_HAN}]+)|([{_HIRAGANA}]+)|([{_KATAKANA}]+)|([{_HANGUL}]+)",
        }[name]
    )


_HAN_SCRIPT, _HIRAGANA_SCRIPT, _KATAKANA_SCRIPT, _HANGUL_SCRIPT = 1, 2, 3, 4
_WIDE = re.compile("[\u3000\uff01-\uffef]")  # full-width forms, half-width katakana

# `.obsidian`, `.NET` (a name after a dot that ends no word), `C++`, `C#`, `g++`.
_SYMBOL_NAME = re.compile(
    r"(?<![A-Za-z0-9_.])\.[A-Za-z_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?"
    r"|(?<![A-Za-z0-9_.+#-])[A-Za-z][A-Za-z0-9]*(?:\+\+|#)(?![A-Za-z0-9_+#])"
)
_JOINED = str.maketrans({".": "\ue02e", "+": "\ue02b", "#": "\ue023", "-": "\ue02d", "_": "\ue05f"})

# Words of a Chinese question that carry no meaning of their own: question words, particles, pronouns,
# prepositions, auxiliaries, demonstratives. Dropped from queries (unless nothing else is left).
STOP_WORDS = frozenset(
    """的 了 着 过 地 得 吗 呢 吧 啊 呀 么 嘛 是 在 和 与 或 及 把 被 给 让 对 从 到 也 都 就 还 又 要 想 会 能 可
    可以 能够 需要 应该 该 怎么 怎样 怎么样 如何 什么 哪些 哪个 哪 哪里 为什么 为何 多少 多久 几 是否 有没有 能不能
    可不可以 是不是 我 你 您 他 她 它 我们 你们 他们 它们 自己 这 那 这个 那个 这些 那些 一个 某个 有 没有 请 个
    里 上 下 中 时 时候 后 之后 以后""".split()
)

_lock = threading.Lock()
_cut: Callable[[str], list[str]] | None = None
_missing = False


def is_cjk(ch: str) -> bool:
    return not ch.isascii() and bool(_cjk("char").match(ch))


def has_cjk(text: str) -> bool:
    return not text.isascii() and bool(_cjk("char").search(text))


def segmenter_loaded() -> bool:
    return _cut is not None


def signature() -> str:
    """What makes the tokens: this module's rules and the segmenter's version (looked up, not imported)."""
    if SEGMENTATION == "bigrams":
        return "1:bigrams"
    try:
        spec = util.find_spec(SEGMENTER)
    except (ImportError, ValueError):
        spec = None
    version = "none" if spec is None else _installed_version(spec.origin)
    return f"{LEXICAL_VERSION}:words:{SEGMENTER}-{version}"


def _installed_version(origin: str | None) -> str:
    """The segmenter's installed version: read from the `METADATA` of its `.dist-info` beside the package
    (what `importlib.metadata` finds there too, without importing it: ~40 ms of every store's opening),
    else asked of `importlib.metadata`."""
    if origin:
        site = os.path.dirname(os.path.dirname(origin))
        prefix = f"{SEGMENTER}-"
        try:
            names = [n for n in os.listdir(site) if n.startswith(prefix) and n.endswith(".dist-info")]
        except OSError:
            names = []
        if len(names) == 1:
            try:
                with open(os.path.join(site, names[0], "METADATA"), encoding="utf-8") as fh:
                    for line in fh:
                        if line.startswith("Version:"):
                            return line.split(":", 1)[1].strip()
                        if not line.strip():
                            break
            except OSError:
                pass
    from importlib import metadata

    try:
        return metadata.version(SEGMENTER)
    except (ValueError, metadata.PackageNotFoundError):
        return "none"


def _segmenter() -> Callable[[str], list[str]] | None:
    global _cut, _missing
    if _cut is not None or _missing:
        return _cut
    with _lock:
        if _cut is None and not _missing:
            try:
                import rjieba
            except ImportError as err:
                if util.find_spec(SEGMENTER) is not None:
                    raise  # installed but broken: the tokens must not change behind `signature()`'s back
                _missing = True
                log.warning("no CJK word segmenter (%s): Han text is searched by bigrams alone", err)
                return None
            _cut = rjieba.cut
    return _cut


def _scripts(run: str) -> Iterator[tuple[int, str]]:
    for match in _cjk("scripts").finditer(run):
        yield int(match.lastindex or 0), match.group(0)


def _bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def _han_chars(piece: str) -> list[str]:
    return [c for c in piece if _cjk("han").match(c)] if len(piece) > 1 else []


def _joined(name: str) -> str:
    return name.translate(_JOINED)


def _index_run(match: re.Match[str]) -> str:
    run = match.group(0)
    tokens: list[str] = []
    for script, part in _scripts(run):
        if len(part) < 3:
            continue
        if script == _HAN_SCRIPT:
            cut = _segmenter()
            if cut is not None:
                tokens += [w for w in cut(part) if len(w) > 2]
        elif script != _HIRAGANA_SCRIPT:
            tokens.append(part)
    tokens += _bigrams(run)
    tokens += _han_chars(run)
    return " " + " ".join(tokens) + " "


def _content(run: str, keep_stop_words: bool) -> tuple[list[str], list[str]]:
    """A query's CJK run as (its words of three or more characters, its pieces between stop words)."""
    words: list[str] = []
    pieces: list[str] = []
    current: list[str] = []

    def split() -> None:
        if current:
            pieces.append("".join(current))
            current.clear()

    for script, part in _scripts(run):
        if script == _HIRAGANA_SCRIPT and not keep_stop_words:
            split()
        elif script == _HAN_SCRIPT:
            cut = _segmenter()
            for word in cut(part) if cut is not None else [part]:
                if not keep_stop_words and word in STOP_WORDS:
                    split()
                    continue
                current.append(word)
                if cut is not None and len(word) > 2:
                    words.append(word)
        else:
            current.append(part)
            if len(part) > 2 and script != _HIRAGANA_SCRIPT:
                words.append(part)
    split()
    return words, pieces


def _query_run(run: str, keep_stop_words: bool) -> str:
    words, pieces = _content(run, keep_stop_words)
    # Without a segmenter no stop word can be told apart: a query's single characters would be mostly noise.
    chars = _han_chars if _segmenter() is not None else lambda piece: []
    tokens = words + [t for piece in pieces for t in (*_bigrams(piece), *chars(piece))]
    return " " + " ".join(tokens) + " "


def _old_bigrams(match: re.Match[str]) -> str:
    return " " + " ".join(_bigrams(match.group(0))) + " "


def lexical_text(text: str | None) -> str:
    """`text` as the BM25 index reads it: CJK runs as words, bigrams and characters; symbol names joined."""
    if not text:
        return text or ""
    if SEGMENTATION == "bigrams":
        return _cjk("run").sub(_old_bigrams, text) if has_cjk(text) else text
    if _WIDE.search(text):
        text = unicodedata.normalize("NFKC", text)
    names = [_joined(m.group(0)) for m in _SYMBOL_NAME.finditer(text)]
    if has_cjk(text):
        text = _cjk("run").sub(_index_run, text)
    if names:
        text += "\n" + " ".join(dict.fromkeys(names))
    return text


def query_text(text: str, *, keep_stop_words: bool = False) -> str:
    """A query as BM25 reads it: symbol names joined, CJK runs cut at their stop words into tokens."""
    if SEGMENTATION == "bigrams":
        return _cjk("run").sub(_old_bigrams, text) if has_cjk(text) else text
    if _WIDE.search(text):
        text = unicodedata.normalize("NFKC", text)
    text = _SYMBOL_NAME.sub(lambda m: f" {_joined(m.group(0))} ", text)
    if has_cjk(text):
        text = _cjk("run").sub(lambda m: _query_run(m.group(0), keep_stop_words), text)
    return text


def query_pieces(text: str) -> list[str]:
    """The query's CJK stretches between its stop words: what the substring pass looks for."""
    if _WIDE.search(text):
        text = unicodedata.normalize("NFKC", text)
    if not has_cjk(text):
        return []
    if SEGMENTATION == "bigrams":
        return _cjk("run").findall(text)
    return [piece for match in _cjk("run").finditer(text) for piece in _content(match.group(0), False)[1]]
