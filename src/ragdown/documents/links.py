"""Wikilinks and relative Markdown links: finding them, parsing them, resolving them (A9).

Offsets and lines refer to the text as `normalize_text` gives it (BOM dropped, CRLF and CR as LF);
lines are the same as the original file's.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple
from urllib.parse import unquote

from ragdown.core.paths import is_markdown
from ragdown.documents.blocks import BlockScan, scan_blocks
from ragdown.documents.frontmatter import frontmatter_end
from ragdown.documents.model import Link
from ragdown.documents.text import mask_code_spans, normalize_text, split_lines, strip_markdown_extension

_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
# `[text](url "title")` or `[text](<url with spaces>)`; the link text holds no brackets, which keeps
# the scan linear on hostile lines.
_MARKDOWN_LINK = re.compile(
    r"(!?)\[[^\[\]\n]*\]\([ \t]{0,32}"
    r"(?:<([^<>\n]*)>|([^\s()<>]+(?:\([^\s()<>]*\)[^\s()<>]*)*))"
    r"(?:[ \t]{1,32}(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]{0,32}\)"
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_LEADING_DOTS = re.compile(r"^(?:\./|/)+")


class ParsedLink(NamedTuple):
    """A link's target (normalised; "" means this document) and heading anchor (None when absent)."""

    target: str
    anchor: str | None


class Resolved(NamedTuple):
    """A resolved link: a folder-relative path (document or attachment) and the heading anchor."""

    path: str
    anchor: str | None = None


def decode_escapes(text: str) -> str:
    """URL escapes decoded when every `%` starts a valid escape and the bytes are UTF-8; else as is."""
    if "%" not in text or _BAD_ESCAPE.search(text):
        return text
    try:
        return unquote(text, errors="strict")
    except UnicodeDecodeError:
        return text


def normalize_target(target: str) -> str:
    """`/`-separated, URL escapes decoded when valid, `.`/`..` folded, leading `./` and `/` stripped."""
    text = decode_escapes(target.replace("\\", "/")).replace("\\", "/")
    if not text:
        return ""
    normalized = _LEADING_DOTS.sub("", posixpath.normpath(text))
    return "" if normalized == "." else normalized


def parse_link(raw: str) -> ParsedLink:
    """Target and anchor of `[[Note]]`, `![[Note#Heading|shown]]` or the bare `Note#Heading`.

    A block reference (`#^id`) is dropped; an escaped table pipe (`\\|`) ends the target like `|`.
    """
    text = raw.strip()
    if text.startswith("!"):
        text = text[1:]
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    text = text.split("|", 1)[0]
    hash_at = text.find("#")
    target = text if hash_at < 0 else text[:hash_at]
    anchor: str | None = None if hash_at < 0 else text[hash_at + 1 :].strip()
    if hash_at < 0 and target.endswith("\\"):
        target = target[:-1]
    elif anchor is not None and anchor.endswith("\\"):
        anchor = anchor[:-1].strip()
    if not anchor or anchor.startswith("^"):
        anchor = None
    return ParsedLink(normalize_target(target.strip()), anchor)


def find_links(text: str) -> list[Link]:
    """Every wikilink and relative Markdown link outside fenced code, indented code and code spans."""
    lines = split_lines(normalize_text(text))
    body_start = frontmatter_end(lines)
    return links_in_lines(lines, scan_blocks(lines, body_start))


def links_in_lines(lines: Sequence[str], scan: BlockScan) -> list[Link]:
    """`find_links` over a document already split into normalised lines and scanned for blocks."""
    links: list[Link] = []
    offset = 0
    for index, line in enumerate(lines):
        line_offset = offset
        offset += len(line) + 1
        if "[" not in line or scan.is_code(index):
            continue
        masked = mask_code_spans(line)
        if "[[" in masked:
            for match in _WIKILINK.finditer(masked):
                if (wiki := _wikilink(match, line, line_offset, index + 1)) is not None:
                    links.append(wiki)
        if "](" in masked:
            for match in _MARKDOWN_LINK.finditer(masked):
                link = _markdown_link(match, line, line_offset, index + 1)
                if link is not None:
                    links.append(link)
    links.sort(key=lambda link: link.target_start)
    return links


def _wikilink(match: re.Match[str], line: str, line_offset: int, number: int) -> Link | None:
    """The link `match` found in the line with its code spans masked; None when its target holds code."""
    masked = match.group(2)
    inner = line[match.start(2) : match.end(2)]
    stop = len(inner)
    for separator in ("#", "|"):
        at = masked.find(separator)
        if 0 <= at < stop:
            stop = at
    target = inner[:stop]
    if target != masked[:stop]:
        return None  # `[[`code`]]`: code, not a link
    if stop < len(inner) and inner[stop] == "|" and target.endswith("\\"):
        target = target[:-1]
    start = line_offset + match.start(2)
    return Link(
        kind="wiki",
        embed=match.group(1) == "!",
        raw=line[match.start() : match.end()],
        target=target,
        anchor=parse_link(inner).anchor,
        line=number,
        target_start=start,
        target_end=start + len(target),
    )


def _markdown_link(match: re.Match[str], line: str, line_offset: int, number: int) -> Link | None:
    group = 2 if match.group(2) is not None else 3
    url = line[match.start(group) : match.end(group)]
    if url != match.group(group):
        return None  # `[text](<`code`>)`: code, not a link
    if not url or url.startswith(("#", "/", "\\")) or _SCHEME.match(url):
        return None
    hash_at = url.find("#")
    target = url if hash_at < 0 else url[:hash_at]
    if not target:
        return None
    fragment = None if hash_at < 0 else decode_escapes(url[hash_at + 1 :]).strip()
    start = line_offset + match.start(group)
    return Link(
        kind="markdown",
        embed=match.group(1) == "!",
        raw=line[match.start() : match.end()],
        target=target,
        anchor=fragment if fragment and not fragment.startswith("^") else None,
        line=number,
        target_start=start,
        target_end=start + len(target),
    )


@dataclass(frozen=True)
class _Candidates:
    exact: dict[str, str]
    lower: dict[str, list[str]]
    by_name: dict[str, list[str]]
    by_alias: dict[str, list[str]]


class LinkResolver:
    """Resolves links within one folder, the way Obsidian does (A9).

    Built from the folder's documents (path → aliases) and its attachments (every non-Markdown
    file), all folder-relative POSIX paths.
    """

    def __init__(self, documents: Mapping[str, Sequence[str]], attachments: Iterable[str] = ()) -> None:
        self._documents = {path: tuple(aliases) for path, aliases in documents.items()}
        self._attachments = frozenset(path for path in attachments if path not in self._documents)
        exact: dict[str, str] = {}
        lower: dict[str, list[str]] = {}
        by_name: dict[str, list[str]] = {}
        by_alias: dict[str, list[str]] = {}
        for path in (*self._documents, *sorted(self._attachments)):
            exact[path] = path
            lower.setdefault(path.lower(), []).append(path)
            keys = set(_suffixes(path.lower()))
            if path in self._documents:
                keys.update(_suffixes(strip_markdown_extension(path).lower()))
            for key in keys:
                by_name.setdefault(key, []).append(path)
        for path, aliases in self._documents.items():
            for alias in {alias.lower() for alias in aliases if alias}:
                by_alias.setdefault(alias, []).append(path)
        self._index = _Candidates(exact, lower, by_name, by_alias)

    @property
    def documents(self) -> Mapping[str, tuple[str, ...]]:
        """The folder's documents and their aliases."""
        return self._documents

    @property
    def attachments(self) -> frozenset[str]:
        """The folder's non-Markdown files."""
        return self._attachments

    def exists(self, path: str) -> bool:
        """Whether a path names a document or an attachment of the folder."""
        return path in self._index.exact

    def resolve(
        self, raw_target: str, from_path: str | None = None, *, markdown: bool = False
    ) -> Resolved | None:
        """Where a link points: a wikilink (`markdown=False`) by exact path, then name or trailing
        path, then alias; a Markdown link's URL only as a path relative to `from_path`."""
        if markdown:
            return self._resolve_relative(raw_target, from_path)
        target, anchor = parse_link(raw_target)
        if not target:
            return Resolved(from_path, anchor) if from_path else None
        from_dir = posixpath.dirname(from_path) if from_path else ""
        path = self._resolve_wiki(target, from_dir)
        return Resolved(path, anchor) if path is not None else None

    def resolve_link(self, link: Link, from_path: str) -> Resolved | None:
        """Where a link found by `find_links` in the document `from_path` points."""
        if link.kind == "markdown":
            return self._resolve_relative(link.target, from_path, link.anchor)
        return self.resolve(link.raw, from_path)

    def candidates(self, raw_target: str, from_path: str | None = None) -> list[str]:
        """Every path a wikilink could mean at the step that resolves it: one for a path that exists as
        written (or beside the linking document), several when a bare name or an alias is shared (Obsidian
        then picks one by its tie-break). Empty when it resolves to nothing."""
        target, _anchor = parse_link(raw_target)
        if not target:
            return [from_path] if from_path else []
        from_dir = posixpath.dirname(from_path) if from_path else ""
        chosen = self._resolve_wiki(target, from_dir)
        if chosen is None:
            return []
        index = self._index
        wanted = [target, posixpath.normpath(posixpath.join(from_dir, target))] if from_dir else [target]
        if any(index.lower.get(path.lower()) for want in wanted for path in _with_markdown(want)):
            return [chosen]
        needle = target.lower()
        for hits in (index.by_name.get(needle), index.by_alias.get(needle)):
            if hits and chosen in hits:
                return sorted(hits)
        return [chosen]

    def _resolve_wiki(self, target: str, from_dir: str) -> str | None:
        index = self._index
        wanted = [target]
        if from_dir:
            relative = posixpath.normpath(posixpath.join(from_dir, target))
            if relative != target and not _escapes(relative):
                wanted.append(relative)
        if _escapes(target):
            wanted.remove(target)
        tries = [path for want in wanted for path in _with_markdown(want)]
        for want in tries:
            if want in index.exact:
                return want
        for want in tries:
            hits = index.lower.get(want.lower())
            if hits:
                return _pick(hits, from_dir)
        needle = target.lower()
        hits = index.by_name.get(needle)
        if hits:
            return _pick(hits, from_dir)
        hits = index.by_alias.get(needle)
        if hits:
            return _pick(hits, from_dir)
        return None

    def _resolve_relative(
        self, url: str, from_path: str | None, anchor: str | None = None
    ) -> Resolved | None:
        hash_at = url.find("#")
        if hash_at >= 0:
            fragment = decode_escapes(url[hash_at + 1 :]).strip()
            anchor = fragment if fragment and not fragment.startswith("^") else anchor
            url = url[:hash_at]
        target = decode_escapes(url.strip().replace("\\", "/"))
        if not target or target.startswith("/") or _SCHEME.match(target):
            return None
        from_dir = posixpath.dirname(from_path) if from_path else ""
        path = posixpath.normpath(posixpath.join(from_dir, target))
        if _escapes(path) or path not in self._index.exact:
            return None
        return Resolved(path, anchor)


def _escapes(path: str) -> bool:
    return path in ("", ".", "..") or path.startswith(("../", "/"))


def _with_markdown(path: str) -> list[str]:
    return [path] if is_markdown(path) else [path, f"{path}.md"]


def _suffixes(path: str) -> Iterable[str]:
    """`a/b/c` gives `c`, `b/c` and `a/b/c`: the names a trailing-path link may use."""
    parts = path.split("/")
    for index in range(len(parts)):
        yield "/".join(parts[index:])


def _pick(paths: Sequence[str], from_dir: str) -> str:
    """The tie-break of name and alias matches: beside the linking document, then shortest, then A-Z."""
    return min(paths, key=lambda path: (posixpath.dirname(path) != from_dir, len(path), path))
