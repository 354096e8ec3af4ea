"""Each ranking change, added one at a time, under both fusions, on `ragdown-runbooks` and the Obsidian sets.

The rows are cumulative: `before` is the ranking with BM25 columns weighted alike, each word its own BM25
term and no quoted-span lift, rebuilt here by swapping ragdown's own pieces in `ragdown.search.hybrid` for
the old rules; the last pair of rows is ragdown as it is. Each row runs with `fusion: rrf` (the spec's
default: reciprocal rank fusion, a query naming an identifier fused by score) and `fusion: score`
(`RAGDOWN_FUSION=score`: every query fused by score, BM25 0.6, single terms routed, boosts 0.5), so the two
rules that exist only in `score` (score fusion for every query, single-term routing) are not rows of their
own: they are part of what separates the two rows of a pair. CJK bigrams act when indexing and are not swapped
here (`ragdown eval` on the zh set measures them). Top-1 per question type on the 210 answerable runbook
questions, the 51 identifier probes, and the Obsidian help dev questions (`bench/questions/`; `--test` adds
the held-out set, to be read once, after the choices are made).

    .venv/bin/python bench/retrieval_ablation.py [--embedder minilm] [--test] [--keep DIR]
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import ragdown.search.hybrid as hybrid
import retrieval_common as rc
from ragdown.evaluation.metrics import Rule, grade
from ragdown.evaluation.questions import Question, load_questions
from ragdown.evaluation.runner import run_questions
from ragdown.search.hybrid import Fusion, SearchOptions
from ragdown.search.query import STOP_WORDS, words


def old_fts_match(query: str) -> str | None:
    """BM25 terms before: each word on its own (snake_case as a phrase), stop words dropped."""
    tokens = words(query)
    if not tokens:
        return None
    seen: dict[str, None] = {}
    for token in [t for t in tokens if t not in STOP_WORDS] or tokens:
        seen.setdefault(" ".join(p for p in token.split("_") if p), None)
    terms = [t for t in seen if t]
    return " OR ".join(f'"{t}"' for t in terms) if terms else None


def no_quotes(query: str) -> list[str]:
    return []


Patch = tuple[str, Any]
FUSIONS: tuple[Fusion, ...] = ("rrf", "score")
# Oldest first: each step undoes one change (the row adds it back).
STEPS: list[tuple[str, list[Patch]]] = [
    ("breadcrumb weight 3", [("BM25_WEIGHTS", (1.0, 1.0, 1.0))]),
    ("compounds as phrases", [("fts_match", old_fts_match)]),
    ("quoted-span boost", [("quoted_spans", no_quotes)]),
]


@contextlib.contextmanager
def patched(patches: Sequence[Patch]) -> Iterator[None]:
    saved = [(name, getattr(hybrid, name)) for name, _ in patches]
    try:
        for name, value in patches:
            setattr(hybrid, name, value)
        yield
    finally:
        for name, value in saved:
            setattr(hybrid, name, value)


def configs() -> list[tuple[str, list[Patch]]]:
    """`before`, then each change added in turn (undoing the later ones), ending with ragdown as it is."""
    out: list[tuple[str, list[Patch]]] = []
    for i in range(len(STEPS) + 1):
        undone = [p for _, patches in STEPS[i:] for p in patches]
        label = "before" if i == 0 else f"+ {STEPS[i - 1][0]}"
        out.append((label, undone))
    return out


def evaluate(searcher: Any, questions: list[Question], rule: Rule, fusion: Fusion) -> dict[str, Any]:
    ran = run_questions(searcher, questions, "hybrid", SearchOptions(top_k=10, fusion=fusion))
    graded = grade(questions, ran.results(), rule)
    return {"overall": graded.overall.as_dict(), "by_type": {t: sc.top1 for t, sc in graded.by_type.items()}}


def main() -> None:
    ap = rc.parser(__doc__)
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--test", action="store_true", help="also the held-out Obsidian questions")
    args = ap.parse_args()
    s = rc.settings(args.models)
    embedder, why = rc.load(s, args.embedder)
    if embedder is None:
        raise SystemExit(f"{args.embedder}: {why}")
    sets: list[tuple[str, Any, list[Question], Rule]] = [
        ("runbooks", rc.RUNBOOKS_CORPUS, rc.runbooks_questions([*rc.MAIN_TYPES, *rc.RRF_TYPES]), "heading"),
        ("obsidian-dev", rc.OBSIDIAN, load_questions(rc.QUESTIONS_DIR / "obsidian-help.dev.jsonl"), "lines"),
    ]
    if args.test:
        sets.append(
            (
                "obsidian-test",
                rc.OBSIDIAN,
                load_questions(rc.QUESTIONS_DIR / "obsidian-help.test.jsonl"),
                "lines",
            )
        )
    results: dict[str, dict[str, Any]] = {}
    for name, corpus, questions, rule in sets:
        results[name] = {}
        with rc.corpus_index(s, corpus, embedder, args.keep, args.embedder) as (engine, _):
            searcher = engine.require_searcher()
            for step, undone in configs():
                for fusion in FUSIONS:
                    label = f"{step} (fusion {fusion})"
                    with patched(undone):
                        if name == "runbooks":
                            main_qs = [q for q in questions if q.type in rc.MAIN_TYPES]
                            probes = [q for q in questions if q.type in rc.RRF_TYPES]
                            results[name][label] = evaluate(searcher, main_qs, rule, fusion)
                            opts = SearchOptions(top_k=10, fusion=fusion)
                            ran = run_questions(searcher, probes, "hybrid", opts)
                            results[name][label]["probes"] = grade(
                                probes, ran.results(), rule
                            ).overall.as_dict()
                        else:
                            results[name][label] = evaluate(searcher, questions, rule, fusion)
                    print(f"{name} {label}: {rc.pct(results[name][label]['overall']['top1'])}", flush=True)
    machine = rc.machine()
    print()
    print(rc.machine_line(machine))
    for name, rows in results.items():
        types = sorted({t for r in rows.values() for t in r["by_type"]})
        extra = ["probes top-1"] if name == "runbooks" else []
        print(f"\n{name} (top-1; last columns over all answerable questions)")
        print(
            rc.md_table(
                ["ranking", *types, "top-1", "recall@5", "MRR", *extra],
                [
                    [
                        label,
                        *(rc.pct(r["by_type"].get(t, 0.0)) for t in types),
                        rc.pct(r["overall"]["top1"]),
                        rc.pct(r["overall"]["r@5"]),
                        f"{r['overall']['mrr']:.3f}",
                        *([rc.pct(r["probes"]["top1"])] if name == "runbooks" else []),
                    ]
                    for label, r in rows.items()
                ],
            )
        )
    print(
        f"written {rc.write_json(args.json, 'retrieval_ablation', {'machine': machine, 'results': results})}"
    )


if __name__ == "__main__":
    main()
