"""A chunk with several window vectors: stored in one blob, scored as its best window, removed whole."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from ragdown.documents import parse_document
from ragdown.storage.records import IndexMeta, PendingFile
from ragdown.storage.sqlite.store import Store
from ragdown.storage.sqlite.vectors import DenseMatrix

DIM = 8


def unit(*values: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def pending(path: str, text: str, vectors: np.ndarray, windows: dict[int, np.ndarray] | None) -> PendingFile:
    digest = hashlib.sha256(text.encode()).hexdigest()
    return PendingFile(path, "", len(text), 1, 1, digest, parse_document(path, text), vectors, windows)


def chunk_id(store: Store, path: str) -> int:
    record = store.get_file(path)
    assert record is not None
    (cid,) = [cid for cid, _ in store.chunk_ids_of_files([record.id])]
    return cid


def open_store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "data", writable=True)
    store.ensure_meta(IndexMeta(embedder="test", dim=DIM, chunker_version=3))
    return store


def test_a_chunk_scores_as_its_best_window_and_appears_once(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    # long.md: one chunk whose first window points along x and its second along y; short.md: one vector.
    store.write_files(
        [
            pending("long.md", "# Long\n\nmany words\n", np.stack([unit(1, 0)]), {0: np.stack([unit(0, 1)])}),
            pending("short.md", "# Short\n\nfew words\n", np.stack([unit(1, 1)]), None),
        ]
    )
    long_id, short_id = chunk_id(store, "long.md"), chunk_id(store, "short.md")
    matrix = DenseMatrix(store, DIM)
    # A query along y matches long.md's second window exactly: it ranks first, once, with that cosine.
    hits = matrix.search(unit(0, 1), 5)
    assert [cid for cid, _ in hits] == [long_id, short_id]
    assert abs(hits[0][1] - 1.0) < 1e-6
    assert abs(matrix.cosine(unit(0, 1), [long_id, short_id])[long_id] - 1.0) < 1e-6
    assert abs(matrix.cosine(unit(1, 0), [long_id])[long_id] - 1.0) < 1e-6  # the first window counts too
    assert len(matrix.search(unit(1, 0), 1)) == 1
    store.close()


def test_removing_a_windowed_chunk_drops_every_window(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    windows = {0: np.stack([unit(0, 1), unit(0, 0, 1)])}
    store.write_files([pending("long.md", "# Long\n\ntext\n", np.stack([unit(1, 0)]), windows)])
    store.write_files([pending("other.md", "# Other\n\ntext\n", np.stack([unit(1, 1)]), None)])
    matrix = DenseMatrix(store, DIM)
    assert len(matrix.search(unit(0, 0, 1), 5)) == 2
    store.remove_files(["long.md"])
    other_id = chunk_id(store, "other.md")
    # No window of the removed chunk is left to match, in search or in `cosine`.
    assert [cid for cid, _ in matrix.search(unit(0, 0, 1), 5)] == [other_id]
    assert matrix.search(unit(0, 1), 5)[0][0] == other_id
    store.close()
