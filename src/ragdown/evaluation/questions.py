"""A question set as `ragdown eval` reads it (the benchmark's JSON lines: the question, its type, the gold
paths, lines and title paths), its language, and a result hit; refused, naming the line, where it cannot be
graded."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TITLE_SEPARATOR = re.compile(r"\s*[›>]\s*")
SPACES = re.compile(r"\s+")

# The question types of `ragdown-runbooks` (shared/bench): the 210 answerable questions of the published
# slice, and the exact-identifier probes.
RUNBOOKS_ANSWERABLE_TYPES = (
    "prose-owner",
    "table-cell",
    "scoped-section",
    "nested-list",
    "ordered-step",
    "code-block",
    "reverse-lookup",
)
RUNBOOKS_PROBE_TYPES = ("rrf-single", "rrf-pair")


@dataclass(frozen=True)
class Gold:
    path: str
    lines: tuple[int, int] | None
    heading: str | None
    # The section's titles from the document down (`gold_title_path`); `evaluation.gold` resolves it to
    # `path` and `lines` against the corpus, which is what grading reads.
    title_path: tuple[str, ...] = ()


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    type: str
    golds: tuple[Gold, ...]
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)
    language: str | None = None  # the question's own `lang` / `language`, lowercased

    @property
    def answerable(self) -> bool:
        return bool(self.golds)

    @property
    def lang(self) -> str:
        """The given language, else the one its text is in (`detect_language`)."""
        return self.language or detect_language(self.question)


@dataclass(frozen=True)
class ResultHit:
    """One hit as the RESULTS format writes it."""

    path: str
    start_line: int
    end_line: int
    heading: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "heading": self.heading,
        }


def _lines(raw: object, qid: str = "?", key: str = "gold_lines") -> tuple[int, int] | None:
    """`[first, last]`, 1-based whole line numbers with first <= last; None when left out. Anything else is
    an error: a gold that can never match would grade the question a miss without a word."""
    if raw is None or raw == []:
        return None
    if (
        isinstance(raw, list | tuple)
        and len(raw) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in raw)
        and 1 <= raw[0] <= raw[1]
    ):
        return int(raw[0]), int(raw[1])
    raise ValueError(
        f"question {qid}: {key} must be [first, last], line numbers from 1, first <= last: {raw!r}"
    )


# The keys a title path may come under, in this order: ours (snake_case like the other gold keys), a plain
# `title_path` (natural in a `gold_alt` entry, beside `path` and `lines`), and MarkIndex's `titlePath` (the
# name its evidence objects use).
TITLE_PATH_KEYS = ("gold_title_path", "title_path", "titlePath")


def title_path_of(raw: object, qid: str = "?") -> tuple[str, ...]:
    """A title path given as a list of titles or as one `Title > H2 > H3` string (`›` works too), each
    title with its whitespace collapsed; () when absent."""
    if raw is None or raw == "" or raw == []:
        return ()
    if isinstance(raw, str):
        parts = TITLE_SEPARATOR.split(unicodedata.normalize("NFC", raw))
    elif isinstance(raw, list | tuple) and all(isinstance(x, str) for x in raw):
        parts = [unicodedata.normalize("NFC", x) for x in raw]
    else:
        raise ValueError(f"question {qid}: a title path is a list of titles or a 'Title > H2' string")
    out = tuple(SPACES.sub(" ", x).strip() for x in parts)
    if not all(out):
        raise ValueError(f"question {qid}: empty title in the title path {raw!r}")
    return out


def _title_path_in(raw: Mapping[str, Any], keys: Sequence[str], qid: str) -> tuple[str, ...]:
    for key in keys:
        if raw.get(key) not in (None, "", []):
            return title_path_of(raw[key], qid)
    return ()


def question_from_dict(raw: Mapping[str, Any]) -> Question:
    qid = str(raw["id"])
    golds: list[Gold] = []
    title_path = _title_path_in(raw, TITLE_PATH_KEYS, qid)
    if raw.get("gold_path") or title_path:
        golds.append(
            Gold(
                str(raw.get("gold_path") or ""),
                _lines(raw.get("gold_lines"), qid),
                raw.get("gold_heading"),
                title_path,
            )
        )
    for alt in raw.get("gold_alt") or []:
        alt_path = _title_path_in(alt, TITLE_PATH_KEYS, qid)
        lines = _lines(alt.get("lines"), qid, "gold_alt lines")
        golds.append(Gold(str(alt.get("path") or ""), lines, alt.get("heading"), alt_path))
    known = {
        "id", "question", "type", "gold_path", "gold_lines", "gold_heading", "gold_alt",
        "lang", "language", *TITLE_PATH_KEYS,
    }  # fmt: skip
    language = str(raw.get("lang") or raw.get("language") or "").strip().lower() or None
    return Question(
        id=qid,
        question=str(raw.get("question") or raw.get("q") or ""),
        type=str(raw.get("type", "?")),
        golds=tuple(golds),
        extra={k: v for k, v in raw.items() if k not in known},
        language=language,
    )


def _is_kana(code: int) -> bool:
    return 0x3040 <= code <= 0x30FF or 0x31F0 <= code <= 0x31FF or 0xFF66 <= code <= 0xFF9F


def _is_hangul(code: int) -> bool:
    return 0xAC00 <= code <= 0xD7AF or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F


def _is_han(code: int) -> bool:
    return (
        0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0x20000 <= code <= 0x2FA1F
    )


def detect_language(text: str) -> str:
    """`ja` when the text has kana, else `ko` with Hangul, else `zh` with Han characters, else `en`."""
    if text.isascii():
        return "en"
    codes = [ord(ch) for ch in text]
    if any(_is_kana(c) for c in codes):
        return "ja"
    if any(_is_hangul(c) for c in codes):
        return "ko"
    if any(_is_han(c) for c in codes):
        return "zh"
    return "en"


def load_questions(path: Path, types: Iterable[str] = ()) -> list[Question]:
    """Questions of a JSONL file, limited to `types` when given. A line that is not JSON, a question without
    an id or without text, an id used twice, and gold lines that are no range are errors, naming the line;
    `types` that match nothing name the types the file has."""
    want = {t for t in types if t}
    out: list[Question] = []
    first_line: dict[str, int] = {}
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}:{number}: not JSON: {err.msg}") from None
            if not isinstance(raw, dict) or "id" not in raw:
                raise ValueError(f"{path}:{number}: a question needs at least an id")
            try:
                q = question_from_dict(raw)
            except ValueError as err:
                raise ValueError(f"{path}:{number}: {err}") from None
            if q.id in first_line:
                raise ValueError(f"{path}:{number}: the id {q.id!r} is taken (line {first_line[q.id]})")
            first_line[q.id] = number
            if not q.question.strip():
                raise ValueError(f"{path}:{number}: question {q.id} has no question text")
            if not want or q.type in want:
                out.append(q)
    if want and not out and first_line:
        have = sorted({q.type for q in load_questions(path)})
        raise ValueError(
            f"{path} has no question of type {', '.join(sorted(want))}: its types are {', '.join(have)}"
        )
    return out
