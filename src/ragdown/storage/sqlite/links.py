"""The SQLite index's link table: each file's links as written, looked up by source or by name key."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ragdown.documents.model import Document
from ragdown.storage.records import LINK_COLUMNS, LinkRow, link_rows

LINK_SELECT = f"SELECT f.path, l.{', l.'.join(c.strip() for c in LINK_COLUMNS.split(','))} FROM links l JOIN files f ON f.id = l.file_id"


def replace_links(conn: sqlite3.Connection, file_id: int, document: Document | None) -> None:
    """The file's links replaced by `document`'s (None: removed)."""
    conn.execute("DELETE FROM links WHERE file_id = ?", (file_id,))
    if document is not None and document.links:
        conn.executemany(
            f"INSERT INTO links(file_id, key, {LINK_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
            [(file_id, *row) for row in link_rows(document)],
        )


def _row(r: Sequence[object]) -> LinkRow:
    return LinkRow(
        str(r[0]),
        int(str(r[1])),
        str(r[2]),
        str(r[3]),
        str(r[4]),
        str(r[5]),
        None if r[6] is None else str(r[6]),
    )


def links_from(conn: sqlite3.Connection, path: str) -> list[LinkRow]:
    rows = conn.execute(f"{LINK_SELECT} WHERE f.path = ? ORDER BY l.line, l.rowid", (path,)).fetchall()
    return [_row(r) for r in rows]


def links_named(conn: sqlite3.Connection, folder: str, keys: Sequence[str]) -> list[LinkRow]:
    if not keys:
        return []
    marks = ",".join("?" * len(keys))
    rows = conn.execute(
        f"{LINK_SELECT} WHERE l.key IN ({marks}) AND f.folder = ? ORDER BY f.path, l.line, l.rowid",
        (*keys, folder),
    ).fetchall()
    return [_row(r) for r in rows]
