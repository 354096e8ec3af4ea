"""Hybrid search latency at 2k / 20k / 100k chunks, without the query embedding.

    .venv/bin/python bench/search_latency.py [--sizes 2000,20000,100000] [--queries 100] [--rounds 2]
                                             [--top-k 8] [--baseline-src DIR]

For each size, a synthetic index is written through the real `Store.write_files` into a temporary data
dir (one transaction per ~5,000 chunks): files of 4-16 chunks under 20 top-level folders, each chunk
60-240 words drawn from a Zipf vocabulary (s = 1.0, 50k words, the English stop words at the top ranks,
as in real text), 384-d **random unit vectors** (no embedder: writing 100k chunks stays fast), and the
tag `project` on 5 % of the files.

Queries are 2-4 content words (Zipf again, so frequent words are common) plus 0-3 stop words, some
phrased as questions; 10 % name a snake_case identifier. Their vectors are random unit vectors made up
front and the searcher's embedder is a table lookup, so the timed call is exactly `Searcher.search`
minus the embedding (no change to `src/` is needed for that).

`--rounds` fresh worker processes per size each run every query unfiltered, with a path prefix (one
top-level folder, ~5 % of the chunks) and with the tag, interleaved; then the pieces the search calls,
timed separately on the same queries (the dense pool `DenseMatrix.search`, the BM25 pool `Store.bm25`,
`Store.chunks_by_id` for every fused candidate and for the first top_k only, and both pools one after
the other against the BM25 pool in a second thread: a possible change, not what `search` does); then
they edit one file (its chunks replaced, as a sync does) and run the unfiltered searches again: a
long-running process then holds dead rows in its matrix until compaction. `--prune` adds an experiment
(BM25 with the query's common terms dropped, against today's pool). `--baseline-src DIR` runs
the same workers with `PYTHONPATH=DIR` (another `src/` tree), round by round with this tree, on the
same index.
Goals (unfiltered p50): <= 2 ms at 2k, <= 8 ms at 20k, <= 30 ms at 100k.
"""

from __future__ import annotations

import ragdown  # noqa: F401  first, as in every ragdown process: it pins OPENBLAS_NUM_THREADS=1

# isort: split
import argparse
import dataclasses
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from _common import exit_cleanly_on_sigterm, median, percentile, table, write_result
from ragdown.documents import CHUNKER_VERSION
from ragdown.documents.model import HEADING_SEPARATOR, Chunk, Document, DocumentMeta
from ragdown.embedders import Vectors
from ragdown.search.hybrid import BM25_WEIGHTS, Searcher, SearchOptions, pool_size
from ragdown.search.query import STOP_WORDS, fts_match, fts_terms
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.records import IndexMeta, PendingFile
from ragdown.storage.sqlite.store import Store

DIM = 384
VOCABULARY = 50_000
TOP_FOLDERS = 20
TAG = "project"
TAG_SHARE = 0.05
WRITE_BATCH_CHUNKS = 5_000
GOALS_MS = {2_000: 2.0, 20_000: 8.0, 100_000: 30.0}
FILTERS = ("unfiltered", "path prefix", "tag")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def vocabulary(size: int) -> list[str]:
    """The stop words first (the most frequent ranks), then made-up words of 3-9 letters."""
    words = sorted(STOP_WORDS, key=lambda w: (len(w), w))
    seen = set(words)
    rng = np.random.default_rng(1)
    while len(words) < size:
        word = "".join(rng.choice(list(_LETTERS), size=int(rng.integers(3, 10))))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def zipf_probabilities(size: int, s: float = 1.0) -> npt.NDArray[np.float64]:
    weights = 1.0 / np.arange(1, size + 1, dtype=np.float64) ** s
    probabilities: npt.NDArray[np.float64] = weights / weights.sum()
    return probabilities


def unit_vectors(rng: np.random.Generator, count: int) -> Vectors:
    vectors = rng.standard_normal((count, DIM), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


class TableEmbedder:
    """Query vectors made up front: `embed_query` is a dict lookup, so search time excludes embedding."""

    def __init__(self, table: dict[str, Vectors]) -> None:
        self.table = table

    @property
    def name(self) -> str:
        return "bench-random-384"

    @property
    def dim(self) -> int:
        return DIM

    @property
    def min_score(self) -> float:
        return 0.0

    @property
    def unrelated_score(self) -> float | None:
        return None

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        raise NotImplementedError("the benchmark writes vectors itself")

    def embed_query(self, text: str) -> Vectors:
        return self.table[text]


def build_index(store: Store, chunks: int, seed: int) -> tuple[int, float]:
    """Write `chunks` synthetic chunks through `Store.write_files`; returns (files, seconds)."""
    rng = np.random.default_rng(seed)
    words = np.array(vocabulary(VOCABULARY))
    probabilities = zipf_probabilities(VOCABULARY)
    store.ensure_meta(IndexMeta("bench-random-384", DIM, CHUNKER_VERSION))
    start = time.perf_counter()
    written = 0
    files = 0
    pending: list[PendingFile] = []
    pending_chunks = 0
    while written < chunks:
        count = min(int(rng.integers(4, 17)), chunks - written)
        folder = f"area-{files % TOP_FOLDERS:02d}"
        path = f"{folder}/topic-{(files // TOP_FOLDERS) % 50:02d}/note-{files:06d}.md"
        title = f"Note {files}"
        lengths = rng.integers(60, 241, size=count)
        drawn = words[rng.choice(VOCABULARY, size=int(lengths.sum()), p=probabilities)]
        bounds = np.concatenate(([0], np.cumsum(lengths)))
        parts: list[Chunk] = []
        line = 1
        for i in range(count):
            text = " ".join(drawn[bounds[i] : bounds[i + 1]].tolist())
            heading = f"Section {i} {drawn[bounds[i]]}"
            parts.append(Chunk(i, heading, f"{title}{HEADING_SEPARATOR}{heading}", text, line, line + 2))
            line += 4
        tags = (TAG,) if rng.random() < TAG_SHARE else ()
        document = Document(path, DocumentMeta(title=title, tags=tags), tuple(parts))
        digest = hashlib.sha256(path.encode()).hexdigest()
        pending.append(PendingFile(path, "", 1000, 1, 1, digest, document, unit_vectors(rng, count)))
        written += count
        pending_chunks += count
        files += 1
        if pending_chunks >= WRITE_BATCH_CHUNKS:
            store.write_files(pending)
            pending, pending_chunks = [], 0
    if pending:
        store.write_files(pending)
    return files, time.perf_counter() - start


def make_queries(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    words = vocabulary(VOCABULARY)
    stop = len(STOP_WORDS)
    content = zipf_probabilities(VOCABULARY - stop)
    starters = ("how do i", "what is the", "where is", "why does the", "", "", "")
    queries: list[str] = []
    while len(queries) < count:
        picked = [
            words[stop + int(i)]
            for i in rng.choice(VOCABULARY - stop, size=int(rng.integers(2, 5)), p=content)
        ]
        if rng.random() < 0.1:
            picked[0] = f"{picked[0]}_{picked[-1]}"
        lead = starters[int(rng.integers(0, len(starters)))]
        text = (f"{lead} " if lead else "") + " ".join(picked)
        if " of the " not in text and rng.random() < 0.3:
            text += " of the " + words[stop + int(rng.integers(0, 50))]
        if text not in queries:
            queries.append(text)
    return queries


MEASURED = (*FILTERS, "unfiltered, 1 file edited")


def filters() -> dict[str, FileFilter]:
    return {
        "unfiltered": FileFilter(),
        "path prefix": FileFilter(prefixes=("area-07",)),
        "tag": FileFilter(tag=TAG),
    }


def query_set(count: int) -> tuple[list[str], dict[str, Vectors]]:
    queries = make_queries(count, seed=5)
    rng = np.random.default_rng(9)
    return queries, dict(zip(queries, unit_vectors(rng, len(queries)), strict=True))


@dataclass
class Samples:
    """Milliseconds per query, by what was timed."""

    search: dict[str, list[float]] = dataclasses.field(default_factory=lambda: {m: [] for m in MEASURED})
    hits: dict[str, list[int]] = dataclasses.field(default_factory=lambda: {m: [] for m in MEASURED})
    dense: list[float] = dataclasses.field(default_factory=list)
    bm25: list[float] = dataclasses.field(default_factory=list)
    fetch_all: list[float] = dataclasses.field(default_factory=list)
    fetch_top_k: list[float] = dataclasses.field(default_factory=list)
    matched: list[int] = dataclasses.field(default_factory=list)
    pools_serial: list[float] = dataclasses.field(default_factory=list)
    pools_threaded: list[float] = dataclasses.field(default_factory=list)
    first_search: list[float] = dataclasses.field(default_factory=list)

    def extend(self, other: Samples) -> None:
        for m in MEASURED:
            self.search[m] += other.search[m]
            self.hits[m] += other.hits[m]
        self.dense += other.dense
        self.bm25 += other.bm25
        self.fetch_all += other.fetch_all
        self.fetch_top_k += other.fetch_top_k
        self.matched += other.matched
        self.pools_serial += other.pools_serial
        self.pools_threaded += other.pools_threaded
        self.first_search += other.first_search


def edit_one_file(store: Store, seed: int) -> None:
    """Replace the first file's chunks (same count, new text and vectors), as a sync does for an edit."""
    rng = np.random.default_rng(seed)
    record = store.all_files()[0]
    words = vocabulary(200)
    parts = tuple(
        Chunk(
            i,
            f"Section {i}",
            f"{record.title}{HEADING_SEPARATOR}Section {i}",
            " ".join(rng.choice(words, 80)),
            1,
            2,
        )
        for i in range(record.chunk_count)
    )
    document = Document(record.path, DocumentMeta(title=record.title, tags=record.tags), parts)
    store.write_files(
        [PendingFile(record.path, "", 1000, 2, 2, record.hash, document, unit_vectors(rng, len(parts)))]
    )


def worker(data: Path, queries_count: int, top_k: int, seed: int) -> Samples:
    """Time the searches on an index built earlier (in its own process; see `--baseline-src`)."""
    queries, vectors = query_set(queries_count)
    store = Store(data, writable=True)
    out = Samples()
    try:
        searcher = Searcher(store, TableEmbedder(vectors), folders=False)
        opts = SearchOptions(top_k=top_k)
        start = time.perf_counter()
        searcher.search(queries[0], FileFilter(), opts)  # loads the matrix
        out.first_search.append((time.perf_counter() - start) * 1000)
        for q in queries[:10]:  # warm-up: page cache, statement cache
            searcher.search(q, FileFilter(), opts)
        flts = filters()
        for q in queries:
            for name, flt in flts.items():
                t0 = time.perf_counter()
                found = searcher.search(q, flt, opts)
                out.search[name].append((time.perf_counter() - t0) * 1000)
                out.hits[name].append(len(found))
        # The pieces the search calls, unfiltered, on the same queries.
        size = pool_size(top_k)
        assert searcher.matrix is not None
        conn = store._reader()
        for q in queries:
            t0 = time.perf_counter()
            dense = searcher.matrix.search(vectors[q], size, None)
            t1 = time.perf_counter()
            match = fts_match(q)
            lexical = store.bm25(match, FileFilter(), size, BM25_WEIGHTS) if match else []
            t2 = time.perf_counter()
            fused = list(dict.fromkeys([cid for cid, _ in dense] + [cid for cid, _ in lexical]))
            store.chunks_by_id(fused)
            t3 = time.perf_counter()
            store.chunks_by_id(fused[:top_k])
            t4 = time.perf_counter()
            out.dense.append((t1 - t0) * 1000)
            out.bm25.append((t2 - t1) * 1000)
            out.fetch_all.append((t3 - t2) * 1000)
            out.fetch_top_k.append((t4 - t3) * 1000)
            if match:
                row = conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (match,))
                out.matched.append(int(row.fetchone()[0]))
        # A possible change: both pools at once, BM25 in a second thread (SQLite and numpy release the GIL).
        with ThreadPoolExecutor(max_workers=1) as pool:
            for q in queries:
                match = fts_match(q)
                t0 = time.perf_counter()
                searcher.matrix.search(vectors[q], size, None)
                if match:
                    store.bm25(match, FileFilter(), size, BM25_WEIGHTS)
                t1 = time.perf_counter()
                future = pool.submit(store.bm25, match, FileFilter(), size, BM25_WEIGHTS) if match else None
                searcher.matrix.search(vectors[q], size, None)
                if future is not None:
                    future.result()
                t2 = time.perf_counter()
                out.pools_serial.append((t1 - t0) * 1000)
                out.pools_threaded.append((t2 - t1) * 1000)
        # A long-running process after one file was edited: its old rows are dead in the matrix.
        edit_one_file(store, seed)
        name = "unfiltered, 1 file edited"
        searcher.search(queries[0], FileFilter(), opts)  # the refresh
        for q in queries:
            t0 = time.perf_counter()
            found = searcher.search(q, FileFilter(), opts)
            out.search[name].append((time.perf_counter() - t0) * 1000)
            out.hits[name].append(len(found))
    finally:
        store.close()
    return out


def run_worker(data: Path, queries: int, top_k: int, seed: int, src: str | None) -> Samples:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    command = [sys.executable, __file__, "--worker", str(data), str(queries), str(top_k), str(seed)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"worker failed ({done.returncode}): {done.stderr.strip()}")
    return Samples(**json.loads(done.stdout.strip().splitlines()[-1]))


PRUNE_MAX_DF = (0.5, 0.2, 0.1, 0.05)


@dataclass(frozen=True)
class PruneResult:
    """BM25 with the query's common terms dropped: terms in more than `max_df` of the chunks go (the
    rarest term always stays). Not what ragdown does; measured to show what such pruning would trade."""

    max_df: float
    bm25_ms_median: float
    matched_rows_median: float
    top_k_identical: float
    """Share of the queries whose BM25 top_k (ids, in order) is the unpruned one."""
    pool_overlap: float
    """Mean share of the unpruned pool that the pruned pool still holds."""


def prune_experiment(data: Path, queries_count: int, top_k: int) -> list[PruneResult]:
    queries, _ = query_set(queries_count)
    store = Store(data, writable=False)
    try:
        conn = store._reader()
        total = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        size = pool_size(top_k)
        df: dict[str, int] = {}
        for q in queries:
            for term in fts_terms(q):
                if term not in df:
                    row = conn.execute(
                        "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (f'"{term}"',)
                    )
                    df[term] = int(row.fetchone()[0])
        term_lists = [fts_terms(q) for q in queries]
        term_lists = [t for t in term_lists if t]
        base = [
            [cid for cid, _ in store.bm25(fts_or(t), FileFilter(), size, BM25_WEIGHTS)] for t in term_lists
        ]
        out = [PruneResult(1.0, math.nan, math.nan, 1.0, 1.0)]
        for max_df in PRUNE_MAX_DF:
            took: list[float] = []
            rows: list[float] = []
            same = 0
            overlap: list[float] = []
            for terms, unpruned in zip(term_lists, base, strict=True):
                kept = [t for t in terms if df[t] <= max_df * total] or [min(terms, key=lambda t: df[t])]
                match = fts_or(kept)
                t0 = time.perf_counter()
                ids = [cid for cid, _ in store.bm25(match, FileFilter(), size, BM25_WEIGHTS)]
                took.append((time.perf_counter() - t0) * 1000)
                rows.append(
                    float(
                        conn.execute(
                            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (match,)
                        ).fetchone()[0]
                    )
                )
                same += ids[:top_k] == unpruned[:top_k]
                overlap.append(len(set(ids) & set(unpruned)) / max(1, len(unpruned)))
            out.append(
                PruneResult(
                    max_df, median(took), median(rows), same / len(term_lists), sum(overlap) / len(overlap)
                )
            )
        unpruned_ms: list[float] = []
        unpruned_rows: list[float] = []
        for terms in term_lists:
            t0 = time.perf_counter()
            store.bm25(fts_or(terms), FileFilter(), size, BM25_WEIGHTS)
            unpruned_ms.append((time.perf_counter() - t0) * 1000)
            match = fts_or(terms)
            unpruned_rows.append(
                float(
                    conn.execute(
                        "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (match,)
                    ).fetchone()[0]
                )
            )
        out[0] = PruneResult(1.0, median(unpruned_ms), median(unpruned_rows), 1.0, 1.0)
        return out
    finally:
        store.close()


def fts_or(terms: Sequence[str]) -> str:
    """The MATCH expression `fts_match` builds from a list of terms."""
    return " OR ".join(f'"{t}"' for t in terms)


@dataclass(frozen=True)
class FilterResult:
    filter: str
    p50_ms: float
    p95_ms: float
    hits_median: float


@dataclass(frozen=True)
class TreeResult:
    tree: str
    filters: list[FilterResult]
    goal_met: bool | None
    dense_ms_median: float
    bm25_ms_median: float
    chunks_by_id_all_ms_median: float
    chunks_by_id_top_k_ms_median: float
    bm25_matched_rows_median: float
    pools_serial_ms_median: float
    pools_threaded_ms_median: float
    first_search_ms_median: float
    samples: Samples


@dataclass(frozen=True)
class SizeResult:
    chunks: int
    files: int
    build_s: float
    goal_ms: float | None
    trees: list[TreeResult]
    prune: list[PruneResult]


def summarise(tree: str, s: Samples, goal: float | None) -> TreeResult:
    return TreeResult(
        tree=tree,
        filters=[
            FilterResult(
                m, median(s.search[m]), percentile(s.search[m], 95), median([float(h) for h in s.hits[m]])
            )
            for m in MEASURED
        ],
        goal_met=None if goal is None else median(s.search["unfiltered"]) <= goal,
        dense_ms_median=median(s.dense),
        bm25_ms_median=median(s.bm25),
        chunks_by_id_all_ms_median=median(s.fetch_all),
        chunks_by_id_top_k_ms_median=median(s.fetch_top_k),
        bm25_matched_rows_median=median([float(m) for m in s.matched]),
        pools_serial_ms_median=median(s.pools_serial),
        pools_threaded_ms_median=median(s.pools_threaded),
        first_search_ms_median=median(s.first_search),
        samples=s,
    )


def bench_size(
    chunks: int, queries: int, top_k: int, rounds: int, trees: dict[str, str | None], prune: bool
) -> SizeResult:
    with tempfile.TemporaryDirectory(prefix="ragdown-bench-search-") as tmp:
        store = Store(Path(tmp), writable=True)
        try:
            files, build_s = build_index(store, chunks, seed=chunks)
        finally:
            store.close()
        print(f"  {chunks} chunks in {files} files written in {build_s:.1f} s", file=sys.stderr)
        samples = {name: Samples() for name in trees}
        for r in range(rounds):
            for name, src in trees.items():
                samples[name].extend(run_worker(Path(tmp), queries, top_k, r, src))
        pruned = prune_experiment(Path(tmp), queries, top_k) if prune else []
    goal = GOALS_MS.get(chunks)
    return SizeResult(
        chunks, files, build_s, goal, [summarise(n, s, goal) for n, s in samples.items()], pruned
    )


def main() -> None:
    exit_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="2000,20000,100000", help="chunk counts, comma-separated")
    parser.add_argument("--queries", type=int, default=100, help="queries per worker process")
    parser.add_argument("--rounds", type=int, default=2, help="worker processes per tree and size")
    parser.add_argument("--top-k", type=int, default=8, help="SearchOptions.top_k (ragdown's default 8)")
    parser.add_argument("--baseline-src", help="a src/ tree to compare with, run with PYTHONPATH")
    parser.add_argument(
        "--prune",
        action="store_true",
        help="also measure BM25 with common terms dropped (not what ragdown does)",
    )
    parser.add_argument(
        "--worker", nargs=4, metavar=("DATA", "QUERIES", "TOP_K", "SEED"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.worker:
        data, queries, top_k, seed = args.worker
        print(json.dumps(dataclasses.asdict(worker(Path(data), int(queries), int(top_k), int(seed)))))
        return

    trees: dict[str, str | None] = {"this tree": None}
    if args.baseline_src:
        trees = {"baseline": args.baseline_src, **trees}
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    results = [bench_size(n, args.queries, args.top_k, args.rounds, trees, args.prune) for n in sizes]

    rows = []
    for r in results:
        for t in r.trees:
            for f in t.filters:
                goal = ""
                if f.filter == "unfiltered" and r.goal_ms is not None:
                    goal = f"<= {r.goal_ms:g}: {'met' if t.goal_met else 'MISSED'}"
                rows.append(
                    [
                        f"{r.chunks:,}",
                        t.tree,
                        f.filter,
                        f"{f.p50_ms:.2f}",
                        f"{f.p95_ms:.2f}",
                        f"{f.hits_median:.0f}",
                        goal,
                    ]
                )
    print(
        f"\nSearcher.search without the embedding, {args.rounds} x {args.queries} queries, top_k {args.top_k}, ms\n"
        + table(["chunks", "tree", "search", "p50", "p95", "hits", "goal (p50)"], rows)
    )
    print(
        "\npieces (unfiltered, medians, ms)\n"
        + table(
            [
                "chunks",
                "tree",
                "dense pool",
                "BM25 pool",
                "chunks_by_id (all fused)",
                "chunks_by_id (top_k)",
                "BM25 rows matched",
                "pools serial",
                "pools, BM25 in a thread",
                "first search",
                "build s",
            ],
            [
                [
                    f"{r.chunks:,}",
                    t.tree,
                    f"{t.dense_ms_median:.2f}",
                    f"{t.bm25_ms_median:.2f}",
                    f"{t.chunks_by_id_all_ms_median:.2f}",
                    f"{t.chunks_by_id_top_k_ms_median:.2f}",
                    f"{t.bm25_matched_rows_median:.0f}",
                    f"{t.pools_serial_ms_median:.2f}",
                    f"{t.pools_threaded_ms_median:.2f}",
                    f"{t.first_search_ms_median:.0f}",
                    f"{r.build_s:.1f}",
                ]
                for r in results
                for t in r.trees
            ],
        )
    )
    if args.prune:
        print(
            f"\nexperiment: BM25 pool with the query's common terms dropped ({args.queries} queries, ms)\n"
            + table(
                [
                    "chunks",
                    "terms kept: df <=",
                    "BM25 p50",
                    "rows matched",
                    f"top {args.top_k} unchanged",
                    "pool overlap",
                ],
                [
                    [
                        f"{r.chunks:,}",
                        "all (today)" if p.max_df >= 1.0 else f"{p.max_df:.0%}",
                        f"{p.bm25_ms_median:.2f}",
                        f"{p.matched_rows_median:.0f}",
                        f"{p.top_k_identical:.0%}",
                        f"{p.pool_overlap:.0%}",
                    ]
                    for r in results
                    for p in r.prune
                ],
            )
        )
    path = write_result(
        "search_latency",
        {
            "queries": query_set(args.queries)[0],
            "top_k": args.top_k,
            "vectors": "random unit vectors (384-d), no embedder",
            "trees": trees,
            "sizes": [dataclasses.asdict(r) for r in results],
        },
    )
    print(f"results: {path}")


if __name__ == "__main__":
    main()
