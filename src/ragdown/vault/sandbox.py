"""The path sandbox: every path a caller names must stay inside its scope, on files the indexer reads.

`resolve_in` checks a path against the real filesystem before a write: the rules of `paths.split_safe`,
no file or symlink among the parents, nothing whose real path leaves the scope, and (for documents) a
Markdown name. `read_plain` is the check every read makes at the moment it reads: a regular file reached
without a symlink anywhere on the way, whatever the index said a moment ago.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from ragdown.core.errors import bad_request
from ragdown.core.paths import (
    PATH_MAX,
    TEXT_EXTENSIONS,
    is_document,
    is_markdown,
    is_plain_text,
    outside,
    shown,
    split_safe,
)

__all__ = [
    "is_plain_file",
    "make_parents",
    "outside",
    "read_plain",
    "relative_to",
    "resolve_in",
    "split_safe",
]


def resolve_in(root: Path, raw: str, *, markdown: bool = True, text: bool = False) -> Path:
    """`raw` (relative to `root`) as an absolute path inside `root`, checked against the real filesystem.

    With `markdown` the name must be a Markdown document's; with `text` as well, a plain-text document's
    (`todo.txt`, `notes.json`) may be named too (the faces that keep them: readmedb, REST, the web UI).

    `root` must be a real (resolved) directory. Missing parents are left missing: the write door makes them
    (`make_parents`) once every check of the write has passed, so a refused write leaves no folder behind.
    """
    parts = split_safe(raw)
    if markdown and text and not is_document(parts[-1]):
        raise bad_request(
            f"{shown(raw)} is not a document: names end in .md, .markdown or .mdx, or for plain text in "
            f"{', '.join(TEXT_EXTENSIONS)}"
        )
    if markdown and not text and is_plain_text(parts[-1]):
        raise bad_request(
            f"{shown(raw)} is plain text, not a Markdown document: this tool writes Markdown (.md, .markdown "
            "or .mdx); plain-text files are written through the readmedb tool set, the REST file routes or "
            "the web UI, and read with ragdown_read_doc"
        )
    if markdown and not text and not is_markdown(parts[-1]):
        raise bad_request(f"{shown(raw)} is not a Markdown document (.md, .markdown or .mdx)")
    if len(os.fsencode(root)) + 1 + len("/".join(parts).encode("utf-8")) >= PATH_MAX:
        raise bad_request(f"{shown(raw)}: the path is longer than {PATH_MAX} bytes")
    current = root
    try:
        for i, part in enumerate(parts):
            current = current / part
            last = i == len(parts) - 1
            if current.is_symlink():
                raise bad_request(f"{shown(raw)} goes through a symbolic link")
            if last:
                break
            if current.exists() and not current.is_dir():
                raise bad_request(f"{shown(raw)}: {'/'.join(parts[: i + 1])} is a file, not a folder")
    except OSError as err:
        raise bad_request(f"{shown(raw)} cannot be used: {err.strerror or err}") from None
    real_parent = Path(os.path.realpath(current.parent))
    if real_parent != root and root not in real_parent.parents:
        raise outside(raw)
    return current


def make_parents(path: Path, display: str) -> None:
    """Make the missing folders above `path` (a path `resolve_in` gave), refusing when one of them turned
    out to be a symbolic link or a file since it was checked."""
    missing: list[Path] = []
    parent = path.parent
    while not parent.is_dir() or parent.is_symlink():
        if parent.is_symlink() or parent.exists():
            raise bad_request(f"{display}: {parent.name} is no longer a folder")
        missing.append(parent)
        parent = parent.parent
    try:
        for directory in reversed(missing):
            directory.mkdir(exist_ok=True)
            if directory.is_symlink():
                raise bad_request(f"{display} goes through a symbolic link")
    except OSError as err:
        raise bad_request(f"{display} cannot be written: {err.strerror or err}") from None


def _no_links_above(root: Path, rel: str) -> Path | None:
    """`root/rel` when no directory on the way to it is a symlink (or missing), else None."""
    current = root
    parts = rel.split("/")
    for part in parts[:-1]:
        current = current / part
        if current.is_symlink() or not current.is_dir():
            return None
    return current / parts[-1]


def is_plain_file(root: Path, rel: str) -> bool:
    """`rel` (sandboxed, under `root`) is a regular file reached without a symlink anywhere on the way:
    the indexer never follows one, and a linked directory may lead outside the folder."""
    try:
        path = _no_links_above(root, rel)
        return path is not None and not path.is_symlink() and path.is_file()
    except OSError:  # a name or path too long for the filesystem: not a document
        return False


def read_plain(root: Path, rel: str) -> bytes | None:
    """The bytes of `rel` under `root` when it is a regular file reached without a symlink, else None.

    The last step is opened with `O_NOFOLLOW` and checked on the open descriptor, so a document swapped for
    a symlink (or a FIFO) between the index and this read is never followed.
    """
    try:
        path = _no_links_above(root, rel)
        if path is None:
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return fh.read()
    except OSError:
        return None
    finally:
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)


def relative_to(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()
