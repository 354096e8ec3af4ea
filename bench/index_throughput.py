"""Indexing throughput: the whole pipeline against the raw embedder on exactly the same chunk texts.

    .venv/bin/python bench/index_throughput.py [--corpus all|obsidian-help|ragdown-runbooks] [--reps N]
                                               [--threads N] [--embedder minilm]

For each corpus (copied into a temporary folder first; /work/shared is never written):

- **pipeline**: `Indexer.sync()` on a fresh store: walk + read + hash + parse + embed + SQLite write (FTS5
  triggers included). The embedder is wrapped so the time spent inside `embed_documents` is measured in
  the same run, which splits the pipeline into "embedding" and "everything else" without cross-run noise.
- **raw**: `embedder.embed_documents(texts)` in one call, where `texts` is every `chunk.embed_text` of
  the corpus in the order the sync embeds them (the vectors are checked against the stored ones).
- **no-embed**: the same sync with a zero-cost embedder: what walk + parse + write alone cost.

Repetitions are interleaved A/B, B/A, A/B... (so a drift of the shared machine hits both sides) and the
table shows medians. `overhead` = median(pipeline) / median(raw) - 1 (the goal is <= 10 %);
`non-embed share` = (pipeline - its own embedding time) / its embedding time, from the same runs.
The goal verdict uses the CPU-time overhead and the non-embed share: both hold on a busy machine, where
the wall-clock ratio across runs does not.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from _common import CORPORA, exit_cleanly_on_sigterm, machine, median, table, write_result
from ragdown.core.cpus import default_threads
from ragdown.documents import CHUNKER_VERSION, parse_document
from ragdown.embedders import Embedder, Vectors, load_embedder
from ragdown.storage.records import IndexMeta
from ragdown.storage.sqlite.store import Store
from ragdown.sync.indexer import Indexer
from ragdown.vault.walk import walk_markdown

GOAL_OVERHEAD = 0.10
# One pair on the vault is ~3 minutes single-threaded (1,567 chunks at ~17 chunks/s): keep the default run
# under ~5 minutes; pass --reps 3 for firmer medians.
DEFAULT_REPS = {"obsidian-help": 1, "ragdown-runbooks": 3}


class TimedEmbedder:
    """Delegates to an embedder and adds up the seconds spent in `embed_documents`."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        self.calls = 0
        self.texts = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def min_score(self) -> float:
        return self.inner.min_score

    @property
    def unrelated_score(self) -> float | None:
        return self.inner.unrelated_score

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        start, cpu = time.perf_counter(), time.process_time()
        try:
            return self.inner.embed_documents(texts)
        finally:
            self.seconds += time.perf_counter() - start
            self.cpu_seconds += time.process_time() - cpu
            self.calls += 1
            self.texts += len(texts)

    def embed_query(self, text: str) -> Vectors:
        return self.inner.embed_query(text)


class NullEmbedder:
    """Costs nothing: a constant unit vector per text (for the walk + parse + write share)."""

    def __init__(self, name: str, dim: int) -> None:
        self._name = name
        self._dim = dim

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def min_score(self) -> float:
        return 0.5

    @property
    def unrelated_score(self) -> float | None:
        return None

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        out[:, 0] = 1.0
        return out

    def embed_query(self, text: str) -> Vectors:
        out = np.zeros(self._dim, dtype=np.float32)
        out[0] = 1.0
        return out


@dataclass
class Timing:
    """Wall-clock and CPU seconds (this process) of one run; CPU time suffers less from a busy machine."""

    wall: float
    cpu: float


@dataclass
class CorpusRuns:
    corpus: str
    files: int
    chunks: int
    mean_chars: float
    pipeline: list[Timing] = field(default_factory=list)
    pipeline_embed: list[Timing] = field(default_factory=list)
    pipeline_embed_calls: int = 0
    raw: list[Timing] = field(default_factory=list)
    noembed: list[Timing] = field(default_factory=list)
    order: list[str] = field(default_factory=list)
    max_abs_diff: float = 0.0


def corpus_texts(docs_dir: Path) -> tuple[int, list[str]]:
    """Every chunk's `embed_text`, in the order `Indexer.sync` embeds them (files by path)."""
    walked = walk_markdown(docs_dir, folders=False)
    texts: list[str] = []
    for stat in walked.files:
        doc = parse_document(stat.path, (docs_dir / stat.path).read_bytes())
        texts.extend(c.embed_text for c in doc.chunks)
    return len(walked.files), texts


def stored_vectors(store: Store, dim: int) -> Vectors:
    with store.read_snapshot() as conn:
        blobs = [row[2] for rows in store.vectors_after(conn, 0) for row in rows]
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim).copy()


def run_pipeline(
    docs_dir: Path, data_dir: Path, embedder: Embedder, expect_chunks: int
) -> tuple[Timing, Store]:
    """One `Indexer.sync()` on a fresh store; the store is returned open."""
    store = Store(data_dir, writable=True)
    store.ensure_meta(IndexMeta(embedder.name, embedder.dim, CHUNKER_VERSION))
    indexer = Indexer(docs_dir, store, embedder, folders=False)
    start, cpu = time.perf_counter(), time.process_time()
    report = indexer.sync()
    timing = Timing(time.perf_counter() - start, time.process_time() - cpu)
    if report.chunks != expect_chunks:
        raise SystemExit(f"the sync wrote {report.chunks} chunks, the texts list has {expect_chunks}")
    return timing, store


def bench_corpus(name: str, source: Path, embedder: Embedder, reps: int) -> CorpusRuns:
    with tempfile.TemporaryDirectory(prefix="ragdown-bench-index-") as tmp:
        docs_dir = Path(tmp) / "docs"
        shutil.copytree(source, docs_dir)
        files, texts = corpus_texts(docs_dir)
        runs = CorpusRuns(name, files, len(texts), float(np.mean([len(t) for t in texts])))
        embedder.embed_documents(texts[:32])  # warm-up: first-call allocations of the runtime
        null = NullEmbedder(embedder.name, embedder.dim)
        stored: Vectors | None = None
        raw: Vectors | None = None
        for rep in range(reps):
            sides = ("pipeline", "raw") if rep % 2 == 0 else ("raw", "pipeline")
            for side in sides:
                runs.order.append(side)
                if side == "raw":
                    start, cpu = time.perf_counter(), time.process_time()
                    raw = embedder.embed_documents(texts)
                    runs.raw.append(Timing(time.perf_counter() - start, time.process_time() - cpu))
                    t = runs.raw[-1]
                    print(
                        f"  {name} rep {rep + 1} raw      {t.wall:8.2f} s (CPU {t.cpu:.2f} s)",
                        file=sys.stderr,
                    )
                    continue
                timed = TimedEmbedder(embedder)
                data_dir = Path(tmp) / f"data-{rep}"
                timing, store = run_pipeline(docs_dir, data_dir, timed, len(texts))
                if stored is None:
                    stored = stored_vectors(store, embedder.dim)
                store.close()
                shutil.rmtree(data_dir)
                runs.pipeline.append(timing)
                runs.pipeline_embed.append(Timing(timed.seconds, timed.cpu_seconds))
                runs.pipeline_embed_calls = timed.calls
                print(
                    f"  {name} rep {rep + 1} pipeline {timing.wall:8.2f} s (CPU {timing.cpu:.2f} s; embedding"
                    f" {timed.seconds:.2f} s in {timed.calls} calls)",
                    file=sys.stderr,
                )
            data_dir = Path(tmp) / f"null-{rep}"
            timing, store = run_pipeline(docs_dir, data_dir, null, len(texts))
            store.close()
            shutil.rmtree(data_dir)
            runs.noembed.append(timing)
        if stored is not None and raw is not None:
            runs.max_abs_diff = float(np.abs(stored - raw).max())
        return runs


@dataclass(frozen=True)
class Summary:
    corpus: str
    files: int
    chunks: int
    mean_chars_per_chunk: float
    reps: int
    order: list[str]
    pipeline_s_median: float
    raw_s_median: float
    pipeline_chunks_per_s: float
    raw_chunks_per_s: float
    overhead: float
    """median(pipeline wall) / median(raw wall) - 1: the goal metric."""
    overhead_cpu: float
    """The same on CPU seconds of this process."""
    pipeline_embed_s_median: float
    pipeline_embed_calls: int
    pipeline_non_embed_s_median: float
    non_embed_share: float
    """(pipeline - its own embedding time) / its embedding time, per run, median: immune to drift."""
    batching_effect: float
    """median(pipeline's embedding time) / median(raw) - 1: what embedding per batch of files costs."""
    noembed_pipeline_s_median: float
    max_abs_diff_stored_vs_raw: float
    runs: dict[str, list[Timing]]


def summarise(runs: CorpusRuns) -> Summary:
    pipe = median([t.wall for t in runs.pipeline])
    raw = median([t.wall for t in runs.raw])
    pipe_embed = median([t.wall for t in runs.pipeline_embed])
    non_embed = [p.wall - e.wall for p, e in zip(runs.pipeline, runs.pipeline_embed, strict=True)]
    shares = [(p.wall - e.wall) / e.wall for p, e in zip(runs.pipeline, runs.pipeline_embed, strict=True)]
    return Summary(
        corpus=runs.corpus,
        files=runs.files,
        chunks=runs.chunks,
        mean_chars_per_chunk=round(runs.mean_chars, 1),
        reps=len(runs.raw),
        order=runs.order,
        pipeline_s_median=pipe,
        raw_s_median=raw,
        pipeline_chunks_per_s=runs.chunks / pipe,
        raw_chunks_per_s=runs.chunks / raw,
        overhead=pipe / raw - 1.0,
        overhead_cpu=median([t.cpu for t in runs.pipeline]) / median([t.cpu for t in runs.raw]) - 1.0,
        pipeline_embed_s_median=pipe_embed,
        pipeline_embed_calls=runs.pipeline_embed_calls,
        pipeline_non_embed_s_median=median(non_embed),
        non_embed_share=median(shares),
        batching_effect=pipe_embed / raw - 1.0,
        noembed_pipeline_s_median=median([t.wall for t in runs.noembed]),
        max_abs_diff_stored_vs_raw=runs.max_abs_diff,
        runs={
            "pipeline": runs.pipeline,
            "pipeline_embed": runs.pipeline_embed,
            "raw": runs.raw,
            "noembed": runs.noembed,
        },
    )


def main() -> None:
    exit_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", choices=["all", *CORPORA], default="all")
    parser.add_argument(
        "--reps",
        type=int,
        default=None,
        help="pipeline/raw pairs per corpus (default: 3 for ragdown-runbooks, 1 for obsidian-help)",
    )
    parser.add_argument("--threads", type=int, default=default_threads(), help="ONNX intra-op threads")
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args()

    before = machine()
    with tempfile.TemporaryDirectory(prefix="ragdown-bench-models-") as models:
        start = time.perf_counter()
        embedder = load_embedder(args.embedder, models_dir=Path(models), threads=args.threads)
        load_s = time.perf_counter() - start
    print(f"{embedder!r}, {args.threads} thread(s), loaded in {load_s:.2f} s", file=sys.stderr)
    names = list(CORPORA) if args.corpus == "all" else [args.corpus]
    results = [summarise(bench_corpus(n, CORPORA[n], embedder, args.reps or DEFAULT_REPS[n])) for n in names]

    rows = [
        [
            r.corpus,
            r.reps,
            f"{r.files} / {r.chunks}",
            f"{r.pipeline_s_median:.2f}",
            f"{r.raw_s_median:.2f}",
            f"{r.pipeline_chunks_per_s:.1f}",
            f"{r.raw_chunks_per_s:.1f}",
            f"{r.overhead:+.1%}",
            f"{r.overhead_cpu:+.1%}",
            f"{r.pipeline_non_embed_s_median:.2f} ({r.non_embed_share:.1%})",
            f"{r.noembed_pipeline_s_median:.2f}",
            f"{r.batching_effect:+.1%}",
        ]
        for r in results
    ]
    print(
        f"\n{args.embedder}, {args.threads} thread(s), medians of interleaved pipeline/raw pairs\n"
        + table(
            [
                "corpus",
                "pairs",
                "files / chunks",
                "pipeline s",
                "raw s",
                "pipeline ch/s",
                "raw ch/s",
                "overhead",
                "overhead (CPU s)",
                "non-embed s (share)",
                "no-embed sync s",
                "batching",
            ],
            rows,
        )
    )
    # The verdict uses the two load-proof figures: CPU seconds across runs, and the in-run split of wall
    # time (a busy neighbour moves the wall-clock ratio across runs by +-20 % on this 2-CPU machine).
    worst_cpu = max(r.overhead_cpu for r in results)
    worst_share = max(r.non_embed_share for r in results)
    worst_wall = max(r.overhead for r in results)
    met = worst_cpu <= GOAL_OVERHEAD and worst_share <= GOAL_OVERHEAD
    print(
        f"goal overhead <= {GOAL_OVERHEAD:.0%}: {'met' if met else 'MISSED'} (worst: CPU {worst_cpu:+.1%},"
        f" in-run non-embedding share {worst_share:.1%}; wall-clock across runs {worst_wall:+.1%})"
    )
    path = write_result(
        "index_throughput",
        {
            "machine_at_start": before,
            "embedder": args.embedder,
            "threads": args.threads,
            "load_s": load_s,
            "goal_overhead": GOAL_OVERHEAD,
            "goal_met": met,
            "corpora": [dataclasses.asdict(r) for r in results],
        },
    )
    print(f"results: {path}")


if __name__ == "__main__":
    main()
