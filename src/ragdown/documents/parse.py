"""One file's bytes or text to a `Document`, in one pass and without ever raising."""

from __future__ import annotations

from dataclasses import replace

from ragdown.core.paths import is_plain_text
from ragdown.documents.blocks import BlockScan, HeadingBlock, scan_blocks
from ragdown.documents.chunker import MAX_CHUNK_CHARS, chunk_lines
from ragdown.documents.frontmatter import frontmatter_of_lines
from ragdown.documents.links import links_in_lines
from ragdown.documents.meta import meta_from_parts
from ragdown.documents.model import Chunk, Document, DocumentMeta
from ragdown.documents.plain import parse_plain
from ragdown.documents.text import normalize_text, split_lines, stem
from ragdown.documents.tree import Node, tree_of


def decode_text(raw: bytes | str) -> tuple[str, tuple[str, ...]]:
    """UTF-8 text of a file, with undecodable bytes replaced and a warning saying so."""
    if isinstance(raw, str):
        return raw, ()
    try:
        return raw.decode("utf-8"), ()
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), ("not valid UTF-8: undecodable bytes were replaced",)


def parse_document(
    path: str, raw: bytes | str, *, folder: str = "", max_chunk_chars: int = MAX_CHUNK_CHARS
) -> Document:
    """Parse one Markdown file (POSIX `path`, inside `folder`: '' when the path is relative to its folder, or
    the folder is the docs dir) into its metadata, chunks and links; a plain-text file (`todo.txt`) as one
    body of text (`plain.parse_plain`)."""
    text, warnings = decode_text(raw)
    try:
        if is_plain_text(path):
            return parse_plain(path, text, warnings, max_chunk_chars=max_chunk_chars)
        return _parse(path, text, max_chunk_chars, warnings, folder)
    except Exception as error:  # a last guard: one odd file must never stop a sync
        return _fallback(
            path, text, (*warnings, f"internal error while parsing: {type(error).__name__}: {error}")
        )


def _parse(path: str, text: str, max_chunk_chars: int, warnings: tuple[str, ...], folder: str) -> Document:
    lines = split_lines(normalize_text(text))
    front = frontmatter_of_lines(lines)
    body_start = front.body_start_line - 1
    scan = scan_blocks(lines, body_start)
    meta = meta_from_parts(front.data, lines, body_start, scan, path, folder=folder)
    tree = tree_of(lines, body_start, scan, meta.title)
    chunks = [
        replace(c, node_id=tree.deepest_at(c.start_line).node_id)
        for c in chunk_lines(lines, body_start, scan, meta.title, max_chunk_chars)
    ]
    links = links_in_lines(lines, scan)
    return Document(
        path=path,
        meta=meta,
        chunks=tuple(chunks),
        links=tuple(links),
        link_lines=tuple(lines[link.line - 1].strip() for link in links),
        warnings=(*warnings, *front.warnings, *map(_page_break, scan.suspect_setext)),
        tree=tree,
    )


def _page_break(heading: HeadingBlock) -> str:
    lines = heading.end - heading.start - 1  # the underline is not text
    size = f"{lines} lines" if lines > 1 else f"{len(heading.text)} characters"
    return (
        f"line {heading.start + 1}: a setext heading of {size}, likely a converter's page break (a paragraph "
        "over a bare ---): with --no-setext (or RAGDOWN_SETEXT=false) --- is a thematic break and === plain text"
    )


def _fallback(path: str, text: str, warnings: tuple[str, ...]) -> Document:
    """The whole text as one chunk, for a file the parser failed on."""
    lines = split_lines(normalize_text(text))
    title = stem(path)
    try:
        chunks = chunk_lines(lines, 0, BlockScan(), title, MAX_CHUNK_CHARS)
        tree: Node | None = tree_of(lines, 0, BlockScan(), title)
    except Exception:
        chunks = [Chunk(0, "", title, title, 1, 1)]
        tree = None
    if tree is not None:
        chunks = [replace(c, node_id=tree.node_id) for c in chunks]
    return Document(
        path=path, meta=DocumentMeta(title=title), chunks=tuple(chunks), warnings=warnings, tree=tree
    )
