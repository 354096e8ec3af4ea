"""The PostgreSQL index's tables (one schema per index, versioned by `PG_SCHEMA`), its columns as Python reads
and writes them, and the SQL helpers of a write transaction."""

from __future__ import annotations

from typing import Any

import psycopg

from ragdown.documents.model import Document
from ragdown.storage.postgres import tsvectors as pgsearch
from ragdown.storage.properties import property_rows
from ragdown.storage.records import StoreError

PG_SCHEMA = 3  # 2: `props` (frontmatter properties, for `ragdown_query`) and `links` (each file's links as
# written); 3: covering `props` indexes (kind in props_num/props_text, props_sort for sorts and `contains`)
MAX_VECTOR_DIM = 2000  # HNSW on `vector`; up to 4,000 on `halfvec`; past that, exact scans
MAX_HALFVEC_DIM = 4000
INDEX_TABLES = ("vecs", "chunks", "trees", "props", "links", "files", "skipped", "meta")
SCHEMA = """
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
CREATE TABLE IF NOT EXISTS links(
  id bigserial PRIMARY KEY,
  file_id bigint NOT NULL,
  key text COLLATE "C" NOT NULL,
  line integer NOT NULL,
  text text NOT NULL,
  kind text NOT NULL,
  raw text NOT NULL,
  target text NOT NULL,
  anchor text
);
CREATE INDEX IF NOT EXISTS links_file ON links(file_id);
CREATE INDEX IF NOT EXISTS links_key ON links(key);
CREATE TABLE IF NOT EXISTS props(file_id bigint NOT NULL, key text COLLATE "C" NOT NULL, kind text NOT NULL,
  text text COLLATE "C", low text COLLATE "C", num double precision, value text NOT NULL);
CREATE INDEX IF NOT EXISTS props_file ON props(file_id);
CREATE INDEX IF NOT EXISTS props_num ON props(key, kind, num, file_id);
CREATE INDEX IF NOT EXISTS props_text ON props(key, text, kind, file_id);
CREATE INDEX IF NOT EXISTS props_sort ON props(key, file_id, num, text, low, kind);
CREATE TABLE IF NOT EXISTS trees(file_id bigint PRIMARY KEY, tokens integer NOT NULL, tree text NOT NULL);
CREATE TABLE IF NOT EXISTS skipped(
  path text COLLATE "C" PRIMARY KEY, size bigint NOT NULL, stat_mtime_ns bigint NOT NULL, reason text NOT NULL
);
"""

KEEP_META = ("generation", "pg_schema", "lexical")


def text_columns(breadcrumb: str, text: str, aliases: str) -> tuple[str, int, str, str]:
    """A chunk's `tsv`, token count, `tri` and `fold` (`storage/postgres/tsvectors.py`)."""
    crumb_t, text_t, alias_t = pgsearch.lexical_tokens(breadcrumb, text, aliases)
    tsv, ntok = pgsearch.tsvector_literal(((crumb_t, "A"), (text_t, "D"), (alias_t, "B")))
    parts = [pgsearch.clean(pgsearch.fold(p)) for p in (breadcrumb, text, aliases)]
    return tsv, ntok, pgsearch.trigram_literal(parts), pgsearch.FOLD_SEPARATOR.join(parts)


def delete_chunks(conn: psycopg.Connection[Any], file_ids: list[int]) -> None:
    """Every chunk, vector, link and tree of these files; the token statistics follow."""
    if not file_ids:
        return
    if has_vecs(conn):
        conn.execute("DELETE FROM vecs WHERE file_id = ANY(%s)", (file_ids,))
    conn.execute("DELETE FROM trees WHERE file_id = ANY(%s)", (file_ids,))
    conn.execute("DELETE FROM props WHERE file_id = ANY(%s)", (file_ids,))
    conn.execute("DELETE FROM links WHERE file_id = ANY(%s)", (file_ids,))
    row = conn.execute(
        "WITH d AS (DELETE FROM chunks WHERE file_id = ANY(%s) RETURNING ntok) SELECT count(*), coalesce(sum(ntok), 0) FROM d",
        (file_ids,),
    ).fetchone()
    if row and row[0]:
        add_stats(conn, -int(row[0]), -int(row[1]))


def add_stats(conn: psycopg.Connection[Any], chunks: int, tokens: int) -> None:
    if chunks or tokens:
        conn.execute(
            "UPDATE meta SET value = (value::bigint + CASE key WHEN 'chunks' THEN %s ELSE %s END)::text"
            " WHERE key IN ('chunks', 'tokens')",
            (chunks, tokens),
        )


def has_vecs(conn: psycopg.Connection[Any]) -> bool:
    row = conn.execute("SELECT to_regclass('vecs')").fetchone()
    return bool(row and row[0] is not None)


def vector_type(dim: int) -> tuple[str, str | None]:
    """The column type for `dim` dimensions and its HNSW operator class (None: too many to index)."""
    if dim <= MAX_VECTOR_DIM:
        return f"vector({int(dim)})", "vector_cosine_ops"
    if dim <= MAX_HALFVEC_DIM:
        return f"halfvec({int(dim)})", "halfvec_cosine_ops"
    return f"vector({int(dim)})", None


def write_properties(conn: psycopg.Connection[Any], file_ids: list[int], docs: list[Document]) -> None:
    """The `props` rows of these files (`storage/properties.py`); `delete_chunks` deleted their old ones."""
    props = [
        (fid, *(pgsearch.clean(v) if isinstance(v, str) else v for v in row))
        for fid, doc in zip(file_ids, docs, strict=True)
        for row in property_rows(doc.meta.properties, doc.path)
    ]
    cur = conn.cursor()
    if props:
        cur.executemany(
            "INSERT INTO props(file_id, key, kind, text, low, num, value) VALUES (%s,%s,%s,%s,%s,%s,%s)",
            props,
        )


class NotCreatedYet(StoreError):
    """The index's tables are not there yet: the primary is creating them."""
