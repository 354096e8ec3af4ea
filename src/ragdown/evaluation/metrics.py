"""Grading retrieval results: the rules of the benchmark's `grade.py`, re-implemented (nothing imported).

A hit is correct (rule `lines`) when its path equals a gold path and its 1-based inclusive line range
intersects the gold lines; rule `heading` is exact breadcrumb equality (the original mcp-ragdown's rule),
`heading-prefix` also accepts a descendant of the gold heading (its hook gate's rule). Breadcrumb
separators `›` and `>` are alike and whitespace is collapsed, as in `grade.py`. Per question type and overall: top-1, recall@5, recall@8, MRR within the first 10 hits.
Questions without a gold (`gold_path` null) are counted apart: how many got any hit.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Rule = Literal["lines", "heading", "heading-prefix"]
RULES: tuple[Rule, ...] = ("lines", "heading", "heading-prefix")
Mode = Literal["hybrid", "dense", "lexical"]
MODES: tuple[Mode, ...] = ("hybrid", "dense", "lexical")
RATIO_SWEEP: tuple[float, ...] = (1.0, 0.98, 0.96, 0.95, 0.9, 0.8, 0.75, 0.7, 0.0)
MRR_K = 10
_EXT = re.compile(r"\.(md|markdown|mdx|html?|txt)$")
_SEP = re.compile(r"\s*[›>]\s*")
_SPACE = re.compile(r"\s+")

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


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    type: str
    golds: tuple[Gold, ...]
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def answerable(self) -> bool:
        return bool(self.golds)


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


def _lines(raw: object) -> tuple[int, int] | None:
    if isinstance(raw, list | tuple) and len(raw) == 2:
        return int(raw[0]), int(raw[1])
    return None


def question_from_dict(raw: Mapping[str, Any]) -> Question:
    golds: list[Gold] = []
    if raw.get("gold_path"):
        golds.append(Gold(str(raw["gold_path"]), _lines(raw.get("gold_lines")), raw.get("gold_heading")))
    for alt in raw.get("gold_alt") or []:
        golds.append(Gold(str(alt.get("path") or ""), _lines(alt.get("lines")), alt.get("heading")))
    known = {"id", "question", "type", "gold_path", "gold_lines", "gold_heading", "gold_alt"}
    return Question(
        id=str(raw["id"]),
        question=str(raw.get("question") or raw.get("q") or ""),
        type=str(raw.get("type", "?")),
        golds=tuple(golds),
        extra={k: v for k, v in raw.items() if k not in known},
    )


def load_questions(path: Path, types: Iterable[str] = ()) -> list[Question]:
    """Questions of a JSONL file, limited to `types` when given; a line that is not JSON is an error."""
    want = {t for t in types if t}
    out: list[Question] = []
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
            q = question_from_dict(raw)
            if not want or q.type in want:
                out.append(q)
    return out


def norm_path(path: str | None, ignore_ext: bool = False) -> str:
    if path is None:
        return ""
    p = unicodedata.normalize("NFC", str(path)).replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    p = p.lstrip("/")
    return _EXT.sub("", p) if ignore_ext else p


def norm_heading(heading: str | None) -> str:
    if not heading:
        return ""
    h = unicodedata.normalize("NFC", heading)
    parts = [_SPACE.sub(" ", x).strip() for x in _SEP.split(h)]
    return " > ".join(x for x in parts if x)


def hit_matches(hit: ResultHit, gold: Gold, rule: Rule = "lines", *, ignore_ext: bool = False) -> bool:
    if norm_path(hit.path, ignore_ext) != norm_path(gold.path, ignore_ext):
        return False
    if rule == "lines":
        if gold.lines is None:
            return False
        first, last = gold.lines
        return hit.start_line <= last and hit.end_line >= first
    hh, gh = norm_heading(hit.heading), norm_heading(gold.heading)
    if not hh or not gh:
        return False
    if rule == "heading":
        return hh == gh
    return hh == gh or hh.startswith(gh + " > ")


def first_rank(
    hits: Sequence[ResultHit], golds: Sequence[Gold], rule: Rule = "lines", *, ignore_ext: bool = False
) -> int | None:
    """1-based rank of the first correct hit; None when none is."""
    for rank, hit in enumerate(hits, 1):
        if any(hit_matches(hit, g, rule, ignore_ext=ignore_ext) for g in golds):
            return rank
    return None


@dataclass(frozen=True)
class Scores:
    n: int
    top1: float
    r5: float
    r8: float
    mrr: float

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "top1": self.top1, "r@5": self.r5, "r@8": self.r8, "mrr": self.mrr}


def aggregate(ranks: Sequence[int | None], mrr_k: int = MRR_K) -> Scores:
    n = len(ranks)
    if n == 0:
        return Scores(0, 0.0, 0.0, 0.0, 0.0)
    return Scores(
        n=n,
        top1=sum(1 for r in ranks if r is not None and r <= 1) / n,
        r5=sum(1 for r in ranks if r is not None and r <= 5) / n,
        r8=sum(1 for r in ranks if r is not None and r <= 8) / n,
        mrr=sum(1 / r for r in ranks if r is not None and r <= mrr_k) / n,
    )


@dataclass(frozen=True)
class NoGold:
    n: int
    with_hits: int
    mean_hits: float

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "with_hits": self.with_hits, "mean_hits": self.mean_hits}


@dataclass
class Report:
    """The graded run: ranks per question, scores per type and overall, the no-gold counts."""

    rule: Rule
    ranks: dict[str, int | None]
    by_type: dict[str, Scores]
    overall: Scores
    no_gold: dict[str, NoGold]
    missing: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": self.rule,
            "by_type": {t: s.as_dict() for t, s in self.by_type.items()},
            "overall": self.overall.as_dict(),
            "no_gold": {t: g.as_dict() for t, g in self.no_gold.items()},
            "missing_results": self.missing,
        }


def grade(
    questions: Sequence[Question],
    results: Mapping[str, Sequence[ResultHit]],
    rule: Rule = "lines",
    *,
    ignore_ext: bool = False,
) -> Report:
    """Grade `results` (question id -> hits, best first) the way `grade.py` does."""
    per: dict[str, list[int | None]] = defaultdict(list)
    nogold: dict[str, list[int]] = defaultdict(list)
    ranks: dict[str, int | None] = {}
    missing: list[str] = []
    for q in questions:
        hits = results.get(q.id)
        if hits is None:
            missing.append(q.id)
            hits = []
        if not q.golds:
            nogold[q.type].append(len(hits))
            continue
        rank = first_rank(hits, q.golds, rule, ignore_ext=ignore_ext)
        ranks[q.id] = rank
        per[q.type].append(rank)
    return Report(
        rule=rule,
        ranks=ranks,
        by_type={t: aggregate(v) for t, v in sorted(per.items())},
        overall=aggregate([r for v in per.values() for r in v]),
        no_gold={
            t: NoGold(len(v), sum(1 for x in v if x > 0), (sum(v) / len(v)) if v else 0.0)
            for t, v in sorted(nogold.items())
        },
        missing=missing,
    )


def write_results(path: Path, results: Mapping[str, Sequence[ResultHit]]) -> None:
    """The RESULTS JSONL that `grade.py` reads: one `{"id", "hits": [...]}` per question."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for qid, hits in results.items():
            f.write(json.dumps({"id": qid, "hits": [h.as_dict() for h in hits]}, ensure_ascii=False) + "\n")


def read_results(path: Path) -> dict[str, list[ResultHit]]:
    out: dict[str, list[ResultHit]] = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            raw = json.loads(line)
            out[str(raw["id"])] = [
                ResultHit(
                    str(h.get("path") or ""),
                    int(h.get("start_line") or 0),
                    int(h.get("end_line") or 0),
                    str(h.get("heading") or ""),
                )
                for h in raw.get("hits") or []
            ]
    return out
