"""The hook-floor table (the original's threshold.ts): where each embedder's default `MIN_SCORE` comes from.

For every embedder that loads here: the best-hit cosine of the first 60 answerable `ragdown-runbooks`
questions (10th percentile = the 6th lowest, and the lowest), against the highest best-hit cosine of the
10 off-topic prompts ("what is the weather in Paris tomorrow", "a recipe for carbonara", ...). The floor
must sit between the two. With `--obsidian` the same 10 prompts are also asked of the Obsidian help vault,
a real corpus whose breadth gives unrelated prompts more to land on.

    .venv/bin/python bench/retrieval_threshold.py [--embedders minilm,hash] [--obsidian] [--keep DIR]
"""

from __future__ import annotations

from typing import Any

import retrieval_common as rc
from ragdown.embedders import default_min_score, unrelated_score
from ragdown.evaluation.questions import Question
from ragdown.search.hybrid import Searcher
from ragdown.storage.filter_sql import FileFilter


def best_cosines(searcher: Searcher, questions: list[Question]) -> list[tuple[float, str]]:
    out = []
    for q in questions:
        pool = searcher.dense_pool(searcher.embed_query(q.question), FileFilter(), 1)
        out.append((pool[0][1] if pool else 0.0, q.question))
    return out


def main() -> None:
    ap = rc.parser(__doc__)
    ap.add_argument("--embedders", default=",".join(label for label, _, _ in rc.EMBEDDERS if label != "hash"))
    ap.add_argument(
        "--obsidian", action="store_true", help="also ask the off-topic prompts of the Obsidian vault"
    )
    args = ap.parse_args()
    wanted = [x.strip() for x in args.embedders.split(",") if x.strip()]
    s = rc.settings(args.models)
    on_topic_qs = rc.first_answerable(60)
    off_topic_qs = rc.runbooks_questions(["off-topic"])
    rows: list[dict[str, Any]] = []
    for label, spec, quantize in rc.EMBEDDERS:
        if label not in wanted:
            continue
        embedder, why = rc.load(s, spec, quantize)
        if embedder is None:
            rows.append({"embedder": label, "error": why})
            print(f"{label}: not available here: {why}", flush=True)
            continue
        row: dict[str, Any] = {"embedder": label, "min_score": default_min_score(spec)}
        row["unrelated_in_catalog"] = unrelated_score(spec)
        with rc.corpus_index(s, rc.RUNBOOKS_CORPUS, embedder, args.keep, label) as (engine, _):
            searcher = engine.require_searcher()
            on = sorted(c for c, _ in best_cosines(searcher, on_topic_qs))
            off = sorted(best_cosines(searcher, off_topic_qs), reverse=True)
        row.update(on_p10=on[5], on_min=on[0], off_max=off[0][0], off_max_prompt=off[0][1], off=off)
        if args.obsidian:
            with rc.corpus_index(s, rc.OBSIDIAN, embedder, args.keep, label) as (engine, _):
                obs_off = sorted(best_cosines(engine.require_searcher(), off_topic_qs), reverse=True)
            row.update(
                obsidian_off_max=obs_off[0][0], obsidian_off_max_prompt=obs_off[0][1], obsidian_off=obs_off
            )
        rows.append(row)
        print(
            f"{label}: on-topic p10 {on[5]:.3f} (lowest {on[0]:.3f}), off-topic max {off[0][0]:.3f}",
            flush=True,
        )
    machine = rc.machine()
    print()
    print(rc.machine_line(machine))
    table = []
    for r in rows:
        if "error" in r:
            table.append([r["embedder"], "—", "—", "—", "—", f"not available here: {r['error']}"])
            continue
        table.append(
            [
                r["embedder"],
                f"{r['on_p10']:.2f} (lowest {r['on_min']:.2f})",
                f"{r['off_max']:.2f} ({r['off_max_prompt']})",
                f"{r['obsidian_off_max']:.2f} ({r['obsidian_off_max_prompt']})"
                if "obsidian_off_max" in r
                else "—",
                f"`{r['min_score']}`",
                f"{r['unrelated_in_catalog']}",
            ]
        )
    print(
        rc.md_table(
            [
                "embedder",
                "on-topic (10th percentile)",
                "unrelated, runbooks (worst)",
                "unrelated, Obsidian vault (worst)",
                "MIN_SCORE",
                "unrelated in the catalog",
            ],
            table,
        )
    )
    print(f"written {rc.write_json(args.json, 'retrieval_threshold', {'machine': machine, 'rows': rows})}")


if __name__ == "__main__":
    main()
