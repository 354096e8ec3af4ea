"""The hook's gates on `ragdown-runbooks` (the original's gate.ts table), with ragdown's `ragdown_context` code.

Each of the 210 answerable questions and the 10 off-topic prompts goes through the hook's own search and
gates (`hook_candidates`, `select`, `fit` of `ragdown.tools.hook`), in a fresh session, with the embedder's
default `min_score`, `top_k` 4 and `max_chars` 6000, once per `min_ratio` of the sweep. Recall: the gold
section or a descendant among the injected (gate.ts's rule); chunks/prompt and wrong chunks/prompt over
the 210; what the off-topic prompts got. `--cap 2` repeats the sweep with `RAGDOWN_MAX_PER_DOCUMENT` 2;
`--obsidian` also runs the Obsidian help dev questions (line rule).

    .venv/bin/python bench/retrieval_hook.py [--embedder minilm] [--obsidian] [--cap 2] [--keep DIR]
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import retrieval_common as rc
from ragdown.evaluation.metrics import Question, Rule, load_questions
from ragdown.evaluation.runner import HookRow, run_hook
from ragdown.runtime import Runtime

RATIOS = (1.0, 0.98, 0.96, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.6, 0.5, 0.0)


def sweep(
    s: Any, corpus: Path, questions: list[Question], rule: Rule, embedder: Any, keep: Path | None, label: str
) -> tuple[dict[str, Any], list[HookRow]]:
    with rc.corpus_index(s, corpus, embedder, keep, label) as (engine, _):
        base, rows = run_hook(Runtime(s, engine), questions, rule, RATIOS)
    return {"top_k": base.top_k, "min_score": base.min_score, "max_chars": base.max_chars}, rows


def table(rows: list[HookRow]) -> str:
    out = []
    for r in rows:
        no_gold = ", ".join(f"{t} {p}/{n} prompts, {c} chunks" for t, (n, p, c) in r.no_gold.items())
        out.append(
            [
                f"`{r.min_ratio:g}`",
                rc.pct(r.recall),
                f"{r.chunks_per_prompt:.2f}",
                f"{r.wrong_per_prompt:.2f}",
                no_gold,
            ]
        )
    return rc.md_table(["min_ratio", "recall", "chunks/prompt", "wrong chunks/prompt", "no answer"], out)


def main() -> None:
    ap = rc.parser(__doc__)
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--obsidian", action="store_true")
    ap.add_argument("--cap", type=int, default=0, help="also sweep with this many sections per document")
    args = ap.parse_args()
    s = replace(rc.settings(args.models), max_per_document=0, follow_links=0)
    embedder, why = rc.load(s, args.embedder)
    if embedder is None:
        raise SystemExit(f"{args.embedder}: {why}")
    questions = rc.runbooks_questions([*rc.MAIN_TYPES, "off-topic"])
    runs: dict[str, Any] = {}
    settings, rows = sweep(s, rc.RUNBOOKS_CORPUS, questions, "heading", embedder, args.keep, args.embedder)
    runs["runbooks"] = {"settings": settings, "rows": [r.as_dict() for r in rows]}
    machine = rc.machine()
    print(rc.machine_line(machine))
    print(f"ragdown-runbooks, {args.embedder}, {settings}")
    print(table(rows))
    if args.cap:
        capped = replace(s, max_per_document=args.cap)
        _, rows = sweep(capped, rc.RUNBOOKS_CORPUS, questions, "heading", embedder, args.keep, args.embedder)
        runs[f"runbooks-cap{args.cap}"] = {"rows": [r.as_dict() for r in rows]}
        print(f"\nragdown-runbooks, max_per_document {args.cap}")
        print(table(rows))
    if args.obsidian:
        dev = load_questions(rc.QUESTIONS_DIR / "obsidian-help.dev.jsonl")
        _, rows = sweep(s, rc.OBSIDIAN, dev, "lines", embedder, args.keep, args.embedder)
        runs["obsidian-dev"] = {"rows": [r.as_dict() for r in rows]}
        print("\nObsidian help, dev questions")
        print(table(rows))
    print(f"written {rc.write_json(args.json, 'retrieval_hook', {'machine': machine, 'runs': runs})}")


if __name__ == "__main__":
    main()
