"""The path sandbox: every path a caller names must stay inside its scope, on files the indexer reads.

Refused with a 400: empty, absolute or drive paths, backslashes, NUL, text that is not Unicode, URL-encoded
escapes, `..`, dot segments (`.obsidian`, `.git`), `node_modules`, names or paths longer than a filesystem
takes, a file or symlink among the parents, anything whose real path leaves the scope, and (for documents) a
name that is not Markdown.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ragdown.errors import Refusal, bad_request
from ragdown.index.walk import is_markdown

_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_DRIVE = re.compile(r"^[A-Za-z]:")
NAME_MAX = 255  # bytes in one file or folder name (ext4, APFS, NTFS, …)
PATH_MAX = 4096  # bytes in a whole path, the docs dir's included
_SHOWN = 100  # characters of a path quoted back in a refusal


def _shown(raw: str) -> str:
    return repr(raw if len(raw) <= _SHOWN else raw[:_SHOWN] + "…")


def outside(raw: str) -> Refusal:
    return bad_request(f"{raw!r} is outside the docs folder")


def split_safe(raw: str) -> list[str]:
    """The segments of a relative path, or a refusal saying why it cannot be used."""
    if not isinstance(raw, str) or raw.strip() == "":
        raise bad_request("a path is required")
    if "\x00" in raw:
        raise bad_request("a path must not contain a NUL character")
    if "\\" in raw:
        raise bad_request(f"{raw!r}: use / in paths, not backslashes")
    try:
        size = len(raw.encode("utf-8"))
    except UnicodeEncodeError:
        raise bad_request(f"{_shown(raw)} is not valid Unicode text") from None
    if size >= PATH_MAX:
        raise bad_request(f"{_shown(raw)}: the path is longer than {PATH_MAX} bytes")
    if _ESCAPE.search(raw):
        raise bad_request(f"{raw!r}: URL-encoded characters are not accepted in paths")
    if raw.startswith("/") or _DRIVE.match(raw):
        raise outside(raw)
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if not parts:
        raise bad_request("a path is required")
    for part in parts:
        if part == "..":
            raise outside(raw)
        if part.startswith(".") or part == "node_modules":
            raise bad_request(f"{raw!r}: dot-folders, dot-files and node_modules are not documents")
        if len(part.encode("utf-8")) > NAME_MAX:
            raise bad_request(f"{_shown(raw)}: a name in it is longer than {NAME_MAX} bytes")
    return parts


def resolve_in(root: Path, raw: str, *, markdown: bool = True, create_dirs: bool = False) -> Path:
    """`raw` (relative to `root`) as an absolute path inside `root`, checked against the real filesystem.

    `root` must be a real (resolved) directory. Missing parents are made with `create_dirs`.
    """
    parts = split_safe(raw)
    if markdown and not is_markdown(parts[-1]):
        raise bad_request(f"{raw!r} is not a Markdown document (.md, .markdown or .mdx)")
    if len(os.fsencode(root)) + 1 + len("/".join(parts).encode("utf-8")) >= PATH_MAX:
        raise bad_request(f"{_shown(raw)}: the path is longer than {PATH_MAX} bytes")
    current = root
    try:
        for i, part in enumerate(parts):
            current = current / part
            last = i == len(parts) - 1
            if current.is_symlink():
                raise bad_request(f"{raw!r} goes through a symbolic link")
            if last:
                break
            if current.exists():
                if not current.is_dir():
                    raise bad_request(f"{raw!r}: {'/'.join(parts[: i + 1])} is a file, not a folder")
            elif create_dirs:
                current.mkdir()
    except OSError as err:
        raise bad_request(f"{_shown(raw)} cannot be used: {err.strerror or err}") from None
    real_parent = Path(os.path.realpath(current.parent))
    if real_parent != root and root not in real_parent.parents:
        raise outside(raw)
    return current


def relative_to(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()
