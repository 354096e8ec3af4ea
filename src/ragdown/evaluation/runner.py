"""Running a question set through ragdown's own search path.

`hybrid` is `Searcher.search` with `SearchOptions`, exactly what `ragdown_recall` runs; `dense` and
`lexical` are the searcher's own `dense_pool` / `lexical_pool`, so a mode comparison compares the pieces
of the same code. `--hook` runs each question through the hook's search and gates (`hook_candidates`,
`select`, `fit` in `ragdown.tools.hook`) once per `min_ratio` of a sweep.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragdown.core.config import Settings
from ragdown.embedders import load_configured
from ragdown.embedders.base import Embedder
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.evaluation.metrics import RATIO_SWEEP, Mode, Rule, hit_matches
from ragdown.evaluation.questions import Question, ResultHit
from ragdown.search.hook import HookSettings, fit, hook_candidates, select, skip_reason
from ragdown.search.hybrid import Hit, Searcher, SearchOptions
from ragdown.storage.filter_sql import FileFilter

Progress = Callable[[int, int], None]


def result_hit(hit: Hit) -> ResultHit:
    """A search hit in the RESULTS format: the breadcrumb with ` > ` as `grade.py` reads it."""
    c = hit.chunk
    return ResultHit(c.path, c.start_line, c.end_line, c.breadcrumb.replace(" › ", " > "))


def ranked(searcher: Searcher, query: str, mode: Mode, opts: SearchOptions, flt: FileFilter) -> list[Hit]:
    """The hits of one query in `mode`, best first; every hit carries the query's cosine."""
    if mode == "hybrid":
        return searcher.search(query, flt, opts)
    size = opts.top_k
    if mode == "dense":
        pool = searcher.dense_pool(searcher.embed_query(query), flt, size)
        cosines = dict(pool)
    else:
        pool = searcher.lexical_pool(query, flt, size)
        qvec = searcher.embed_query(query) if searcher.embedder is not None else None
        ids = [cid for cid, _ in pool]
        cosines = searcher.matrix.cosine(qvec, ids) if qvec is not None and searcher.matrix else {}
    records = searcher.store.chunks_by_id([cid for cid, _ in pool])
    return [
        Hit(records[cid], float(cosines.get(cid, 0.0)), float(score), (mode,))
        for cid, score in pool
        if cid in records
    ]


@dataclass
class Run:
    """The hits (and their cosines) of every question, and how long the searches took."""

    mode: Mode
    hits: dict[str, list[Hit]]
    seconds: float

    def results(self) -> dict[str, list[ResultHit]]:
        return {qid: [result_hit(h) for h in hits] for qid, hits in self.hits.items()}


def run_questions(
    searcher: Searcher,
    questions: Sequence[Question],
    mode: Mode,
    opts: SearchOptions,
    flt: FileFilter | None = None,
    progress: Progress | None = None,
) -> Run:
    flt = flt or FileFilter()
    out: dict[str, list[Hit]] = {}
    started = time.perf_counter()
    for i, q in enumerate(questions, 1):
        out[q.id] = ranked(searcher, q.question, mode, opts, flt)
        if progress is not None:
            progress(i, len(questions))
    return Run(mode, out, time.perf_counter() - started)


# -- the hook ------------------------------------------------------------------------------------


@dataclass
class HookRow:
    """One `min_ratio` of the sweep: recall and chunk counts over the answerable questions, and what
    the questions without an answer were given, per type."""

    min_ratio: float
    n: int
    found: int
    chunks: int
    wrong: int
    no_gold: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # type -> (n, prompts, chunks)
    missed: list[str] = field(default_factory=list)

    def record(self, q: Question, injected: Sequence[Hit], gold_rule: Rule) -> None:
        """Count what the hook injected for one question."""
        if q.golds:
            right = [h for h in injected if any(hit_matches(result_hit(h), g, gold_rule) for g in q.golds)]
            self.n += 1
            self.found += bool(right)
            self.chunks += len(injected)
            self.wrong += len(injected) - len(right)
            if not right:
                self.missed.append(q.id)
        else:
            n, prompts, chunks = self.no_gold.get(q.type, (0, 0, 0))
            self.no_gold[q.type] = (n + 1, prompts + bool(injected), chunks + len(injected))

    @property
    def recall(self) -> float:
        return self.found / self.n if self.n else 0.0

    @property
    def chunks_per_prompt(self) -> float:
        return self.chunks / self.n if self.n else 0.0

    @property
    def wrong_per_prompt(self) -> float:
        return self.wrong / self.n if self.n else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "min_ratio": self.min_ratio,
            "n": self.n,
            "recall": self.recall,
            "chunks_per_prompt": self.chunks_per_prompt,
            "wrong_per_prompt": self.wrong_per_prompt,
            "no_gold": {
                t: {"n": n, "prompts_with_injections": p, "chunks_injected": c}
                for t, (n, p, c) in self.no_gold.items()
            },
            "missed": self.missed,
        }


def hook_rule(rule: Rule) -> Rule:
    """The gold test of the hook: with breadcrumbs, the gold section or a descendant (gate.ts)."""
    return "heading-prefix" if rule == "heading" else rule


def run_hook(
    runtime: Runtime,
    questions: Sequence[Question],
    rule: Rule,
    ratios: Sequence[float] = RATIO_SWEEP,
    call: dict[str, Any] | None = None,
    flt: FileFilter | None = None,
    progress: Progress | None = None,
    *,
    keep_top: int | None = None,
) -> tuple[HookSettings, list[HookRow]]:
    """Every question through the hook's search once, and its gates once per ratio (a fresh session).

    `keep_top` as `select`'s (None: what the tool does under these settings, `HookSettings.keep_top`); 0
    measures the spec's gates alone."""
    flt = flt or FileFilter()
    base = runtime.hook_settings(dict(call or {}), None)
    keep_top = base.keep_top if keep_top is None else keep_top
    searcher = runtime.engine.require_searcher()
    gold_rule = hook_rule(rule)
    rows = [HookRow(r, 0, 0, 0, 0) for r in ratios]
    for i, q in enumerate(questions, 1):
        prompt = q.question.strip()
        if skip_reason(prompt) is None:
            candidates, alias_paths = hook_candidates(searcher, prompt, flt, base.top_k, runtime.fusion)
        else:
            candidates, alias_paths = [], set()
        for row in rows:
            settings = replace(base, min_ratio=row.min_ratio)
            chosen = select(
                candidates, settings, set(), prompt, alias_paths, runtime.max_per_document, keep_top=keep_top
            )
            _, injected = fit(chosen.injected, settings, runtime.text_limit)
            row.record(q, injected, gold_rule)
        if progress is not None:
            progress(i, len(questions))
    return base, rows


# -- an index for a run ---------------------------------------------------------------------------


def open_embedder(settings: Settings, name: str, *, quantize: bool = False) -> Embedder:
    return load_configured(name, settings, quantize=quantize)


@contextlib.contextmanager
def indexed(
    settings: Settings,
    docs: Path,
    embedder: Embedder,
    data_dir: Path | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> Iterator[tuple[Engine, dict[str, Any]]]:
    """An engine over `docs` synced into `data_dir` (a temporary one by default); the folder is only read.

    Yields the engine and the sync report (`ms` is how long indexing took).
    """
    with contextlib.ExitStack() as stack:
        if data_dir is None:
            data_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ragdown-eval-")))
        run_settings = replace(settings, docs_dir=docs, data_dir_override=data_dir, watch=False)
        engine = Engine(run_settings, "stdio", docs_dir=docs, embedder=embedder)
        engine.start(background=False, initial_sync=False, watch=False)
        stack.callback(engine.close)
        if engine.error:
            raise RuntimeError(engine.error)
        if on_progress is not None:
            engine.add_progress_listener(lambda p: on_progress(p.files_done, p.files_total))
        report = engine.sync()
        yield engine, report
