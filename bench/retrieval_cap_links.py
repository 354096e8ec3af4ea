"""Sections per document (`RAGDOWN_MAX_PER_DOCUMENT`) and link following (`RAGDOWN_FOLLOW_LINKS`), on and off.

The original's diversity.ts and links.ts measured both on generated corpora; here they run on
`ragdown-runbooks` (210 answerable questions; its runbooks hold no wikilinks, so following links cannot
change anything there) and on the Obsidian help dev questions (a vault that leans on its wikilinks).
Search: top-1, top-4 and top-8 (10 hits). Hook: recall, chunks and wrong chunks per prompt at the default
gates (min_ratio 0.95 of the best cosine; the hook never follows links), with the cap applied again after
the gates as the hook does. Each setting runs under both fusions (`rrf`, the default, and `score`).

    .venv/bin/python bench/retrieval_cap_links.py [--embedder minilm] [--keep DIR]
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import retrieval_common as rc
from ragdown.engine.runtime import Runtime
from ragdown.evaluation.metrics import Rule, grade
from ragdown.evaluation.questions import Question, load_questions
from ragdown.evaluation.runner import run_hook, run_questions
from ragdown.search.hybrid import SearchOptions

CONFIGS = (("off", 0, 0), ("cap 2", 2, 0), ("links 1", 0, 1), ("cap 2 + links 1", 2, 1))


def main() -> None:
    ap = rc.parser(__doc__)
    ap.add_argument("--embedder", default="minilm")
    args = ap.parse_args()
    s = replace(rc.settings(args.models), max_per_document=0, follow_links=0)
    embedder, why = rc.load(s, args.embedder)
    if embedder is None:
        raise SystemExit(f"{args.embedder}: {why}")
    sets: list[tuple[str, Any, list[Question], Rule]] = [
        ("runbooks", rc.RUNBOOKS_CORPUS, rc.runbooks_questions([*rc.MAIN_TYPES, "off-topic"]), "heading"),
        ("obsidian-dev", rc.OBSIDIAN, load_questions(rc.QUESTIONS_DIR / "obsidian-help.dev.jsonl"), "lines"),
    ]
    results: dict[str, list[dict[str, Any]]] = {}
    for name, corpus, questions, rule in sets:
        results[name] = []
        with rc.corpus_index(s, corpus, embedder, args.keep, args.embedder) as (engine, _):
            for (setting, cap, links), fusion in itertools.product(CONFIGS, rc.FUSIONS):
                label = f"{setting}, fusion {fusion}"
                opts = SearchOptions(top_k=10, max_per_document=cap, follow_links=links, fusion=fusion)
                ran = run_questions(engine.require_searcher(), questions, "hybrid", opts)
                graded = grade(questions, ran.results(), rule)
                ranks = list(graded.ranks.values())
                top4 = sum(1 for r in ranks if r is not None and r <= 4) / max(1, len(ranks))
                hook_settings = replace(s, max_per_document=cap, follow_links=links, fusion=fusion)
                runtime = Runtime(hook_settings, engine)
                ratio = runtime.hook_settings({}, None).min_ratio
                _, (row,) = run_hook(runtime, questions, rule, [ratio])
                results[name].append(
                    {
                        "config": label,
                        "top1": graded.overall.top1,
                        "top4": top4,
                        "r@8": graded.overall.r8,
                        "hook_recall": row.recall,
                        "hook_chunks": row.chunks_per_prompt,
                        "hook_wrong": row.wrong_per_prompt,
                    }
                )
                print(f"{name} {label}: top-1 {rc.pct(graded.overall.top1)}", flush=True)
    machine = rc.machine()
    print()
    print(rc.machine_line(machine))
    for name, rows in results.items():
        print(f"\n{name}")
        print(
            rc.md_table(
                [
                    "setting",
                    "top-1",
                    "top-4",
                    "top-8",
                    "hook recall",
                    "hook chunks/prompt",
                    "hook wrong/prompt",
                ],
                [
                    [
                        r["config"],
                        rc.pct(r["top1"]),
                        rc.pct(r["top4"]),
                        rc.pct(r["r@8"]),
                        rc.pct(r["hook_recall"]),
                        f"{r['hook_chunks']:.2f}",
                        f"{r['hook_wrong']:.2f}",
                    ]
                    for r in rows
                ],
            )
        )
    print(
        f"written {rc.write_json(args.json, 'retrieval_cap_links', {'machine': machine, 'results': results})}"
    )


if __name__ == "__main__":
    main()
