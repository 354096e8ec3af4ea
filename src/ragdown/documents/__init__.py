"""Markdown documents as ragdown sees them: parsing, chunking, metadata, links, and pure write helpers."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragdown.documents.chunker import CHUNKER_VERSION, MAX_CHUNK_CHARS, breadcrumb, chunk_markdown
    from ragdown.documents.errors import DocumentError, EditError
    from ragdown.documents.frontmatter import Frontmatter, split_frontmatter
    from ragdown.documents.headings import heading_range
    from ragdown.documents.links import LinkResolver, ParsedLink, Resolved, find_links, parse_link
    from ragdown.documents.meta import normalize_tag, read_document_meta, read_supersedes
    from ragdown.documents.model import HEADING_SEPARATOR, Chunk, Document, DocumentMeta, Link
    from ragdown.documents.move import LinkRewrite, moved_path, plan_move
    from ragdown.documents.parse import decode_text, parse_document
    from ragdown.documents.remember import (
        default_note_name,
        note_names,
        relative_path,
        remember_text,
        slugify,
    )
    from ragdown.documents.replacements import Edit, apply_replacements
    from ragdown.documents.text import has_crlf, normalize_text, to_crlf
    from ragdown.documents.writes import append_text, prepare_write, provenance, stamp_provenance

# Each name loads its module the first time it is asked for (PEP 562): a process that only reads an index
# (`ragdown search` on an unchanged folder) never imports the parser, the chunker or the write helpers.
_LAZY = {
    "CHUNKER_VERSION": "chunker",
    "MAX_CHUNK_CHARS": "chunker",
    "breadcrumb": "chunker",
    "chunk_markdown": "chunker",
    "DocumentError": "errors",
    "EditError": "errors",
    "Frontmatter": "frontmatter",
    "split_frontmatter": "frontmatter",
    "heading_range": "headings",
    "LinkResolver": "links",
    "ParsedLink": "links",
    "Resolved": "links",
    "find_links": "links",
    "parse_link": "links",
    "normalize_tag": "meta",
    "read_document_meta": "meta",
    "read_supersedes": "meta",
    "HEADING_SEPARATOR": "model",
    "Chunk": "model",
    "Document": "model",
    "DocumentMeta": "model",
    "Link": "model",
    "LinkRewrite": "move",
    "moved_path": "move",
    "plan_move": "move",
    "decode_text": "parse",
    "parse_document": "parse",
    "default_note_name": "remember",
    "note_names": "remember",
    "relative_path": "remember",
    "remember_text": "remember",
    "slugify": "remember",
    "Edit": "replacements",
    "apply_replacements": "replacements",
    "has_crlf": "text",
    "normalize_text": "text",
    "to_crlf": "text",
    "append_text": "writes",
    "prepare_write": "writes",
    "provenance": "writes",
    "stamp_provenance": "writes",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "CHUNKER_VERSION",
    "HEADING_SEPARATOR",
    "MAX_CHUNK_CHARS",
    "Chunk",
    "Document",
    "DocumentError",
    "DocumentMeta",
    "Edit",
    "EditError",
    "Frontmatter",
    "Link",
    "LinkResolver",
    "LinkRewrite",
    "ParsedLink",
    "Resolved",
    "append_text",
    "apply_replacements",
    "breadcrumb",
    "chunk_markdown",
    "decode_text",
    "default_note_name",
    "find_links",
    "has_crlf",
    "heading_range",
    "moved_path",
    "normalize_tag",
    "normalize_text",
    "note_names",
    "parse_document",
    "parse_link",
    "plan_move",
    "prepare_write",
    "provenance",
    "read_document_meta",
    "read_supersedes",
    "relative_path",
    "remember_text",
    "slugify",
    "split_frontmatter",
    "stamp_provenance",
    "to_crlf",
]
