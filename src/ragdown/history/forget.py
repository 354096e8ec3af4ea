"""Forgetting: what the history drops is gone from its file, not just from its tables.

Retention (`prune`: versions past `keep_days` beyond each document's newest `keep`, documents in the trash
past `trash_days`) and deleting for good (`purge`, `purge_under`: the write door's `purge`) delete rows;
the store's connections run with `secure_delete`, so SQLite overwrites the deleted rows' bytes in their
pages, and `flush` checkpoints after each of them, carrying those pages into the database file and
emptying the WAL, which still held the pages as they were. A blob (a version's compressed bytes) goes with
the last version that uses it; one another document's version uses stays, as that document's.
"""

from __future__ import annotations

import logging
import sqlite3

log = logging.getLogger(__name__)

_OLD = (
    "FROM versions WHERE at < ? AND id NOT IN (SELECT id FROM (SELECT id, row_number() OVER"
    " (PARTITION BY doc_id ORDER BY seq DESC) AS rank FROM versions) WHERE rank <= ?)"
)


def prune(conn: sqlite3.Connection, now: float, keep_days: float, keep: int, trash_days: float | None) -> int:
    """In a write transaction: drop versions older than `keep_days` beyond the newest `keep` of each
    document, and every version of a document in the trash longer than `trash_days` (when set); then the
    blobs they alone used. Returns how many versions were dropped."""
    cutoff = now - keep_days * 86400
    hashes = {str(h) for (h,) in conn.execute(f"SELECT DISTINCT hash {_OLD}", (cutoff, keep))}
    dropped = max(0, conn.execute(f"DELETE {_OLD}", (cutoff, keep)).rowcount)
    if trash_days is not None:
        old = conn.execute(
            "SELECT id FROM docs WHERE deleted_at IS NOT NULL AND deleted_at < ?", (now - trash_days * 86400,)
        ).fetchall()
        dropped += drop(conn, [int(i) for (i,) in old])
    drop_blobs(conn, hashes)
    return dropped


def purge(conn: sqlite3.Connection, path: str) -> bool:
    """In a write transaction: forget the document followed at `path` (live or in the trash) for good, every
    version of it and the bytes no other version has. False when none is followed there."""
    row = conn.execute("SELECT id FROM docs WHERE path = ?", (path,)).fetchone()
    if row is None:
        return False
    drop(conn, [int(row[0])])
    return True


def purge_under(conn: sqlite3.Connection, prefix: str, *, trash_only: bool = False) -> list[str]:
    """In a write transaction: forget every document under the folder `prefix` (docs-relative, not empty)
    for good, live or in the trash; only those in the trash with `trash_only` (a folder's trash emptied).
    Their paths."""
    folder = prefix.strip("/")
    if not folder:
        raise ValueError("name a folder to purge under")
    sql = "SELECT id, path FROM docs WHERE path >= ? AND path < ?"
    if trash_only:
        sql += " AND deleted_at IS NOT NULL"
    rows = conn.execute(sql + " ORDER BY path", (folder + "/", folder + "0")).fetchall()
    drop(conn, [int(i) for i, _ in rows])
    return [str(p) for _, p in rows]


def drop(conn: sqlite3.Connection, doc_ids: list[int]) -> int:
    """Delete these documents, all their versions and the blobs only they used; how many versions."""
    dropped = 0
    for doc_id in doc_ids:
        hashes = {str(h) for (h,) in conn.execute("SELECT hash FROM versions WHERE doc_id = ?", (doc_id,))}
        dropped += max(0, conn.execute("DELETE FROM versions WHERE doc_id = ?", (doc_id,)).rowcount)
        conn.execute("DELETE FROM docs WHERE id = ?", (doc_id,))
        drop_blobs(conn, hashes)
    return dropped


def drop_blobs(conn: sqlite3.Connection, hashes: set[str]) -> None:
    """The blobs of `hashes` that no version uses any more."""
    for digest in hashes:
        conn.execute(
            "DELETE FROM blobs WHERE hash = ? AND NOT EXISTS (SELECT 1 FROM versions WHERE hash = ?)",
            (digest, digest),
        )


def flush(conn: sqlite3.Connection) -> None:
    """Carry the pages a purge or prune overwrote into the database file and empty the WAL, which still held
    them as they were. A reader in another process in the middle of a read can keep the WAL's frames a
    moment longer: SQLite's next checkpoint (or the next purge's) finishes the job."""
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.Error as err:
        log.warning("the history's checkpoint after a purge failed: %s", err)
