"""`index.md` upkeep (hallouminate's): after a write made through ragdown, each ancestor directory's
`index.md`, from the folder's root down, gets its link list regenerated between markers.

Opt-in per folder (`"index_md": true` in `.ragdown.json`). Between `<!-- ragdown:index-start -->` and
`<!-- ragdown:index-end -->` (or hallouminate's `<!-- HALLOUMINATE:INDEX-START -->` / `-END -->` where a
file has those), one line per entry: the subdirectories that hold Markdown first, then the files, each
sorted case-insensitively, `- [name](./file.md) — <first H1>` / `- [dir/](./dir/index.md) — <its H1>`, the
gloss only when the H1 is the first non-blank line after the frontmatter; a subdirectory without an index.md
(its documents made outside ragdown, or its index.md ignored) is named, `- dir/`, never linked to a file that
is not there. A missing `index.md` is made
(`# <dir name>` and the markers), unless the ignore rules leave it out; one without markers (a marker in a
code block is none), or with damaged ones, is left alone with a warning; prose outside the markers is never
touched; an unchanged block is not written again. The writes go through
the write door (atomic, recorded in the history like any other).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragdown.core.paths import is_hidden, is_markdown, is_usable
from ragdown.documents.blocks import scan_blocks
from ragdown.documents.frontmatter import frontmatter_end
from ragdown.documents.text import normalize_text, split_lines
from ragdown.history import HistoryStore
from ragdown.history.journal import Journal
from ragdown.vault.folders import read_settings_file
from ragdown.vault.ignore import IgnoreRules
from ragdown.vault.walk import tree_files
from ragdown.writes import door

INDEX_NAME = "index.md"
MARKERS = (
    ("<!-- ragdown:index-start -->", "<!-- ragdown:index-end -->"),
    ("<!-- HALLOUMINATE:INDEX-START -->", "<!-- HALLOUMINATE:INDEX-END -->"),
)


def first_h1(path: Path) -> str | None:
    """The H1 that is a document's first non-blank line after its frontmatter, or None."""
    try:
        with path.open("rb") as fh:
            head = fh.read(64 * 1024).decode("utf-8", "replace")
    except OSError:
        return None
    lines = split_lines(normalize_text(head))
    body = frontmatter_end(lines)
    for index in range(body, len(lines)):
        if not lines[index].strip():
            continue
        scan = scan_blocks(lines[: index + 3], index)
        heading = scan.headings[0] if scan.headings else None
        if heading is not None and heading.start == index and heading.level == 1:
            return heading.text or None
        return None
    return None


Counts = Callable[[Path, bool], bool]  # whether a path counts (the ignore rules): path, is a directory


def _holds_markdown(directory: Path, counts: Counts) -> bool:
    """Whether a directory holds a Markdown document somewhere below it (index.md files alone do not count:
    they only list what is there)."""
    return any(
        is_markdown(e.name) and e.name.lower() != INDEX_NAME and counts(Path(e.path), False)
        for e in tree_files(directory, lambda d: counts(d, True))
    )


def _everything(_path: Path, _is_dir: bool) -> bool:
    return True


def link_list(directory: Path, counts: Counts = _everything) -> list[str]:
    """The lines between the markers for `directory`: its subdirectories holding Markdown, then its files;
    what the ignore rules leave out (`counts`) is not listed."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    dirs = sorted(
        (
            e
            for e in entries
            if e.is_dir(follow_symlinks=False)
            and not is_hidden(e.name)
            and is_usable(e.name)
            and counts(Path(e.path), True)
        ),
        key=lambda e: e.name.lower(),
    )
    files = sorted(
        (
            e
            for e in entries
            if e.is_file(follow_symlinks=False)
            and is_markdown(e.name)
            and not is_hidden(e.name)
            and is_usable(e.name)
            and e.name.lower() != INDEX_NAME
            and counts(Path(e.path), False)
        ),
        key=lambda e: e.name.lower(),
    )
    lines: list[str] = []
    for entry in dirs:
        if not _holds_markdown(Path(entry.path), counts):
            continue
        index = Path(entry.path) / INDEX_NAME
        if not (index.is_file() and not index.is_symlink() and counts(index, False)):
            lines.append(f"- {entry.name}/")  # no index.md to link to (made outside, or ignored): named only
            continue
        gloss = first_h1(index)
        lines.append(f"- [{entry.name}/](./{entry.name}/{INDEX_NAME})" + (f" — {gloss}" if gloss else ""))
    for entry in files:
        gloss = first_h1(Path(entry.path))
        lines.append(f"- [{entry.name}](./{entry.name})" + (f" — {gloss}" if gloss else ""))
    return lines


@dataclass(frozen=True)
class Regenerated:
    text: str | None  # the new text, None when nothing is to be written
    warning: str | None = None


def regenerate(
    current: str | None, directory: Path, counts: Counts = _everything, scaffold: tuple[str, str] = MARKERS[0]
) -> Regenerated:
    """What `directory`'s index.md should hold, given what it holds now (None: no file, made with the
    `scaffold` markers)."""
    block = link_list(directory, counts)
    if current is None:
        start, end = scaffold
        return Regenerated("\n".join([f"# {directory.name}", "", start, *block, end]) + "\n")
    newline = "\r\n" if "\r\n" in current else "\n"
    lines = current.replace("\r\n", "\n").split("\n")
    scan = scan_blocks(lines, frontmatter_end(lines))  # a marker shown in a code block is no marker

    def marker_at(index: int, marker: str) -> bool:
        return lines[index].strip() == marker and not scan.is_code(index)

    for start, end in MARKERS:
        first = next((i for i in range(len(lines)) if marker_at(i, start)), None)
        if first is None:
            continue
        last = next((i for i in range(first + 1, len(lines)) if marker_at(i, end)), None)
        if last is None:
            return Regenerated(
                None, f"{INDEX_NAME} of {directory.name}/ has {start} without {end}: left alone"
            )
        if lines[first + 1 : last] == block:
            return Regenerated(None)
        new = [*lines[: first + 1], *block, *lines[last:]]
        return Regenerated(newline.join(new))
    return Regenerated(None, f"{INDEX_NAME} of {directory.name}/ has no index markers: left alone")


def ancestors(folder_root: Path, path: Path) -> list[Path]:
    """The directories from the folder's root down to `path`'s own (a directory `path` included)."""
    try:
        rel = path.relative_to(folder_root)
    except ValueError:
        return []
    parts = rel.parts[:-1] if not path.is_dir() else rel.parts
    out = [folder_root]
    current = folder_root
    for part in parts:
        current = current / part
        out.append(current)
    return out


def directories_to_refresh(folder_root: Path, changed: Sequence[Path]) -> list[Path]:
    """Every directory whose index.md a change below it may alter, once each: deepest first, so a parent's
    list shows the titles of the index.md files just made below it."""
    seen: dict[Path, None] = {}
    for path in changed:
        for directory in ancestors(folder_root, path):
            if directory.is_dir():
                seen.setdefault(directory, None)
    return sorted(seen, key=lambda d: (-len(d.parts), str(d).lower()))


def upkeep(
    folder_root: Path,
    journal: Journal,
    paths: Sequence[Path],
    *,
    folders: bool = True,
    scaffold: tuple[str, str] = MARKERS[0],
) -> None:
    """Regenerate the index.md of every directory above `paths` (a journal's `after` hook): through the write
    door, recorded in the history as the caller's `(index.md)`; an index.md the caller itself just wrote is
    not written over; a file left alone (no markers, damaged ones) is said in the caller's notes; a missing
    one is made with the `scaffold` markers (hallouminate's own for its tool set)."""
    own = {p for p in journal.changed if p.name.lower() == INDEX_NAME}
    rules = IgnoreRules(journal.root, folders=folders)

    def counts(path: Path, is_dir: bool) -> bool:
        try:
            rel = path.relative_to(journal.root).as_posix()
        except ValueError:
            return False
        return not rules.ignored(rel, is_dir=is_dir)

    follow = Journal(journal.store, journal.root, f"{journal.who} (index.md)", journal.session)
    for directory in directories_to_refresh(folder_root, paths):
        index = directory / INDEX_NAME
        if index in own or not counts(index, False):  # an index.md the ignore rules leave out is not made
            continue
        display = index.relative_to(folder_root).as_posix()
        data = door.read_current(index, display)
        text = data.decode("utf-8", "replace") if data is not None else None
        result = regenerate(text, directory, counts, scaffold)
        if result.warning and result.warning not in journal.notes:
            journal.notes.append(result.warning)
        if result.text is not None:
            door.save(index, display, door.becomes(result.text.encode()), journal=follow)


def new_journal(
    store: HistoryStore | None, root: Path, folder_root: Path, who: str, session: str | None = None
) -> Journal:
    """A journal for one caller's writes in one folder, with its index.md upkeep when `"index_md": true`."""
    wanted = read_settings_file(folder_root).get("index_md") is True
    after = functools.partial(upkeep, folder_root, folders=folder_root != root) if wanted else None
    return Journal(store, root, who, session, after=after, folder=folder_root)
