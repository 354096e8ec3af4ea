"""minilm's int8 copy against the model as shipped: first-index time and ranking, in one run.

`RAGDOWN_QUANTIZE` (off by default: this measurement found a small ranking cost) runs a verified per-channel
dynamic-int8 copy of the ONNX model (`index/embedders/quantize.py`). Both are loaded first (the copy is built
and checked once, before any timing). Then each corpus is indexed from scratch into a fresh temporary data
dir, the two models interleaved (float, int8, float, int8, ...; `--reps` each): wall time, CPU time of the
process (ONNX Runtime's threads included) and chunks per second; medians. Each model's last index then
answers every question set, development and held-out, through `Searcher.search` at the defaults (score
fusion with the default `FusionRule`, 10 hits): top-1, recall@5 and MRR per set and per type, and how many
questions the two rank differently (top-1 won by one and lost by the other, McNemar's exact p): the noise
floor a "no cost" claim is judged against.

    .venv/bin/python bench/retrieval_quantize.py [--reps 3] [--vault-reps 1] [--threads N]
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import retrieval_common as rc
from _common import median
from ragdown.core.config import Settings
from ragdown.embedders.base import Embedder
from ragdown.evaluation.metrics import Rule, grade
from ragdown.evaluation.questions import Question, load_questions
from ragdown.evaluation.runner import indexed, run_questions
from ragdown.search.hybrid import SearchOptions

CORPORA: dict[str, Path] = {
    "runbooks": rc.RUNBOOKS_CORPUS,
    "obsidian-help": rc.OBSIDIAN,
    "obsidian-zh": rc.OBSIDIAN_ZH,
}


def question_sets() -> list[tuple[str, str, list[Question], Rule]]:
    q = rc.QUESTIONS_DIR
    return [
        (
            "runbooks (210 + 51 probes)",
            "runbooks",
            rc.runbooks_questions([*rc.MAIN_TYPES, *rc.RRF_TYPES]),
            "heading",
        ),
        ("obsidian-dev", "obsidian-help", load_questions(q / "obsidian-help.dev.jsonl"), "lines"),
        ("obsidian-test", "obsidian-help", load_questions(q / "obsidian-help.test.jsonl"), "lines"),
        ("obsidian-para-dev", "obsidian-help", load_questions(q / "obsidian-help.para.dev.jsonl"), "lines"),
        ("obsidian-para-test", "obsidian-help", load_questions(q / "obsidian-help.para.test.jsonl"), "lines"),
        ("zh-dev", "obsidian-zh", load_questions(q / "obsidian-help-zh.dev.jsonl"), "lines"),
        ("zh-test", "obsidian-zh", load_questions(q / "obsidian-help-zh.test.jsonl"), "lines"),
    ]


def timed_index(s: Settings, corpus: Path, embedder: Embedder, keep: Path | None) -> dict[str, Any]:
    """Index `corpus` from scratch (into `keep` when given, else a temp dir) and time it."""
    with tempfile.TemporaryDirectory(prefix="ragdown-int8-") as tmp:
        data = keep if keep is not None else Path(tmp)
        wall, cpu = time.perf_counter(), time.process_time()
        with indexed(s, corpus, embedder, data) as (_engine, report):
            chunks = report.get("chunks", 0)
        return {
            "wall_s": time.perf_counter() - wall,
            "cpu_s": time.process_time() - cpu,
            "chunks": chunks,
        }


def ranking(s: Settings, corpus: Path, embedder: Embedder, data: Path, qs: list[Question], rule: Rule) -> Any:
    with indexed(s, corpus, embedder, data) as (engine, _):
        answerable = [q for q in qs if q.golds]
        ran = run_questions(
            engine.require_searcher(), answerable, "hybrid", SearchOptions(top_k=10, fusion="score")
        )
        return answerable, grade(answerable, ran.results(), rule)


def main() -> None:
    ap = rc.parser(__doc__)
    ap.add_argument("--reps", type=int, default=3, help="fresh indexes of each small corpus per model")
    ap.add_argument("--vault-reps", type=int, default=1, help="fresh indexes of the Obsidian vault per model")
    ap.add_argument(
        "--threads", type=int, help="ONNX Runtime threads (default: RAGDOWN_THREADS or half the cores)"
    )
    args = ap.parse_args()
    s = rc.settings(args.models)
    if args.threads:
        s = replace(s, threads=args.threads)
    models: dict[str, Embedder] = {}
    for label, quantize in (("float", False), ("int8", True)):
        embedder, why = rc.load(s, "minilm", quantize)
        if embedder is None:
            raise SystemExit(f"minilm {label}: {why}")
        models[label] = embedder
    report = getattr(models["int8"], "quantize_report", None)
    machine = rc.machine()
    print(rc.machine_line(machine), f"· {s.threads} ONNX threads")
    print(f"int8 copy: {getattr(report, 'reason', '?')}")
    out: dict[str, Any] = {"machine": machine, "threads": s.threads, "index": {}, "ranking": {}}
    with tempfile.TemporaryDirectory(prefix="ragdown-int8-keep-") as keep_root:
        keep = Path(keep_root)
        rows = []
        for corpus_name, corpus in CORPORA.items():
            reps = args.vault_reps if corpus_name == "obsidian-help" else args.reps
            runs: dict[str, list[dict[str, Any]]] = {"float": [], "int8": []}
            for rep in range(reps):
                order = ("float", "int8") if rep % 2 == 0 else ("int8", "float")
                for label in order:
                    last = rep == reps - 1
                    target = keep / f"{corpus_name}-{label}" if last else None
                    runs[label].append(timed_index(s, corpus, models[label], target))
                    r = runs[label][-1]
                    print(
                        f"{corpus_name} {label} #{rep + 1}: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU",
                        flush=True,
                    )
            out["index"][corpus_name] = runs
            wall = {k: median([r["wall_s"] for r in v]) for k, v in runs.items()}
            cpu = {k: median([r["cpu_s"] for r in v]) for k, v in runs.items()}
            chunks = runs["float"][0]["chunks"]
            rows.append(
                [
                    corpus_name,
                    chunks,
                    reps,
                    f"{wall['float']:.1f} s ({chunks / wall['float']:.1f}/s)",
                    f"{wall['int8']:.1f} s ({chunks / wall['int8']:.1f}/s)",
                    f"{wall['float'] / wall['int8']:.2f}x",
                    f"{cpu['float']:.1f} s / {cpu['int8']:.1f} s ({cpu['float'] / cpu['int8']:.2f}x)",
                ]
            )
        print("\nfirst index from scratch (medians; speed-up = float / int8)")
        print(
            rc.md_table(
                ["corpus", "chunks", "runs", "float", "int8", "speed-up (wall)", "CPU float / int8"], rows
            )
        )
        rank_rows = []
        type_rows = []
        for name, corpus_name, qs, rule in question_sets():
            graded = {}
            for label in ("float", "int8"):
                answerable, graded[label] = ranking(
                    s, CORPORA[corpus_name], models[label], keep / f"{corpus_name}-{label}", qs, rule
                )
            a = [graded["float"].ranks[q.id] == 1 for q in answerable]
            b = [graded["int8"].ranks[q.id] == 1 for q in answerable]
            only_f = sum(x and not y for x, y in zip(a, b, strict=True))
            only_i = sum(y and not x for x, y in zip(a, b, strict=True))
            f, i = graded["float"].overall, graded["int8"].overall
            rank_rows.append(
                [
                    name,
                    f.n,
                    f"{round(f.top1 * f.n)} / {round(f.r5 * f.n)} / {f.mrr:.3f}",
                    f"{round(i.top1 * i.n)} / {round(i.r5 * i.n)} / {i.mrr:.3f}",
                    f"{only_f} / {only_i}",
                    f"{rc.mcnemar(a, b):.2f}",
                ]
            )
            for t in graded["float"].by_type:
                sf, si = graded["float"].by_type[t], graded["int8"].by_type[t]
                if round(sf.top1 * sf.n) != round(si.top1 * si.n):
                    type_rows.append(
                        [name, t, f"{round(sf.top1 * sf.n)}/{sf.n}", f"{round(si.top1 * si.n)}/{si.n}"]
                    )
            out["ranking"][name] = {
                "float": graded["float"].as_dict(),
                "int8": graded["int8"].as_dict(),
                "top1_only_float": only_f,
                "top1_only_int8": only_i,
            }
        print("\nranking at the defaults (hybrid, score fusion, 10 hits): top-1 / recall@5 / MRR")
        print(
            rc.md_table(
                ["set", "answerable", "float", "int8", "first only with float / only with int8", "McNemar p"],
                rank_rows,
            )
        )
        print("\ntypes whose top-1 differs")
        print(rc.md_table(["set", "type", "float", "int8"], type_rows) if type_rows else "(none)")
    print(f"written {rc.write_json(args.json, 'retrieval_quantize', out)}")


if __name__ == "__main__":
    main()
