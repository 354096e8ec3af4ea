"""Atomic file writes: a temp file beside the target, fsync, then rename (or link, never overwriting); and
the per-file lock the write door (`writes/door.py`) holds around each read-check-write cycle, within the process
and across processes, so two concurrent agents editing one document cannot lose each other's change, even
from two `ragdown stdio` processes: the second is refused as changed.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import secrets
import threading
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from ragdown.core.errors import conflict

log = logging.getLogger(__name__)

_locks: defaultdict[str, threading.Lock] = defaultdict(threading.Lock)
_locks_guard = threading.Lock()

SHORT_HASH = 12


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_hash(path: Path) -> str | None:
    try:
        return sha256_hex(path.read_bytes())
    except FileNotFoundError:
        return None


@contextlib.contextmanager
def path_lock(path: Path) -> Iterator[None]:
    """Serialise read-check-write cycles on one file: between this process's threads, and between processes.

    Across processes the lock is an exclusive `flock` on the file's directory, so every process that
    writes these documents takes turns (a second `ragdown stdio`, a `serve` with another data dir), and no
    lock file is left among the user's files. Not reentrant: hold one at a time.
    """
    key = str(path)
    with _locks_guard:
        lock = _locks[key]
    with lock, _directory_lock(path.parent):
        yield


@contextlib.contextmanager
def _directory_lock(directory: Path) -> Iterator[None]:
    try:
        fd: int | None = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    except OSError:
        fd = None  # no such directory: the caller finds no document there and says so
    try:
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as err:  # a filesystem without flock (some network mounts)
                log.debug("no cross-process lock on %s: %s", directory, err)
        yield
    finally:
        if fd is not None:
            os.close(fd)  # releases the flock


_TEMP_NAME_BYTES = 200  # of the target's name in a temp file's: a name may be up to 255 bytes


def _temp_beside(path: Path, data: bytes, mode: int = 0o644) -> Path:
    name = path.name.encode("utf-8", "surrogateescape")[:_TEMP_NAME_BYTES].decode("utf-8", "ignore")
    tmp = path.parent / f".{name}.ragdown-{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    return tmp


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _keep_mode(tmp: Path, target: Path) -> None:
    with contextlib.suppress(OSError):
        os.chmod(tmp, target.stat().st_mode & 0o7777)


def write_new(path: Path, data: bytes, *, mode: int = 0o644, display: str | None = None) -> None:
    """Create `path` with `data`; refuse (a `conflict`, naming it `display`, the path as the caller gave it)
    if anything is already there. Never half-written. `mode` (less the umask) is the new file's from its
    first byte (0o600 for a file of secrets' hashes)."""
    tmp = _temp_beside(path, data, mode)
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise conflict(f"{display or path.name} already exists") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    _fsync_dir(path.parent)


def replace(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace `path` with `data` atomically (readers see the old or the new file, never a mix); the file
    keeps its mode, or gets `mode` from its first byte."""
    tmp = _temp_beside(path, data, 0o644 if mode is None else mode)
    try:
        if mode is None:
            _keep_mode(tmp, path)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)
