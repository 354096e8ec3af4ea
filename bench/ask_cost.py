"""What searching a compound question's last clause too costs (`query.ask_clause`, `Pools.ask`).

The Obsidian help vault indexed with `minilm` (the index as shipped, windows, kept with `--keep`); every
question of the English sets that `ask_clause` splits is searched the way a server does
(`Searcher.search`, score fusion, top 10: two embeddings, two BM25 pools, two fusions) and without its
clause (`Searcher.rank` on `Searcher.pools(ask=False)`: what it cost before), interleaved question by question
for `--rounds` rounds after a warm-up round. Medians per question and over all calls, and their ratio.

    .venv/bin/python bench/ask_cost.py [--rounds 20] [--keep DIR]
"""

from __future__ import annotations

import statistics
import time

import retrieval_common as rc
from ragdown.evaluation.questions import load_questions
from ragdown.search.hybrid import SearchOptions, pool_size
from ragdown.search.query import ask_clause
from ragdown.storage.filter_sql import FileFilter

SETS = (
    "obsidian-help.dev.jsonl",
    "obsidian-help.para.dev.jsonl",
    "obsidian-help.hard.dev.jsonl",
    "obsidian-help.test.jsonl",
    "obsidian-help.para.test.jsonl",
)
OPTS = SearchOptions(top_k=10, fusion="score")


def main() -> None:
    ap = rc.parser(__doc__)
    ap.add_argument("--rounds", type=int, default=20, help="timed rounds after one warm-up round")
    args = ap.parse_args()
    questions = [
        q.question
        for name in SETS
        for q in load_questions(rc.QUESTIONS_DIR / name)
        if ask_clause(q.question) is not None
    ]
    print(rc.machine_line(rc.machine()))
    print(f"{len(questions)} compound questions of {len(SETS)} English sets")
    s = rc.settings(args.models)
    used, why = rc.load_variant(s, rc.DEFAULT_VARIANT)
    if used is None:
        raise SystemExit(why)
    flt = FileFilter()
    with rc.corpus_index(s, rc.OBSIDIAN, used, args.keep, rc.DEFAULT_VARIANT) as (engine, _report):
        searcher = engine.require_searcher()
        size = pool_size(OPTS.top_k)
        with_ask: list[float] = []
        without: list[float] = []
        for round_ in range(args.rounds + 1):
            for q in questions:
                t0 = time.perf_counter()
                searcher.search(q, flt, OPTS)
                t1 = time.perf_counter()
                searcher.rank(q, searcher.pools(q, flt, size, ask=False), flt, OPTS)
                t2 = time.perf_counter()
                if round_:  # the first round warms the caches
                    with_ask.append((t1 - t0) * 1000)
                    without.append((t2 - t1) * 1000)
    a, b = statistics.median(with_ask), statistics.median(without)
    print("| search of a compound question | median ms | p90 ms |")
    print("| --- | --- | --- |")
    for label, xs in (("whole question only (before)", without), ("with its last clause (now)", with_ask)):
        print(f"| {label} | {statistics.median(xs):.1f} | {statistics.quantiles(xs, n=10)[-1]:.1f} |")
    print(f"ratio now / before: {a / b:.2f} ({len(with_ask)} calls each)")


if __name__ == "__main__":
    main()
