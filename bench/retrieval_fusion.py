"""How score fusion weighs BM25, on several question sets at once: a small grid of `FusionRule`s, per corpus and type.

Each question's two pools (dense and BM25, 40 each: the pools of a 10-hit search) are fetched once; every
ranking below is `Searcher.rank` on those pools (the code `ragdown_recall` runs), so a rule costs no
re-index. Rows: BM25 alone (`lexical`, what an index without an embedder ranks), the dense pool alone,
rank fusion (`rrf`, the spec's), score fusion with BM25 at a fixed 0.6 (minilm's default before), the
default `FusionRule` (BM25's share from how much of the query each side's best hit holds and BM25's lead),
and the grid around it. A rule "loses" on a set by the questions it ranks first (top-1) or in the first
five (recall@5) fewer than the better of dense alone and BM25 alone; the grid is sorted by the total loss
over the sets, then by mean top-1 + MRR.

Sets (development): `ragdown-runbooks` (the 210 answerable + 51 identifier probes, heading rule), the
Obsidian help dev set, its paraphrase dev set (`obsidian-help.para.dev.jsonl`: paraphrases sharing few words
with the answer, aliases, identifiers, answers behind a wikilink) and the Chinese dev set. `--test` runs the
held-out sets instead (read once, after the choices are made). `--variants` picks minilm's indexes
(`retrieval_common.VARIANTS`): `float-win` / `int8-win` (max-scored windows for chunks longer than 256
tokens), `float-nowin` / `int8-nowin` (one vector per chunk, cut at 256 tokens, as before), with the model
as shipped or its per-channel int8 copy.

    .venv/bin/python bench/retrieval_fusion.py [--variants float-win,float-nowin] [--test] [--no-grid] [--keep DIR]
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import retrieval_common as rc
from ragdown.evaluation.metrics import Report, Rule, grade
from ragdown.evaluation.questions import Question, load_questions
from ragdown.evaluation.runner import ranked, result_hit
from ragdown.search.hybrid import FUSION_RULE, FusionRule, Hit, Searcher, SearchOptions, pool_size
from ragdown.storage.filter_sql import FileFilter

TOP_K = 10
# What minilm's score fusion was before this rule: BM25 0.6 for prose, 0.8 for identifier and single-term
# queries, every pool min-max normalised over itself.
FIXED_06 = FusionRule(
    base=0.6,
    coverage=0.0,
    agreement=0.0,
    lead=0.0,
    low=0.6,
    high=0.6,
    routed=0.8,
    unread=0.6,
    short_pool=False,
)
# The first adaptive rule (lead-weighted, routed 0.8, no CJK routing, no short-pool normalisation).
ADAPTIVE_V1 = FusionRule(
    base=0.5, coverage=0.5, agreement=0.5, lead=1.0, routed=0.8, unread=None, short_pool=False
)


@dataclass(frozen=True)
class QuestionSet:
    name: str
    corpus: Path
    questions: list[Question]
    rule: Rule


def question_sets(test: bool) -> list[QuestionSet]:
    q = rc.QUESTIONS_DIR
    if test:
        return [
            QuestionSet(
                "obsidian-test", rc.OBSIDIAN, load_questions(q / "obsidian-help.test.jsonl"), "lines"
            ),
            QuestionSet(
                "obsidian-para-test",
                rc.OBSIDIAN,
                load_questions(q / "obsidian-help.para.test.jsonl"),
                "lines",
            ),
            QuestionSet(
                "zh-test", rc.OBSIDIAN_ZH, load_questions(q / "obsidian-help-zh.test.jsonl"), "lines"
            ),
        ]
    return [
        QuestionSet(
            "runbooks", rc.RUNBOOKS_CORPUS, rc.runbooks_questions([*rc.MAIN_TYPES, *rc.RRF_TYPES]), "heading"
        ),
        QuestionSet("obsidian-dev", rc.OBSIDIAN, load_questions(q / "obsidian-help.dev.jsonl"), "lines"),
        QuestionSet(
            "obsidian-para-dev", rc.OBSIDIAN, load_questions(q / "obsidian-help.para.dev.jsonl"), "lines"
        ),
        QuestionSet("zh-dev", rc.OBSIDIAN_ZH, load_questions(q / "obsidian-help-zh.dev.jsonl"), "lines"),
    ]


def grid() -> list[FusionRule]:
    rules = [
        FusionRule(base=b, coverage=c, agreement=a, lead=ld, routed=rt, unread=u)
        for b, c, a, ld, rt, u in itertools.product(
            (0.4, 0.5, 0.6), (0.5, 1.0), (0.5, 1.0), (0.0, 1.0), (0.8, 0.9), (0.8, 0.9, 1.0)
        )
    ]
    return [r for r in rules if r != FUSION_RULE]


def rule_label(rule: FusionRule) -> str:
    if rule == FIXED_06:
        return "score, BM25 0.6 (before)"
    if rule == ADAPTIVE_V1:
        return "score, adaptive v1 (lead-weighted)"
    tag = " (default)" if rule == FUSION_RULE else ""
    return (
        f"score, base {rule.base:g} cov {rule.coverage:g} agree {rule.agreement:g} lead {rule.lead:g} "
        f"routed {rule.routed:g} cjk {rule.unread}{tag}"
    )


def scores(graded: Report) -> dict[str, Any]:
    o = graded.overall
    return {
        "n": o.n,
        "top1": round(o.top1 * o.n),
        "r5": round(o.r5 * o.n),
        "mrr": o.mrr,
        "by_type": {t: (round(s.top1 * s.n), s.n) for t, s in graded.by_type.items()},
    }


def evaluate(qs: QuestionSet, label: str, rank: Callable[[Question], list[Hit]]) -> dict[str, Any]:
    results = {q.id: [result_hit(h) for h in rank(q)] for q in qs.questions}
    out = scores(grade(qs.questions, results, qs.rule))
    out["label"] = label
    return out


def run_set(searcher: Searcher, qs: QuestionSet, rules: list[FusionRule]) -> list[dict[str, Any]]:
    flt = FileFilter()
    answerable = [q for q in qs.questions if q.golds]
    pools = {q.id: searcher.pools(q.question, flt, pool_size(TOP_K)) for q in answerable}
    sub = QuestionSet(qs.name, qs.corpus, answerable, qs.rule)
    rows = [
        evaluate(
            sub,
            "BM25 alone (lexical)",
            lambda q: ranked(searcher, q.question, "lexical", SearchOptions(top_k=TOP_K), flt),
        ),
        evaluate(
            sub,
            "dense alone",
            lambda q: ranked(searcher, q.question, "dense", SearchOptions(top_k=TOP_K), flt),
        ),
        evaluate(
            sub,
            "rrf (spec)",
            lambda q: searcher.rank(q.question, pools[q.id], flt, SearchOptions(top_k=TOP_K, fusion="rrf")),
        ),
    ]
    for rule in (FIXED_06, ADAPTIVE_V1, FUSION_RULE, *rules):
        opts = SearchOptions(top_k=TOP_K, fusion="score")

        def rank(q: Question, rule: FusionRule = rule, opts: SearchOptions = opts) -> list[Hit]:
            return searcher.rank(q.question, pools[q.id], flt, opts, rule)

        row = evaluate(sub, rule_label(rule), rank)
        row["rule"] = rule
        rows.append(row)
    floor1 = max(rows[0]["top1"], rows[1]["top1"])
    floor5 = max(rows[0]["r5"], rows[1]["r5"])
    for row in rows:
        row["loss"] = max(0, floor1 - row["top1"]) + max(0, floor5 - row["r5"])
    return rows


def print_set(name: str, rows: list[dict[str, Any]], show: int) -> None:
    main = rows[:6] if show else rows
    types = sorted({t for r in main for t in r["by_type"]})
    print(
        f"\n{name} ({main[0]['n']} answerable): top-1 / recall@5 / MRR, top-1 per type; loss = questions behind the better side"
    )
    print(
        rc.md_table(
            ["ranking", "top-1", "recall@5", "MRR", "loss", *types],
            [
                [
                    r["label"],
                    f"{r['top1']}/{r['n']}",
                    f"{r['r5']}/{r['n']}",
                    f"{r['mrr']:.3f}",
                    r["loss"],
                    *(f"{a}/{b}" for a, b in (r["by_type"].get(t, (0, 0)) for t in types)),
                ]
                for r in main
            ],
        ),
        flush=True,
    )


def main() -> None:
    ap = rc.parser(__doc__)
    ap.add_argument(
        "--variants",
        default=rc.DEFAULT_VARIANT,
        help=f"comma-separated, of {', '.join(rc.VARIANTS)}",
    )
    ap.add_argument("--test", action="store_true", help="the held-out sets instead of the development sets")
    ap.add_argument("--no-grid", action="store_true", help="only the default rule and the fixed rows")
    args = ap.parse_args()
    s = rc.settings(args.models)
    sets = question_sets(args.test)
    rules = [] if args.no_grid or args.test else grid()
    machine = rc.machine()
    print(rc.machine_line(machine))
    out: dict[str, Any] = {}
    for variant in [v.strip() for v in args.variants.split(",") if v.strip()]:
        used, why = rc.load_variant(s, variant)
        if used is None:
            print(f"{variant}: {why}")
            continue
        out[variant] = {}
        for qs in sets:
            started = time.perf_counter()
            with rc.corpus_index(s, qs.corpus, used, args.keep, variant) as (engine, report):
                rows = run_set(engine.require_searcher(), qs, rules)
            out[variant][qs.name] = {"index_ms": report.get("ms"), "rows": rows}
            print(
                f"\n### {variant}, {qs.name}: {time.perf_counter() - started:.0f} s (index {report.get('ms')} ms)"
            )
            print_set(f"{variant}, {qs.name}", rows, show=len(rules))
        if rules:
            total: dict[str, dict[str, Any]] = {}
            for name, data in out[variant].items():
                for row in data["rows"][3:]:
                    t = total.setdefault(row["label"], {"loss": 0, "quality": 0.0, "sets": {}})
                    t["loss"] += row["loss"]
                    t["quality"] += row["top1"] / row["n"] + row["mrr"]
                    t["sets"][name] = f"{row['top1']}/{row['r5']}/{row['mrr']:.3f}"
            best = sorted(total.items(), key=lambda kv: (kv[1]["loss"], -kv[1]["quality"]))[:12]
            print(f"\n{variant}: the grid, best first (loss over all sets; top-1/recall@5/MRR per set)")
            print(
                rc.md_table(
                    ["rule", "loss", *out[variant]],
                    [[label, t["loss"], *(t["sets"][n] for n in out[variant])] for label, t in best],
                )
            )
    for data in out.values():
        for per_set in data.values():
            for row in per_set["rows"]:
                if "rule" in row:
                    row["rule"] = asdict(row["rule"])
    print(f"written {rc.write_json(args.json, 'retrieval_fusion', {'machine': machine, 'results': out})}")


if __name__ == "__main__":
    main()
