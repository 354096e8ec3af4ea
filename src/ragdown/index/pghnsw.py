"""The HNSW graph over `vecs` in PostgreSQL: its settings, and its upkeep around the primary's syncs.

pgvector keeps an HNSW index up to date row by row, several times slower per row than building the graph
once over rows already there (docs/benchmarks.md section 14: at 100,000 sections, 112 sections/s into a
full index against 944 rows/s plus 94.5 s of build for the first load). So the primary's sync drops the
graph before a load of at least `BULK_MIN_FILES` files that is at least 1/`BULK_SHARE` of the index and
builds it once after (`bulk_load`); and at the end of every sync it builds the graph where it is missing (a
load that stopped half way) or was built with other settings than `RAGDOWN_HNSW_M` and
`RAGDOWN_HNSW_EF_CONSTRUCTION` (`ensure`: the new graph is built beside the old one, which readers keep
using until the swap). Without a graph, readers search by an exact scan: slower, never wrong.

Every function takes a connection of its own (autocommit, the index's `search_path`): a build holds it for
minutes, and must not hold the primary's lock connection or a pool connection that long.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

log = logging.getLogger(__name__)

INDEX = "vecs_hnsw"
NEXT = "vecs_hnsw_next"  # a graph being built beside the one in use
BULK_MIN_FILES = 1000  # below this a load goes into the graph row by row (seconds at most)
BULK_SHARE = 4  # ... and unless it is at least a quarter of the files already indexed
PROGRESS_EVERY_S = 15.0
MAX_BUILD_MEMORY = 8 << 30  # the most `maintenance_work_mem` a build asks for (never lowered)


@dataclass(frozen=True)
class HnswSettings:
    """The graph's build (`m`, `ef_construction`) and each query's candidate list (`ef_search`).

    The defaults are pgvector's build and ef_search 400: recall@10 0.983 at 100,000 vectors shaped like a
    real model's, 0.86 at 1,000,000; m 32 with ef_construction 128 and ef_search 1000 reach 0.994 at
    1,000,000, for a 3.9x longer build and 4.5x the query time (docs/benchmarks.md section 14)."""

    m: int = 16
    ef_construction: int = 64
    ef_search: int = 400

    def build(self) -> dict[str, int]:
        return {"m": self.m, "ef_construction": self.ef_construction}

    def describe(self) -> str:
        return f"m {self.m}, ef_construction {self.ef_construction}"


def create_sql(name: str, ops: str, settings: HnswSettings) -> sql.Composed:
    return sql.SQL("CREATE INDEX {} ON vecs USING hnsw (emb {}) WITH (m = {}, ef_construction = {})").format(
        sql.Identifier(name), sql.SQL(ops), sql.Literal(settings.m), sql.Literal(settings.ef_construction)
    )


def built_with(conn: psycopg.Connection[Any], schema: str) -> dict[str, int] | None:
    """The build settings of the graph in use, or None when there is none (or it is not valid)."""
    row = conn.execute(
        "SELECT c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " JOIN pg_index i ON i.indexrelid = c.oid WHERE n.nspname = %s AND c.relname = %s AND i.indisvalid",
        (schema, INDEX),
    ).fetchone()
    if row is None:
        return None
    options = dict(str(item).partition("=")[::2] for item in row[0] or ())
    defaults = HnswSettings()  # an option left out of WITH is pgvector's default
    return {
        "m": int(options.get("m", defaults.m)),
        "ef_construction": int(options.get("ef_construction", defaults.ef_construction)),
    }


def drop_for_load(conn: psycopg.Connection[Any], files: int, indexed: int) -> bool:
    """Before a sync writes `files` changed files into an index of `indexed`: drop the graph when a build
    after the load is cheaper than keeping it up to date row by row. True when dropped."""
    if files < BULK_MIN_FILES or files * BULK_SHARE < indexed:
        return False
    with conn.transaction():
        conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(INDEX)))
    log.info(
        "loading %s files into an index of %s: the vector index is built once after the load, not row by row",
        f"{files:,}",
        f"{indexed:,}",
    )
    return True


def ensure(
    conn: psycopg.Connection[Any],
    schema: str,
    ops: str,
    settings: HnswSettings,
    lock_key: int,
    watch: Callable[[], psycopg.Connection[Any]],
) -> bool:
    """Build the graph where it is missing or was built otherwise than `settings`. True when one was built.

    One process builds at a time (a session advisory lock on `lock_key`; another one skips). `watch` opens
    the connection that reports the build's progress in the log."""
    have = built_with(conn, schema)
    if have == settings.build():
        return False
    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_key,)).fetchone()
    if not row or not row[0]:
        return False
    try:
        rows = int((conn.execute("SELECT count(*) FROM vecs").fetchone() or (0,))[0])
        conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(NEXT)))
        _raise_build_memory(conn, rows, ops, settings)
        log.info(
            "building the vector index (HNSW, %s) over %s vectors: %s",
            settings.describe(),
            f"{rows:,}",
            "searches use an exact scan until it is done"
            if have is None
            else f"searches keep the one built with m {have['m']}, ef_construction {have['ef_construction']} "
            "until it is done",
        )
        started = time.perf_counter()
        with _Progress(watch, conn.info.backend_pid, rows):
            conn.execute(create_sql(NEXT, ops, settings))
        with conn.transaction():
            conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(INDEX)))
            conn.execute(
                sql.SQL("ALTER INDEX {} RENAME TO {}").format(sql.Identifier(NEXT), sql.Identifier(INDEX))
            )
        conn.execute("ANALYZE vecs")
        log.info(
            "built the vector index over %s vectors in %.1f s", f"{rows:,}", time.perf_counter() - started
        )
        return True
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (lock_key,))


def _raise_build_memory(conn: psycopg.Connection[Any], rows: int, ops: str, settings: HnswSettings) -> None:
    """Let the graph fit in `maintenance_work_mem` (pgvector builds much faster while it does), up to
    `MAX_BUILD_MEMORY`; a larger value set on the server or the role is kept."""
    dims = int(
        (
            conn.execute(
                "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'vecs'::regclass AND attname = 'emb'"
            ).fetchone()
            or (0,)
        )[0]
    )
    value_bytes = max(dims, 0) * (2 if ops.startswith("halfvec") else 4)
    # Per element: its vector, its neighbour lists (2m on the ground layer, ids and distances) and
    # pgvector's bookkeeping; a quarter more for the upper layers and the allocator.
    wanted = int(rows * (value_bytes + 24 * settings.m + 200) * 1.25)
    current = int(
        (conn.execute("SELECT pg_size_bytes(current_setting('maintenance_work_mem'))").fetchone() or (0,))[0]
    )
    target = min(wanted, MAX_BUILD_MEMORY)
    if target > current:
        conn.execute(sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(f"{target // 1024}kB")))


class _Progress:
    """Logs a running build's progress (pgvector fills `pg_stat_progress_create_index`) every so often."""

    def __init__(self, connect: Callable[[], psycopg.Connection[Any]], pid: int, rows: int) -> None:
        self.connect = connect
        self.pid = pid
        self.rows = rows
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, name="ragdown-hnsw-progress", daemon=True)

    def __enter__(self) -> _Progress:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join(timeout=5)

    def _run(self) -> None:
        try:
            conn = self.connect()
        except Exception as err:  # progress is a courtesy: the build goes on without it
            log.debug("no progress for the vector index build: %s", err)
            return
        with conn:
            while not self.done.wait(PROGRESS_EVERY_S):
                try:
                    row = conn.execute(
                        "SELECT phase, blocks_done, blocks_total, tuples_done FROM pg_stat_progress_create_index"
                        " WHERE pid = %s",
                        (self.pid,),
                    ).fetchone()
                except psycopg.Error as err:
                    log.debug("no progress for the vector index build: %s", err)
                    return
                if row is None:
                    continue
                phase, blocks, total, rows = str(row[0]), int(row[1] or 0), int(row[2] or 0), int(row[3] or 0)
                # pgvector reports the table's blocks read while loading tuples (its README's measure)
                share = f" ({100 * blocks / total:.0f} % of the table read)" if total else ""
                vectors = f", {rows:,} of {self.rows:,} vectors" if rows else ""
                log.info("building the vector index: %s%s%s", phase, share, vectors)
