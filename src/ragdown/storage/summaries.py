"""The side store of model-made summaries (`ragdown index DIR --summary-model P:M`): `summaries.sqlite` in the
index's data dir, `(kind, key) -> summary` keyed by the SHA-256 of the text summarised, where each summarised text
sat at the last summary run (`placed`), and the summaries' words for BM25 (`summary_fts`). One file serves either
index backend. Made by `llm/summaries.py`; read here by the outlines and the markindex tool set, so reading
never needs the model clients.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from ragdown.core.atomic import sha256_hex
from ragdown.documents.tree import Node
from ragdown.storage.lexical import lexical_text
from ragdown.storage.records import FileRecord

FILE_NAME = "summaries.sqlite"
Placement = tuple[str, str, str, str, str]  # path, file hash, kind, node id ("" for a document), key


class SummaryStore:
    """The side table: `(kind, key) -> summary`."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS summaries (kind TEXT NOT NULL, key TEXT NOT NULL, model TEXT NOT NULL, "
            "text TEXT NOT NULL, PRIMARY KEY (kind, key))"
        )
        # Where each summarised text sat at the last `index --summary-model`: a document's file hash then,
        # so a placement is used only while the document is unchanged (`summary_index.py`).
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS placed (path TEXT NOT NULL, file_hash TEXT NOT NULL, kind TEXT NOT NULL, "
            "node_id TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (path, kind, node_id))"
        )
        self._db.execute("CREATE INDEX IF NOT EXISTS placed_key ON placed (kind, key)")
        # The summaries' words as the index reads text (`lexical_text`), for BM25 at MarkIndex's 2x.
        self._db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS summary_fts USING fts5(kind UNINDEXED, key UNINDEXED, text)"
        )
        (fts,) = self._db.execute("SELECT count(*) FROM summary_fts").fetchone()
        (kept,) = self._db.execute("SELECT count(*) FROM summaries").fetchone()
        if fts != kept:  # summaries kept before the words were: index them once
            self._db.execute("DELETE FROM summary_fts")
            for kind, key, text in self._db.execute("SELECT kind, key, text FROM summaries").fetchall():
                self._db.execute("INSERT INTO summary_fts VALUES (?, ?, ?)", (kind, key, lexical_text(text)))
        self._db.commit()

    @property
    def db(self) -> sqlite3.Connection:
        return self._db

    @classmethod
    def open_existing(cls, data_dir: Path) -> SummaryStore | None:
        path = data_dir / FILE_NAME
        return cls(path) if path.exists() else None

    def get(self, kind: str, key: str) -> str | None:
        row = self._db.execute(
            "SELECT text FROM summaries WHERE kind = ? AND key = ?", (kind, key)
        ).fetchone()
        return str(row[0]) if row else None

    def put(self, kind: str, key: str, model: str, text: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO summaries VALUES (?, ?, ?, ?)", (kind, key, model, text))
        self._db.execute("DELETE FROM summary_fts WHERE kind = ? AND key = ?", (kind, key))
        self._db.execute("INSERT INTO summary_fts VALUES (?, ?, ?)", (kind, key, lexical_text(text)))
        self._db.commit()

    def place(self, placements: list[Placement]) -> None:
        """Where the summarised texts sit now: every document's placements replaced, gone ones dropped."""
        with self._db:
            self._db.execute("DELETE FROM placed")
            self._db.executemany("INSERT OR REPLACE INTO placed VALUES (?, ?, ?, ?, ?)", placements)

    def close(self) -> None:
        self._db.close()


def node_key(lines: list[str], node: Node) -> str:
    return sha256_hex("\n".join(lines[node.start_line - 1 : node.end_line]).encode())


def node_summaries(store: SummaryStore | None, lines: list[str], nodes: list[Node]) -> dict[str, str]:
    """The summaries kept for `nodes` (by node id), their text being `lines`' ranges."""
    if store is None:
        return {}
    out = {}
    for node in nodes:
        text = store.get("node", node_key(lines, node))
        if text:
            out[node.node_id] = text
    return out


def kept_summaries(data_dir: Path, lines: list[str] | None, start: Node) -> dict[str, str]:
    """The node summaries kept for `start`'s subtree (by node id), its document's text being `lines`."""
    if lines is None:
        return {}
    cache = SummaryStore.open_existing(data_dir)
    if cache is None:
        return {}
    try:
        return node_summaries(cache, lines, start.walk())
    finally:
        cache.close()


def generated_descriptions(data_dir: Path, records: Sequence[FileRecord]) -> dict[str, str]:
    """The generated description of each of `records` that has none of its own (by path); {} without
    summaries."""
    lacking = {r.path: r.hash for r in records if not r.description}
    if not lacking:
        return {}
    cache = SummaryStore.open_existing(data_dir)
    if cache is None:
        return {}
    try:
        rows = cache.db.execute(
            "SELECT p.path, p.file_hash, s.text FROM placed p JOIN summaries s ON s.kind = p.kind AND "
            "s.key = p.key WHERE p.kind = 'document'"
        ).fetchall()
    finally:
        cache.close()
    return {path: str(text) for path, file_hash, text in rows if lacking.get(path) == file_hash}
