"""The embedder table on `ragdown-runbooks` (the original's "Choosing an embedder"), with ragdown's code.

Every embedder of the catalog that loads here is indexed into its own index of the 30 runbooks and asked the
210 answerable questions through `Searcher.search` (hybrid, 10 hits, the default fusion `rrf`): top-1,
recall@5, recall@8 and MRR (the heading rule, which equals the line rule here), index time, time per query,
and the hook floor each model ships with; then `fusion score`, the same index searched with
`RAGDOWN_FUSION=score`. The first model that loads also gives `dense only` (its vector pool alone) and
`BM25 only` (the lexical pool alone, no embedder): the floors the fusion must beat. p is McNemar's exact
test on per-question top-1 against the first row. A model that cannot be downloaded here is listed with
the reason.

    .venv/bin/python bench/retrieval_embedders.py [--embedders minilm,hash] [--keep DIR] [--models DIR]
"""

from __future__ import annotations

import time
from typing import Any

import retrieval_common as rc
from ragdown.embedders import default_min_score
from ragdown.evaluation.metrics import Mode, grade
from ragdown.evaluation.runner import run_questions
from ragdown.search.hybrid import Fusion, SearchOptions


def main() -> None:
    ap = rc.parser(__doc__)
    ap.add_argument("--embedders", default=",".join(label for label, _, _ in rc.EMBEDDERS))
    args = ap.parse_args()
    wanted = [x.strip() for x in args.embedders.split(",") if x.strip()]
    s = rc.settings(args.models)
    questions = rc.runbooks_questions(rc.MAIN_TYPES)
    rows: list[dict[str, Any]] = []
    reference: list[bool] | None = None
    for label, spec, quantize in rc.EMBEDDERS:
        if label not in wanted:
            continue
        started = time.perf_counter()
        embedder, why = rc.load(s, spec, quantize)
        if embedder is None:
            rows.append({"embedder": label, "error": why})
            print(f"{label}: not available here: {why}", flush=True)
            continue
        load_s = time.perf_counter() - started
        with rc.corpus_index(s, rc.RUNBOOKS_CORPUS, embedder, args.keep, label) as (engine, report):
            searcher = engine.require_searcher()
            modes: list[tuple[str, Mode, Fusion]] = [
                (label, "hybrid", "rrf"),
                (f"{label}, fusion score", "hybrid", "score"),
            ]
            if not rows or all("error" in r for r in rows):  # the first model also gives the floors
                modes += [
                    (f"{label} dense only", "dense", "rrf"),
                    ("BM25 only", "lexical", "rrf"),
                ]
            for name, mode, fusion in modes:
                ran = run_questions(searcher, questions, mode, SearchOptions(top_k=10, fusion=fusion))
                graded = grade(questions, ran.results(), "heading")
                top1 = [graded.ranks[q.id] == 1 for q in questions]
                if reference is None:
                    reference = top1
                o = graded.overall
                row = {
                    "embedder": name,
                    "mode": mode,
                    "fusion": fusion if mode == "hybrid" else None,
                    "n": o.n,
                    "top1": o.top1,
                    "r@5": o.r5,
                    "r@8": o.r8,
                    "mrr": o.mrr,
                    "p_vs_first": rc.mcnemar(reference, top1),
                    "by_type": {t: sc.top1 for t, sc in graded.by_type.items()},
                    "index_s": round(report["ms"] / 1000, 1)
                    if mode == "hybrid" and fusion == "rrf"
                    else None,
                    "load_s": round(load_s, 1),
                    "ms_per_query": round(1000 * ran.seconds / len(questions), 1),
                    "min_score": default_min_score(spec)
                    if mode == "hybrid" and fusion == "rrf" and spec != "hash"
                    else None,
                }
                rows.append(row)
                print(
                    f"{name}: top-1 {rc.pct(o.top1)} r@5 {rc.pct(o.r5)} mrr {o.mrr:.3f} "
                    f"({row['ms_per_query']} ms/query)",
                    flush=True,
                )
    machine = rc.machine()
    table = []
    for r in rows:
        if "error" in r:
            table.append(
                [r["embedder"], "—", "—", "—", "—", "—", "—", "—", f"not available here: {r['error']}"]
            )
            continue
        table.append(
            [
                r["embedder"],
                rc.pct(r["top1"]),
                rc.pct(r["r@5"]),
                rc.pct(r["r@8"]),
                f"{r['mrr']:.3f}",
                f"{r['p_vs_first']:.2g}",
                f"{r['index_s']} s" if r["index_s"] is not None else "—",
                f"{r['ms_per_query']} ms",
                f"`{r['min_score']}`" if r["min_score"] is not None else "—",
            ]
        )
    print()
    print(rc.machine_line(machine))
    print(
        rc.md_table(
            ["embedder", "top-1", "recall@5", "recall@8", "MRR", "p", "index", "per query", "MIN_SCORE"],
            table,
        )
    )
    types = sorted({t for r in rows if "by_type" in r for t in r["by_type"]})
    print()
    print(
        rc.md_table(
            ["top-1 by type", *types],
            [[r["embedder"], *(rc.pct(r["by_type"][t]) for t in types)] for r in rows if "by_type" in r],
        )
    )
    path = rc.write_json(args.json, "retrieval_embedders", {"machine": machine, "rows": rows})
    print(f"\nwritten {path}")


if __name__ == "__main__":
    main()
