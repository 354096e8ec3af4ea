"""A plain-text document (`todo.txt`, `notes.json`: `paths.TEXT_EXTENSIONS`) as a `Document`: one body,
never parsed as Markdown (no frontmatter, headings, tags or links), titled by its file name, chunked at
blank lines and by size like a long section."""

from __future__ import annotations

import posixpath
from dataclasses import replace

from ragdown.documents.blocks import BlockScan
from ragdown.documents.chunker import MAX_CHUNK_CHARS, chunk_lines
from ragdown.documents.model import Document, DocumentMeta
from ragdown.documents.text import normalize_text, split_lines
from ragdown.documents.tree import tree_of


def parse_plain(
    path: str, text: str, warnings: tuple[str, ...] = (), *, max_chunk_chars: int = MAX_CHUNK_CHARS
) -> Document:
    """`text`, the file at `path`, as one body of text whose title is the file's name (`todo.txt`)."""
    lines = split_lines(normalize_text(text))
    title = posixpath.basename(path)
    scan = BlockScan()  # no blocks: no heading, no fence, nothing Markdown would read
    tree = tree_of(lines, 0, scan, title)  # as `tree.build_tree` builds it for a read by node id
    chunks = [
        replace(c, node_id=tree.deepest_at(c.start_line).node_id)
        for c in chunk_lines(lines, 0, scan, title, max_chunk_chars)
    ]
    return Document(
        path=path, meta=DocumentMeta(title=title), chunks=tuple(chunks), warnings=warnings, tree=tree
    )
