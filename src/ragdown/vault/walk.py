"""Which files the index reads: Markdown and plain text (`paths.DOCUMENT_EXTENSIONS`) under the docs dir, never hidden names (`paths.is_hidden`) or
symlinks; names ragdown cannot carry (not Unicode text, or holding a control character: `paths.name_problem`)
are set aside with a reason instead of breaking the sync or forging lines in a listing."""

from __future__ import annotations

import logging
import os
import shlex
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ragdown.core.paths import (
    DOCUMENT_EXTENSIONS,
    is_hidden,
    is_markdown,
    is_usable,
    name_problem,
    printable_name,
)
from ragdown.vault.ignore import IgnoreRules

log = logging.getLogger(__name__)


class FileStat(NamedTuple):
    """A tuple, not a dataclass: cheap to build (one per file per sync), and equal to the file's
    `Store.file_stats()` row while the file is unchanged, which is how a sync finds unchanged files."""

    path: str  # POSIX, relative to the docs dir
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class WalkResult:
    files: list[FileStat]
    loose: list[str]  # serve mode: Markdown directly in the docs dir, listed but never indexed
    # Markdown files, and directories, whose name ragdown cannot carry, with why: docs-relative, printable
    # (`bad\udcff.md` shown as `bad\\udcff.md`, a line break as `\\n`), never indexed.
    unusable: dict[str, str] = field(default_factory=dict)


def folder_of(path: str, *, folders: bool) -> str:
    """The folder a docs-relative path belongs to: its first segment in `serve`, '' in `stdio`."""
    return path.split("/", 1)[0] if folders else ""


def walk_markdown(
    root: Path, *, folders: bool, rules: IgnoreRules | None = None, under: str = ""
) -> WalkResult:
    """Every document (Markdown or plain text) under `root` the index should hold.

    With `folders` (serve mode) only files inside top-level directories count; Markdown loose at the top
    is returned separately. `rules` (gitignore files, `.ragdownignore`, folder settings) leave out what they
    ignore: an ignored directory is never entered. Unreadable directories are logged and skipped, never fatal.
    `under` (a docs-relative directory, with its trailing `/`) walks only that part of the tree.
    """
    files: list[FileStat] = []
    loose: list[str] = []
    unusable: dict[str, str] = {}
    stack: list[tuple[str, str]] = [(os.path.join(root, under) if under else str(root), under)]
    while stack:
        directory, rel = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError as err:
            log.warning(
                "skipping unreadable directory %s: %s", printable_name(directory), err.strerror or err
            )
            continue
        # The rules are asked about each entry only where some rule applies (most vaults have none).
        asked = rules if rules is not None and not rules.quiet(rel[:-1]) else None
        for entry in entries:
            name = entry.name
            try:
                # Without following links, a symlink is neither a directory nor a file: both are skipped.
                if entry.is_dir(follow_symlinks=False):
                    if is_hidden(name):
                        continue
                    problem = name_problem(name)
                    if problem is not None:
                        unusable[printable_name(f"{rel}{name}/")] = problem
                    elif asked is None or not asked.ignored(rel + name, is_dir=True):
                        stack.append((entry.path, f"{rel}{name}/"))
                    continue
                # Cheap name tests first: only documents cost a stat() (the walk's main cost).
                if (
                    is_hidden(name)
                    or not name.lower().endswith(DOCUMENT_EXTENSIONS)
                    or not entry.is_file(follow_symlinks=False)
                ):
                    continue
                problem = name_problem(name)
                if problem is not None:
                    unusable[printable_name(rel + name)] = problem
                    continue
                if folders and not rel:
                    if is_markdown(name):  # plain text loose at the top is not a note left out
                        loose.append(name)
                    continue
                if asked is not None and asked.ignored(rel + name, is_dir=False):
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError as err:
                log.warning("skipping %s: %s", printable_name(entry.path), err.strerror or err)
                continue
            files.append(FileStat(rel + name, st.st_size, st.st_mtime_ns))
    files.sort()  # by path: paths are unique, so the other fields never decide
    loose.sort()
    return WalkResult(files, loose, dict(sorted(unusable.items())))


def markdown_at(root: Path, rel: str, *, folders: bool, rules: IgnoreRules) -> list[FileStat]:
    """What `walk_markdown` finds at the docs-relative `rel` alone: the file when it is one the walk indexes,
    every file the walk indexes under it when it is a directory, nothing when it is neither (gone, hidden,
    ignored, a symlink, not a document, loose in serve mode, or below a directory the walk never enters)."""
    parts = rel.split("/")
    if any(not p or p in (".", "..") or is_hidden(p) or not is_usable(p) for p in parts):
        return []
    for depth in range(1, len(parts)):
        directory = "/".join(parts[:depth])
        try:
            mode = os.lstat(os.path.join(root, directory)).st_mode
        except OSError:
            return []
        if not stat.S_ISDIR(mode) or rules.ignored(directory, is_dir=True):
            return []
    try:
        st = os.lstat(os.path.join(root, rel))
    except OSError:
        return []
    if stat.S_ISDIR(st.st_mode):
        if rules.ignored(rel, is_dir=True):
            return []
        return walk_markdown(root, folders=folders, rules=rules, under=rel + "/").files
    if (
        not stat.S_ISREG(st.st_mode)
        or not parts[-1].lower().endswith(DOCUMENT_EXTENSIONS)
        or (folders and len(parts) == 1)
        or rules.ignored(rel, is_dir=False)
    ):
        return []
    return [FileStat(rel, st.st_size, st.st_mtime_ns)]


def loose_markdown(root: Path) -> list[str]:
    """Markdown directly in the docs dir, outside every folder: `serve` lists these but never indexes them."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return []
    names = [
        e.name
        for e in entries
        if not is_hidden(e.name)
        and is_markdown(e.name)
        and is_usable(e.name)
        and e.is_file(follow_symlinks=False)
    ]
    return sorted(names)


def tree_files(directory: Path, descend: Callable[[Path], bool] | None = None) -> Iterator[os.DirEntry[str]]:
    """Every regular file below `directory` the index's walk would see: hidden names, names it cannot carry
    and symlinks left out; a subdirectory is entered only when `descend(path)` allows it (the ignore
    rules, for callers that apply them). Unreadable directories are skipped. Markdown or not: callers pick."""
    stack = [directory]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if is_hidden(name) or not is_usable(name):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if descend is None or descend(Path(entry.path)):
                        stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    yield entry
            except OSError:
                continue


VAULT_MARKER = ".obsidian"  # the directory Obsidian keeps at the root of a vault


def vault_notice(root: Path) -> str | None:
    """What to say when the docs dir `serve` was given is itself an Obsidian vault (`.obsidian/` at its
    root): served as it is, it splits into one folder per top-level directory, its top-level notes are
    not indexed and links between the parts break. None for a docs dir that is not a vault."""
    if not (root / VAULT_MARKER).is_dir():
        return None
    loose = len(loose_markdown(root))
    notes = "its top-level note is" if loose == 1 else f"its {loose} top-level notes are"
    parent, vault = shlex.quote(str(root.parent)), shlex.quote(str(root))
    return (
        f"The docs directory {root} looks like an Obsidian vault ({VAULT_MARKER}/ at its root): ragdown serve "
        f"makes each of its top-level directories a folder of its own, so {notes} not indexed and links "
        f"between the folders break. Serve the directory above it instead, where the vault is one folder "
        f"(RAGDOWN_DOCS_DIR={parent} ragdown serve, or make serve DOCS={parent}), or serve the vault alone "
        f"as one folder over MCP with RAGDOWN_DOCS_DIR={vault} ragdown stdio."
    )
