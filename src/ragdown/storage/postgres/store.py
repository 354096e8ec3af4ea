"""The index in PostgreSQL (`PgStore`; its tables in `schema.py`, its retrieval in `retrieval.py`): the store
interface of `storage/sqlite/store.py` in SQL for PostgreSQL.

The schema `ragdown_<index id>` of the backend (`storage/postgres/backend.py`) holds:

- `files`, `chunks`, `trees`, `skipped`, `meta`: as in SQLite (`storage/sqlite/store.py`). Paths sort as bytes
  (`COLLATE "C"`), so prefixes and order are SQLite's. Each chunk also holds its `tsvector` (`tsv`, GIN:
  the words, made by `storage/postgres/tsvectors.py` as FTS5 makes them), the `tsvector` of its trigrams (`tri`, GIN, for the
  substring pass), its folded text (`fold`, to confirm a substring) and its token count (`ntok`, BM25's
  document length; the sum and the count are kept in `meta`).
- `vecs(id, file_id, emb vector(dim))` with an HNSW index (`vector_cosine_ops`; `halfvec` past 2,000
  dimensions), made for the embedder's dimension when the index is (re)built, built once after a large
  load and rebuilt when its settings change, or the index's size calls for a denser one
  (`storage/postgres/hnsw.py`). Searched with `hnsw.ef_search` (`RAGDOWN_HNSW_EF_SEARCH`, else chosen
  from the index's size) and pgvector's iterative scan, so a filter never leaves the pool short.

`meta` holds the embedder, dimension, chunker and index version (a mismatch empties the index to rebuild,
as in SQLite), this schema's version `pg_schema` (a mismatch drops and recreates the tables) and the
`generation` every write transaction bumps and announces (`NOTIFY`). Only the primary writes, on the
connection that holds the role's advisory lock: if that session dies, its writes fail with it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np
import psycopg
from psycopg import sql

from ragdown.documents.tree import Node
from ragdown.embedders.base import Vectors
from ragdown.storage.filter_sql import POSTGRES, FileFilter, file_filter_clause, skipped_clause
from ragdown.storage.postgres import hnsw as pghnsw
from ragdown.storage.postgres import links as pglinks
from ragdown.storage.postgres import tsvectors as pgsearch
from ragdown.storage.postgres.retrieval import PgRetrieval
from ragdown.storage.postgres.schema import (
    INDEX_TABLES,
    KEEP_META,
    PG_SCHEMA,
    SCHEMA,
    NotCreatedYet,
    add_stats,
    delete_chunks,
    has_vecs,
    text_columns,
    vector_type,
    write_properties,
)
from ragdown.storage.query_sql import Cond, SortKey, props_by_file, props_sql, query_sql
from ragdown.storage.records import (
    CHUNK_COLUMNS,
    FILE_COLUMNS_F,
    META_KEYS,
    ChunkRecord,
    FileRecord,
    FileState,
    IndexMeta,
    LinkRow,
    PendingFile,
    StoreError,
    chunk_record,
    file_record,
    rebuild_message,
    tags_column,
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

    def pooled(self) -> contextlib.AbstractContextManager[psycopg.Connection[Any]]: ...
    @property
    def role(self) -> WriteRole | None: ...
    def describe(self) -> str: ...
    def connect(self, **options: Any) -> psycopg.Connection[Any]: ...
    def generation(self) -> int: ...
    def saw_generation(self, value: int) -> None: ...
    def notify(self, message: dict[str, Any], conn: psycopg.Connection[Any] | None = None) -> None: ...


log = logging.getLogger(__name__)


class PgStore(PgRetrieval):
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
            with self.backend.pooled() as conn:  # an unreachable database is a StoreError
                yield conn
        except psycopg.errors.UndefinedTable:
            raise NotCreatedYet(
                f"the index in {self.backend.describe()} is still being created by the primary: try again"
            ) from None

    def _rows(
        self, query: str | sql.Composable, params: Sequence[Any] = (), *, ef_search: int | None = None
    ) -> list[tuple[Any, ...]]:
        with self._read() as conn:
            if ef_search is not None:  # a search of the HNSW graph
                pghnsw.use_ef_search(conn, ef_search)
            return conn.execute(query, params).fetchall()  # type: ignore[arg-type]

    def _vectors(self) -> int:
        """The vectors in the index (one a chunk), as `meta` counts them: no scan of `vecs`."""
        return int(self._stats()[0])

    def _ef_search(self) -> int:
        return self.backend.hnsw.ef_search_for(self._vectors())

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
                for table in INDEX_TABLES:
                    conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(table)))
            conn.execute(SCHEMA)
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
                    tsv, ntok, tri, folded = text_columns(breadcrumb, text, aliases)
                    old = conn.execute(
                        "UPDATE chunks c SET tsv = %s::tsvector, tri = %s::tsvector, fold = %s, ntok = %s"
                        " FROM (SELECT ntok FROM chunks WHERE id = %s) o WHERE c.id = %s RETURNING o.ntok",
                        (tsv, tri, folded, ntok, cid, cid),
                    ).fetchone()
                    delta += ntok - (int(old[0]) if old else 0)
                add_stats(conn, 0, delta)
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
        return {str(k): str(v) for k, v in rows if k in META_KEYS}

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
            conn.execute("TRUNCATE chunks, trees, props, links, files, skipped")
            conn.execute("DROP TABLE IF EXISTS vecs")
            if meta.dim > 0:
                kind, ops = vector_type(meta.dim)
                conn.execute(
                    sql.SQL(
                        "CREATE TABLE vecs(id bigint PRIMARY KEY, file_id bigint NOT NULL, emb {} NOT NULL)"
                    ).format(sql.SQL(kind))
                )
                conn.execute("CREATE INDEX vecs_file ON vecs(file_id)")
                if ops:
                    conn.execute(pghnsw.create_sql(pghnsw.INDEX, ops, self.backend.hnsw.build_for(0)))
            conn.execute("DELETE FROM meta WHERE NOT (key = ANY(%s))", (list(KEEP_META),))
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
        ops = vector_type(dim)[1] if dim > 0 else None  # None: no graph (no vectors, too many dimensions)
        if ops is not None and files >= pghnsw.BULK_MIN_FILES:
            indexed = int(self._rows("SELECT count(*) FROM files")[0][0])
            if pghnsw.worth_dropping(files, indexed):
                with self._write() as conn:
                    pghnsw.drop(conn, files, indexed)
        yield  # a sync that fails leaves the graph to the next one (a build takes minutes: not on the way out)
        if ops is None:
            return
        with self._read() as conn:
            if not has_vecs(conn):
                return
            have = pghnsw.built_with(conn, self.backend.schema)
        want = self.backend.hnsw.build_for(self._vectors(), have)
        if have == want.build() or time.monotonic() < self._graph_retry_at:
            return
        lock_key = self.backend.graph_lock_key
        step(pghnsw.STEP)
        try:
            with self.backend.connect() as conn:
                pghnsw.build(conn, dim, ops, want, have, lock_key, self.backend.connect)
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
                        pgsearch.clean(tags_column(meta.tags)),
                        pgsearch.clean(json.dumps(list(meta.aliases), ensure_ascii=False)),
                        pgsearch.clean(json.dumps(list(meta.supersedes), ensure_ascii=False)),
                        len(item.document.chunks),
                    ),
                ).fetchone()
                assert row is not None
                file_ids.append(int(row[0]))
            delete_chunks(conn, file_ids)
            write_properties(conn, file_ids, [p.document for p in pending])
            conn.execute("DELETE FROM skipped WHERE path = ANY(%s)", ([p.path for p in pending],))
            pglinks.write_links(conn, file_ids, pending)
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
                    tsv, ntok, tri, folded = text_columns(chunk.breadcrumb, chunk.text, aliases)
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
                add_stats(conn, 0, 0)
                return 0
            rows = conn.execute(
                "INSERT INTO chunks(file_id, idx, start_line, end_line, heading, breadcrumb, text, aliases, node_id,"
                " ntok, tsv, tri, fold) SELECT * FROM unnest(%s::bigint[], %s::int[], %s::int[], %s::int[],"
                " %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::int[], %s::tsvector[],"
                " %s::tsvector[], %s::text[]) RETURNING id, file_id, idx",
                columns,
            ).fetchall()
            add_stats(conn, len(rows), tokens)
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
            delete_chunks(conn, ids)
        return len(ids)

    def clear(self) -> None:
        with self._write() as conn:
            conn.execute("TRUNCATE chunks, trees, props, links, files, skipped")
            if has_vecs(conn):
                conn.execute("TRUNCATE vecs")
            conn.execute("UPDATE meta SET value = '0' WHERE key IN ('chunks', 'tokens')")

    def mark_skipped(self, path: str, size: int, stat_mtime_ns: int, reason: str) -> None:
        with self._write() as conn:
            ids = [int(r[0]) for r in conn.execute("DELETE FROM files WHERE path = %s RETURNING id", (path,))]
            delete_chunks(conn, ids)
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

    def file_states_of(self, paths: Sequence[str]) -> dict[str, FileState]:
        out: dict[str, FileState] = {}
        for path in paths:
            rows = self._rows(
                "SELECT path, size, stat_mtime_ns, hash FROM files WHERE path = %s OR starts_with(path, %s)",
                (path, f"{path}/"),
            )
            out.update((str(p), FileState(int(s), int(m), str(h))) for p, s, m, h in rows)
        return out

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
        rows = self._rows(f"SELECT {FILE_COLUMNS_F} FROM files f WHERE f.path = %s", (path,))
        return file_record(rows[0]) if rows else None

    def list_files(
        self, flt: FileFilter, *, sort: str = "path", limit: int | None = None
    ) -> list[FileRecord]:
        where, params = self.file_filter_sql(flt)
        order = "f.mtime_ns DESC, f.path" if sort == "recent" else "f.path"
        query = f"SELECT {FILE_COLUMNS_F} FROM files f WHERE {where} ORDER BY {order}"
        if limit is not None:
            query += f" LIMIT {int(limit)}"
        return [file_record(r) for r in self._rows(query, params)]

    def count_files(self, flt: FileFilter) -> int:
        where, params = self.file_filter_sql(flt)
        return int(self._rows(f"SELECT count(*) FROM files f WHERE {where}", params)[0][0])

    def all_files(self) -> list[FileRecord]:
        return [file_record(r) for r in self._rows(f"SELECT {FILE_COLUMNS_F} FROM files f")]

    def superseded_by(self) -> dict[str, list[str]]:
        gen = self.generation()
        with self._cache_lock:
            cached = self._superseded_cache
            if cached is not None and cached[0] == gen:
                return cached[1]
        rows = self._rows(
            'SELECT f.path, t.target COLLATE "C" AS target FROM files f'
            " CROSS JOIN LATERAL json_array_elements_text(f.supersedes::json) AS t(target)"
            ' JOIN files g ON g.path = t.target COLLATE "C" AND g.folder = f.folder'
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
            f"SELECT {CHUNK_COLUMNS}, {FILE_COLUMNS_F}"
            " FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ANY(%s)",
            ([int(i) for i in ids],),
        )
        out: dict[int, ChunkRecord] = {}
        for row in rows:
            out[int(row[0])] = chunk_record(row)
        return out

    def links_from(self, path: str) -> list[LinkRow]:
        return [pglinks.link_row(r) for r in self._rows(pglinks.FROM_SQL, (path,))]

    def links_named(self, folder: str, keys: Sequence[str]) -> list[LinkRow]:
        return (
            [pglinks.link_row(r) for r in self._rows(pglinks.NAMED_SQL, (list(keys), folder))] if keys else []
        )

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

    def query_documents(
        self, where: Cond, sort: tuple[SortKey, ...], limit: int, offset: int
    ) -> tuple[int, list[FileRecord], dict[int, dict[str, str]]]:
        count_sql, count_params, page_sql, page_params = query_sql(POSTGRES, where, sort, limit, offset)
        with self.read_snapshot():
            total = int(self._rows(count_sql, count_params)[0][0])
            files = [file_record(r) for r in self._rows(page_sql, page_params)]
            if not files:
                return total, [], {}
            sql, params = props_sql(POSTGRES, [f.id for f in files])
            return total, files, props_by_file(self._rows(sql, params))

    def file_chunk_counts(self, flt: FileFilter) -> list[tuple[str, int]]:
        where, params = self.file_filter_sql(flt)
        rows = self._rows(f"SELECT f.path, f.chunk_count FROM files f WHERE {where} ORDER BY f.path", params)
        return [(str(p), int(c)) for p, c in rows]
