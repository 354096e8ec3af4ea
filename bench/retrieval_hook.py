"""The hook's gates on `ragdown-runbooks` (the original's gate.ts table) and the Obsidian sets, with ragdown's code.

Each answerable question and each off-topic prompt goes through the hook's own search and gates
(`hook_candidates`, `select`, `fit` of `ragdown.search.hook`), in a fresh session, with the embedder's
default `min_score`, `top_k` 4 and `max_chars` 6000, once per `min_ratio` of the sweep. Two gates:
`ragdown` (what ships: the spec's cosine-ratio gate, hits sorted by cosine and kept while within `min_ratio`
of the best one's, plus the search's own first hits, as many as the embedder's catalogue entry says
(`hook_keep_top`: minilm's 2, else none), whenever they reach `min_score`), `spec` (the spec's gate alone,
`select(keep_top=0)`); `keep1` and `top2` keep the search's first one or two hits. The fusion is the embedder's default (`--fusions` to sweep others):
it picks the 2 × top_k candidates, the gate then re-sorts them by cosine. Recall: the gold section or a
descendant among the injected (gate.ts's rule); chunks/prompt and wrong chunks/prompt over the answerable
questions; what the off-topic prompts got. `--obsidian` adds the Obsidian help dev set and its paraphrase
dev set (line rule), `--test` their held-out sets instead; `--variants` the minilm indexes
(`retrieval_common.VARIANTS`: windows or not, int8 or not); `--cap 2` repeats the sweep with
`RAGDOWN_MAX_PER_DOCUMENT` 2.

`--score-gate` adds an experiment that is not what ragdown ships: the gate an earlier version tried, a share
of the best hit's fused score instead of its cosine (candidates kept in fused order, those whose fused
score reaches `min_ratio` × the best one's), under fusion `score`. The spec defines `min_ratio` on the cosine.

    .venv/bin/python bench/retrieval_hook.py [--variants float-win] [--fusions score] [--gates ragdown,spec]
                                             [--obsidian] [--test] [--cap 2] [--score-gate] [--keep DIR]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import retrieval_common as rc
from ragdown.core.config import Settings
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.evaluation.metrics import Rule
from ragdown.evaluation.questions import Question, load_questions
from ragdown.evaluation.runner import HookRow, hook_rule, run_hook
from ragdown.search.hook import HookSettings, fit, hook_candidates, select, skip_reason
from ragdown.search.hybrid import Fusion, Hit
from ragdown.storage.filter_sql import FileFilter

# Gate label -> how many of the search's first hits stay whatever their ratio (`select`'s `keep_top`; None:
# the embedder's own, what the tool does).
GATES: dict[str, int | None] = {"ragdown": None, "spec": 0, "keep1": 1, "top2": 2}
RATIOS = (1.0, 0.98, 0.96, 0.95, 0.92, 0.9, 0.88, 0.85, 0.82, 0.8, 0.75, 0.7, 0.6, 0.5, 0.0)


def fused_score_gate(
    candidates: list[Hit], settings: HookSettings, prompt: str, alias_paths: set[str]
) -> list[Hit]:
    """The experiment's gate (not shipped): forced names first, then, in fused order, the hits whose cosine
    reaches `min_score` and whose fused score reaches `min_ratio` × the best such hit's."""
    # The hook's own forcing of quoted names and aliases: with an unreachable floor only those remain.
    forced = select(candidates, replace(settings, min_score=math.inf), set(), prompt, alias_paths, 0).injected
    rest = [h for h in candidates if h not in forced and h.similarity >= settings.min_score]
    if rest and settings.min_ratio > 0:
        floor = max(h.score for h in rest) * settings.min_ratio
        rest = [h for h in rest if h.score >= floor]
    return (forced + rest)[: settings.top_k]


def run_score_gate(
    runtime: Runtime, questions: Sequence[Question], rule: Rule, ratios: Sequence[float]
) -> list[HookRow]:
    """`run_hook`'s loop with `fused_score_gate` in place of the hook's `select`."""
    base = runtime.hook_settings({}, None)
    searcher = runtime.engine.require_searcher()
    gold_rule = hook_rule(rule)
    rows = [HookRow(r, 0, 0, 0, 0) for r in ratios]
    for q in questions:
        prompt = q.question.strip()
        if skip_reason(prompt) is None:
            candidates, alias_paths = hook_candidates(searcher, prompt, FileFilter(), base.top_k, "score")
        else:
            candidates, alias_paths = [], set()
        for row in rows:
            settings = replace(base, min_ratio=row.min_ratio)
            gated = fused_score_gate(candidates, settings, prompt, alias_paths)
            _, injected = fit(gated, settings, runtime.text_limit)
            row.record(q, injected, gold_rule)
    return rows


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


def sweeps(
    s: Settings,
    engine: Engine,
    name: str,
    questions: list[Question],
    rule: Rule,
    fusions: Sequence[Fusion | None],
    gates: Sequence[str],
    cap: int,
    score_gate: bool,
) -> dict[str, Any]:
    """Every sweep of one corpus on its index: per fusion and gate (and with the cap), then the experiment."""
    runs: dict[str, Any] = {}
    variants: list[tuple[str, Settings]] = [
        (f"fusion {f or 'default'}", replace(s, fusion=f)) for f in fusions
    ]
    if cap:
        variants += [
            (f"fusion {f or 'default'}, max_per_document {cap}", replace(s, fusion=f, max_per_document=cap))
            for f in fusions
        ]
    for label, settings in variants:
        for gate in gates:
            runtime = Runtime(settings, engine)
            base, rows = run_hook(runtime, questions, rule, RATIOS, keep_top=GATES[gate])
            shown = {
                "fusion": runtime.fusion,
                "top_k": base.top_k,
                "min_score": base.min_score,
                "min_ratio (default)": base.min_ratio,
                "max_chars": base.max_chars,
            }
            runs[f"{name}, {label}, gate {gate}"] = {"settings": shown, "rows": [r.as_dict() for r in rows]}
            print(f"\n{name}, {label}, gate {gate}, {shown}")
            print(table(rows), flush=True)
    if score_gate:
        rows = run_score_gate(Runtime(replace(s, fusion="score"), engine), questions, rule, RATIOS)
        runs[f"{name}, fusion score, fused-score gate (experiment)"] = {"rows": [r.as_dict() for r in rows]}
        print(f"\n{name}, fusion score, fused-score ratio gate (experiment, not shipped)")
        print(table(rows), flush=True)
    return runs


def main() -> None:
    ap = rc.parser(__doc__)
    ap.add_argument(
        "--variants", default=rc.DEFAULT_VARIANT, help=f"comma-separated: {', '.join(rc.VARIANTS)}"
    )
    ap.add_argument("--fusions", default="", help="comma-separated rrf, score (default: the embedder's own)")
    ap.add_argument(
        "--gates",
        default="ragdown,spec",
        help=f"comma-separated, of {', '.join(GATES)} (default %(default)s)",
    )
    ap.add_argument("--obsidian", action="store_true", help="also the Obsidian dev and paraphrase dev sets")
    ap.add_argument(
        "--test", action="store_true", help="the Obsidian held-out sets instead of the runbooks and dev"
    )
    ap.add_argument("--cap", type=int, default=0, help="also sweep with this many sections per document")
    ap.add_argument("--score-gate", action="store_true", help="also the fused-score gate experiment")
    args = ap.parse_args()
    fusions: list[Fusion | None] = [
        cast(Fusion, f.strip()) for f in args.fusions.split(",") if f.strip()
    ] or [None]
    if any(f not in (None, *rc.FUSIONS) for f in fusions):
        raise SystemExit(f"--fusions: each one of {', '.join(rc.FUSIONS)}")
    gates = [g.strip() for g in args.gates.split(",") if g.strip()]
    if any(g not in GATES for g in gates):
        raise SystemExit(f"--gates: each one of {', '.join(GATES)}")
    s = replace(rc.settings(args.models), max_per_document=0, follow_links=0)
    q = rc.QUESTIONS_DIR
    sets: list[tuple[str, Path, list[Question], Rule]] = []
    if args.test:
        sets += [
            ("obsidian-test", rc.OBSIDIAN, load_questions(q / "obsidian-help.test.jsonl"), "lines"),
            ("obsidian-para-test", rc.OBSIDIAN, load_questions(q / "obsidian-help.para.test.jsonl"), "lines"),
        ]
    else:
        sets.append(
            ("runbooks", rc.RUNBOOKS_CORPUS, rc.runbooks_questions([*rc.MAIN_TYPES, "off-topic"]), "heading")
        )
        if args.obsidian:
            sets += [
                ("obsidian-dev", rc.OBSIDIAN, load_questions(q / "obsidian-help.dev.jsonl"), "lines"),
                (
                    "obsidian-para-dev",
                    rc.OBSIDIAN,
                    load_questions(q / "obsidian-help.para.dev.jsonl"),
                    "lines",
                ),
            ]
    machine = rc.machine()
    print(rc.machine_line(machine))
    runs: dict[str, Any] = {}
    for variant in [v.strip() for v in args.variants.split(",") if v.strip()]:
        embedder, why = rc.load_variant(s, variant)
        if embedder is None:
            raise SystemExit(f"{variant}: {why}")
        for name, corpus, questions, rule in sets:
            with rc.corpus_index(s, corpus, embedder, args.keep, variant) as (engine, _):
                cap = args.cap if name == "runbooks" else 0
                found = sweeps(s, engine, name, questions, rule, fusions, gates, cap, args.score_gate)
                runs.update({f"{variant}, {k}": v for k, v in found.items()})
    print(f"written {rc.write_json(args.json, 'retrieval_hook', {'machine': machine, 'runs': runs})}")


if __name__ == "__main__":
    main()
