"""What of a document the version history's files still hold, read as bytes: for the tests of deleting
for good (issue 21), where the text must be gone from the file, not only from its tables."""

from __future__ import annotations

import zlib
from pathlib import Path

from ragdown.core.atomic import sha256_hex
from ragdown.history.store import HISTORY_DIR, HISTORY_FILE


def history_bytes(docs: Path) -> bytes:
    """Every byte of the history's files: the database, its WAL and its shared memory."""
    return b"".join(p.read_bytes() for p in sorted((docs / HISTORY_DIR).glob(HISTORY_FILE + "*")))


def traces(docs: Path, path: str, *texts: bytes) -> list[str]:
    """What the history's files still hold of a document: its path, its versions' hashes, their bytes (as
    the history stores them, compressed). `[]`: nothing."""
    raw = history_bytes(docs)
    marks = {path: path.encode()}
    for text in texts:
        marks[f"hash of {text[:12]!r}"] = sha256_hex(text).encode()
        marks[f"bytes of {text[:12]!r}"] = zlib.compress(text, 6)
    return [name for name, mark in marks.items() if mark in raw]
