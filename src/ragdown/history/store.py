"""The version history of one docs dir: every version of every document, beside the documents.

Not derived data: it lives in `<docs dir>/.ragdown/history.sqlite` (a dot-folder the indexer and Obsidian
skip), so deleting the data dir loses none of it. Content-addressed: a version's bytes are stored once per
hash, zlib-compressed, shared by every version (and document) with those bytes. WAL mode and a busy timeout
make it safe for several processes (a primary and its readers) recording at once; each record is one short
transaction.

A document is followed by an id, not by its path: a move keeps its versions under the new path, a delete
puts it in the trash (its versions stay, and it can be restored). Versions are numbered per document from 1.
One document per path, live or deleted (a unique index says so), so every version is reachable by its
document's path: a name written again goes on with the history it had, and a deleted document whose path
something else takes (a document or folder moved there, a file renamed there outside) stays in the trash
under a free name beside it, `name (earlier).md` (`earlier 2`, …), where it can be read and restored.
Retention: every version of the last `keep_days`, and at least the last `keep` of each document; blobs no
version uses any more are dropped; a document in the trash longer than `trash_days` (when set) is forgotten.

What is dropped is gone from the file, not just from the tables: `secure_delete` overwrites the deleted
rows' bytes in their pages, and a checkpoint after each purge or prune carries those pages into the
database and empties the WAL, which held the old ones (`_flush`). `purge` and `purge_under` forget a
document, or everything under a folder (or only its trash), for good: the write door's `purge`.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import sqlite3
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdown.core.atomic import sha256_hex
from ragdown.core.paths import NAME_MAX
from ragdown.history import forget

log = logging.getLogger(__name__)

HISTORY_DIR = ".ragdown"
HISTORY_FILE = "history.sqlite"
SCHEMA_VERSION = 2  # 2: one document per path (`docs_one_path`); 1's paths shared by several are set apart
_SIDECARS = ("-wal", "-shm", "-journal")  # SQLite's files beside the database, with its text in them

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS blobs(hash TEXT PRIMARY KEY, size INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS docs(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  path TEXT NOT NULL,
  deleted_at REAL
);
CREATE TABLE IF NOT EXISTS versions(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  doc_id INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  path TEXT NOT NULL,
  hash TEXT NOT NULL,
  size INTEGER NOT NULL,
  lines INTEGER NOT NULL,
  at REAL NOT NULL,
  who TEXT NOT NULL,
  session TEXT,
  event TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS versions_doc ON versions(doc_id, seq);
CREATE INDEX IF NOT EXISTS versions_hash ON versions(hash);
CREATE INDEX IF NOT EXISTS versions_at ON versions(at);
"""


@dataclass(frozen=True)
class Version:
    """One recorded version of a document."""

    id: int  # unique in the docs dir (ReadmeDB's version id)
    doc_id: int
    version: int  # 1, 2, … per document
    path: str  # the document's path when this version was made (docs-relative)
    hash: str
    size: int
    lines: int
    at: float  # seconds since the epoch
    who: str  # a tool's name, `web`, `api`, `external`, `restore`, …
    session: str | None
    event: str  # `created`, `changed`, `moved`, `deleted`, `restored`, `original`


@dataclass(frozen=True)
class TrashEntry:
    doc_id: int
    path: str
    deleted_at: float
    last: Version


def count_lines(data: bytes) -> int:
    """Lines as editors count them: a final line break does not start another line."""
    if not data:
        return 0
    n = data.count(b"\n")
    return n if data.endswith(b"\n") else n + 1


def _version(row: tuple[Any, ...]) -> Version:
    return Version(
        id=int(row[0]),
        doc_id=int(row[1]),
        version=int(row[2]),
        path=str(row[3]),
        hash=str(row[4]),
        size=int(row[5]),
        lines=int(row[6]),
        at=float(row[7]),
        who=str(row[8]),
        session=str(row[9]) if row[9] is not None else None,
        event=str(row[10]),
    )


_VERSION_COLS = "id, doc_id, seq, path, hash, size, lines, at, who, session, event"


class HistoryStore:
    """The history file of one docs dir; one connection per thread, every write one IMMEDIATE transaction."""

    def __init__(
        self, docs_dir: Path, *, keep_days: float = 30.0, keep: int = 20, trash_days: float | None = None
    ) -> None:
        self.docs_dir = docs_dir
        self.path = docs_dir / HISTORY_DIR / HISTORY_FILE
        self.keep_days = keep_days
        self.keep = keep
        self.trash_days = trash_days
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._pruned_at = 0.0

    # -- connections -------------------------------------------------------------------------------

    @property
    def exists(self) -> bool:
        return self.path.is_file()

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection; the file (and its dot-folder) is made by the first one, lazily, so a
        folder nobody changed through ragdown never gets one."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            self.path.parent.mkdir(mode=0o700, exist_ok=True)
            self._owner_only()
            conn = sqlite3.connect(
                str(self.path), isolation_level=None, check_same_thread=False, timeout=30.0
            )
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA secure_delete=ON")  # a dropped version's text is overwritten, not left
            conn.executescript(_SCHEMA)
            conn.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
            self._one_doc_per_path(conn)
            self._owner_only(sidecars=True)
            self._local.conn = conn
            with self._lock:
                self._conns.append(conn)
        return conn

    def _owner_only(self, *, sidecars: bool = False) -> None:
        """Every file of the history is 0600: it holds every version's text. SQLite gives the `-wal` and
        `-shm` files it makes the main file's mode, so the main file is made (empty, which SQLite takes
        for a new database) or set 0600 before SQLite opens it. `sidecars`: those already there (made by
        an older ragdown while another process kept them open) are set 0600 too."""
        with contextlib.suppress(OSError):  # there already (or unwritable: SQLite says so)
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        names = [self.path]
        if sidecars:
            names += [self.path.with_name(self.path.name + suffix) for suffix in _SIDECARS]
        for name in names:
            with contextlib.suppress(OSError):  # absent, or another user's
                if name.stat().st_mode & 0o077:
                    name.chmod(0o600)

    def _one_doc_per_path(self, conn: sqlite3.Connection) -> None:
        """The unique index that keeps one document per path, made once. A history an older ragdown wrote may
        hold several documents at one path (a document moved onto a deleted one's path), of which only one
        was reachable: the one found there stays (the live one, else the last deleted), the others are set
        apart in the trash under free names, reachable again."""
        made = "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'docs_one_path'"
        if conn.execute(made).fetchone() is not None:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute(made).fetchone() is None:  # another process may have made it meanwhile
                shared = conn.execute("SELECT path FROM docs GROUP BY path HAVING count(*) > 1").fetchall()
                for (path,) in shared:
                    ids = conn.execute(
                        "SELECT id FROM docs WHERE path = ? ORDER BY deleted_at IS NOT NULL, deleted_at DESC",
                        (path,),
                    ).fetchall()
                    for (doc_id,) in ids[1:]:
                        apart = self._free_name(conn, str(path))
                        conn.execute("UPDATE docs SET path = ? WHERE id = ?", (apart, doc_id))
                        log.warning("a deleted document at %s is in the trash as %s", path, apart)
                conn.execute("DROP INDEX IF EXISTS docs_live")  # what version 1 kept unique: live paths only
                conn.execute("DROP INDEX IF EXISTS docs_path")
                conn.execute("CREATE UNIQUE INDEX docs_one_path ON docs(path)")
                conn.execute(
                    "UPDATE meta SET value = ? WHERE key = 'schema_version' AND CAST(value AS INTEGER) < ?",
                    (str(SCHEMA_VERSION), SCHEMA_VERSION),
                )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            for conn in self._conns:
                conn.close()
            self._conns.clear()
        self._local = threading.local()

    # -- recording ---------------------------------------------------------------------------------

    def _live_doc(self, conn: sqlite3.Connection, path: str) -> int | None:
        row = conn.execute("SELECT id FROM docs WHERE path = ? AND deleted_at IS NULL", (path,)).fetchone()
        return int(row[0]) if row else None

    def _free_name(self, conn: sqlite3.Connection, path: str) -> str:
        """A name beside `path` for a deleted document that must leave it: `name (earlier).md`, then
        `name (earlier 2).md`, …, the first that no document has and nothing on disk holds (a restore writes
        it there); the stem shortened where the name would pass `NAME_MAX`."""
        folder, slash, name = path.rpartition("/")
        stem, dot, ext = name.rpartition(".")
        if not dot or not stem:
            stem, ext = name, ""
        for n in itertools.count(1):
            label = " (earlier)" if n == 1 else f" (earlier {n})"
            tail = label + (f".{ext}" if ext else "")
            short = stem
            while short and len((short + tail).encode("utf-8")) > NAME_MAX:
                short = short[:-1]
            candidate = folder + slash + short + tail
            taken = conn.execute("SELECT 1 FROM docs WHERE path = ?", (candidate,)).fetchone() is not None
            if not taken and not os.path.lexists(self.docs_dir / candidate):
                return candidate
        raise AssertionError("unreachable")  # itertools.count never ends

    def _vacate(self, conn: sqlite3.Connection, path: str, now: float, apart: list[tuple[str, str]]) -> None:
        """Make `path` free for another document: the one followed there (deleted; or live in the history while
        its file is gone, which a move over it shows) goes to the trash under a free name beside it, so its
        versions stay reachable. `apart` gets (path, the name it has now)."""
        row = conn.execute("SELECT id FROM docs WHERE path = ?", (path,)).fetchone()
        if row is None:
            return
        new = self._free_name(conn, path)
        conn.execute(
            "UPDATE docs SET path = ?, deleted_at = coalesce(deleted_at, ?) WHERE id = ?", (new, now, row[0])
        )
        apart.append((path, new))

    def _latest(self, conn: sqlite3.Connection, doc_id: int) -> Version | None:
        row = conn.execute(
            f"SELECT {_VERSION_COLS} FROM versions WHERE doc_id = ? ORDER BY seq DESC LIMIT 1", (doc_id,)
        ).fetchone()
        return _version(row) if row else None

    def _add(
        self,
        conn: sqlite3.Connection,
        doc_id: int,
        path: str,
        data: bytes,
        *,
        who: str,
        session: str | None,
        event: str,
        at: float,
    ) -> Version:
        digest = sha256_hex(data)
        conn.execute(
            "INSERT OR IGNORE INTO blobs(hash, size, data) VALUES (?, ?, ?)",
            (digest, len(data), zlib.compress(data, 6)),
        )
        row = conn.execute(
            "SELECT coalesce(max(seq), 0) FROM versions WHERE doc_id = ?", (doc_id,)
        ).fetchone()
        seq = int(row[0]) + 1
        cur = conn.execute(
            "INSERT INTO versions(doc_id, seq, path, hash, size, lines, at, who, session, event)"
            " VALUES (?,?,?,?,?,?,?,?,?,?)",
            (doc_id, seq, path, digest, len(data), count_lines(data), at, who, session, event),
        )
        return Version(
            int(cur.lastrowid or 0),
            doc_id,
            seq,
            path,
            digest,
            len(data),
            count_lines(data),
            at,
            who,
            session,
            event,
        )

    def _doc_for(self, conn: sqlite3.Connection, path: str) -> tuple[int, bool]:
        """The document at `path`, live again if it was deleted (a name used again goes on with the history it
        had, so its earlier versions stay reachable by that name); else a new one. With whether it came back
        from the trash."""
        row = conn.execute("SELECT id, deleted_at FROM docs WHERE path = ?", (path,)).fetchone()
        if row is not None:
            if row[1] is None:
                return int(row[0]), False
            conn.execute("UPDATE docs SET deleted_at = NULL WHERE id = ?", (int(row[0]),))
            return int(row[0]), True
        cur = conn.execute("INSERT INTO docs(path) VALUES (?)", (path,))
        return int(cur.lastrowid or 0), False

    def record(
        self,
        path: str,
        data: bytes,
        *,
        who: str,
        session: str | None = None,
        event: str = "changed",
        before: bytes | None = None,
        before_at: float | None = None,
    ) -> Version | None:
        """Record `data` as the newest version of `path`; None when it already is (same hash).

        `before`, the bytes the file held until this change, is recorded first when the document has no
        history yet, so the first change through ragdown can be undone too (event `original`, dated
        `before_at`, when those bytes were written, where known).
        """
        now = time.time()
        original_at = min(before_at, now) if before_at is not None else now
        with self._write() as conn:
            doc_id, revived = self._doc_for(conn, path)
            latest = self._latest(conn, doc_id)
            if latest is None and before is not None and sha256_hex(before) != sha256_hex(data):
                self._add(
                    conn, doc_id, path, before, who="before", session=None, event="original", at=original_at
                )
            elif (
                latest is not None and latest.hash == sha256_hex(data) and event != "restored" and not revived
            ):
                return (
                    None  # the same bytes again (a restore is always said: it may bring a deleted one back)
                )
            version = self._add(conn, doc_id, path, data, who=who, session=session, event=event, at=now)
        self._maybe_prune()
        return version

    def record_delete(
        self,
        path: str,
        data: bytes | None,
        *,
        who: str,
        session: str | None = None,
        before_at: float | None = None,
    ) -> bool:
        """Put `path` in the trash: its last bytes recorded (when known and new; an original dated `before_at`,
        when they were written), the document marked deleted. False when there is nothing to keep (no history
        and no bytes)."""
        now = time.time()
        original_at = min(before_at, now) if before_at is not None else now
        with self._write() as conn:
            doc_id = self._live_doc(conn, path)
            if doc_id is None and data is None:
                return False
            if doc_id is None:
                doc_id, _ = self._doc_for(conn, path)
            latest = self._latest(conn, doc_id)
            if data is not None and latest is None:  # never changed through ragdown: its text as it was
                latest = self._add(
                    conn, doc_id, path, data, who="before", session=None, event="original", at=original_at
                )
            elif data is not None and latest is not None and latest.hash != sha256_hex(data):
                latest = self._add(
                    conn, doc_id, path, data, who="external", session=None, event="changed", at=now
                )
            if latest is not None:  # who deleted it, and when: a version of the last bytes, marked deleted
                conn.execute(
                    "INSERT INTO versions(doc_id, seq, path, hash, size, lines, at, who, session, event)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (doc_id, latest.version + 1, path, latest.hash, latest.size, latest.lines, now, who, session,
                     "deleted"),
                )  # fmt: skip
            conn.execute("UPDATE docs SET deleted_at = ? WHERE id = ?", (now, doc_id))
        self._maybe_prune()
        return True

    def record_move(
        self, src: str, dst: str, *, who: str, session: str | None = None
    ) -> list[tuple[str, str]]:
        """`src` is now `dst` (a document, or every document under a folder `src/`, its trash too): its history
        follows. A document the history followed where one moved in (deleted, or live while its file is gone)
        is another one: it stays in the trash under a free name beside it (`_vacate`). Returns those, as
        (path, the name it has now)."""
        apart: list[tuple[str, str]] = []
        with self._write() as conn:
            now = time.time()
            rows = conn.execute(
                "SELECT id, path, deleted_at FROM docs WHERE path = ? OR (path >= ? AND path < ?)",
                (src, src + "/", src + "0"),
            ).fetchall()
            # The live document at `src`, or each one under the folder `src/` with the folder's trash (a
            # document's own earlier lives, deleted at `src`, stay where they were).
            moving = [(int(i), str(p), d is None) for i, p, d in rows if p != src or d is None]
            for doc_id, _old, _live in moving:  # out of the way first, so no two share a path meanwhile
                conn.execute("UPDATE docs SET path = ? WHERE id = ?", (f"/moving/{doc_id}", doc_id))
            self._vacate(conn, dst, now, apart)
            for doc_id, old, live in moving:
                new = dst + old[len(src) :]
                self._vacate(conn, new, now, apart)
                conn.execute("UPDATE docs SET path = ? WHERE id = ?", (new, doc_id))
                latest = self._latest(conn, doc_id) if live else None
                if latest is not None:
                    conn.execute(
                        "INSERT INTO versions(doc_id, seq, path, hash, size, lines, at, who, session, event)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?)",
                        (doc_id, latest.version + 1, new, latest.hash, latest.size, latest.lines, now, who,
                         session, "moved"),
                    )  # fmt: skip
            # A folder moved where one was deleted: a deleted document there whose path a moved file (with no
            # history of its own) now holds is another document too.
            moved = {doc_id for doc_id, _old, _live in moving}
            for doc_id, path in conn.execute(
                "SELECT id, path FROM docs WHERE deleted_at IS NOT NULL AND path >= ? AND path < ?",
                (dst + "/", dst + "0"),
            ).fetchall():
                if int(doc_id) not in moved and os.path.lexists(self.docs_dir / str(path)):
                    self._vacate(conn, str(path), now, apart)
        return apart

    # -- reading -----------------------------------------------------------------------------------

    def versions(self, doc_id: int) -> list[Version]:
        """Newest first."""
        if not self.exists:
            return []
        rows = self._conn().execute(
            f"SELECT {_VERSION_COLS} FROM versions WHERE doc_id = ? ORDER BY seq DESC", (doc_id,)
        )
        return [_version(r) for r in rows]

    def find_doc(self, path: str, *, deleted: bool | None = None) -> int | None:
        """The document followed at `path`: the live one, else (unless `deleted=False`) the newest trashed one."""
        if not self.exists:
            return None
        conn = self._conn()
        if deleted is not True:
            doc_id = self._live_doc(conn, path)
            if doc_id is not None:
                return doc_id
        if deleted is False:
            return None
        row = conn.execute(
            "SELECT id FROM docs WHERE path = ? AND deleted_at IS NOT NULL ORDER BY deleted_at DESC LIMIT 1",
            (path,),
        ).fetchone()
        return int(row[0]) if row else None

    def is_deleted(self, doc_id: int) -> bool:
        row = self._conn().execute("SELECT deleted_at FROM docs WHERE id = ?", (doc_id,)).fetchone()
        return row is not None and row[0] is not None

    def version(self, doc_id: int, number: int) -> Version | None:
        row = (
            self._conn()
            .execute(f"SELECT {_VERSION_COLS} FROM versions WHERE doc_id = ? AND seq = ?", (doc_id, number))
            .fetchone()
        )
        return _version(row) if row else None

    def by_id(self, version_id: int) -> Version | None:
        row = (
            self._conn()
            .execute(f"SELECT {_VERSION_COLS} FROM versions WHERE id = ?", (version_id,))
            .fetchone()
        )
        return _version(row) if row else None

    def data(self, version: Version) -> bytes:
        row = self._conn().execute("SELECT data FROM blobs WHERE hash = ?", (version.hash,)).fetchone()
        if row is None:
            raise LookupError(f"the bytes of version {version.version} of {version.path} are missing")
        return zlib.decompress(row[0])

    def trash(self, prefix: str = "") -> list[TrashEntry]:
        """Deleted documents (under a docs-relative folder `prefix`), most recently deleted first."""
        if not self.exists:
            return []
        conn = self._conn()
        sql = "SELECT id, path, deleted_at FROM docs WHERE deleted_at IS NOT NULL"
        params: list[object] = []
        if prefix:
            sql += " AND path >= ? AND path < ?"
            params += [prefix.rstrip("/") + "/", prefix.rstrip("/") + "0"]
        out: list[TrashEntry] = []
        for doc_id, path, deleted_at in conn.execute(sql + " ORDER BY deleted_at DESC", params).fetchall():
            latest = self._latest(conn, int(doc_id))
            if latest is not None:
                out.append(TrashEntry(int(doc_id), str(path), float(deleted_at), latest))
        return out

    def changed_since(self, since: float, prefix: str = "") -> dict[str, Version]:
        """Path → newest version recorded since `since`, for live documents under `prefix`."""
        if not self.exists:
            return {}
        sql = (
            f"SELECT {', '.join('v.' + c.strip() for c in _VERSION_COLS.split(','))} FROM versions v"
            " JOIN docs d ON d.id = v.doc_id WHERE v.at >= ? AND d.deleted_at IS NULL"
        )
        params: list[object] = [since]
        if prefix:
            sql += " AND d.path >= ? AND d.path < ?"
            params += [prefix.rstrip("/") + "/", prefix.rstrip("/") + "0"]
        out: dict[str, Version] = {}
        for row in self._conn().execute(sql + " ORDER BY v.at", params):
            v = _version(row)
            out[v.path] = v
        return out

    def recorded(
        self, since: float, *, after_id: int = 0, prefix: str = "", limit: int = 200
    ) -> list[Version]:
        """Versions recorded at or after `since` with an id above `after_id`, newest first, of live and deleted
        documents, whose path is under the docs-relative `prefix`; the `original` snapshots (what a file was
        before its first recorded change) are no change and left out."""
        if not self.exists:
            return []
        sql = f"SELECT {_VERSION_COLS} FROM versions WHERE at >= ? AND id > ? AND event <> 'original'"
        params: list[object] = [since, after_id]
        if prefix:
            sql += " AND path >= ? AND path < ?"
            params += [prefix.rstrip("/") + "/", prefix.rstrip("/") + "0"]
        rows = self._conn().execute(sql + " ORDER BY at DESC, id DESC LIMIT ?", [*params, limit])
        return [_version(r) for r in rows]

    def size_bytes(self) -> int:
        if not self.path.parent.is_dir():
            return 0
        return sum(p.stat().st_size for p in self.path.parent.glob(HISTORY_FILE + "*") if p.is_file())

    # -- retention ---------------------------------------------------------------------------------

    def _maybe_prune(self) -> None:
        now = time.monotonic()
        if now - self._pruned_at < 60:
            return
        self._pruned_at = now
        try:
            self.prune()
        except sqlite3.Error as err:  # retention can wait for the next write
            log.warning("pruning the history failed: %s", err)

    def prune(self, now: float | None = None) -> int:
        """Drop versions older than `keep_days` beyond the newest `keep` of each document, and every version
        of a document in the trash longer than `trash_days` (when set); then unused blobs. Returns how many
        versions were dropped (`forget.prune`)."""
        at = time.time() if now is None else now
        with self._write() as conn:
            dropped = forget.prune(conn, at, self.keep_days, self.keep, self.trash_days)
        if dropped:
            forget.flush(self._conn())
        return dropped

    def purge(self, path: str) -> bool:
        """Forget the document followed at `path`, live or in the trash, for good; False when none is
        followed there (`forget.purge`)."""
        if not self.exists:
            return False
        with self._write() as conn:
            found = forget.purge(conn, path)
        if found:
            forget.flush(self._conn())
        return found

    def purge_under(self, prefix: str, *, trash_only: bool = False) -> list[str]:
        """Forget every document under a folder, or only its trash, for good (`forget.purge_under`)."""
        if not prefix.strip("/"):
            raise ValueError("name a folder to purge under")
        if not self.exists:
            return []
        with self._write() as conn:
            paths = forget.purge_under(conn, prefix, trash_only=trash_only)
        if paths:
            forget.flush(self._conn())
        return paths
