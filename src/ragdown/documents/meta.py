"""What a document says about itself: title, tags, aliases, description, provenance, supersedes (A5)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ragdown.documents.blocks import BlockScan, scan_blocks
from ragdown.documents.frontmatter import frontmatter_of_lines, scalar_text, string_items
from ragdown.documents.model import DocumentMeta
from ragdown.documents.text import mask_code_spans, normalize_text, split_lines
from ragdown.documents.title import document_title

_INLINE_TAG = re.compile(r"(?:^|(?<=\s))#([\w/-]+)")
_VALID_TAG = re.compile(r"[\w/-]+")
_NOT_A_TAG = re.compile(r"[\d/]+")
_TAG_SPLIT = re.compile(r"[\s,]+")
_DRIVE = re.compile(r"^[A-Za-z]:/")


def normalize_tag(raw: str) -> str | None:
    """A tag lowercased without leading `#` or trailing `/`; None when it is not a valid tag.

    Valid tags are letters, digits, `_`, `-` and `/`, and not only digits and slashes (`#2024` is not
    a tag).
    """
    tag = raw.strip().lstrip("#").rstrip("/").lower()
    if not tag or not _VALID_TAG.fullmatch(tag) or _NOT_A_TAG.fullmatch(tag):
        return None
    return tag


def read_document_meta(text: str, path: str, *, folder: str = "") -> DocumentMeta:
    """The metadata of one document's text; `path` (POSIX, inside `folder`: see `supersedes_paths`) gives
    the fallback title and the directory `supersedes` paths are relative to."""
    lines = split_lines(normalize_text(text))
    front = frontmatter_of_lines(lines)
    body_start = front.body_start_line - 1
    scan = scan_blocks(lines, body_start)
    return meta_from_parts(front.data, lines, body_start, scan, path, folder=folder)


def read_supersedes(text: str, path: str, *, folder: str = "") -> tuple[str, ...]:
    """The paths a document's frontmatter says it supersedes, inside its folder (`supersedes_paths`)."""
    lines = split_lines(normalize_text(text))
    return supersedes_paths(frontmatter_of_lines(lines).data.get("supersedes"), path, folder=folder)


def meta_from_parts(
    data: Mapping[str, Any],
    lines: Sequence[str],
    body_start: int,
    scan: BlockScan,
    path: str,
    *,
    folder: str = "",
) -> DocumentMeta:
    """`read_document_meta` over a document that is already split, with its frontmatter and blocks."""
    tags: set[str] = set()
    for raw in _frontmatter_tags(data.get("tags")):
        tag = normalize_tag(raw)
        if tag:
            tags.add(tag)
    tags.update(inline_tags(lines, body_start, scan))
    return DocumentMeta(
        title=document_title(data.get("title"), scan, path),
        tags=tuple(sorted(tags)),
        aliases=_aliases(data.get("aliases")),
        description=scalar_text(data.get("description")),
        created_by=scalar_text(data.get("created_by")),
        session=scalar_text(data.get("session")),
        supersedes=supersedes_paths(data.get("supersedes"), path, folder=folder),
        properties=data,
    )


def inline_tags(lines: Sequence[str], body_start: int, scan: BlockScan) -> set[str]:
    """`#tags` in the body: not in fenced or indented code, 4-space or tab-indented lines, or code spans."""
    tags: set[str] = set()
    for index in range(body_start, len(lines)):
        line = lines[index]
        if "#" not in line or scan.is_code(index) or line.startswith(("    ", "\t")):
            continue
        for raw in set(_INLINE_TAG.findall(mask_code_spans(line))):
            tag = normalize_tag(raw)
            if tag:
                tags.add(tag)
    return tags


def supersedes_paths(value: object, path: str, *, folder: str = "") -> tuple[str, ...]:
    """`supersedes` entries resolved against the document's directory, inside its folder.

    `path` lies in `folder` (`folder/...`; '' when the path is already relative to the folder, as in
    the one-folder mode, where the docs dir is the folder); the entries resolve in the folder's own
    coordinates and come back with `folder/` in front: absolute ones, and `..` leaving the folder (even
    to come back into it), resolve to nothing, so a document only ever retires documents of its own
    folder. A scalar is split on commas; list items are taken whole.
    """
    if folder:
        if not path.startswith(folder + "/"):
            return ()
        path = path[len(folder) + 1 :]
    directory = posixpath.dirname(path.replace("\\", "/"))
    out: list[str] = []
    for entry in supersedes_entries(value):
        resolved = resolve_supersedes(entry, directory)
        if resolved is None:
            continue
        if folder:
            resolved = f"{folder}/{resolved}"
        if resolved not in out:
            out.append(resolved)
    return tuple(out)


def supersedes_entries(value: object) -> list[str]:
    """A `supersedes` value's entries as written: a scalar split on commas, list items taken whole."""
    if isinstance(value, list | tuple):
        return string_items(value)
    text = scalar_text(value)
    return [part.strip() for part in text.split(",")] if text else []


def resolve_supersedes(entry: str, directory: str) -> str | None:
    """One `supersedes` entry resolved against `directory` (both relative to the folder); None for an
    absolute entry or one that leaves the folder."""
    relative = entry.replace("\\", "/")
    if not relative or relative.startswith("/") or _DRIVE.match(relative):
        return None
    resolved = posixpath.normpath(posixpath.join(directory, relative))
    if resolved in (".", "..") or resolved.startswith(("../", "/")):
        return None
    return resolved


def _frontmatter_tags(value: object) -> list[str]:
    if isinstance(value, list | tuple):
        return string_items(value)
    text = scalar_text(value)
    return [part for part in _TAG_SPLIT.split(text) if part] if text else []


def _aliases(value: object) -> tuple[str, ...]:
    if isinstance(value, list | tuple):
        items = string_items(value)
    else:
        text = scalar_text(value)
        items = [text] if text else []
    return tuple(dict.fromkeys(items))
