"""A folder's quotas (`max_files`, `max_bytes`, `max_file_bytes` in its `.ragdown.json`) and its usage.

The write door (`door.save`, `door.create`) is the one place they are enforced, before anything is
written: it learns the folder from the caller's `Journal` (`Journal.folder`, set by `wiki.new_journal`
for every write a tool, route or tool set makes) and asks `limits_of` for its quota. A folder without
one costs a read of its settings file and nothing else. With one, the door holds the folder's lock
(`held`: writers of one folder take turns in this process, so two writes cannot both take the last
place) and `check`s the write against the usage counted on disk (`usage_of`: the Markdown documents the
index would walk, hidden names and symlinks left out, by `lstat` size), so a file made by an editor a
moment ago counts as well.

- `max_file_bytes`: a document past it is `too_large` (HTTP 413);
- `max_files`: a new document past it is `over_quota` (HTTP 402);
- `max_bytes`: a write that makes the folder's documents larger than it is `over_quota`.

A write that does not grow the folder (an edit that shortens a document, a move, a delete) is never
refused, so a folder over a quota lowered below its usage can always be cleaned up. The door's own
upkeep (`index.md` link lists) is not counted against the caller. Across processes (a second
`ragdown stdio` on the same folder) the check is made but not serialised: two processes may overshoot by
their writes in flight.

Usage is reported in ragdown's own answers as `13/50 files, 0.05/5 MB` (`Usage.report`); the `readmedb`
tool set's write answers and `get_namespace_summary` write it exactly as ReadmeDB does (`"13/50"`,
`"0.05/5 MB"`, `maxMB` `"5"`: `toolsets/readmedb_base.py`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdown.core.config import bounds, problem
from ragdown.core.errors import bad_request, over_quota, too_large
from ragdown.core.paths import is_document
from ragdown.vault.folders import SETTINGS_FILE, read_settings_file
from ragdown.vault.walk import tree_files

log = logging.getLogger(__name__)

QUOTA_KEYS = ("max_files", "max_bytes", "max_file_bytes")
MB = 1024 * 1024


@dataclass(frozen=True)
class Quota:
    max_files: int | None = None
    max_bytes: int | None = None
    max_file_bytes: int | None = None

    @property
    def set(self) -> bool:
        return any(getattr(self, k) is not None for k in QUOTA_KEYS)

    def as_dict(self) -> dict[str, int]:
        return {k: v for k in QUOTA_KEYS if (v := getattr(self, k)) is not None}

    def or_ceilings(self) -> Quota:
        """This quota with `max_files` and `max_bytes`, where unset, at their ceiling: the largest value
        the setting may take (`config`'s bounds: 10,000,000 files, 1 PiB), the server's hard limit when a
        folder sets none. For answers that must give a number in every limit field (ReadmeDB's summary and
        write answers)."""
        return Quota(
            max_files=self.max_files if self.max_files is not None else ceiling("max_files"),
            max_bytes=self.max_bytes if self.max_bytes is not None else ceiling("max_bytes"),
            max_file_bytes=self.max_file_bytes,
        )


def ceiling(key: str) -> int:
    """The largest value the quota setting `key` may take (its bound in `config`'s schema)."""
    return int(bounds(key)["le"])


def parse_quota(raw: dict[str, Any], *, where: str = SETTINGS_FILE) -> Quota:
    """A folder's quota from its settings; a value that is not valid is logged and left out (no limit)."""
    values: dict[str, int] = {}
    for key in QUOTA_KEYS:
        value = raw.get(key)
        if value is None:
            continue
        why = problem(key, value)
        if why:
            log.warning("%s: %s; that quota is not applied", where, why)
            continue
        values[key] = int(value)
    return Quota(**values)


def quota_value(key: str, value: Any) -> int | None:
    """A quota value sent to `PATCH /api/folders/<name>`: a whole number within its bounds, or None to
    remove it; `invalid` otherwise."""
    if value is None:
        return None
    why = problem(key, value)
    if why:
        raise bad_request(why)
    return int(value)


def quota_of(folder_dir: Path) -> Quota:
    return parse_quota(read_settings_file(folder_dir), where=str(folder_dir / SETTINGS_FILE))


@dataclass(frozen=True)
class Usage:
    files: int
    bytes: int

    def report(self, quota: Quota) -> dict[str, Any]:
        """Usage and limits as the answers carry them: numbers, and ReadmeDB's phrases."""
        if quota.max_files:
            files = f"{self.files}/{quota.max_files} files"
        else:
            files = f"{self.files} file" + ("" if self.files == 1 else "s")
        text = f"{files}, {storage_text(self.bytes, quota.max_bytes)}"
        return {"files": self.files, "bytes": self.bytes, **quota.as_dict(), "text": text}


def mb_text(size: int) -> str:
    """A size in MB as ragdown's answers write a limit: `5`, `0.5`, `0.05`."""
    return f"{size / MB:.2f}".rstrip("0").rstrip(".") or "0"


def storage_text(used: int, limit: int | None) -> str:
    """`0.05/5 MB` (`0.05 MB` without a limit); a limit under 0.01 MB is said in bytes (`101/100 bytes`)."""
    if limit is not None and limit < MB // 100:
        return f"{used:,}/{limit:,} bytes"
    return f"{used / MB:.2f}" + (f"/{mb_text(limit)} MB" if limit is not None else " MB")


def usage_of(folder_dir: Path) -> Usage:
    """The folder's documents (Markdown and plain text) on disk now: how many, and their bytes."""
    files = size = 0
    for entry in tree_files(folder_dir):
        if not is_document(entry.name):
            continue
        try:
            size += entry.stat(follow_symlinks=False).st_size
        except OSError:
            continue
        files += 1
    return Usage(files, size)


def report(folder_dir: Path) -> dict[str, Any] | None:
    """The folder's usage against its quota, or None when it has none (nothing is counted then)."""
    quota = quota_of(folder_dir)
    return usage_of(folder_dir).report(quota) if quota.set else None


# -- the door's side ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """A folder's quota, as the door holds it for one write."""

    folder_dir: Path
    quota: Quota


_folder_locks: dict[Path, threading.Lock] = {}
_folder_locks_guard = threading.Lock()


def limits_of(folder_dir: Path | None) -> Limits | None:
    """The quota a write into `folder_dir` must keep, or None (no folder known, or no quota set)."""
    if folder_dir is None:
        return None
    quota = quota_of(folder_dir)
    return Limits(folder_dir, quota) if quota.set else None


@contextlib.contextmanager
def held(limits: Limits | None) -> Iterator[None]:
    """Writers of a folder with a quota take turns between the check and the write (within the process)."""
    if limits is None:
        yield
        return
    with _folder_locks_guard:
        lock = _folder_locks.setdefault(limits.folder_dir, threading.Lock())
    with lock:
        yield


def check(limits: Limits | None, old: bytes | None, data: bytes, display: str) -> None:
    """Refuse a write of `data` over `old` (None: a new document) that would pass the folder's quota."""
    if limits is None:
        return
    quota = limits.quota
    before = len(old) if old is not None else 0
    if old is not None and len(data) <= before:
        return  # an edit that does not grow the folder is always allowed
    if quota.max_file_bytes is not None and len(data) > quota.max_file_bytes:
        raise too_large(
            f"{display} would be {len(data):,} bytes: this folder takes documents of at most "
            f"{quota.max_file_bytes:,} bytes (max_file_bytes)",
            "too_large",
        )
    if quota.max_files is None and quota.max_bytes is None:
        return
    usage = usage_of(limits.folder_dir)
    shown = usage.report(quota)["text"]
    if old is None and quota.max_files is not None and usage.files + 1 > quota.max_files:
        raise over_quota(
            f"{display} would be document {usage.files + 1} of a folder that holds at most {quota.max_files} "
            f"(max_files; now {shown}): delete or move documents first",
            usage.report(quota),
        )
    after = usage.bytes - before + len(data)
    if quota.max_bytes is not None and after > quota.max_bytes:
        raise over_quota(
            f"writing {display} would make the folder's documents {after:,} bytes, past its "
            f"{quota.max_bytes:,} (max_bytes; now {shown}): make room first",
            usage.report(quota),
        )


__all__ = [
    "QUOTA_KEYS",
    "Limits",
    "Quota",
    "Usage",
    "ceiling",
    "check",
    "held",
    "limits_of",
    "mb_text",
    "parse_quota",
    "quota_of",
    "quota_value",
    "report",
    "storage_text",
    "usage_of",
]
