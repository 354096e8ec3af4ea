"""The parsed form of one Markdown file: what the index stores and search returns.

Everything here is pure data. Paths are POSIX, relative to the folder the document belongs to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ragdown.documents.tree import Node

HEADING_SEPARATOR = " › "  # U+203A with a space on each side


@dataclass(frozen=True)
class Chunk:
    """One searchable piece of a section, with 1-based inclusive line numbers of the original file."""

    index: int
    heading: str  # raw heading path, e.g. "Backups › Restore"; "" before the first heading
    breadcrumb: str  # title-led path shown to users and embedded
    text: str
    start_line: int
    end_line: int
    node_id: str = ""  # the section-tree node the chunk starts in (`tree.Node.deepest_at`)

    @property
    def embed_text(self) -> str:
        """What the embedder sees and what BM25 indexes: the breadcrumb, a blank line, the text."""
        return f"{self.breadcrumb}\n\n{self.text}"


@dataclass(frozen=True)
class DocumentMeta:
    """What a document says about itself in its frontmatter and text."""

    title: str
    tags: tuple[str, ...] = ()  # lowercased, sorted, unique, without '#'
    aliases: tuple[str, ...] = ()
    description: str | None = None
    created_by: str | None = None
    session: str | None = None
    supersedes: tuple[str, ...] = ()  # POSIX paths like the document's, resolved inside its folder
    # The frontmatter as read (every key; the index keeps it for `ragdown_query`), JSON-safe values.
    properties: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class Link:
    """A wikilink or relative Markdown link found outside code.

    `target_start`/`target_end` are offsets into the LF-normalised text (`normalize_text`: CRLF and CR
    as LF, a leading BOM dropped) of the exact characters of the target as written (for `[[a/b#H|x]]`
    that is `a/b`), so a move can rewrite just those characters.
    """

    kind: Literal["wiki", "markdown"]
    embed: bool  # `![[...]]` or `![...](...)`
    raw: str  # the whole link as written
    target: str  # the target as written, before normalisation
    anchor: str | None  # heading anchor without '#', block refs dropped
    line: int  # 1-based line in the original file
    target_start: int
    target_end: int


@dataclass(frozen=True)
class Document:
    path: str
    meta: DocumentMeta
    chunks: tuple[Chunk, ...]
    links: tuple[Link, ...] = ()
    link_lines: tuple[str, ...] = ()  # the line of each of `links`, stripped (the index stores it)
    warnings: tuple[str, ...] = field(default=())
    tree: Node | None = None  # its sections as an outline (`tree.py`); None only for a file that failed
