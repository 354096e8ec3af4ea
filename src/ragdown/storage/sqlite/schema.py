"""The SQLite index's tables, full-text tables and triggers, and opening the file: made on first use, an older
`INDEX_VERSION` dropped whole, the word table rebuilt when the lexical rules change."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from ragdown.documents.model import Document
from ragdown.storage.lexical import SQL_FUNCTION as LEXICAL_SQL_FUNCTION
from ragdown.storage.lexical import lexical_text
from ragdown.storage.lexical import signature as lexical_signature
from ragdown.storage.properties import property_rows
from ragdown.storage.records import INDEX_VERSION

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  path TEXT NOT NULL UNIQUE,
  folder TEXT NOT NULL,
  size INTEGER NOT NULL,
  stat_mtime_ns INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  hash TEXT NOT NULL,
  title TEXT NOT NULL,
  description TEXT,
  created_by TEXT,
  session TEXT,
  tags TEXT NOT NULL,
  aliases TEXT NOT NULL,
  supersedes TEXT NOT NULL,
  chunk_count INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS files_folder ON files(folder);
CREATE TABLE IF NOT EXISTS chunks(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  file_id INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  heading TEXT NOT NULL,
  breadcrumb TEXT NOT NULL,
  text TEXT NOT NULL,
  aliases TEXT NOT NULL,
  node_id TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE TABLE IF NOT EXISTS links(
  file_id INTEGER NOT NULL,
  key TEXT NOT NULL,
  line INTEGER NOT NULL,
  text TEXT NOT NULL,
  kind TEXT NOT NULL,
  raw TEXT NOT NULL,
  target TEXT NOT NULL,
  anchor TEXT
);
CREATE INDEX IF NOT EXISTS links_file ON links(file_id);
CREATE INDEX IF NOT EXISTS links_key ON links(key);
CREATE TABLE IF NOT EXISTS props(file_id INTEGER NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL, text TEXT,
  low TEXT, num REAL, value TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS props_file ON props(file_id);
CREATE INDEX IF NOT EXISTS props_num ON props(key, kind, num, file_id);
CREATE INDEX IF NOT EXISTS props_text ON props(key, text, kind, file_id);
CREATE INDEX IF NOT EXISTS props_sort ON props(key, file_id, num, text, low, kind);
CREATE TABLE IF NOT EXISTS trees(file_id INTEGER PRIMARY KEY, tokens INTEGER NOT NULL, tree TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS vecs(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, emb BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS deleted_log(seq INTEGER PRIMARY KEY AUTOINCREMENT, chunk_id INTEGER NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS skipped(path TEXT PRIMARY KEY, size INTEGER NOT NULL, stat_mtime_ns INTEGER NOT NULL,
  reason TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
  breadcrumb, text, aliases, content='chunks', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_tri USING fts5(
  breadcrumb, text, aliases, content='chunks', content_rowid='id', tokenize='trigram'
);
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
  INSERT INTO chunks_fts(chunks_fts, rowid, breadcrumb, text, aliases) VALUES ('delete', old.id,
    ragdown_lexical(old.breadcrumb), ragdown_lexical(old.text), ragdown_lexical(old.aliases));
  INSERT INTO chunks_tri(chunks_tri, rowid, breadcrumb, text, aliases) VALUES ('delete', old.id,
    old.breadcrumb, old.text, old.aliases);
  DELETE FROM vecs WHERE id = old.id;
  INSERT INTO deleted_log(chunk_id, at) VALUES (old.id, (julianday('now') - 2440587.5) * 86400.0);
END;
"""


# The FTS rows are the chunks' text as BM25 reads it (`lexical.py`: CJK runs as words, bigrams and
# characters; symbol names joined); `chunks_tri` holds the raw text's trigrams for substring look-ups. The
# store writes both with each batch of new chunks (`FTS_INSERT`, `TRI_INSERT`: one `executemany` each, about
# twice as fast as an insert trigger firing per row); the delete trigger removes them. An index whose
# triggers predate either table (or still have the insert trigger), or whose tokens were made by other rules
# or another segmenter (`lexical.signature()`, kept in `meta` under `lexical`), is given new triggers and
# re-tokenised FTS tables when a primary opens it: the delete trigger must produce the very tokens the
# insert did.
FTS_INSERT = (
    "INSERT INTO chunks_fts(rowid, breadcrumb, text, aliases) VALUES (?, ragdown_lexical(?), ragdown_lexical(?),"
    " ragdown_lexical(?))"
)
TRI_INSERT = "INSERT INTO chunks_tri(rowid, breadcrumb, text, aliases) VALUES (?, ?, ?, ?)"
FTS_RESET = """
DROP TRIGGER IF EXISTS chunks_ai;
DROP TRIGGER IF EXISTS chunks_ad;
DROP TABLE IF EXISTS chunks_fts;
DROP TABLE IF EXISTS chunks_tri;
"""
FTS_FILL = (
    "INSERT INTO chunks_fts(rowid, breadcrumb, text, aliases) SELECT id, ragdown_lexical(breadcrumb),"
    " ragdown_lexical(text), ragdown_lexical(aliases) FROM chunks"
)
TRI_FILL = "INSERT INTO chunks_tri(rowid, breadcrumb, text, aliases) SELECT id, breadcrumb, text, aliases FROM chunks"
LEXICAL_KEY = "lexical"


def refill_fts(conn: sqlite3.Connection) -> None:
    """Both FTS tables emptied and filled again from `chunks` (inside the caller's transaction)."""
    conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all')")
    conn.execute("INSERT INTO chunks_tri(chunks_tri) VALUES ('delete-all')")
    conn.execute(FTS_FILL)
    conn.execute(TRI_FILL)
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (LEXICAL_KEY, lexical_signature()))


def write_properties(conn: sqlite3.Connection, file_id: int, doc: Document) -> None:
    """A file's `props` rows (`storage/properties.py`), its old ones deleted."""
    conn.execute("DELETE FROM props WHERE file_id = ?", (file_id,))
    conn.executemany(
        "INSERT INTO props(file_id, key, kind, text, low, num, value) VALUES (?,?,?,?,?,?,?)",
        [(file_id, *row) for row in property_rows(doc.meta.properties, doc.path)],
    )


# Page cache per connection, in KiB: the writer's is large (a sync's inserts and FTS merges reuse pages); a
# reader's is small, as every thread that searches gets a reader of its own and the OS caches the file
# anyway. No connection maps the file (`mmap_size=0`): mapped pages a query touched count in the process's
# VmRSS until it ends, so at 10,000 notes a server that had searched held ~380 MB of the index's file in
# its memory figures (section 28 of docs/benchmarks.md); read through the page cache, they do not.
WRITER_CACHE_KIB = 65536
READER_CACHE_KIB = 8192
# The page size of a new index file (an existing one keeps its own). A vector row is ~1.5 KB (384 float32):
# a 4 KiB page holds two and leaves a quarter empty, an 8 KiB page holds five; at 10,000 notes the file is
# 41 MB (7%) smaller with nothing else changed (docs/benchmarks.md, section 32).
PAGE_SIZE = 8192


def connect(path: Path, *, readonly: bool = False, reader: bool = False) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30.0)
    conn.execute("PRAGMA busy_timeout=30000")
    if not readonly:
        conn.execute(f"PRAGMA page_size={PAGE_SIZE}")  # before WAL: only a new, empty file takes it
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA cache_size=-{READER_CACHE_KIB if reader else WRITER_CACHE_KIB}")
    conn.execute("PRAGMA mmap_size=0")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.create_function(LEXICAL_SQL_FUNCTION, 1, lexical_text, deterministic=True)
    return conn


def has_schema(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'files'"
    ).fetchone()
    return bool(row and row[0])


def drop_if_older(conn: sqlite3.Connection) -> None:
    """An index of another `INDEX_VERSION` may have other tables: it is dropped whole (it is derived, and the
    sync rebuilds it). Nothing is ever migrated."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'index_version'").fetchone()
    except sqlite3.OperationalError:
        return  # a new index
    if row is None or str(row[0]) == str(INDEX_VERSION):
        return
    log.info("the index was built by another version of ragdown (%s): rebuilding it", row[0])
    names = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'trigger') AND name NOT LIKE 'sqlite_%'"
        " AND name NOT LIKE 'chunks_fts_%'"
    ).fetchall()
    for kind, name in sorted(names, key=lambda r: r[0] != "trigger"):
        conn.execute(f'DROP {"TRIGGER" if kind == "trigger" else "TABLE"} IF EXISTS "{name}"')


def ensure_lexical_fts(conn: sqlite3.Connection) -> None:
    """Give an index whose FTS tables predate these triggers or these tokens new ones, re-tokenised (once)."""
    triggers = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall())
    made_by = conn.execute("SELECT value FROM meta WHERE key = ?", (LEXICAL_KEY,)).fetchone()
    delete = str(triggers.get("chunks_ad", ""))
    # `chunks_ai` is the insert trigger of earlier versions: left in place it would index every chunk twice.
    current = LEXICAL_SQL_FUNCTION in delete and "chunks_tri" in delete and "chunks_ai" not in triggers
    if current and made_by is not None and made_by[0] == lexical_signature():
        return
    if conn.execute("SELECT EXISTS (SELECT 1 FROM chunks)").fetchone()[0]:  # a new index has nothing to redo
        log.info("re-tokenising the full-text index (%s)", lexical_signature())
    if not current:
        conn.executescript(FTS_RESET + SCHEMA)
    conn.execute("BEGIN IMMEDIATE")
    try:
        refill_fts(conn)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
