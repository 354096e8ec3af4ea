"""The HNSW graph over `vecs` in PostgreSQL: its settings, and its upkeep around the primary's syncs.

pgvector keeps an HNSW index up to date row by row, several times slower per row than building the graph
once over rows already there (docs/benchmarks.md section 14: at 100,000 sections, 112 sections/s into a
full index against 944 rows/s plus 94.5 s of build for the first load). So the primary's sync drops the
graph before a load of at least `BULK_MIN_FILES` files that is at least 1/`BULK_SHARE` of the index
(`worth_dropping`, `drop`) and builds it once after; and at the end of every sync it builds the graph where
it is missing (a load that stopped half way) or was built with other settings than `RAGDOWN_HNSW_M` and
`RAGDOWN_HNSW_EF_CONSTRUCTION`, or, where they are not set, than the index's size calls for
(`HnswSettings.build_for`: a denser graph from `DENSE_FROM` vectors on; `built_with`, `build`: the new graph is
built beside the old one, which searches keep using until the swap). Each search walks
`HnswSettings.ef_search_for` candidates, chosen from the size the same way (`use_ef_search`). Without a
graph, searches use an exact scan: slower, never wrong.

`build` takes a connection of its own (autocommit, the index's `search_path`): it holds it for minutes,
which the primary's lock connection and the pool's connections must not be held.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import weakref
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
RETRY_AFTER_S = 600.0  # after a build that failed, the next one is tried at a sync this much later
STEP = "building the vector index"  # the sync's progress step while a graph is built
DENSE_FROM = 100_000  # vectors from which m and ef_construction, where not set, are the denser ones
WIDE_FROM = 500_000  # ... and from which ef_search, where not set, is the wider one
MAX_BUILD_MEMORY = 8 << 30  # the most `maintenance_work_mem` a build asks for (never lowered)
PGVECTOR_BUILD = {"m": 16, "ef_construction": 64}  # pgvector's own, for an option a graph was built without


@dataclass(frozen=True)
class HnswBuild:
    """One graph's build: pgvector's `m` and `ef_construction`."""

    m: int
    ef_construction: int

    def build(self) -> dict[str, int]:
        return {"m": self.m, "ef_construction": self.ef_construction}

    def describe(self) -> str:
        return f"m {self.m}, ef_construction {self.ef_construction}"

    def at_least(self, other: HnswBuild) -> bool:
        """As dense a graph as `other`, or denser."""
        return self.m >= other.m and self.ef_construction >= other.ef_construction


HNSW_KEYS = ("hnsw_m", "hnsw_ef_construction", "hnsw_ef_search")  # the settings, in `HnswSettings`'s order
SMALL = HnswBuild(**PGVECTOR_BUILD)
DENSE = HnswBuild(32, 128)  # from DENSE_FROM vectors on
SMALL_EF_SEARCH = 400
DENSE_EF_SEARCH = 600


@dataclass(frozen=True)
class HnswSettings:
    """The graph's build (`m`, `ef_construction`) and each query's candidate list (`ef_search`): each one
    set (`RAGDOWN_HNSW_*`) or, where None, chosen from the number of vectors.

    Chosen, on vectors shaped like a real model's (docs/benchmarks.md sections 14 and 38): pgvector's build
    (m 16, ef_construction 64) below `DENSE_FROM` vectors (recall@10 0.983 at 100,000 with ef_search 400,
    but 0.957 at 200,000), m 32 and ef_construction 128 from there (a build about 4x longer); ef_search 400
    below `WIDE_FROM` vectors, 600 from there (at 1,000,000: 0.974 with 400, 0.985 with 600; m 16 found
    0.863 and, at pgvector's largest ef_search, 1000, 0.946). An `m` set without `ef_construction`
    builds with 4 x m (pgvector's ratio), at least 64."""

    m: int | None = None
    ef_construction: int | None = None
    ef_search: int | None = None

    def build_for(self, rows: int, have: dict[str, int] | None = None) -> HnswBuild:
        """The graph to build over `rows` vectors, where `have` is the one in use (`built_with`). A graph
        in use at least as dense as the size's choice is kept, so that an index around `DENSE_FROM` is not
        built again each time it crosses it."""
        if self.m is not None:
            m = self.m
        else:
            m = (DENSE if rows >= DENSE_FROM else SMALL).m
        ef = self.ef_construction if self.ef_construction is not None else max(SMALL.ef_construction, 4 * m)
        chosen = HnswBuild(m, ef)
        chosen_both = self.m is None and self.ef_construction is None
        if chosen_both and have is not None and HnswBuild(**have).at_least(chosen):
            return HnswBuild(**have)
        return chosen

    def ef_search_for(self, rows: int) -> int:
        """`hnsw.ef_search` for a search over `rows` vectors."""
        if self.ef_search is not None:
            return self.ef_search
        return DENSE_EF_SEARCH if rows >= WIDE_FROM else SMALL_EF_SEARCH


def use_ef_search(conn: psycopg.Connection[Any], ef_search: int) -> None:
    """`hnsw.ef_search` on `conn` for its next search: set once on a pooled connection (which keeps it),
    for the transaction only inside one (a rollback would undo a plain SET unseen)."""
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
        conn.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(ef_search)))
        return
    with _EF_LOCK:
        if _EF_SET.get(conn) == ef_search:
            return
    conn.execute(sql.SQL("SET hnsw.ef_search = {}").format(sql.Literal(ef_search)))
    with _EF_LOCK:
        _EF_SET[conn] = ef_search


_EF_SET: weakref.WeakKeyDictionary[psycopg.Connection[Any], int] = weakref.WeakKeyDictionary()
_EF_LOCK = threading.Lock()


def create_sql(name: str, ops: str, settings: HnswBuild) -> sql.Composed:
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
    return {key: int(options.get(key, default)) for key, default in PGVECTOR_BUILD.items()}


def worth_dropping(files: int, indexed: int) -> bool:
    """Before a sync writes `files` changed files into an index of `indexed`: is one build after the load
    cheaper than keeping the graph up to date row by row?"""
    return files >= BULK_MIN_FILES and files * BULK_SHARE >= indexed


def drop(conn: psycopg.Connection[Any], files: int, indexed: int) -> None:
    """Drop the graph before a large load (in the caller's transaction)."""
    conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(INDEX)))
    log.info(
        "loading %s files into an index of %s: the vector index is built once after the load, not row by row",
        f"{files:,}",
        f"{indexed:,}",
    )


def build(
    conn: psycopg.Connection[Any],
    dim: int,
    ops: str,
    settings: HnswBuild,
    have: dict[str, int] | None,
    lock_key: int,
    watch: Callable[[], psycopg.Connection[Any]],
) -> bool:
    """Build the graph over `dim`-dimensional vectors (operator class `ops`) with `settings` in place of `have` (the one in use: `built_with`; None where there is
    none). True when built; False where another process holds `lock_key` (a session advisory lock: one
    build at a time). `watch` opens the connection that reports the build's progress in the log."""
    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_key,)).fetchone()
    if not row or not row[0]:
        return False
    try:
        rows = int((conn.execute("SELECT count(*) FROM vecs").fetchone() or (0,))[0])
        conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(NEXT)))
        _raise_build_memory(conn, rows, dim * (2 if ops.startswith("halfvec") else 4), settings)
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
        if rows >= DENSE_FROM and settings.m < DENSE.m:
            log.info(
                "a graph of m %s over this many vectors finds less of the exact top 10 than one of m 32, the "
                "choice from %s vectors on where RAGDOWN_HNSW_M is not set (m 16 found 0.957 at 200,000 and "
                "0.86 at 1,000,000 in ragdown's measurements, m 32 0.985 at 1,000,000): docs/benchmarks.md, "
                "sections 14 and 38",
                settings.m,
                f"{DENSE_FROM:,}",
            )
        return True
    finally:
        with contextlib.suppress(psycopg.Error):  # a lost connection has let go of the lock already
            conn.execute("SELECT pg_advisory_unlock(%s)", (lock_key,))


def _raise_build_memory(
    conn: psycopg.Connection[Any], rows: int, value_bytes: int, settings: HnswBuild
) -> None:
    """Let a graph of `rows` vectors of `value_bytes` each fit in `maintenance_work_mem` (pgvector builds
    much faster while it does), up to `MAX_BUILD_MEMORY`; a larger value set on the server or role is kept."""
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
                phase, blocks, total, rows = (
                    str(row[0]).removeprefix("building index: "),
                    int(row[1] or 0),
                    int(row[2] or 0),
                    int(row[3] or 0),
                )
                # pgvector reports the table's blocks read while loading tuples (its README's measure)
                share = f" ({100 * blocks / total:.0f} % of the table read)" if total else ""
                vectors = f", {rows:,} of {self.rows:,} vectors" if rows else ""
                log.info("building the vector index: %s%s%s", phase, share, vectors)
