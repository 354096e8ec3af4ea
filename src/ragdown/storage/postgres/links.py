"""The PostgreSQL index's link table: each file's links as written, looked up by source or by name key."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from ragdown.storage.postgres import tsvectors as pgsearch
from ragdown.storage.records import LINK_COLUMNS, LinkRow, PendingFile, link_rows

LINK_SELECT = (
    f"SELECT f.path, l.{', l.'.join(c.strip() for c in LINK_COLUMNS.split(','))}"
    " FROM links l JOIN files f ON f.id = l.file_id"
)


def write_links(
    conn: psycopg.Connection[Any], file_ids: Sequence[int], pending: Sequence[PendingFile]
) -> None:
    """The links of freshly written files (their old ones are gone with `delete_chunks`)."""
    rows = [
        (fid, key, line, pgsearch.clean(text), kind, pgsearch.clean(raw), pgsearch.clean(target), anchor)
        for fid, item in zip(file_ids, pending, strict=True)
        for key, line, text, kind, raw, target, anchor in link_rows(item.document)
    ]
    if rows:
        conn.cursor().executemany(
            f"INSERT INTO links(file_id, key, {LINK_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s)", rows
        )


def link_row(r: Sequence[Any]) -> LinkRow:
    return LinkRow(str(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5]), r[6])


FROM_SQL = f"{LINK_SELECT} WHERE f.path = %s ORDER BY l.line, l.id"
NAMED_SQL = f"{LINK_SELECT} WHERE l.key = ANY(%s) AND f.folder = %s ORDER BY f.path, l.line, l.id"
