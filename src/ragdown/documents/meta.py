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


def read_document_meta(text: str, path: str) -> DocumentMeta:
    """The metadata of one document's text; `path` (folder-relative POSIX) gives the fallback title
    and the directory `supersedes` paths are relative to."""
    lines = split_lines(normalize_text(text))
    front = frontmatter_of_lines(lines)
    body_start = front.body_start_line - 1
    scan = scan_blocks(lines, body_start)
    return meta_from_parts(front.data, lines, body_start, scan, path)


def read_supersedes(text: str, path: str) -> tuple[str, ...]:
    """The folder-relative paths a document's frontmatter says it supersedes."""
    lines = split_lines(normalize_text(text))
    return supersedes_paths(frontmatter_of_lines(lines).data.get("supersedes"), path)


def meta_from_parts(
    data: Mapping[str, Any], lines: Sequence[str], body_start: int, scan: BlockScan, path: str
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
        supersedes=supersedes_paths(data.get("supersedes"), path),
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


def supersedes_paths(value: object, path: str) -> tuple[str, ...]:
    """`supersedes` entries resolved against the document's directory; absolute or escaping ones dropped.

    A scalar is split on commas; list items are taken whole.
    """
    if isinstance(value, list | tuple):
        entries = string_items(value)
    else:
        text = scalar_text(value)
        entries = [part.strip() for part in text.split(",")] if text else []
    directory = posixpath.dirname(path.replace("\\", "/"))
    out: list[str] = []
    for entry in entries:
        relative = entry.replace("\\", "/")
        if not relative or relative.startswith("/") or _DRIVE.match(relative):
            continue
        resolved = posixpath.normpath(posixpath.join(directory, relative))
        if resolved in (".", "..") or resolved.startswith(("../", "/")):
            continue
        if resolved not in out:
            out.append(resolved)
    return tuple(out)


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
