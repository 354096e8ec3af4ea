"""Dense search over an in-memory float32 matrix kept in step with the store.

Each process holds the index's vectors in one preallocated numpy matrix. It refreshes incrementally when
the store's generation moves: rows with a larger id are appended (ids only grow), ids in the deletion log
are marked dead, and the matrix is compacted once a fifth of it is dead. Both the new rows and the
deletions are read in one snapshot, so the matrix never mixes two states of the index.

A chunk longer than the embedder's window has one vector per window (its `vecs` blob holds them one after
the other): each is a row of its own with the chunk's id, so ids are sorted but may repeat, and a chunk
scores as its best window (`search`, `cosine`).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ragdown.core import heap
from ragdown.embedders.base import Vectors
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.records import unit_mean

_COMPACT_DEAD_SHARE = 0.2
# Rows read from the store at a time: each batch is a list of bytes objects and their join (~1.5 MB at 384
# dimensions), freed before the next. At 8,192 rows (12 MB twice over) a first load of 75,000 rows peaked
# ~20 MB higher and left that much free in the C heap (docs/benchmarks.md section 37).
_LOAD_BATCH = 1024


class MatrixSource(Protocol):
    """What the matrix reads from the store (`store.py`'s `Store`, which makes the matrix)."""

    def generation(self) -> int: ...
    def read_snapshot(self) -> contextlib.AbstractContextManager[sqlite3.Connection]: ...
    def pruned_through(self, conn: sqlite3.Connection) -> int: ...
    def max_deleted_seq(self, conn: sqlite3.Connection) -> int: ...
    def deleted_after(self, conn: sqlite3.Connection, after_seq: int) -> tuple[list[int], int]: ...
    def vectors_after(
        self, conn: sqlite3.Connection, after_id: int, batch: int = ...
    ) -> Iterator[list[tuple[int, int, bytes]]]: ...
    def vector_bytes_after(self, conn: sqlite3.Connection, after_id: int) -> int: ...
    def superseded_by(self) -> dict[str, list[str]]: ...
    def file_ids(self, flt: FileFilter) -> list[int]: ...


@dataclass(frozen=True)
class _Snapshot:
    mat: Vectors
    ids: npt.NDArray[np.int64]
    file_ids: npt.NDArray[np.int64]
    alive: npt.NDArray[np.bool_]
    n: int
    extra: int  # rows beyond the first of their chunk (windows): 0 when every chunk has one vector


class DenseMatrix:
    def __init__(self, store: MatrixSource, dim: int) -> None:
        self._store = store
        self.dim = dim
        self._lock = threading.Lock()
        self._mat: Vectors = np.empty((0, dim), dtype=np.float32)
        self._ids: npt.NDArray[np.int64] = np.empty(0, dtype=np.int64)
        self._file_ids: npt.NDArray[np.int64] = np.empty(0, dtype=np.int64)
        self._alive: npt.NDArray[np.bool_] = np.empty(0, dtype=np.bool_)
        self._n = 0
        self._dead = 0
        self._extra = 0
        self._last_id = 0
        self._last_seq = 0
        self._generation = -1

    def __len__(self) -> int:
        return self._n - self._dead

    def warm(self) -> None:
        """The first load of the matrix ahead of the first search (about a second at 75,000 rows)."""
        self.refresh()

    def refresh(self) -> None:
        """Bring the matrix up to the store's committed state (cheap when nothing changed)."""
        if self.dim == 0:
            return
        gen = self._store.generation()
        if gen == self._generation:
            return
        with self._lock:
            if gen == self._generation:
                return
            with self._store.read_snapshot() as conn:
                gen = self._store.generation()
                if self._last_seq and self._store.pruned_through(conn) > self._last_seq:
                    self._reset()
                if self._n == 0:
                    # A fresh load sees no deletion older than now.
                    self._last_seq = self._store.max_deleted_seq(conn)
                    deleted: list[int] = []
                else:
                    deleted, self._last_seq = self._store.deleted_after(conn, self._last_seq)
                # The rows to come are counted first and the matrix grown once to hold them: grown batch by
                # batch (by half again each time), a first load ended up to a half larger than its rows, and
                # each step held the old and the new copy at once. A first load gets exactly its rows; a
                # later refresh keeps the slack, so one write does not copy the whole matrix.
                count = self._store.vector_bytes_after(conn, self._last_id) // (4 * self.dim)
                self._reserve(count, slack=self._n > 0)
                fresh = self._n == 0
                for rows in self._store.vectors_after(conn, self._last_id, batch=_LOAD_BATCH):
                    self._append(rows)
            self._mark_dead(deleted)
            if fresh and self._n:
                heap.trim()  # what the load freed (its batches, in this thread's arena) back to the system
            if self._n and self._dead > _COMPACT_DEAD_SHARE * self._n:
                self._compact()
            self._generation = gen

    def _reset(self) -> None:
        self._mat = np.empty((0, self.dim), dtype=np.float32)
        self._ids = np.empty(0, dtype=np.int64)
        self._file_ids = np.empty(0, dtype=np.int64)
        self._alive = np.empty(0, dtype=np.bool_)
        self._n = self._dead = self._extra = self._last_id = self._last_seq = 0

    @property
    def capacity(self) -> int:
        """Rows the matrix has room for (its memory), live or not."""
        return int(self._mat.shape[0])

    def _reserve(self, count: int, slack: bool = False) -> None:
        """Room for `count` more rows; with `slack`, grown by half its size at least (appends come in batches)."""
        need = self._n + count
        if need <= self._mat.shape[0]:
            return
        cap = max(need, int(self._mat.shape[0] * 1.5) + 1024) if slack else need
        mat = np.empty((cap, self.dim), dtype=np.float32)
        mat[: self._n] = self._mat[: self._n]
        ids = np.zeros(cap, dtype=np.int64)
        ids[: self._n] = self._ids[: self._n]
        fids = np.zeros(cap, dtype=np.int64)
        fids[: self._n] = self._file_ids[: self._n]
        alive = np.zeros(cap, dtype=np.bool_)
        alive[: self._n] = self._alive[: self._n]
        self._mat, self._ids, self._file_ids, self._alive = mat, ids, fids, alive

    def _append(self, rows: list[tuple[int, int, bytes]]) -> None:
        width = 4 * self.dim
        per_chunk = [len(r[2]) // width for r in rows]
        count = sum(per_chunk)
        self._reserve(count, slack=True)
        block = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(count, self.dim)
        end = self._n + count
        self._mat[self._n : end] = block
        if count == len(rows):
            self._ids[self._n : end] = [r[0] for r in rows]
            self._file_ids[self._n : end] = [r[1] for r in rows]
        else:
            self._ids[self._n : end] = np.repeat([r[0] for r in rows], per_chunk)
            self._file_ids[self._n : end] = np.repeat([r[1] for r in rows], per_chunk)
            self._extra += count - len(rows)
        self._alive[self._n : end] = True
        self._n = end
        self._last_id = int(rows[-1][0])

    def _mark_dead(self, chunk_ids: list[int]) -> None:
        if not chunk_ids or self._n == 0:
            return
        pos = _rows_of(self._ids[: self._n], np.asarray(chunk_ids, dtype=np.int64))
        newly = np.unique(pos[self._alive[pos]])
        self._alive[newly] = False
        self._dead += len(newly)

    def _compact(self) -> None:
        keep = self._alive[: self._n]
        self._mat = np.ascontiguousarray(self._mat[: self._n][keep])
        self._ids = self._ids[: self._n][keep].copy()
        self._file_ids = self._file_ids[: self._n][keep].copy()
        self._n = len(self._ids)
        self._alive = np.ones(self._n, dtype=np.bool_)
        self._dead = 0
        self._extra = self._n - (int(np.count_nonzero(np.diff(self._ids))) + 1 if self._n else 0)

    def _snapshot(self) -> _Snapshot:
        with self._lock:
            return _Snapshot(self._mat, self._ids, self._file_ids, self._alive, self._n, self._extra)

    def allowed_files(self, flt: FileFilter | None) -> npt.NDArray[np.int64] | None:
        """File ids the filter allows, or None when it allows every file (the fast, unfiltered path)."""
        if flt is None:
            return None
        if not flt.narrows and not (flt.hide_superseded and self._store.superseded_by()):
            return None
        return np.asarray(self._store.file_ids(flt), dtype=np.int64)

    def search(self, query: Vectors, k: int, flt: FileFilter | None = None) -> list[tuple[int, float]]:
        """The `k` chunks closest to `query` (cosine, vectors are unit length) under `flt`, best first."""
        allowed_files = self.allowed_files(flt)
        self.refresh()
        snap = self._snapshot()
        if snap.n == 0 or k <= 0:
            return []
        mask = snap.alive[: snap.n]
        if allowed_files is not None:
            mask = mask & np.isin(snap.file_ids[: snap.n], allowed_files)
        kept = int(np.count_nonzero(mask))
        if kept == 0:
            return []
        if 2 * kept >= snap.n:
            # Most rows count: score the whole matrix and rule the others out. Gathering them instead
            # (`mat[positions]`) copies most of the matrix on every query, which is what any dead row
            # (one file edited since the last compaction) used to cost every unfiltered search.
            scores = snap.mat[: snap.n] @ query
            if kept < snap.n:
                scores[~mask] = -np.inf
            ids = snap.ids[: snap.n]
        else:
            positions = np.flatnonzero(mask)
            scores = snap.mat[positions] @ query
            ids = snap.ids[positions]
        if snap.extra == 0:
            k = min(k, kept)
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
            return [(int(ids[i]), float(scores[i])) for i in top]
        # Windows: a chunk is its best row. The best 2k rows nearly always hold k chunks; k + extra always do.
        for take in (min(kept, 2 * k), min(kept, k + snap.extra)):
            top = np.argpartition(-scores, take - 1)[:take]
            top = top[np.argsort(-scores[top], kind="stable")]
            best: dict[int, float] = {}
            for i in top:
                if np.isfinite(scores[i]):
                    best.setdefault(int(ids[i]), float(scores[i]))
            if len(best) >= k or take == kept:
                break
        return list(best.items())[:k]

    def cosine(self, query: Vectors, chunk_ids: list[int]) -> dict[int, float]:
        """Exact cosine of `query` with each given chunk that has a vector."""
        self.refresh()
        snap = self._snapshot()
        if snap.n == 0 or not chunk_ids:
            return {}
        ids = snap.ids[: snap.n]
        wanted = np.asarray(chunk_ids, dtype=np.int64)
        first = np.searchsorted(ids, wanted, side="left")
        last = np.searchsorted(ids, wanted, side="right") if snap.extra else np.minimum(first + 1, snap.n)
        out: dict[int, float] = {}
        for cid, a, b in zip(chunk_ids, first, last, strict=True):
            rows = [p for p in range(a, b) if ids[p] == cid and snap.alive[p]]
            if rows:
                out[cid] = float(np.max(snap.mat[rows] @ query))
        return out

    def mean_vector(self, chunk_ids: list[int]) -> Vectors | None:
        """The unit-length mean of the given chunks' vectors (every window), or None when none has one."""
        self.refresh()
        snap = self._snapshot()
        if snap.n == 0 or not chunk_ids:
            return None
        pos = _rows_of(snap.ids[: snap.n], np.asarray(sorted(set(chunk_ids)), dtype=np.int64))
        pos = pos[snap.alive[pos]]
        return unit_mean(snap.mat[pos]) if len(pos) else None


def _rows_of(ids: npt.NDArray[np.int64], wanted: npt.NDArray[np.int64]) -> npt.NDArray[np.intp]:
    """Positions in the sorted `ids` (repeats allowed) of every row whose id is in `wanted`."""
    first = np.searchsorted(ids, wanted, side="left")
    counts = np.searchsorted(ids, wanted, side="right") - first
    if not counts.any():
        return np.empty(0, dtype=np.intp)
    starts = np.repeat(first, counts)
    offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.asarray(starts + offsets, dtype=np.intp)
