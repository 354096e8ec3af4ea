"""The write door: every change to a document, from every face (tools, `/api`, the web UI), goes through here.

A caller has already sandboxed the path (`sandbox.resolve_in`) and computes the new text with the pure
helpers of `documents/`. The door then, under the file's lock (`atomic.path_lock`, also cross-process; with
PostgreSQL also the index's advisory lock for the document, across machines: `document_lock`):

1. reads the file as it is now (never through a symlink: one swapped in since the sandbox check is refused),
2. checks `base_hash` against it (a `conflict`, code `changed`, when the file changed or went away since it was read),
3. lets the caller compute the new bytes from the old ones,
4. refuses a document past `paths.MAX_DOCUMENT_BYTES`, the indexer's own limit, or plain text that is not
   UTF-8 text (`check_text`), so nothing is written that search would never find, and a write past the
   folder's quota (`vault/quota.py`: `max_file_bytes`, `max_files`, `max_bytes` of the journal's folder;
   the folder's writers take turns while one is set),
5. writes atomically (temp file, fsync, rename; a new file by link, never over one that appeared meanwhile),
   making the missing folders above a new document only then, so a refused write leaves nothing behind,
6. records the change in the version history (`history/`) through the caller's `Journal` (who made it).

A delete puts the document in the history's trash; `purge` deletes for good (the file, and every version
the history holds of it, live or already in the trash), and `empty_trash` forgets a folder's trash.

The caller syncs the index afterwards (`tools.write.synced`, the routes' `synced`): only the paths the door
changed inside its `recording()` block, so a write never waits for a sync of the whole tree.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import shutil
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ragdown.core import atomic
from ragdown.core.atomic import SHORT_HASH, path_lock, sha256_hex
from ragdown.core.errors import bad_request, conflict, forbidden, not_found, too_large, unavailable
from ragdown.core.paths import MAX_DOCUMENT_BYTES, is_document, is_plain_text
from ragdown.history.journal import Journal
from ragdown.vault import quota
from ragdown.vault.sandbox import make_parents
from ragdown.vault.walk import tree_files

Change = Callable[[bytes | None], bytes]
# A lock per document shared by every process of an index (`index.backend.Backend.document_lock`): with
# PostgreSQL, replicas on other machines write the same files, and the file lock alone is local.
DocumentLock = Callable[[Path], contextlib.AbstractContextManager[None]]

_shared_locks: dict[Path, list[DocumentLock]] = {}
_shared_guard = threading.Lock()
# The paths changed inside the current `recording()` block (None outside one).
_recorded: contextvars.ContextVar[list[Path] | None] = contextvars.ContextVar(
    "ragdown_door_recorded", default=None
)


@contextlib.contextmanager
def recording() -> Iterator[list[Path]]:
    """The paths the door changes inside the block: each document written or deleted, both ends of a move,
    a deleted folder; in this thread, and in the threads it hands work to with `asyncio.to_thread` (which
    run in a copy of its context). What a write syncs before it answers (`Engine.sync_after_write`)."""
    changed: list[Path] = []
    token = _recorded.set(changed)
    try:
        yield changed
    finally:
        _recorded.reset(token)


def _changed(*paths: Path) -> None:
    recorded = _recorded.get()
    if recorded is not None:
        recorded.extend(paths)


def share_document_lock(root: Path, lock: DocumentLock) -> Callable[[], None]:
    """Take `lock` too, after the file's own, around each read-check-write of a document under `root`.
    Returns the call that stops it (an engine's `close`)."""
    with _shared_guard:
        _shared_locks.setdefault(root, []).append(lock)

    def stop() -> None:
        with _shared_guard:
            held = _shared_locks.get(root, [])
            if lock in held:
                held.remove(lock)
            if not held:
                _shared_locks.pop(root, None)

    return stop


@contextlib.contextmanager
def document_lock(path: Path) -> Iterator[None]:
    """The file's lock (`atomic.path_lock`), then the lock an index shares across processes, if any."""
    with path_lock(path), _shared_lock(path):
        yield


@contextlib.contextmanager
def _shared_lock(path: Path) -> Iterator[None]:
    with _shared_guard:
        shared = next(
            (held[-1] for root, held in _shared_locks.items() if held and path.is_relative_to(root)), None
        )
    if shared is None:
        yield
    else:
        with shared(path):
            yield


@contextlib.contextmanager
def move_lock(src: Path, dst: Path) -> Iterator[None]:
    """A document's move holds off every write of its source and its target: their file locks, always taken
    in one order (by directory, then name) so two moves the opposite ways never wait on each other (a file's
    lock across processes is its directory's, `atomic.path_lock`, not reentrant: one directory's is taken
    once), then the source's lock the index shares across processes, as `save` takes it."""
    first, second = sorted((src, dst), key=lambda p: (str(p.parent), p.name))
    with path_lock(first):
        also = contextlib.nullcontext() if second.parent == first.parent else path_lock(second)
        with also, _shared_lock(src):
            yield


@dataclass(frozen=True)
class Written:
    """A write that happened: the new bytes, their hash, and whether the file was new."""

    path: Path
    data: bytes
    created: bool

    @property
    def hash(self) -> str:
        return sha256_hex(self.data)

    @property
    def short_hash(self) -> str:
        return self.hash[:SHORT_HASH]


def hash_matches(base_hash: str, current: str) -> bool:
    """A `base_hash` matches when it has at least 12 hex characters and is a prefix of the current hash."""
    given = base_hash.strip().lower()
    return len(given) >= SHORT_HASH and current.startswith(given)


def check_hash_form(base_hash: str) -> None:
    """A `base_hash` too short or not hex is a mistake of the caller's, said as such (not as a change)."""
    given = base_hash.strip().lower()
    if len(given) < SHORT_HASH or any(c not in "0123456789abcdef" for c in given):
        raise bad_request(
            f"base_hash {base_hash!r} is not a hash: give at least {SHORT_HASH} hex characters of the hash "
            "ragdown_read_doc answered"
        )


def check_base(base_hash: str | None, current: bytes | None, display: str) -> None:
    """Refuse (`conflict`, code `changed`) when the file changed or went away since `base_hash` was read."""
    if base_hash is None:
        return
    check_hash_form(base_hash)
    if current is None:
        raise conflict(f"{display} was deleted since it was opened (base_hash {base_hash})", "changed")
    now = sha256_hex(current)
    if not hash_matches(base_hash, now):
        raise conflict(
            f"{display} changed on disk since it was opened (base_hash {base_hash[:SHORT_HASH]}, now "
            f"{now[:SHORT_HASH]}): read it again",
            "changed",
        )


def check_text(path: Path, data: bytes, display: str) -> None:
    """Refuse plain text (`todo.txt`) the index would skip: bytes that are not UTF-8, or a NUL character
    (binary content). Markdown is read whatever it holds (odd bytes replaced), as the index reads it."""
    if is_plain_text(path.name) and (b"\x00" in data or not _utf8(data)):
        raise bad_request(
            f"{display} would not be text: plain-text files hold UTF-8 text without NUL characters (binary "
            "content is never indexed)"
        )


def check_size(data: bytes, display: str) -> None:
    if len(data) > MAX_DOCUMENT_BYTES:
        raise too_large(
            f"{display} would be {len(data):,} bytes: documents are limited to "
            f"{MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB ({MAX_DOCUMENT_BYTES:,} bytes), the largest the index "
            "reads; split it into several documents",
            "too_large",
        )


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def read_current(path: Path, display: str) -> bytes | None:
    """The file's bytes now, None when there is none; a symlink, a folder or a device at `path` is refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise bad_request(f"{display} is a symbolic link, which ragdown never follows") from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # checked before Python's file object, which refuses a folder itself
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise bad_request(f"{display} is a folder, not a document")
        raise bad_request(f"{display} is not a regular file")
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def decode(data: bytes, display: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise bad_request(f"{display} is not UTF-8 text; edit it in an editor instead") from None


@contextlib.contextmanager
def disk_errors(display: str) -> Iterator[None]:
    """What the disk refuses, said as a refusal instead of an unexpected failure: a read-only filesystem,
    a permission, a full disk."""
    try:
        yield
    except OSError as err:
        if err.errno == errno.EROFS:
            raise unavailable(
                f"{display} cannot be changed: the documents are on a read-only filesystem (serve them with "
                "RAGDOWN_READ_ONLY=true)"
            ) from None
        if err.errno in (errno.EACCES, errno.EPERM):
            raise forbidden(f"{display} cannot be changed: permission denied by the filesystem") from None
        if err.errno in (errno.ENOSPC, errno.EDQUOT):
            raise unavailable(f"{display} cannot be written: the disk is full") from None
        raise


def becomes(data: bytes) -> Change:
    """A change that writes `data` whatever the file holds now (the `base_hash` check guards it)."""

    def change(_old: bytes | None) -> bytes:
        return data

    return change


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def save(
    path: Path,
    display: str,
    change: Change,
    *,
    base_hash: str | None = None,
    journal: Journal | None = None,
    event: str | None = None,
) -> Written:
    """Read, check `base_hash`, compute, size-check, write and record one document, all under its lock."""
    limits = quota.limits_of(journal.folder if journal is not None else None)
    with quota.held(limits), document_lock(path):
        old = read_current(path, display)
        check_base(base_hash, old, display)
        data = change(old)
        check_size(data, display)
        check_text(path, data, display)
        quota.check(limits, old, data, display)
        before_at = _mtime(path) if old is not None else None
        if old is None:
            with disk_errors(display):
                make_parents(path, display)
                atomic.write_new(path, data, display=display)
        else:
            # An editor that does not take our lock may have saved since the read above: theirs wins.
            check_base(sha256_hex(old), read_current(path, display), display)
            with disk_errors(display):
                atomic.replace(path, data)
        _changed(path)
        if journal is not None and data != old:
            journal.saved(path, old, data, event=event, before_at=before_at)
    if journal is not None and data != old:
        journal.finished(path)
    return Written(path, data, created=old is None)


def create(path: Path, data: bytes, display: str, *, journal: Journal | None = None) -> Written:
    """A new document; 409 when anything is already there. Never half-written."""
    check_size(data, display)
    check_text(path, data, display)
    limits = quota.limits_of(journal.folder if journal is not None else None)
    with quota.held(limits), document_lock(path):  # recorded before another write of it can be
        quota.check(limits, None, data, display)
        with disk_errors(display):
            make_parents(path, display)
            atomic.write_new(path, data, display=display)
        if journal is not None:
            journal.saved(path, None, data)
        _changed(path)
    if journal is not None:
        journal.finished(path)
    return Written(path, data, created=True)


def delete(
    path: Path, display: str, *, base_hash: str | None = None, journal: Journal | None = None
) -> bytes:
    """Delete one document (with `base_hash`, only if unchanged since it was read), into the history's
    trash; its last bytes."""
    with document_lock(path):
        old = read_current(path, display)
        if old is None:
            raise not_found(f"no such document: {display}")
        if base_hash is not None:
            check_hash_form(base_hash)
        if base_hash is not None and not hash_matches(base_hash, sha256_hex(old)):
            raise conflict(
                f"{display} changed since you read it (base_hash {base_hash}): read it again", "changed"
            )
        with disk_errors(display):  # refused before the history records a delete that cannot happen
            if os.statvfs(path.parent).f_flag & os.ST_RDONLY:
                raise OSError(errno.EROFS, "read-only filesystem")
            if not os.access(path.parent, os.W_OK):
                raise PermissionError(errno.EACCES, "permission denied")
        if journal is not None:
            journal.deleted(path, old)
        with disk_errors(display):
            path.unlink()
        _changed(path)
    if journal is not None:
        journal.finished(path)
    return old


def same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def move(src: Path, dst: Path, dst_display: str, *, journal: Journal | None = None) -> None:
    """Move a document or a folder to a free `dst` (a change of case only is a rename in place); never
    over anything that is there, even if it appeared a moment ago. Its history follows it: a document's
    move is recorded under both documents' locks, before another write of either can be."""
    if (dst.exists() or dst.is_symlink()) and not same_file(src, dst):
        raise conflict(f"{dst_display} already exists")  # before any folder is made for it
    with disk_errors(dst_display):
        make_parents(dst, dst_display)
        if src.is_dir():
            if dst.exists() and not same_file(src, dst):
                raise conflict(f"{dst_display} already exists")
            os.rename(src, dst)
            if journal is not None:
                journal.moved(src, dst)
        else:
            with move_lock(src, dst):
                if same_file(src, dst):
                    os.rename(src, dst)
                else:
                    try:
                        os.link(src, dst)
                    except FileExistsError:
                        raise conflict(f"{dst_display} already exists") from None
                    os.unlink(src)
                if journal is not None:
                    journal.moved(src, dst)
    _changed(src, dst)
    if journal is not None:
        journal.finished(src, dst)


def delete_folder(path: Path, *, journal: Journal | None = None) -> None:
    """Delete a subfolder and everything in it; its documents go to the history's trash."""
    if journal is not None:
        for doc in documents_under(path):
            data = read_current(doc, doc.name)
            if data is not None:
                journal.deleted(doc, data)
    _remove_tree(path)
    if journal is not None:
        journal.finished(path)


def _remove_tree(path: Path) -> None:
    try:
        if any(path.iterdir()):
            shutil.rmtree(path)
        else:
            path.rmdir()
    finally:  # what rmtree removed before it failed is gone from disk too
        _changed(path)


@dataclass(frozen=True)
class Purged:
    """A delete for good: whether something was on disk (now gone), and the docs-relative paths whose
    history was forgotten."""

    on_disk: bool
    forgotten: list[str]


def purge(
    path: Path, display: str, *, base_hash: str | None = None, journal: Journal | None = None
) -> Purged:
    """Delete for good, never into the trash: the document at `path` (with `base_hash`, only if unchanged
    since it was read) and every version the history holds of it; a subfolder (the caller has checked it may
    go) with every document under it, live or in its trash; or, with nothing on disk there, what the trash
    holds at `path` (a document, or the documents of a deleted folder). `not_found` when there is nothing."""
    if path.is_dir() and not path.is_symlink():
        if base_hash is not None:
            raise bad_request(f"{display} is a subfolder: base_hash is for documents")
        _remove_tree(path)
        forgotten = journal.forget(path, under=True) if journal is not None else []
        if journal is not None:
            journal.finished(path)
        return Purged(True, forgotten)
    with document_lock(path):
        old = read_current(path, display)
        check_base(base_hash, old, display)
        if old is not None:
            with disk_errors(display):
                path.unlink()
            _changed(path)
        forgotten = journal.forget(path) if journal is not None else []
        if old is None and not forgotten and journal is not None:  # a deleted folder's documents
            forgotten = journal.forget(path, under=True, trash_only=True)
    if old is None and not forgotten:
        raise not_found(f"no such document: {display} (nothing on disk or in the trash)")
    if old is not None and journal is not None:
        journal.finished(path)
    return Purged(old is not None, forgotten)


def empty_trash(folder: Path, journal: Journal) -> list[str]:
    """Forget for good every document in the trash under `folder` (a folder or a subfolder): their paths."""
    return journal.forget(folder, under=True, trash_only=True)


def documents_under(directory: Path) -> list[Path]:
    """The documents (Markdown, plain text) the indexer reads under `directory` (no hidden names, no
    symlinks)."""
    return [Path(e.path) for e in tree_files(directory) if is_document(e.name)]
