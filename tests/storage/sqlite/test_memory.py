"""What a searching process holds of the SQLite index: the dense matrix sized to its rows, no mapped file."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest

from ragdown.documents import parse_document
from ragdown.storage.records import IndexMeta, PendingFile
from ragdown.storage.sqlite.schema import READER_CACHE_KIB
from ragdown.storage.sqlite.store import Store
from ragdown.storage.sqlite.vectors import DenseMatrix

DIM = 8


def unit(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i % DIM] = 1.0
    return v


def pending(path: str, vectors: np.ndarray, windows: dict[int, np.ndarray] | None = None) -> PendingFile:
    text = f"# {path}\n\nsome words\n"
    digest = hashlib.sha256(text.encode()).hexdigest()
    return PendingFile(path, "", len(text), 1, 1, digest, parse_document(path, text), vectors, windows)


def open_store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "data", writable=True)
    store.ensure_meta(IndexMeta(embedder="test", dim=DIM, chunker_version=3))
    return store


def test_a_first_load_sizes_the_matrix_to_its_rows(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    # One chunk of three windows (three rows) and three chunks of one row each: six rows.
    store.write_files([pending("long.md", np.stack([unit(0)]), {0: np.stack([unit(1), unit(2)])})])
    store.write_files([pending(f"n{i}.md", np.stack([unit(3 + i)])) for i in range(3)])
    matrix = DenseMatrix(store, DIM)
    matrix.refresh()
    assert matrix.capacity == 6  # not a batch's worth of spare rows (1,024 before)
    # A later write appends with room to spare, and every row still answers.
    store.write_files([pending("late.md", np.stack([unit(7)]))])
    matrix.refresh()
    assert matrix.capacity >= 7
    assert len(matrix) == 7  # rows
    assert len(matrix.search(unit(7), 10)) == 5
    store.close()


def test_readers_do_not_map_the_index_file(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.write_files([pending("a.md", np.stack([unit(0)]))])
    conn = store._reader()
    assert conn.execute("PRAGMA mmap_size").fetchone()[0] == 0
    assert conn.execute("PRAGMA cache_size").fetchone()[0] == -READER_CACHE_KIB
    store.close()


def test_a_new_index_has_pages_that_hold_vectors_whole(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.write_files([pending("a.md", np.stack([unit(0)]))])
    conn = sqlite3.connect(tmp_path / "data" / "index.sqlite")
    try:
        assert conn.execute("PRAGMA page_size").fetchone()[0] == 8192  # schema.PAGE_SIZE
    finally:
        conn.close()
        store.close()


def test_a_reader_goes_with_its_thread(tmp_path: Path) -> None:
    """A thread's reader (and its page cache) is closed once the thread has ended and another reader opens;
    kept, each sync's thread left one open for the life of a server. A live thread keeps its own."""
    store = open_store(tmp_path)
    store.write_files([pending("a.md", np.stack([unit(0)]))])
    mine = store._reader()
    opened: list[sqlite3.Connection] = []
    for _ in range(5):
        thread = threading.Thread(target=lambda: opened.append(store._reader()))
        thread.start()
        thread.join()
    store._reader()  # this thread's, already open: closes nothing
    last = threading.Thread(target=lambda: opened.append(store._reader()))
    last.start()
    last.join()
    for conn in opened[:-1]:  # each closed when the next thread's reader opened
        with pytest.raises(sqlite3.ProgrammingError):
            conn.execute("SELECT 1")
    assert mine.execute("SELECT count(*) FROM files").fetchone()[0] == 1
    assert store.generation() >= 1  # this thread reads on, through its own reader
    store.close()
    with pytest.raises(sqlite3.ProgrammingError):
        opened[-1].execute("SELECT 1")
