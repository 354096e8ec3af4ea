"""What a sync reads and embeds: a file's bytes (or why it is skipped) and a batch of documents' vectors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from ragdown.core.paths import MAX_DOCUMENT_BYTES, is_plain_text
from ragdown.documents import Document
from ragdown.embedders.base import Embedder, EmbedderError, Vectors, WindowedEmbedder, embed_progress
from ragdown.sync.report import SyncError

# Files larger than this are skipped with a logged reason (the write door refuses them too).
MAX_FILE_BYTES = MAX_DOCUMENT_BYTES


def read_file(path: Path, expected_size: int) -> tuple[bytes | None, str | None]:
    """The file's bytes, or a reason to skip it: too large, unreadable, binary (NUL bytes), or a plain-text
    file (`todo.txt`) that is not UTF-8 (Markdown that is not is read with its odd bytes replaced)."""
    if expected_size > MAX_FILE_BYTES:
        return None, f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB ({expected_size} bytes)"
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        return None, f"unreadable: {err.strerror or err}"
    if len(data) > MAX_FILE_BYTES:
        return None, f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB"
    if b"\x00" in data[:8192]:
        return (
            None,
            f"binary content (NUL bytes), not {'text' if is_plain_text(path.name) else 'Markdown text'}",
        )
    if is_plain_text(path.name):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as err:
            return None, f"not UTF-8 text (byte {err.start}): plain-text files are read as UTF-8 only"
    return data, None


def embed_chunks(
    embedder: Embedder | None, docs: list[Document], on_progress: Callable[[int], None] | None = None
) -> tuple[list[np.ndarray | None], list[dict[int, Vectors] | None]]:
    """Each document's chunk vectors, and the further windows of its chunks longer than the model reads
    (nothing without an embedder). `on_progress` hears how many of the chunks are embedded while the
    embedder works, if it tells (`embed_progress`: the ONNX models, pass by pass; with windows, the share
    of the texts embedded, counted in chunks)."""
    vectors: list[np.ndarray | None] = [None] * len(docs)
    windows: list[dict[int, Vectors] | None] = [None] * len(docs)
    chunks = [c for d in docs for c in d.chunks]
    if embedder is None or not chunks:
        return vectors, windows

    def told(done: int, total: int) -> None:
        if on_progress is not None and total > 0:
            on_progress(len(chunks) * min(done, total) // total)

    try:
        with embed_progress(told):
            if isinstance(embedder, WindowedEmbedder):
                per_chunk = embedder.embed_document_windows(
                    [f"{c.breadcrumb}\n\n" for c in chunks], [c.text for c in chunks]
                )
                flat = np.stack([w[0] for w in per_chunk])
            else:
                per_chunk = []
                flat = embedder.embed_documents([c.embed_text for c in chunks])
    except EmbedderError:
        raise
    except Exception as err:
        raise SyncError(f"the embedder failed: {err}") from err
    offset = 0
    for i, doc in enumerate(docs):
        n = len(doc.chunks)
        vectors[i] = flat[offset : offset + n]
        more = {
            j: per_chunk[offset + j][1:] for j in range(n) if per_chunk and len(per_chunk[offset + j]) > 1
        }
        windows[i] = more or None
        offset += n
    return vectors, windows
