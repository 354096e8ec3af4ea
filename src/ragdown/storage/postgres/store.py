"""The index in PostgreSQL (`PgStore`, `PgDense`): the store interface of `store.py` in SQL for PostgreSQL.

The schema `ragdown_<index id>` of the backend (`pgbackend.py`) holds:

- `files`, `chunks`, `trees`, `skipped`, `meta`: as in SQLite (`store.py`). Paths sort as bytes
  (`COLLATE "C"`), so prefixes and order are SQLite's. Each chunk also holds its `tsvector` (`tsv`, GIN:
  the words, made by `pgsearch.py` as FTS5 makes them), the `tsvector` of its trigrams (`tri`, GIN, for the
  substring pass), its folded text (`fold`, to confirm a substring) and its token count (`ntok`, BM25's
  document length; the sum and the count are kept in `meta`).
- `vecs(id, file_id, emb vector(dim))` with an HNSW index (`vector_cosine_ops`; `halfvec` past 2,000
  dimensions), made for the embedder's dimension when the index is (re)built, built once after a large
  load and rebuilt when its settings change (`pghnsw.py`). Searched with `hnsw.ef_search`
  (`RAGDOWN_HNSW_EF_SEARCH`) and pgvector's iterative scan, so a filter never leaves the pool short.

`meta` holds the embedder, dimension, chunker and index version (a mismatch empties the index to rebuild,
as in SQLite), this schema's version `pg_schema` (a mismatch drops and recreates the tables) and the
`generation` every write transaction bumps and announces (`NOTIFY`). Only the primary writes, on the
connection that holds the role's advisory lock: if that session dies, its writes fail with it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np
import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from ragdown.documents.tree import Node
from ragdown.embedders.base import Vectors
from ragdown.storage.backend import DenseIndex
from ragdown.storage.filter_sql import POSTGRES, FileFilter, file_filter_clause, skipped_clause
from ragdown.storage.postgres import hnsw as pghnsw
from ragdown.storage.postgres import tsvectors as pgsearch
from ragdown.storage.records import (
    ChunkRecord,
    FileRecord,
    FileState,
    IndexMeta,
    PendingFile,
    StoreError,
    rebuild_message,
)


class WriteRole(Protocol):
    """The primary's role (`primary.py`'s `PgPrimaryLock`): its session, on which the index is written."""

    def connection(self) -> contextlib.AbstractContextManager[psycopg.Connection[Any]]: ...


class StoreHost(Protocol):
    """What the store takes from the backend (`backend.py`'s `PostgresBackend`)."""

    schema: str
    schema_lock_key: int
    graph_lock_key: int
    hnsw: pghnsw.HnswSettings

    @property
    def pool(self) -> ConnectionPool[psycopg.Connection[Any]]: ...
    @property
    def role(self) -> WriteRole | None: ...
    def describe(self) -> str: ...
    def connect(self, **options: Any) -> psycopg.Connection[Any]: ...
    def generation(self) -> int: ...
    def saw_generation(self, value: int) -> None: ...
    def notify(self, message: dict[str, Any], conn: psycopg.Connection[Any] | None = None) -> None: ...


log = logging.getLogger(__name__)

PG_SCHEMA = 1
MAX_VECTOR_DIM = 2000  # HNSW on `vector`; up to 4,000 on `halfvec`; past that, exact scans
MAX_HALFVEC_DIM = 4000
BM25_K1 = 1.2
BM25_B = 0.75


_INDEX_TABLES = ("vecs", "chunks", "trees", "files", "skipped", "meta")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS files(
  id bigserial PRIMARY KEY,
  path text COLLATE "C" NOT NULL UNIQUE,
  folder text COLLATE "C" NOT NULL,
  size bigint NOT NULL,
  stat_mtime_ns bigint NOT NULL,
  mtime_ns bigint NOT NULL,
  hash text NOT NULL,
  title text NOT NULL,
  description text,
  created_by text,
  session text,
  tags text NOT NULL,
  aliases text NOT NULL,
  supersedes text NOT NULL,
  chunk_count integer NOT NULL
);
CREATE INDEX IF NOT EXISTS files_folder ON files(folder);
CREATE TABLE IF NOT EXISTS chunks(
  id bigserial PRIMARY KEY,
  file_id bigint NOT NULL,
  idx integer NOT NULL,
  start_line integer NOT NULL,
  end_line integer NOT NULL,
  heading text NOT NULL,
  breadcrumb text NOT NULL,
  text text NOT NULL,
  aliases text NOT NULL,
  node_id text NOT NULL,
  ntok integer NOT NULL,
  tsv tsvector NOT NULL,
  tri tsvector NOT NULL,
  fold text NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE INDEX IF NOT EXISTS chunks_tsv ON chunks USING gin(tsv);
CREATE INDEX IF NOT EXISTS chunks_tri ON chunks USING gin(tri);
CREATE TABLE IF NOT EXISTS trees(file_id bigint PRIMARY KEY, tokens integer NOT NULL, tree text NOT NULL);
CREATE TABLE IF NOT EXISTS skipped(
  path text COLLATE "C" PRIMARY KEY, size bigint NOT NULL, stat_mtime_ns bigint NOT NULL, reason text NOT NULL
);
"""

_META_KEYS = frozenset({"embedder", "dim", "chunker_version", "index_version", "setext"})
_KEEP_META = ("generation", "pg_schema", "lexical")
_FILE_COLS = (
    "f.id, f.path, f.folder, f.size, f.mtime_ns, f.hash, f.title, f.description, f.created_by, f.session,"
    " f.tags, f.aliases, f.supersedes, f.chunk_count"
)


def _record(row: Sequence[Any]) -> FileRecord:
    return FileRecord(
        id=int(row[0]),
        path=str(row[1]),
        folder=str(row[2]),
        size=int(row[3]),
        mtime_ns=int(row[4]),
        hash=str(row[5]),
        title=str(row[6]),
        description=row[7],
        created_by=row[8] or None,
        session=row[9] or None,
        tags=tuple(str(row[10]).split()),
        aliases=tuple(json.loads(row[11])),
        supersedes=tuple(json.loads(row[12])),
        chunk_count=int(row[13]),
    )


def _tags_column(tags: Iterable[str]) -> str:
    joined = " ".join(tags)
    return f" {joined} " if joined else " "


class NotCreatedYet(StoreError):
    """The index's tables are not there yet: the primary is creating them."""


class PgStore:
    """`IndexStore` on PostgreSQL: reads through the backend's pool, writes on the primary's lock connection."""

    def __init__(self, backend: StoreHost, *, writable: bool) -> None:
        self.backend = backend
        self.writable = writable
        self._local = threading.local()
        self._cache_lock = threading.Lock()
        self._superseded_cache: tuple[int, dict[str, list[str]]] | None = None
        self._stats_cache: tuple[int, float, float] | None = None
        self._df_cache: tuple[int, dict[str, int]] = (-1, {})
        self._graph_retry_at = 0.0  # after a failed HNSW build, none is tried before this (monotonic)
        if writable:
            self._prepare()

    # -- connections ---------------------------------------------------------------------------------

    @contextlib.contextmanager
    def read_snapshot(self) -> Iterator[psycopg.Connection[Any]]:
        """One REPEATABLE READ transaction: this thread's reads inside it see one committed state."""
        pinned: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if pinned is not None:
            yield pinned
            return
        with self._read() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            self._local.conn = conn
            try:
                yield conn
            finally:
                self._local.conn = None

    @contextlib.contextmanager
    def _read(self) -> Iterator[psycopg.Connection[Any]]:
        pinned: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if pinned is not None:
            yield pinned
            return
        try:
            with self.backend.pool.connection() as conn:
                yield conn
        except psycopg.errors.UndefinedTable:
            raise NotCreatedYet(
                f"the index in {self.backend.describe()} is still being created by the primary: try again"
            ) from None
        except psycopg.OperationalError as err:
            raise StoreError(f"the index's database cannot be reached: {err}") from None

    def _rows(self, query: str | sql.Composable, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._read() as conn:
            return conn.execute(query, params).fetchall()  # type: ignore[arg-type]

    @contextlib.contextmanager
    def _write(self) -> Iterator[psycopg.Connection[Any]]:
        """One write transaction on the primary's lock connection; it bumps and announces the generation."""
        if not self.writable:
            raise StoreError("this process is a reader and cannot write the index")
        role = self.backend.role
        if role is None:
            raise StoreError("this process holds no primary lock and cannot write the index")
        with role.connection() as conn:
            with conn.transaction():
                yield conn
                row = conn.execute(
                    "UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'generation' RETURNING value"
                ).fetchone()
                generation = int(row[0]) if row else 0
                self.backend.notify({"t": "gen", "g": generation}, conn)
            self.backend.saw_generation(generation)

    def _prepare(self) -> None:
        """Primary: the index tables, at this schema's version (recreated on another), tokens current."""
        with self._write() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self.backend.schema_lock_key,))
            exists = conn.execute(
                "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = 'meta'", (self.backend.schema,)
            ).fetchone()
            version = None
            if exists:
                row = conn.execute("SELECT value FROM meta WHERE key = 'pg_schema'").fetchone()
                version = row[0] if row else None
            if exists and version != str(PG_SCHEMA):
                log.info("the index was built by another version of ragdown (%s): rebuilding it", version)
                for table in _INDEX_TABLES:
                    conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))
            conn.execute(_SCHEMA)
            for key, value in (
                ("pg_schema", str(PG_SCHEMA)),
                ("generation", "0"),
                ("chunks", "0"),
                ("tokens", "0"),
                ("lexical", pgsearch.signature()),
            ):
                conn.execute(
                    "INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT DO NOTHING", (key, value)
                )
            row = conn.execute("SELECT value FROM meta WHERE key = 'lexical'").fetchone()
            retokenise = row is not None and row[0] != pgsearch.signature()
        if retokenise:
            self._retokenise()

    def _retokenise(self) -> None:
        """Words made by other rules (or another segmenter): every chunk's tokens made again, in batches."""
        log.info("re-tokenising the full-text index (%s)", pgsearch.signature())
        last = 0
        while True:
            rows = self._rows(
                "SELECT c.id, c.breadcrumb, c.text, c.aliases FROM chunks c WHERE c.id > %s ORDER BY c.id"
                " LIMIT 2000",
                (last,),
            )
            if not rows:
                break
            with self._write() as conn:
                delta = 0
                for cid, breadcrumb, text, aliases in rows:
                    tsv, ntok, tri, folded = _text_columns(breadcrumb, text, aliases)
                    old = conn.execute(
                        "UPDATE chunks c SET tsv = %s::tsvector, tri = %s::tsvector, fold = %s, ntok = %s"
                        " FROM (SELECT ntok FROM chunks WHERE id = %s) o WHERE c.id = %s RETURNING o.ntok",
                        (tsv, tri, folded, ntok, cid, cid),
                    ).fetchone()
                    delta += ntok - (int(old[0]) if old else 0)
                _add_stats(conn, 0, delta)
            last = int(rows[-1][0])
        with self._write() as conn:
            conn.execute("UPDATE meta SET value = %s WHERE key = 'lexical'", (pgsearch.signature(),))

    def close(self) -> None:
        return None  # the backend owns the connections

    # -- meta ----------------------------------------------------------------------------------------

    def read_meta(self) -> dict[str, str]:
        try:
            rows = self._rows("SELECT key, value FROM meta")
        except NotCreatedYet:  # an unreachable database is said as such, not as an empty index
            return {}
        return {str(k): str(v) for k, v in rows if k in _META_KEYS}

    def ensure_meta(self, meta: IndexMeta) -> bool:
        """Primary: make the index match `meta`, emptying it on a mismatch. True when rebuilt."""
        want = meta.as_dict()
        have = self.read_meta()
        vecs = self._rows(
            "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = 'vecs'", (self.backend.schema,)
        )
        if have == want and (bool(vecs) or meta.dim == 0):
            return False
        if have:
            changed = sorted(k for k in want if have.get(k) != want[k])
            log.info(
                "index %s changed (%s): emptying it to rebuild", self.backend.describe(), ", ".join(changed)
            )
        with self._write() as conn:
            conn.execute("TRUNCATE chunks, trees, files, skipped")
            conn.execute("DROP TABLE IF EXISTS vecs")
            if meta.dim > 0:
                kind, ops = _vector_type(meta.dim)
                conn.execute(
                    sql.SQL(
                        "CREATE TABLE vecs(id bigint PRIMARY KEY, file_id bigint NOT NULL, emb {} NOT NULL)"
                    ).format(sql.SQL(kind))
                )
                conn.execute("CREATE INDEX vecs_file ON vecs(file_id)")
                if ops:
                    conn.execute(pghnsw.create_sql(pghnsw.INDEX, ops, self.backend.hnsw))
            conn.execute("DELETE FROM meta WHERE NOT (key = ANY(%s))", (list(_KEEP_META),))
            conn.cursor().executemany(
                "INSERT INTO meta(key, value) VALUES (%s, %s)",
                [*sorted(want.items()), ("chunks", "0"), ("tokens", "0")],
            )
        return True

    def check_meta(self, meta: IndexMeta) -> None:
        have = self.read_meta()
        if have != meta.as_dict():
            raise StoreError(rebuild_message(self.backend.describe(), have, meta))

    def generation(self) -> int:
        return self.backend.generation()

    # -- writes --------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def loading(self, files: int, step: Callable[[str], None]) -> Iterator[None]:
        """Around a sync's writes of `files` changed files: the HNSW graph dropped first when building it
        after is cheaper, and built after the sync where it is missing or built otherwise (`pghnsw`), the
        build told to `step` (the sync's progress)."""
        dim = int(self.read_meta().get("dim") or 0)
        ops = _vector_type(dim)[1] if dim > 0 else None  # None: no graph (no vectors, too many dimensions)
        if ops is not None and files >= pghnsw.BULK_MIN_FILES:
            indexed = int(self._rows("SELECT count(*) FROM files")[0][0])
            if pghnsw.worth_dropping(files, indexed):
                with self._write() as conn:
                    pghnsw.drop(conn, files, indexed)
        yield  # a sync that fails leaves the graph to the next one (a build takes minutes: not on the way out)
        if ops is None:
            return
        with self._read() as conn:
            if not _has_vecs(conn):
                return
            have = pghnsw.built_with(conn, self.backend.schema)
        if have == self.backend.hnsw.build() or time.monotonic() < self._graph_retry_at:
            return
        lock_key = self.backend.graph_lock_key
        step(pghnsw.STEP)
        try:
            with self.backend.connect() as conn:
                pghnsw.build(conn, dim, ops, self.backend.hnsw, have, lock_key, self.backend.connect)
        except (psycopg.Error, StoreError) as err:
            # The sync's writes are in; only the graph is not. Searches go on (by the old graph, or an
            # exact scan), and a build that fails (a full disk, a lost database) is not retried every sync.
            self._graph_retry_at = time.monotonic() + pghnsw.RETRY_AFTER_S
            log.error(
                "could not build the vector index (%s): searches use %s; trying again at a sync in %.0f min",
                str(err).strip(),
                "the old one" if have else "an exact scan",
                pghnsw.RETRY_AFTER_S / 60,
            )

    def write_files(self, pending: Sequence[PendingFile]) -> int:
        """Replace each file's chunks (and vectors) in one transaction. Returns the chunks written."""
        if not pending:
            return 0
        with self._write() as conn:
            file_ids: list[int] = []
            for item in pending:
                meta = item.document.meta
                row = conn.execute(
                    "INSERT INTO files(path, folder, size, stat_mtime_ns, mtime_ns, hash, title, description,"
                    " created_by, session, tags, aliases, supersedes, chunk_count)"
                    " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (path) DO UPDATE SET"
                    " folder = excluded.folder, size = excluded.size, stat_mtime_ns = excluded.stat_mtime_ns,"
                    " mtime_ns = excluded.mtime_ns, hash = excluded.hash, title = excluded.title,"
                    " description = excluded.description, created_by = excluded.created_by,"
                    " session = excluded.session, tags = excluded.tags, aliases = excluded.aliases,"
                    " supersedes = excluded.supersedes, chunk_count = excluded.chunk_count RETURNING id",
                    (
                        item.path,
                        item.folder,
                        item.size,
                        item.stat_mtime_ns,
                        item.mtime_ns,
                        item.hash,
                        pgsearch.clean(meta.title),
                        pgsearch.clean(meta.description) if meta.description is not None else None,
                        meta.created_by,
                        meta.session,
                        pgsearch.clean(_tags_column(meta.tags)),
                        pgsearch.clean(json.dumps(list(meta.aliases), ensure_ascii=False)),
                        pgsearch.clean(json.dumps(list(meta.supersedes), ensure_ascii=False)),
                        len(item.document.chunks),
                    ),
                ).fetchone()
                assert row is not None
                file_ids.append(int(row[0]))
            _delete_chunks(conn, file_ids)
            conn.execute("DELETE FROM skipped WHERE path = ANY(%s)", ([p.path for p in pending],))
            trees = [
                (
                    fid,
                    item.document.tree.tokens,
                    pgsearch.clean(json.dumps(item.document.tree.as_json(), ensure_ascii=False)),
                )
                for fid, item in zip(file_ids, pending, strict=True)
                if item.document.tree is not None
            ]
            if trees:
                conn.cursor().executemany(
                    "INSERT INTO trees(file_id, tokens, tree) VALUES (%s, %s, %s)", trees
                )
            columns: list[list[Any]] = [[] for _ in range(13)]
            vectors: list[Vectors] = []
            vector_owners: list[tuple[int, int, bool]] = []
            tokens = 0
            for fid, item in zip(file_ids, pending, strict=True):
                doc = item.document
                alias_text = " ".join(doc.meta.aliases)
                for i, chunk in enumerate(doc.chunks):
                    aliases = alias_text if i == 0 else ""
                    tsv, ntok, tri, folded = _text_columns(chunk.breadcrumb, chunk.text, aliases)
                    tokens += ntok
                    values = (
                        fid,
                        chunk.index,
                        chunk.start_line,
                        chunk.end_line,
                        pgsearch.clean(chunk.heading),
                        pgsearch.clean(chunk.breadcrumb),
                        pgsearch.clean(chunk.text),
                        pgsearch.clean(aliases),
                        chunk.node_id,
                        ntok,
                        tsv,
                        tri,
                        folded,
                    )
                    for column, value in zip(columns, values, strict=True):
                        column.append(value)
                    vector_owners.append((fid, chunk.index, item.vectors is not None))
                    if item.vectors is not None:
                        vectors.append(np.ascontiguousarray(item.vectors[i], dtype=np.float32))
            if not columns[0]:
                _add_stats(conn, 0, 0)
                return 0
            rows = conn.execute(
                "INSERT INTO chunks(file_id, idx, start_line, end_line, heading, breadcrumb, text, aliases, node_id,"
                " ntok, tsv, tri, fold) SELECT * FROM unnest(%s::bigint[], %s::int[], %s::int[], %s::int[],"
                " %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::int[], %s::tsvector[],"
                " %s::tsvector[], %s::text[]) RETURNING id, file_id, idx",
                columns,
            ).fetchall()
            _add_stats(conn, len(rows), tokens)
            if vectors:
                ids = {(int(f), int(i)): int(c) for c, f, i in rows}
                owners = [(fid, idx) for fid, idx, has in vector_owners if has]
                conn.execute(
                    "INSERT INTO vecs(id, file_id, emb) SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::vector[])",
                    ([ids[o] for o in owners], [fid for fid, _ in owners], vectors),
                )
            return len(rows)

    def touch_file(self, path: str, size: int, stat_mtime_ns: int) -> None:
        with self._write() as conn:
            conn.execute(
                "UPDATE files SET size = %s, stat_mtime_ns = %s WHERE path = %s", (size, stat_mtime_ns, path)
            )

    def remove_files(self, paths: Iterable[str]) -> int:
        wanted = list(paths)
        if not wanted:
            return 0
        with self._write() as conn:
            conn.execute("DELETE FROM skipped WHERE path = ANY(%s)", (wanted,))
            ids = [
                int(r[0])
                for r in conn.execute("DELETE FROM files WHERE path = ANY(%s) RETURNING id", (wanted,))
            ]
            _delete_chunks(conn, ids)
        return len(ids)

    def clear(self) -> None:
        with self._write() as conn:
            conn.execute("TRUNCATE chunks, trees, files, skipped")
            if _has_vecs(conn):
                conn.execute("TRUNCATE vecs")
            conn.execute("UPDATE meta SET value = '0' WHERE key IN ('chunks', 'tokens')")

    def mark_skipped(self, path: str, size: int, stat_mtime_ns: int, reason: str) -> None:
        with self._write() as conn:
            ids = [int(r[0]) for r in conn.execute("DELETE FROM files WHERE path = %s RETURNING id", (path,))]
            _delete_chunks(conn, ids)
            conn.execute(
                "INSERT INTO skipped(path, size, stat_mtime_ns, reason) VALUES (%s, %s, %s, %s) ON CONFLICT (path)"
                " DO UPDATE SET size = excluded.size, stat_mtime_ns = excluded.stat_mtime_ns, reason = excluded.reason",
                (path, size, stat_mtime_ns, pgsearch.clean(reason)),
            )

    def prune_deleted_log(self) -> None:
        """Nothing to prune: no reader holds vectors of its own (they are searched in the database)."""
        return None

    # -- reads ---------------------------------------------------------------------------------------

    def file_states(self) -> dict[str, FileState]:
        return {
            str(p): FileState(int(s), int(m), str(h))
            for p, s, m, h in self._rows("SELECT path, size, stat_mtime_ns, hash FROM files")
        }

    def file_stats(self) -> set[tuple[str, int, int]]:
        return {
            (str(p), int(s), int(m)) for p, s, m in self._rows("SELECT path, size, stat_mtime_ns FROM files")
        }

    def skipped_states(self) -> dict[str, tuple[int, int, str]]:
        rows = self._rows("SELECT path, size, stat_mtime_ns, reason FROM skipped")
        return {str(p): (int(s), int(m), str(r)) for p, s, m, r in rows}

    def skipped_files(self, flt: FileFilter) -> list[tuple[str, str]]:
        where, params = skipped_clause(POSTGRES, flt)
        return [
            (str(p), str(r))
            for p, r in self._rows(f"SELECT path, reason FROM skipped WHERE {where} ORDER BY path", params)
        ]

    def counts(self, flt: FileFilter) -> tuple[int, int]:
        where, params = self.file_filter_sql(flt)
        row = self._rows(
            f"SELECT count(*), coalesce(sum(chunk_count), 0) FROM files f WHERE {where}", params
        )[0]
        return int(row[0]), int(row[1])

    def folder_counts(self) -> dict[str, tuple[int, int]]:
        rows = self._rows("SELECT folder, count(*), coalesce(sum(chunk_count), 0) FROM files GROUP BY folder")
        return {str(f): (int(n), int(c)) for f, n, c in rows}

    def get_file(self, path: str) -> FileRecord | None:
        rows = self._rows(f"SELECT {_FILE_COLS} FROM files f WHERE f.path = %s", (path,))
        return _record(rows[0]) if rows else None

    def list_files(
        self, flt: FileFilter, *, sort: str = "path", limit: int | None = None
    ) -> list[FileRecord]:
        where, params = self.file_filter_sql(flt)
        order = "f.mtime_ns DESC, f.path" if sort == "recent" else "f.path"
        query = f"SELECT {_FILE_COLS} FROM files f WHERE {where} ORDER BY {order}"
        if limit is not None:
            query += f" LIMIT {int(limit)}"
        return [_record(r) for r in self._rows(query, params)]

    def count_files(self, flt: FileFilter) -> int:
        where, params = self.file_filter_sql(flt)
        return int(self._rows(f"SELECT count(*) FROM files f WHERE {where}", params)[0][0])

    def all_files(self) -> list[FileRecord]:
        return [_record(r) for r in self._rows(f"SELECT {_FILE_COLS} FROM files f")]

    def superseded_by(self) -> dict[str, list[str]]:
        gen = self.generation()
        with self._cache_lock:
            cached = self._superseded_cache
            if cached is not None and cached[0] == gen:
                return cached[1]
        rows = self._rows(
            'SELECT f.path, t.target COLLATE "C" AS target FROM files f'
            " CROSS JOIN LATERAL json_array_elements_text(f.supersedes::json) AS t(target)"
            ' JOIN files g ON g.path = t.target COLLATE "C"'
            " WHERE f.supersedes <> '[]' AND t.target COLLATE \"C\" <> f.path ORDER BY target, f.path"
        )
        out: dict[str, list[str]] = {}
        for path, target in rows:
            out.setdefault(str(target), []).append(str(path))
        with self._cache_lock:
            self._superseded_cache = (gen, out)
        return out

    def file_filter_sql(self, flt: FileFilter) -> tuple[str, list[Any]]:
        """A WHERE clause over `files f` and its parameters."""
        return file_filter_clause(POSTGRES, flt, lambda: self.superseded_by(), alias="f.")

    def _narrowing(self, flt: FileFilter | None, column: str) -> tuple[str, list[Any]]:
        """`AND <column> IN (the filter's files)`, or nothing when the filter allows every file."""
        if flt is None:
            return "", []
        where, params = self.file_filter_sql(flt)
        if where == "TRUE":
            return "", []
        return f" AND {column} IN (SELECT f.id FROM files f WHERE {where})", params

    def file_ids(self, flt: FileFilter) -> list[int]:
        where, params = self.file_filter_sql(flt)
        return [int(r[0]) for r in self._rows(f"SELECT f.id FROM files f WHERE {where}", params)]

    def chunks_by_id(self, ids: Sequence[int]) -> dict[int, ChunkRecord]:
        if not ids:
            return {}
        rows = self._rows(
            f"SELECT c.id, c.idx, c.start_line, c.end_line, c.heading, c.breadcrumb, c.text, c.node_id, {_FILE_COLS}"
            " FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ANY(%s)",
            ([int(i) for i in ids],),
        )
        out: dict[int, ChunkRecord] = {}
        for row in rows:
            file = _record(row[8:])
            out[int(row[0])] = ChunkRecord(
                id=int(row[0]),
                path=file.path,
                folder=file.folder,
                idx=int(row[1]),
                start_line=int(row[2]),
                end_line=int(row[3]),
                heading=str(row[4]),
                breadcrumb=str(row[5]),
                text=str(row[6]),
                file=file,
                node_id=str(row[7]),
            )
        return out

    def tree_of(self, path: str) -> Node | None:
        rows = self._rows(
            "SELECT t.tree FROM trees t JOIN files f ON f.id = t.file_id WHERE f.path = %s", (path,)
        )
        return Node.from_json(json.loads(rows[0][0])) if rows else None

    def document_tokens(self, flt: FileFilter) -> dict[str, int]:
        where, params = self.file_filter_sql(flt)
        rows = self._rows(
            f"SELECT f.path, coalesce(t.tokens, 0) FROM files f LEFT JOIN trees t ON t.file_id = f.id WHERE {where}",
            params,
        )
        return {str(p): int(n) for p, n in rows}

    def chunk_ids_of_files(self, file_ids: Sequence[int]) -> list[tuple[int, int]]:
        rows = self._rows(
            "SELECT id, file_id FROM chunks WHERE file_id = ANY(%s)", ([int(i) for i in file_ids],)
        )
        return [(int(a), int(b)) for a, b in rows]

    def file_chunk_counts(self, flt: FileFilter) -> list[tuple[str, int]]:
        where, params = self.file_filter_sql(flt)
        rows = self._rows(f"SELECT f.path, f.chunk_count FROM files f WHERE {where} ORDER BY f.path", params)
        return [(str(p), int(c)) for p, c in rows]

    # -- retrieval -----------------------------------------------------------------------------------

    def _stats(self) -> tuple[float, float]:
        """(chunks, mean tokens per chunk), for BM25's IDF and length normalisation."""
        gen = self.generation()
        with self._cache_lock:
            cached = self._stats_cache
            if cached is not None and cached[0] == gen:
                return cached[1], cached[2]
        values = dict(self._rows("SELECT key, value FROM meta WHERE key IN ('chunks', 'tokens')"))
        n = float(values.get("chunks", 0) or 0)
        avg = float(values.get("tokens", 0) or 0) / n if n else 1.0
        with self._cache_lock:
            self._stats_cache = (gen, n, max(avg, 1.0))
        return n, max(avg, 1.0)

    def bm25(
        self, match: str, flt: FileFilter, limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        """BM25 over the words (`pgsearch.py`): the same terms, IDF and length normalisation as FTS5.

        Scored MaxScore-style, so a common word does not make PostgreSQL rank most of the index: the terms
        are taken rarest first, and only the chunks holding one of those taken are scored (by every term);
        once the last of the `limit` best scores reaches the most the other terms could give a chunk that
        holds none of them (each term's IDF × (k1 + 1)), the ranking is the full one. `_next_pass` picks
        the terms of each pass: that changes how many passes run, never the ranking."""
        queries = list(dict.fromkeys(q for t in pgsearch.match_terms(match) if (q := pgsearch.term_query(t))))
        if not queries:
            return []
        n, avg = self._stats()
        dfs = self._document_frequencies(queries)
        idf = {q: max(math.log(max(n - dfs[q] + 0.5, 1e-9) / (dfs[q] + 0.5)), 1e-6) for q in queries}
        ranked = sorted((q for q in queries if dfs[q] > 0), key=lambda q: -idf[q])
        if not ranked:
            return []
        top = max(max(weights), 1e-6)
        rank_weights = [max(w / top, 1e-3) for w in (weights[1], 0.001, weights[2], weights[0])]  # D C B A
        narrow, narrow_params = self._narrowing(flt, "c.file_id")
        # One row per candidate chunk, its score summed over the terms it holds (each term's weighted
        # frequency computed once: `OFFSET 0` keeps the planner from inlining it twice), kept in a top-N
        # heap: no join of chunks × terms to sort and group (at 30,000 candidates that sort spilled ~50 MB
        # to disk; `bench/pg_tail.py`, docs/benchmarks.md section 14).
        query = (
            "SELECT c.id, s.score FROM chunks c CROSS JOIN LATERAL"
            " (SELECT sum(q.idf * r.x * %s / (r.x + %s * (1 - %s + %s * c.ntok / %s))) AS score"
            " FROM unnest(%s::tsquery[], %s::float8[]) AS q(query, idf)"
            " CROSS JOIN LATERAL (SELECT ts_rank_cd(%s::float4[], c.tsv, q.query) * %s AS x OFFSET 0) r"
            " WHERE c.tsv @@ q.query) s"
            f" WHERE c.tsv @@ %s::tsquery{narrow} ORDER BY s.score DESC, c.id LIMIT %s"
        )
        bound = [idf[q] * (BM25_K1 + 1) * top for q in ranked]
        dfs_ranked = [dfs[q] for q in ranked]
        taken = _next_pass(dfs_ranked, max(1, _rare_prefix(dfs_ranked)), limit, n)
        while True:
            params = [
                BM25_K1 + 1,
                BM25_K1,
                BM25_B,
                BM25_B,
                avg,
                ranked,
                [idf[q] for q in ranked],
                rank_weights,
                top,
                " | ".join(f"({q})" for q in ranked[:taken]),
                *narrow_params,
                int(limit),
            ]
            rows = [(int(cid), float(score)) for cid, score in self._rows(query, params)]
            rest = sum(bound[taken:])
            if taken == len(ranked) or (len(rows) >= limit and rows[-1][1] >= rest):
                return rows
            taken = _next_pass(dfs_ranked, taken + 1, limit, n)

    def _document_frequencies(self, queries: list[str]) -> dict[str, int]:
        """How many chunks hold each term (BM25's document frequency), cached per generation."""
        gen = self.generation()
        with self._cache_lock:
            if self._df_cache[0] != gen:
                self._df_cache = (gen, {})
            cache = self._df_cache[1]
            missing = [q for q in queries if q not in cache]
        if missing:
            rows = self._rows(
                "SELECT t.query::text, (SELECT count(*) FROM chunks c WHERE c.tsv @@ t.query)"
                " FROM unnest(%s::tsquery[]) AS t(query)",
                (missing,),
            )
            found = dict(zip(missing, (int(count) for _, count in rows), strict=True))
            with self._cache_lock:
                if self._df_cache[0] == gen:
                    if len(cache) > 50_000:
                        cache.clear()
                    cache.update(found)
        else:
            found = {}
        return {q: cache.get(q, found.get(q, 0)) for q in queries}

    def substrings(
        self, match: str, flt: FileFilter, limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        """The chunks holding the substrings (trigram GIN, then confirmed in the folded text), scored by
        each substring's IDF times the weights of the parts that hold it."""
        found = [q for t in pgsearch.match_terms(match) if (q := pgsearch.substring_query(t))]
        found = list(dict.fromkeys(found))
        if not found:
            return []
        n, _ = self._stats()
        narrow, narrow_params = self._narrowing(flt, "h.file_id")
        sep = pgsearch.FOLD_SEPARATOR
        query = (
            "WITH q AS (SELECT t.query, t.needle, t.i FROM unnest(%s::tsquery[], %s::text[]) WITH ORDINALITY"
            " AS t(query, needle, i)),"
            " m AS MATERIALIZED (SELECT c.id, c.file_id, c.fold, c.tri FROM chunks c WHERE c.tri @@ %s::tsquery),"
            " h AS (SELECT m.id, m.file_id, q.i,"
            " (CASE WHEN strpos(split_part(m.fold, %s, 1), q.needle) > 0 THEN %s ELSE 0 END"
            " + CASE WHEN strpos(split_part(m.fold, %s, 2), q.needle) > 0 THEN %s ELSE 0 END"
            " + CASE WHEN strpos(split_part(m.fold, %s, 3), q.needle) > 0 THEN %s ELSE 0 END) AS w"
            " FROM m JOIN q ON m.tri @@ q.query AND strpos(m.fold, q.needle) > 0),"
            " d AS (SELECT q.i, greatest(ln(greatest(%s - count(h.id) + 0.5, 1e-9) / (count(h.id) + 0.5)), 1e-6)"
            " AS idf FROM q LEFT JOIN h ON h.i = q.i GROUP BY q.i)"
            " SELECT h.id, sum(d.idf * h.w) AS score FROM h JOIN d ON d.i = h.i"
            f" WHERE h.w > 0{narrow} GROUP BY h.id ORDER BY score DESC, h.id LIMIT %s"
        )
        params = [
            [q for q, _ in found],
            [needle for _, needle in found],
            " | ".join(f"({q})" for q, _ in found),
            sep,
            float(weights[0]),
            sep,
            float(weights[1]),
            sep,
            float(weights[2]),
            n,
            *narrow_params,
            int(limit),
        ]
        return [(int(cid), float(score)) for cid, score in self._rows(query, params)]

    def dense_index(self, dim: int) -> DenseIndex:
        return PgDense(self, dim)


# The rarest terms scored first, until they hold this many chunks together (then one more at a time).
_FIRST_PASS_CHUNKS = 20_000


def _rare_prefix(dfs: list[int]) -> int:
    """How many of the terms (rarest first) the first pass of `bm25` takes."""
    total = 0
    for i, df in enumerate(dfs):
        total += df
        if total > _FIRST_PASS_CHUNKS:
            return max(1, i)
    return len(dfs)


# A pass that scores this share of the index scores it all: the remaining terms are then taken at once.
_FULL_PASS_SHARE = 0.5


def _next_pass(dfs: list[int], taken: int, limit: int, n: float) -> int:
    """How many terms (rarest first) a pass of `bm25` takes, at least `taken`.

    Which terms a pass takes never changes the ranking (a pass returns only once it is the full one), only
    how many passes it takes: none is run that must fail (the chunks of its terms, at most the sum of their
    document frequencies, cannot fill the `limit`), and once a pass scores half the index, it takes every
    term (a common word's pass costs about what the full ranking does, and would be followed by others)."""
    taken = min(taken, len(dfs))
    while taken < len(dfs) and sum(dfs[:taken]) < limit:
        taken += 1
    if sum(dfs[:taken]) >= _FULL_PASS_SHARE * n:
        return len(dfs)
    return taken


def _text_columns(breadcrumb: str, text: str, aliases: str) -> tuple[str, int, str, str]:
    """A chunk's `tsv`, token count, `tri` and `fold` (`pgsearch.py`)."""
    crumb_t, text_t, alias_t = pgsearch.lexical_tokens(breadcrumb, text, aliases)
    tsv, ntok = pgsearch.tsvector_literal(((crumb_t, "A"), (text_t, "D"), (alias_t, "B")))
    parts = [pgsearch.clean(pgsearch.fold(p)) for p in (breadcrumb, text, aliases)]
    return tsv, ntok, pgsearch.trigram_literal(parts), pgsearch.FOLD_SEPARATOR.join(parts)


def _delete_chunks(conn: psycopg.Connection[Any], file_ids: list[int]) -> None:
    """Every chunk, vector and tree of these files; the token statistics follow."""
    if not file_ids:
        return
    if _has_vecs(conn):
        conn.execute("DELETE FROM vecs WHERE file_id = ANY(%s)", (file_ids,))
    conn.execute("DELETE FROM trees WHERE file_id = ANY(%s)", (file_ids,))
    row = conn.execute(
        "WITH d AS (DELETE FROM chunks WHERE file_id = ANY(%s) RETURNING ntok) SELECT count(*), coalesce(sum(ntok), 0) FROM d",
        (file_ids,),
    ).fetchone()
    if row and row[0]:
        _add_stats(conn, -int(row[0]), -int(row[1]))


def _add_stats(conn: psycopg.Connection[Any], chunks: int, tokens: int) -> None:
    if chunks or tokens:
        conn.execute(
            "UPDATE meta SET value = (value::bigint + CASE key WHEN 'chunks' THEN %s ELSE %s END)::text"
            " WHERE key IN ('chunks', 'tokens')",
            (chunks, tokens),
        )


def _has_vecs(conn: psycopg.Connection[Any]) -> bool:
    row = conn.execute("SELECT to_regclass('vecs')").fetchone()
    return bool(row and row[0] is not None)


def _vector_type(dim: int) -> tuple[str, str | None]:
    """The column type for `dim` dimensions and its HNSW operator class (None: too many to index)."""
    if dim <= MAX_VECTOR_DIM:
        return f"vector({int(dim)})", "vector_cosine_ops"
    if dim <= MAX_HALFVEC_DIM:
        return f"halfvec({int(dim)})", "halfvec_cosine_ops"
    return f"vector({int(dim)})", None


class PgDense:
    """Dense search on pgvector: HNSW (cosine) with iterative scans under a filter; exact cosines by id."""

    def __init__(self, store: PgStore, dim: int) -> None:
        self.store = store
        self.dim = dim
        kind, _ = _vector_type(dim)
        self._cast = "::halfvec" if kind.startswith("halfvec") else ""

    def search(self, query: Vectors, k: int, flt: FileFilter | None = None) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        narrow, params = self.store._narrowing(flt, "v.file_id")
        vec = np.ascontiguousarray(query, dtype=np.float32)
        try:
            rows = self.store._rows(
                f"SELECT v.id, 1 - (v.emb <=> %s{self._cast}) AS cos FROM vecs v WHERE TRUE{narrow}"
                f" ORDER BY v.emb <=> %s{self._cast} LIMIT %s",
                [vec, *params, vec, int(k)],
            )
        except StoreError:
            return []
        except psycopg.errors.UndefinedTable:
            return []
        # The iterative scan returns nearly in order: exactly in order from here (ties by id, as numpy's).
        return sorted(((int(cid), float(cos)) for cid, cos in rows), key=lambda r: (-r[1], r[0]))

    def cosine(self, query: Vectors, chunk_ids: list[int]) -> dict[int, float]:
        if not chunk_ids:
            return {}
        vec = np.ascontiguousarray(query, dtype=np.float32)
        try:
            rows = self.store._rows(
                f"SELECT id, 1 - (emb <=> %s{self._cast}) FROM vecs WHERE id = ANY(%s)",
                (vec, [int(i) for i in chunk_ids]),
            )
        except (StoreError, psycopg.errors.UndefinedTable):
            return {}
        return {int(cid): float(cos) for cid, cos in rows}
