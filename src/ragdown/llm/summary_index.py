"""What the kept summaries (`summaries.py`) add to reading the index, only where `ragdown index
--summary-model` made some (no `summaries.sqlite`: nothing here changes anything):

- `summary_pool`: BM25 over the node summaries, for `search_documents` to add at MarkIndex's weight (2x);
- `generated_descriptions`: each document's generated description, for a document without its own.

A summary counts for a document only while the document is the one it was placed in (its file hash at
the last `index --summary-model`), so a changed document never gets another text's summary.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from ragdown.search.query import fts_match
from ragdown.storage.backend import IndexStore
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.summaries import SummaryStore

SUMMARY_WEIGHT = 2.0  # MarkIndex: titles 10x, merged headings 5x, summaries 2x, body 1x


def summary_pool(
    data_dir: Path, store: IndexStore, query: str, flt: FileFilter, limit: int
) -> list[tuple[int, float]]:
    """(chunk id, BM25 of its node's summary, higher is better) under `flt`, best first, for the first
    chunk of each node found; [] without summaries."""
    cache = SummaryStore.open_existing(data_dir)
    if cache is None:
        return []
    try:
        match = fts_match(query)
        if match is None:
            return []
        rows = cache.db.execute(
            "SELECT p.path, p.file_hash, p.node_id, -bm25(summary_fts) FROM summary_fts f JOIN placed p "
            "ON p.kind = f.kind AND p.key = f.key WHERE f.kind = 'node' AND summary_fts MATCH ? "
            "ORDER BY bm25(summary_fts) LIMIT ?",
            (match, max(limit, 1) * 4),
        ).fetchall()
    except Exception:  # an FTS parse error must not fail the search: the words still answer
        return []
    finally:
        cache.close()
    if not rows:
        return []
    paths = {r[0] for r in rows} & (set(flt.paths) if flt.paths is not None else {r[0] for r in rows})
    current = {r.path: r for r in store.list_files(dataclasses.replace(flt, paths=tuple(paths)))}
    wanted: dict[tuple[str, str], float] = {}
    for path, file_hash, node_id, score in rows:
        record = current.get(path)
        if record is not None and record.hash == file_hash:
            wanted.setdefault((path, node_id), float(score))
    if not wanted:
        return []
    ids = store.file_ids(FileFilter(paths=tuple({p for p, _ in wanted}), hide_superseded=False))
    chunks = store.chunks_by_id([cid for cid, _ in store.chunk_ids_of_files(ids)])
    first: dict[tuple[str, str], tuple[int, int]] = {}  # a node's first chunk: (start line, chunk id)
    for cid, c in chunks.items():
        node = (c.path, c.node_id)
        if node in wanted and (node not in first or c.start_line < first[node][0]):
            first[node] = (c.start_line, cid)
    return sorted(((cid, wanted[node]) for node, (_, cid) in first.items()), key=lambda x: -x[1])


def with_summaries(
    pool: Sequence[tuple[int, float]], summaries: Sequence[tuple[int, float]]
) -> list[tuple[int, float]]:
    """The words' scores plus the summaries' at `SUMMARY_WEIGHT`, best first; `pool` as it was without."""
    if not summaries:
        return list(pool)
    scores = dict(pool)
    for cid, score in summaries:
        scores[cid] = scores.get(cid, 0.0) + SUMMARY_WEIGHT * score
    return sorted(scores.items(), key=lambda x: -x[1])
