"""The name key of a link target: what the index's link table is looked up by.

A link can only resolve (`links.LinkResolver`) to a document whose key is the key of its target as written:
the last segment of the path, lowercased, without a Markdown extension; or to a document with an alias of
that key. Backlinks of a document are then the few stored links named by its key or its aliases' keys,
each resolved to confirm it, never every link of the folder.
"""

from __future__ import annotations

import posixpath

from ragdown.documents.links import decode_escapes, parse_link
from ragdown.documents.model import Link
from ragdown.documents.text import strip_markdown_extension


def name_key(target: str) -> str:
    """`a/b/Note.md`, `Note` and `note.MD` all give `note`."""
    return strip_markdown_extension(posixpath.basename(target.rstrip("/")).lower())


def link_key(link: Link) -> str:
    """The key of the document `link` names ('' for a link to a heading of its own document)."""
    if link.kind == "markdown":
        url = link.target.split("#", 1)[0]
        return name_key(decode_escapes(url.strip().replace("\\", "/")))
    return name_key(parse_link(link.raw).target)


def document_keys(path: str, aliases: tuple[str, ...] | list[str]) -> list[str]:
    """Every key a link to the document at `path` (with `aliases`) may carry."""
    keys = [name_key(path)]
    for alias in aliases:
        key = name_key(alias)
        if key and key not in keys:
            keys.append(key)
    return keys
