"""The SQLite store: the only module that speaks SQL.

One file per index (`index.sqlite` in the data dir), WAL mode so one writer and any number of readers in
other processes work at once. One transaction replaces whole files, so a reader never sees half a file.
Vectors are float32 blobs in their own table; dense search keeps them in a numpy matrix (`vectors.py`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragdown.documents.tree import Node
from ragdown.storage.filter_sql import SQLITE, FileFilter, file_filter_clause, skipped_clause
from ragdown.storage.query_sql import Cond, SortKey, props_by_file, props_sql, query_sql
from ragdown.storage.records import (
    CHUNK_COLUMNS,
    FILE_COLUMNS,
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
from ragdown.storage.sqlite import links as sqlite_links
from ragdown.storage.sqlite.links import replace_links
from ragdown.storage.sqlite.schema import (
    FTS_INSERT,
    SCHEMA,
    TRI_INSERT,
    connect,
    drop_if_older,
    ensure_lexical_fts,
    has_schema,
    refill_fts,
    write_properties,
)

if TYPE_CHECKING:
    from ragdown.storage.sqlite.vectors import DenseMatrix

log = logging.getLogger(__name__)

DB_NAME = "index.sqlite"


# How long deleted chunk ids are kept for readers' incremental refresh; an older reader reloads in full.
_DELETED_LOG_KEEP_S = 600.0


class Store:
    """The index file: a writer connection (primary only) and one read connection per thread."""

    def __init__(self, data_dir: Path, *, writable: bool) -> None:
        self.data_dir = data_dir
        self.path = data_dir / DB_NAME
        self.writable = writable
        data_dir.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        # Every reader and the thread it belongs to: `close` closes them all; one whose thread has ended is
        # closed when the next reader opens (`_reader`).
        self._conns: list[tuple[threading.Thread, sqlite3.Connection]] = []
        self._conns_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._write_lock = threading.Lock()
        self._cache_lock = threading.Lock()
        self._superseded_cache: tuple[int, dict[str, list[str]]] | None = None
        if writable:
            self._writer = connect(self.path)
            drop_if_older(self._writer)
            self._writer.executescript(SCHEMA)
            ensure_lexical_fts(self._writer)
            with contextlib.suppress(OSError):  # exotic filesystems keep their own modes
                self.path.chmod(0o600)

    # -- connections -------------------------------------------------------------------------------

    def _reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            if not self.path.exists():
                raise StoreError(f"no index at {self.path} yet: start the primary to build it")
            conn = connect(self.path, readonly=not self.writable, reader=True)
            if not self.writable and not has_schema(conn):  # the primary is still creating it
                conn.close()
                raise StoreError(f"the index at {self.path} is still being created by the primary: try again")
            self._local.conn = conn
            with self._conns_lock:
                ended = [c for t, c in self._conns if not t.is_alive()]
                self._conns = [(t, c) for t, c in self._conns if t.is_alive()]
                self._conns.append((threading.current_thread(), conn))
            # A thread that has ended runs no query: its reader and its page cache (up to
            # `READER_CACHE_KIB`) go. Kept, each sync's thread (and each thread a server answers in) left
            # one open for the life of the process, ~110 MB of page caches after 40 `ragdown search`
            # calls to a server at 10,000 notes (docs/benchmarks.md section 37).
            for old in ended:
                old.close()
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        if self._writer is None:
            raise StoreError("this process is a reader and cannot write the index")
        with self._write_lock:
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute(
                    "INSERT INTO meta(key, value) VALUES ('generation', '1') ON CONFLICT(key)"
                    " DO UPDATE SET value = CAST(value AS INTEGER) + 1"
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextmanager
    def read_snapshot(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: every query inside sees the same committed state."""
        conn = self._reader()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def close(self) -> None:
        with self._conns_lock:
            for _, conn in self._conns:
                conn.close()
            self._conns.clear()
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    # -- meta --------------------------------------------------------------------------------------

    def read_meta(self) -> dict[str, str]:
        try:
            rows = self._reader().execute("SELECT key, value FROM meta").fetchall()
        except sqlite3.OperationalError:
            return {}
        return {str(k): str(v) for k, v in rows if k in META_KEYS}

    def ensure_meta(self, meta: IndexMeta) -> bool:
        """Primary: make the index match `meta`, dropping everything on a mismatch. True when rebuilt."""
        want = meta.as_dict()
        have = self.read_meta()
        if have == want:
            return False
        if have:
            changed = sorted(k for k in want if have.get(k) != want[k])
            log.info("index %s changed (%s): dropping it to rebuild", self.path, ", ".join(changed))
        with self._write() as conn:
            conn.execute("DELETE FROM chunks")
            conn.execute("DELETE FROM trees")
            conn.execute("DELETE FROM props")
            conn.execute("DELETE FROM links")
            conn.execute("DELETE FROM files")
            conn.execute("DELETE FROM skipped")
            conn.execute("DELETE FROM vecs")
            conn.execute("DELETE FROM meta WHERE key NOT IN ('generation', 'lexical')")
            conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", sorted(want.items()))
        with self._write() as conn:
            refill_fts(conn)
        return True

    def check_meta(self, meta: IndexMeta) -> None:
        """Reader: refuse an index built for another embedder or chunker."""
        have = self.read_meta()
        want = meta.as_dict()
        if have != want:
            raise StoreError(rebuild_message(str(self.path), have, meta))

    # -- writes ------------------------------------------------------------------------------------

    @contextmanager
    def loading(self, files: int, step: Callable[[str], None]) -> Iterator[None]:
        """SQLite keeps its indexes up to date as cheaply in bulk; after a sync's writes, the writer's page
        cache (up to `WRITER_CACHE_KIB`, the whole index of a small vault after a first index) is let go:
        a server would otherwise hold it until its next sync (docs/benchmarks.md section 37)."""
        try:
            yield
        finally:
            if self._writer is not None:
                with self._write_lock:
                    self._writer.execute("PRAGMA shrink_memory")

    def write_files(self, pending: Sequence[PendingFile]) -> int:
        """Replace each file's chunks (and vectors) in one transaction. Returns the chunks written."""
        written = 0
        text_rows: list[tuple[int, str, str, str]] = []
        with self._write() as conn:
            for item in pending:
                written += self._replace_file(conn, item, text_rows)
            conn.executemany(FTS_INSERT, text_rows)
            conn.executemany(TRI_INSERT, text_rows)
        return written

    def _replace_file(
        self, conn: sqlite3.Connection, item: PendingFile, text_rows: list[tuple[int, str, str, str]]
    ) -> int:
        """Write one file's rows; its chunks' `(id, breadcrumb, text, aliases)` go to `text_rows`, for the
        FTS tables."""
        doc = item.document
        meta = doc.meta
        row = conn.execute("SELECT id FROM files WHERE path = ?", (item.path,)).fetchone()
        values = (
            item.folder,
            item.size,
            item.stat_mtime_ns,
            item.mtime_ns,
            item.hash,
            meta.title,
            meta.description,
            meta.created_by,
            meta.session,
            tags_column(meta.tags),
            json.dumps(list(meta.aliases), ensure_ascii=False),
            json.dumps(list(meta.supersedes), ensure_ascii=False),
            len(doc.chunks),
        )
        if row is None:
            cur = conn.execute(
                "INSERT INTO files(folder, size, stat_mtime_ns, mtime_ns, hash, title, description, created_by,"
                " session, tags, aliases, supersedes, chunk_count, path) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (*values, item.path),
            )
            file_id = int(cur.lastrowid or 0)
        else:
            file_id = int(row[0])
            conn.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
            conn.execute(
                "UPDATE files SET folder=?, size=?, stat_mtime_ns=?, mtime_ns=?, hash=?, title=?, description=?,"
                " created_by=?, session=?, tags=?, aliases=?, supersedes=?, chunk_count=? WHERE id=?",
                (*values, file_id),
            )
        conn.execute("DELETE FROM skipped WHERE path = ?", (item.path,))
        replace_links(conn, file_id, doc)
        write_properties(conn, file_id, doc)
        if doc.tree is not None:
            conn.execute(
                "INSERT OR REPLACE INTO trees(file_id, tokens, tree) VALUES (?,?,?)",
                (file_id, doc.tree.tokens, json.dumps(doc.tree.as_json(), ensure_ascii=False)),
            )
        else:
            conn.execute("DELETE FROM trees WHERE file_id = ?", (file_id,))
        alias_text = " ".join(meta.aliases)
        for i, chunk in enumerate(doc.chunks):
            aliases = alias_text if i == 0 else ""
            cur = conn.execute(
                "INSERT INTO chunks(file_id, idx, start_line, end_line, heading, breadcrumb, text, aliases,"
                " node_id) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    file_id,
                    chunk.index,
                    chunk.start_line,
                    chunk.end_line,
                    chunk.heading,
                    chunk.breadcrumb,
                    chunk.text,
                    aliases,
                    chunk.node_id,
                ),
            )
            chunk_id = int(cur.lastrowid or 0)
            text_rows.append((chunk_id, chunk.breadcrumb, chunk.text, aliases))
            if item.vectors is not None:
                vec = np.ascontiguousarray(item.vectors[i], dtype=np.float32)
                more = item.windows.get(i) if item.windows else None
                if more is not None and len(more):
                    vec = np.ascontiguousarray(np.vstack([vec, more]), dtype=np.float32)
                conn.execute(
                    "INSERT INTO vecs(id, file_id, emb) VALUES (?,?,?)",
                    (chunk_id, file_id, vec.tobytes()),
                )
        return len(doc.chunks)

    def touch_file(self, path: str, size: int, stat_mtime_ns: int) -> None:
        """A file whose bytes did not change: remember its new stat so the next sync skips it unread."""
        with self._write() as conn:
            conn.execute("UPDATE files SET size=?, stat_mtime_ns=? WHERE path=?", (size, stat_mtime_ns, path))

    def remove_files(self, paths: Iterable[str]) -> int:
        removed = 0
        with self._write() as conn:
            for path in paths:
                row = conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
                conn.execute("DELETE FROM skipped WHERE path = ?", (path,))
                if row is None:
                    continue
                conn.execute("DELETE FROM chunks WHERE file_id = ?", (row[0],))
                conn.execute("DELETE FROM trees WHERE file_id = ?", (row[0],))
                replace_links(conn, int(row[0]), None)
                conn.execute("DELETE FROM props WHERE file_id = ?", (row[0],))
                conn.execute("DELETE FROM files WHERE id = ?", (row[0],))
                removed += 1
        return removed

    def clear(self) -> None:
        """Drop every file and chunk (a full re-index follows)."""
        with self._write() as conn:
            conn.execute("DELETE FROM chunks")
            conn.execute("DELETE FROM trees")
            conn.execute("DELETE FROM links")
            conn.execute("DELETE FROM files")
            conn.execute("DELETE FROM skipped")

    def mark_skipped(self, path: str, size: int, stat_mtime_ns: int, reason: str) -> None:
        with self._write() as conn:
            row = conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()
            if row is not None:
                conn.execute("DELETE FROM chunks WHERE file_id = ?", (row[0],))
                conn.execute("DELETE FROM trees WHERE file_id = ?", (row[0],))
                replace_links(conn, int(row[0]), None)
                conn.execute("DELETE FROM files WHERE id = ?", (row[0],))
            conn.execute(
                "INSERT OR REPLACE INTO skipped(path, size, stat_mtime_ns, reason) VALUES (?,?,?,?)",
                (path, size, stat_mtime_ns, reason),
            )

    def prune_deleted_log(self) -> None:
        cutoff = time.time() - _DELETED_LOG_KEEP_S
        with self._write() as conn:
            row = conn.execute("SELECT max(seq) FROM deleted_log WHERE at < ?", (cutoff,)).fetchone()
            if row and row[0] is not None:
                conn.execute("DELETE FROM deleted_log WHERE seq <= ?", (row[0],))
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('deleted_log_pruned_through', ?)",
                    (str(row[0]),),
                )

    # -- reads -------------------------------------------------------------------------------------

    def file_states(self) -> dict[str, FileState]:
        # The columns are NOT NULL INTEGER / TEXT, written only here: no per-row conversions.
        rows = self._reader().execute("SELECT path, size, stat_mtime_ns, hash FROM files")
        return {p: FileState(s, m, h) for p, s, m, h in rows}

    def file_stats(self) -> set[tuple[str, int, int]]:
        """Every indexed file's `(path, size, stat_mtime_ns)`, equal to its `FileStat` while unchanged."""
        return set(self._reader().execute("SELECT path, size, stat_mtime_ns FROM files"))

    def file_states_of(self, paths: Sequence[str]) -> dict[str, FileState]:
        """`file_states` of the files at `paths` and under them (a path may name a directory)."""
        conn = self._reader()
        out: dict[str, FileState] = {}
        for path in paths:
            # Under `path/`: from `path/` up to `path0` ('0' follows '/'), in the index on `path`.
            rows = conn.execute(
                "SELECT path, size, stat_mtime_ns, hash FROM files WHERE path = ? OR (path >= ? AND path < ?)",
                (path, f"{path}/", f"{path}0"),
            )
            out.update((p, FileState(s, m, h)) for p, s, m, h in rows)
        return out

    def skipped_states(self) -> dict[str, tuple[int, int, str]]:
        rows = self._reader().execute("SELECT path, size, stat_mtime_ns, reason FROM skipped").fetchall()
        return {str(p): (int(s), int(m), str(r)) for p, s, m, r in rows}

    def skipped_files(self, flt: FileFilter) -> list[tuple[str, str]]:
        """(path, reason) of each file the last syncs left out, under the filter's prefixes and folders."""
        where, params = skipped_clause(SQLITE, flt)
        sql = f"SELECT path, reason FROM skipped WHERE {where} ORDER BY path"
        return [(str(p), str(r)) for p, r in self._reader().execute(sql, params)]

    def generation(self) -> int:
        """Bumped by every write transaction: a cheap test for "has anything changed since"."""
        try:
            row = self._reader().execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        except sqlite3.OperationalError:
            return 0
        return int(row[0]) if row else 0

    def counts(self, flt: FileFilter) -> tuple[int, int]:
        """(files, chunks) under the filter."""
        where, params = self.file_filter_sql(flt)
        row = (
            self._reader()
            .execute(f"SELECT count(*), coalesce(sum(chunk_count), 0) FROM files WHERE {where}", params)
            .fetchone()
        )
        return int(row[0]), int(row[1])

    def folder_counts(self) -> dict[str, tuple[int, int]]:
        rows = (
            self._reader()
            .execute("SELECT folder, count(*), coalesce(sum(chunk_count), 0) FROM files GROUP BY folder")
            .fetchall()
        )
        return {str(f): (int(n), int(c)) for f, n, c in rows}

    def get_file(self, path: str) -> FileRecord | None:
        row = self._reader().execute(f"SELECT {FILE_COLUMNS} FROM files WHERE path = ?", (path,)).fetchone()
        return file_record(row) if row else None

    def list_files(
        self, flt: FileFilter, *, sort: str = "path", limit: int | None = None
    ) -> list[FileRecord]:
        where, params = self.file_filter_sql(flt)
        order = "mtime_ns DESC, path" if sort == "recent" else "path"
        sql = f"SELECT {FILE_COLUMNS} FROM files WHERE {where} ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [file_record(r) for r in self._reader().execute(sql, params).fetchall()]

    def count_files(self, flt: FileFilter) -> int:
        where, params = self.file_filter_sql(flt)
        return int(self._reader().execute(f"SELECT count(*) FROM files WHERE {where}", params).fetchone()[0])

    def all_files(self) -> list[FileRecord]:
        return [
            file_record(r) for r in self._reader().execute(f"SELECT {FILE_COLUMNS} FROM files").fetchall()
        ]

    def superseded_by(self) -> dict[str, list[str]]:
        """Superseded path → the documents that supersede it (only for documents that exist, each retired
        only by documents of its own folder, whatever an index written before that rule holds)."""
        gen = self.generation()
        with self._cache_lock:
            cached = self._superseded_cache
            if cached is not None and cached[0] == gen:
                return cached[1]
        result = self._read_superseded()
        with self._cache_lock:
            self._superseded_cache = (gen, result)
        return result

    def _read_superseded(self) -> dict[str, list[str]]:
        rows = (
            self._reader()
            .execute("SELECT path, folder, supersedes FROM files WHERE supersedes != '[]'")
            .fetchall()
        )
        folder_of = {str(r[0]): str(r[1]) for r in self._reader().execute("SELECT path, folder FROM files")}
        out: dict[str, list[str]] = {}
        for path, folder, raw in rows:
            for target in json.loads(raw):
                if folder_of.get(target) == folder and target != path:
                    out.setdefault(target, []).append(str(path))
        for v in out.values():
            v.sort()
        return out

    def file_filter_sql(self, flt: FileFilter) -> tuple[str, list[Any]]:
        """A WHERE clause over `files` (unaliased columns) and its parameters."""
        return file_filter_clause(SQLITE, flt, lambda: self.superseded_by())

    def file_ids(self, flt: FileFilter) -> list[int]:
        where, params = self.file_filter_sql(flt)
        return [int(r[0]) for r in self._reader().execute(f"SELECT id FROM files WHERE {where}", params)]

    def bm25(
        self, match: str, flt: FileFilter, limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25 score, higher is better) for an FTS5 MATCH expression under the file filter."""
        return self._ranked("chunks_fts", match, flt, limit, weights)

    def substrings(
        self, match: str, flt: FileFilter, limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        """Like `bm25`, over the trigram table: `match` quotes substrings of three or more characters."""
        return self._ranked("chunks_tri", match, flt, limit, weights)

    def _ranked(
        self, table: str, match: str, flt: FileFilter, limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        """One FTS5 table's MATCH ranked by its bm25 (`table` is one of ours, never the caller's)."""
        where, params = self.file_filter_sql(flt)
        sql = (
            f"SELECT t.rowid, bm25({table}, ?, ?, ?) AS rank FROM {table} t"
            + ("" if where == "1" else " JOIN chunks c ON c.id = t.rowid")
            + f" WHERE {table} MATCH ?"
            + ("" if where == "1" else f" AND c.file_id IN (SELECT id FROM files WHERE {where})")
            + " ORDER BY rank LIMIT ?"
        )
        rows = self._reader().execute(sql, [*weights, match, *params, limit]).fetchall()
        return [(int(r[0]), -float(r[1])) for r in rows]

    def dense_index(self, dim: int) -> DenseMatrix:
        """The in-memory matrix of this store's vectors (`vectors.py`), one per searcher."""
        from ragdown.storage.sqlite.vectors import DenseMatrix

        return DenseMatrix(self, dim)

    def chunks_by_id(self, ids: Sequence[int]) -> dict[int, ChunkRecord]:
        if not ids:
            return {}
        conn = self._reader()
        sql = (
            f"SELECT {CHUNK_COLUMNS}, {FILE_COLUMNS_F}"
            " FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN (SELECT value FROM json_each(?))"
        )
        out: dict[int, ChunkRecord] = {}
        for row in conn.execute(sql, (json.dumps([int(i) for i in ids]),)):
            out[int(row[0])] = chunk_record(row)
        return out

    def links_from(self, path: str) -> list[LinkRow]:
        """The links written in the document at `path`, in line order."""
        return sqlite_links.links_from(self._reader(), path)

    def links_named(self, folder: str, keys: Sequence[str]) -> list[LinkRow]:
        """The links of `folder`'s documents whose target has one of these name keys (`linkkey.py`)."""
        return sqlite_links.links_named(self._reader(), folder, keys)

    def tree_of(self, path: str) -> Node | None:
        """The section tree of an indexed document, or None."""
        row = (
            self._reader()
            .execute("SELECT t.tree FROM trees t JOIN files f ON f.id = t.file_id WHERE f.path = ?", (path,))
            .fetchone()
        )
        return Node.from_json(json.loads(row[0])) if row else None

    def document_tokens(self, flt: FileFilter) -> dict[str, int]:
        """Path → estimated tokens of each document under the filter (what reading it whole costs)."""
        where, params = self.file_filter_sql(flt)
        rows = self._reader().execute(
            f"SELECT f.path, coalesce(t.tokens, 0) FROM files f LEFT JOIN trees t ON t.file_id = f.id"
            f" WHERE f.id IN (SELECT id FROM files WHERE {where})",
            params,
        )
        return {str(p): int(n) for p, n in rows}

    def chunk_ids_of_files(self, file_ids: Sequence[int]) -> list[tuple[int, int]]:
        """(chunk id, file id) for the given files."""
        rows = self._reader().execute(
            "SELECT id, file_id FROM chunks WHERE file_id IN (SELECT value FROM json_each(?))",
            (json.dumps([int(i) for i in file_ids]),),
        )
        return [(int(a), int(b)) for a, b in rows]

    def query_documents(
        self, where: Cond, sort: tuple[SortKey, ...], limit: int, offset: int
    ) -> tuple[int, list[FileRecord], dict[int, dict[str, str]]]:
        count_sql, count_params, page_sql, page_params = query_sql(SQLITE, where, sort, limit, offset)
        with self.read_snapshot():
            total = int(self._reader().execute(count_sql, count_params).fetchall()[0][0])
            files = [file_record(r) for r in self._reader().execute(page_sql, page_params).fetchall()]
            if not files:
                return total, [], {}
            sql, params = props_sql(SQLITE, [f.id for f in files])
            return total, files, props_by_file(self._reader().execute(sql, params).fetchall())

    def file_chunk_counts(self, flt: FileFilter) -> list[tuple[str, int]]:
        where, params = self.file_filter_sql(flt)
        rows = self._reader().execute(
            f"SELECT path, chunk_count FROM files WHERE {where} ORDER BY path", params
        )
        return [(str(p), int(c)) for p, c in rows]

    # -- vectors for the dense matrix --------------------------------------------------------------

    def vectors_after(
        self, conn: sqlite3.Connection, after_id: int, batch: int = 8192
    ) -> Iterator[list[tuple[int, int, bytes]]]:
        cur = conn.execute("SELECT id, file_id, emb FROM vecs WHERE id > ? ORDER BY id", (after_id,))
        while True:
            rows = cur.fetchmany(batch)
            if not rows:
                return
            yield rows

    def vector_bytes_after(self, conn: sqlite3.Connection, after_id: int) -> int:
        row = conn.execute("SELECT sum(length(emb)) FROM vecs WHERE id > ?", (after_id,)).fetchone()
        return int(row[0] or 0)

    def deleted_after(self, conn: sqlite3.Connection, after_seq: int) -> tuple[list[int], int]:
        rows = conn.execute(
            "SELECT seq, chunk_id FROM deleted_log WHERE seq > ? ORDER BY seq", (after_seq,)
        ).fetchall()
        last = int(rows[-1][0]) if rows else after_seq
        return [int(r[1]) for r in rows], last

    def pruned_through(self, conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT value FROM meta WHERE key = 'deleted_log_pruned_through'").fetchone()
        return int(row[0]) if row else 0

    def max_deleted_seq(self, conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT max(seq) FROM deleted_log").fetchone()
        return int(row[0] or 0)
