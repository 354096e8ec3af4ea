"""Grading retrieval results: the rules of the benchmark's `grade.py`, re-implemented (nothing imported).

A hit is correct (rule `lines`) when its path equals a gold path and its 1-based inclusive line range
intersects the gold lines; rule `heading` is exact breadcrumb equality (the original mcp-ragdown's rule),
`heading-prefix` also accepts a descendant of the gold heading (its hook gate's rule). Breadcrumb
separators `›` and `>` are alike and whitespace is collapsed, as in `grade.py`. Per question type and overall: top-1, recall@5, recall@8, MRR within the first 10 hits.
Questions without a gold (`gold_path` null) are counted apart: how many got any hit. With `max_lines`
(`ragdown eval --max-evidence-lines N`, `grade.py --max-span N`) a hit over N lines never counts.

Beyond `grade.py` (MarkIndex's eval terms):

- **Per language**: a question's `lang` (or `language`) key, else detected from its text
  (`detect_language`); every metric is also reported per language.
- **Evidence**: the lines an answer cites are the union of the line ranges of its first k hits (k: the
  run's top-k), per path. `lines` is their count, averaged over the answerable questions. A question's
  evidence precision is the share of its cited lines that lie inside the union of its gold line ranges
  (`gold_lines` and every `gold_alt`'s), 0 when it cites nothing; `precision` is the mean over the
  answerable questions that have a gold line range, `pooled_precision` the cited lines inside a gold
  range over all cited lines of those questions. `max_lines` does not change the evidence: a long hit
  still counts as cited lines.
- Gold given as a title path (`gold_title_path`) is resolved to lines by `evaluation.gold` before
  grading; here it is only carried on the `Gold`.
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

from ragdown.evaluation.questions import SPACES, TITLE_SEPARATOR, Gold, Question, ResultHit

Rule = Literal["lines", "heading", "heading-prefix"]
RULES: tuple[Rule, ...] = ("lines", "heading", "heading-prefix")
Mode = Literal["hybrid", "dense", "lexical"]
MODES: tuple[Mode, ...] = ("hybrid", "dense", "lexical")
RATIO_SWEEP: tuple[float, ...] = (1.0, 0.98, 0.96, 0.95, 0.9, 0.8, 0.75, 0.7, 0.0)
MRR_K = 10
_EXT = re.compile(r"\.(md|markdown|mdx|html?|txt)$")


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
    parts = [SPACES.sub(" ", x).strip() for x in TITLE_SEPARATOR.split(h)]
    return " > ".join(x for x in parts if x)


def hit_lines(hit: ResultHit) -> int:
    """How many lines a hit covers (`grade.py`'s span)."""
    return hit.end_line - hit.start_line + 1


def hit_matches(
    hit: ResultHit,
    gold: Gold,
    rule: Rule = "lines",
    *,
    ignore_ext: bool = False,
    max_lines: int | None = None,
) -> bool:
    """Whether `hit` answers `gold` by `rule`; a hit over `max_lines` lines never does."""
    if norm_path(hit.path, ignore_ext) != norm_path(gold.path, ignore_ext):
        return False
    if max_lines and hit_lines(hit) > max_lines:
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
    hits: Sequence[ResultHit],
    golds: Sequence[Gold],
    rule: Rule = "lines",
    *,
    ignore_ext: bool = False,
    max_lines: int | None = None,
) -> int | None:
    """1-based rank of the first correct hit; None when none is."""
    for rank, hit in enumerate(hits, 1):
        if any(hit_matches(hit, g, rule, ignore_ext=ignore_ext, max_lines=max_lines) for g in golds):
            return rank
    return None


# -- evidence: the lines an answer cites ---------------------------------------------------------

Ranges = dict[str, list[tuple[int, int]]]  # normalised path -> merged, sorted, inclusive line ranges


def _merged(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for first, last in sorted(r for r in ranges if r[1] >= r[0]):
        if out and first <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], last))
        else:
            out.append((first, last))
    return out


def _by_path(pairs: Iterable[tuple[str, tuple[int, int]]]) -> Ranges:
    grouped: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for path, lines in pairs:
        grouped[norm_path(path)].append(lines)
    return {p: _merged(r) for p, r in grouped.items()}


def _size(ranges: Ranges) -> int:
    return sum(last - first + 1 for spans in ranges.values() for first, last in spans)


def _overlap(a: Ranges, b: Ranges) -> int:
    total = 0
    for path, spans in a.items():
        for first, last in spans:
            for g_first, g_last in b.get(path, ()):
                total += max(0, min(last, g_last) - max(first, g_first) + 1)
    return total


def cited_ranges(hits: Sequence[ResultHit], k: int | None = None) -> Ranges:
    """The lines the first `k` hits cite (every hit when `k` is None), merged per path."""
    chosen = hits if k is None else hits[:k]
    return _by_path((h.path, (h.start_line, h.end_line)) for h in chosen)


def gold_ranges(golds: Sequence[Gold]) -> Ranges:
    """The union of the golds' line ranges, per path (golds without lines add nothing)."""
    return _by_path((g.path, g.lines) for g in golds if g.lines is not None)


@dataclass(frozen=True)
class Evidence:
    """One question's evidence: lines cited, how many of them lie in a gold range, the gold's size."""

    cited: int
    inside: int
    gold: int  # lines in the gold ranges; 0: no gold line range, so no precision

    @property
    def precision(self) -> float | None:
        if not self.gold:
            return None
        return self.inside / self.cited if self.cited else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "cited_lines": self.cited,
            "inside_gold": self.inside,
            "gold_lines": self.gold,
            "precision": self.precision,
        }


def evidence_of(hits: Sequence[ResultHit], golds: Sequence[Gold], k: int | None = None) -> Evidence:
    cited, gold = cited_ranges(hits, k), gold_ranges(golds)
    return Evidence(_size(cited), _overlap(cited, gold), _size(gold))


@dataclass(frozen=True)
class EvidenceScores:
    """Evidence over a group of answerable questions (see the module docstring)."""

    n: int
    lines: float
    n_precision: int
    precision: float
    pooled_precision: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "lines": self.lines,
            "n_precision": self.n_precision,
            "precision": self.precision,
            "pooled_precision": self.pooled_precision,
        }


def aggregate_evidence(items: Sequence[Evidence]) -> EvidenceScores:
    with_gold = [e for e in items if e.gold]
    cited = sum(e.cited for e in with_gold)
    return EvidenceScores(
        n=len(items),
        lines=sum(e.cited for e in items) / len(items) if items else 0.0,
        n_precision=len(with_gold),
        precision=sum(e.precision or 0.0 for e in with_gold) / len(with_gold) if with_gold else 0.0,
        pooled_precision=sum(e.inside for e in with_gold) / cited if cited else 0.0,
    )


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


def _no_gold(counts: Sequence[int]) -> NoGold:
    return NoGold(
        len(counts), sum(1 for x in counts if x > 0), (sum(counts) / len(counts)) if counts else 0.0
    )


@dataclass(frozen=True)
class Group:
    """Every metric over one group of questions (a language): scores, evidence, the no-gold counts."""

    scores: Scores
    evidence: EvidenceScores
    no_gold: NoGold
    no_gold_lines: float  # mean cited lines of its questions without a gold

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.scores.as_dict(),
            "evidence": self.evidence.as_dict(),
            "no_gold": {**self.no_gold.as_dict(), "lines": self.no_gold_lines},
        }


@dataclass
class Report:
    """The graded run: ranks per question, scores per type and overall, the no-gold counts; the
    evidence per question, type and overall, and every metric per language."""

    rule: Rule
    ranks: dict[str, int | None]
    by_type: dict[str, Scores]
    overall: Scores
    no_gold: dict[str, NoGold]
    missing: list[str]
    evidence: dict[str, Evidence] = field(default_factory=dict)  # every question's, no-gold ones too
    evidence_by_type: dict[str, EvidenceScores] = field(default_factory=dict)
    evidence_overall: EvidenceScores = field(default_factory=lambda: aggregate_evidence([]))
    no_gold_lines: float = 0.0
    by_lang: dict[str, Group] = field(default_factory=dict)
    langs: dict[str, str] = field(default_factory=dict)
    evidence_k: int | None = None
    max_lines: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": self.rule,
            "by_type": {t: s.as_dict() for t, s in self.by_type.items()},
            "overall": self.overall.as_dict(),
            "no_gold": {t: g.as_dict() for t, g in self.no_gold.items()},
            "missing_results": self.missing,
            "max_evidence_lines": self.max_lines,
            "evidence": {
                "k": self.evidence_k,
                "overall": self.evidence_overall.as_dict(),
                "by_type": {t: e.as_dict() for t, e in self.evidence_by_type.items()},
                "no_gold_lines": self.no_gold_lines,
            },
            "by_lang": {lang: g.as_dict() for lang, g in self.by_lang.items()},
        }


def grade(
    questions: Sequence[Question],
    results: Mapping[str, Sequence[ResultHit]],
    rule: Rule = "lines",
    *,
    ignore_ext: bool = False,
    max_lines: int | None = None,
    evidence_k: int | None = None,
) -> Report:
    """Grade `results` (question id -> hits, best first) the way `grade.py` does (`max_lines` is its
    `--max-span`), with the evidence of the first `evidence_k` hits and every metric per language."""
    per: dict[str, list[int | None]] = defaultdict(list)
    nogold: dict[str, list[int]] = defaultdict(list)
    ev_per: dict[str, list[Evidence]] = defaultdict(list)
    ranks: dict[str, int | None] = {}
    missing: list[str] = []
    evidence: dict[str, Evidence] = {}
    langs: dict[str, str] = {}
    lang_ranks: dict[str, list[int | None]] = defaultdict(list)
    lang_ev: dict[str, list[Evidence]] = defaultdict(list)
    lang_nogold: dict[str, list[int]] = defaultdict(list)
    lang_nogold_ev: dict[str, list[Evidence]] = defaultdict(list)
    for q in questions:
        hits = results.get(q.id)
        if hits is None:
            missing.append(q.id)
            hits = []
        lang = langs[q.id] = q.lang
        ev = evidence[q.id] = evidence_of(hits, q.golds, evidence_k)
        if not q.golds:
            nogold[q.type].append(len(hits))
            lang_nogold[lang].append(len(hits))
            lang_nogold_ev[lang].append(ev)
            continue
        rank = first_rank(hits, q.golds, rule, ignore_ext=ignore_ext, max_lines=max_lines)
        ranks[q.id] = rank
        per[q.type].append(rank)
        ev_per[q.type].append(ev)
        lang_ranks[lang].append(rank)
        lang_ev[lang].append(ev)

    def mean_cited(items: Sequence[Evidence]) -> float:
        return sum(e.cited for e in items) / len(items) if items else 0.0

    by_lang = {
        lang: Group(
            aggregate(lang_ranks.get(lang, [])),
            aggregate_evidence(lang_ev.get(lang, [])),
            _no_gold(lang_nogold.get(lang, [])),
            mean_cited(lang_nogold_ev.get(lang, [])),
        )
        for lang in sorted({*lang_ranks, *lang_nogold})
    }
    return Report(
        rule=rule,
        ranks=ranks,
        by_type={t: aggregate(v) for t, v in sorted(per.items())},
        overall=aggregate([r for v in per.values() for r in v]),
        no_gold={t: _no_gold(v) for t, v in sorted(nogold.items())},
        missing=missing,
        evidence=evidence,
        evidence_by_type={t: aggregate_evidence(v) for t, v in sorted(ev_per.items())},
        evidence_overall=aggregate_evidence([e for v in ev_per.values() for e in v]),
        no_gold_lines=mean_cited([e for v in lang_nogold_ev.values() for e in v]),
        by_lang=by_lang,
        langs=langs,
        evidence_k=evidence_k,
        max_lines=max_lines,
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
