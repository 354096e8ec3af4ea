"""Link rewriting for a move within one folder (A10), as pure text: no files are read or written."""

from __future__ import annotations

import bisect
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from ragdown.core.paths import is_markdown
from ragdown.documents.links import LinkResolver, find_links
from ragdown.documents.model import Link
from ragdown.documents.remember import relative_path
from ragdown.documents.text import BOM, strip_markdown_extension

# What JavaScript's encodeURI leaves alone, less `#` and `?`, which in a file name are not a
# fragment or a query; `(` and `)` are escaped separately.
_URI_SAFE = ";,/:@&=+$-_.!~*'"


@dataclass(frozen=True)
class LinkRewrite:
    """A document whose links a move changes: where it was, where it is now, and its new text."""

    path: str
    new_path: str
    text: str


def moved_path(path: str, moves: Mapping[str, str]) -> str:
    """Where `path` is after the moves: a key names a file or a directory (everything under it moves)."""
    if path in moves:
        return moves[path]
    parent = path
    while True:
        parent = posixpath.dirname(parent)
        if not parent:
            return path
        if parent in moves:
            return moves[parent] + path[len(parent) :]


def plan_move(
    documents: Mapping[str, str],
    moves: Mapping[str, str],
    *,
    attachments: Iterable[str] = (),
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> list[LinkRewrite]:
    """The documents of a folder whose link targets must change for the moves (old → new path, files
    or directories) to keep every link pointing where it did.

    `documents` maps every Markdown document of the folder, before the move, to its text as read
    (any line endings; they are kept). A link that resolved to nothing, or that still resolves to the
    same file at its new place, is left alone. A wikilink gets the shortest trailing part of the new
    path that resolves to it from the linking document (`.md` only if it had one); a Markdown link
    gets the relative path, URI-encoded with `(` and `)` as `%28` and `%29`.
    """
    known_aliases = aliases or {}
    attachment_paths = list(attachments)
    before = LinkResolver({path: known_aliases.get(path, ()) for path in documents}, attachment_paths)
    after = LinkResolver(
        {moved_path(path, moves): known_aliases.get(path, ()) for path in documents},
        [moved_path(path, moves) for path in attachment_paths],
    )
    rewrites: list[LinkRewrite] = []
    for path in sorted(documents):
        original = documents[path]
        new_path = moved_path(path, moves)
        edits: list[tuple[int, int, str]] = []
        for link in find_links(original):
            was = before.resolve_link(link, path)
            if was is None:
                continue
            want = moved_path(was.path, moves)
            now = after.resolve_link(link, new_path)
            if now is not None and now.path == want:
                continue
            edits.append((link.target_start, link.target_end, _new_target(link, want, new_path, after)))
        if not edits:
            continue
        text = _apply(original, edits)
        if text != original:
            rewrites.append(LinkRewrite(path, new_path, text))
    return rewrites


def _new_target(link: Link, want: str, from_path: str, resolver: LinkResolver) -> str:
    if link.kind == "markdown":
        encoded = quote(relative_path(from_path, want), safe=_URI_SAFE)
        return encoded.replace("(", "%28").replace(")", "%29")
    document = want in resolver.documents
    keep_extension = document and is_markdown(link.target.strip())
    bare = strip_markdown_extension(want) if document and not keep_extension else want
    segments = bare.split("/")
    for count in range(1, len(segments) + 1):
        candidate = "/".join(segments[-count:])
        found = resolver.resolve(candidate, from_path)
        if found is not None and found.path == want:
            return candidate
    return bare


def _apply(original: str, edits: list[tuple[int, int, str]]) -> str:
    """Replace spans given in `normalize_text` offsets, in the original text with its own line endings."""
    bom = 1 if original.startswith(BOM) else 0
    crlf_at: list[int] = []
    at = original.find("\r\n", bom)
    while at >= 0:
        crlf_at.append(at - bom - len(crlf_at))
        at = original.find("\r\n", at + 2)

    def to_original(offset: int) -> int:
        return offset + bom + bisect.bisect_left(crlf_at, offset)

    text = original
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[: to_original(start)] + replacement + text[to_original(end) :]
    return text
