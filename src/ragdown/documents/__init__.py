"""Markdown documents as ragdown sees them: parsing, chunking, metadata, links, and pure write helpers."""

from ragdown.documents.chunker import CHUNKER_VERSION, MAX_CHUNK_CHARS, breadcrumb, chunk_markdown
from ragdown.documents.errors import DocumentError, EditError
from ragdown.documents.frontmatter import Frontmatter, split_frontmatter
from ragdown.documents.headings import heading_range
from ragdown.documents.links import LinkResolver, ParsedLink, Resolved, find_links, parse_link
from ragdown.documents.meta import normalize_tag, read_document_meta, read_supersedes
from ragdown.documents.model import HEADING_SEPARATOR, Chunk, Document, DocumentMeta, Link
from ragdown.documents.move import LinkRewrite, moved_path, plan_move
from ragdown.documents.parse import decode_text, parse_document
from ragdown.documents.remember import default_note_name, note_names, relative_path, remember_text, slugify
from ragdown.documents.replacements import Edit, apply_replacements
from ragdown.documents.text import has_crlf, normalize_text, to_crlf
from ragdown.documents.writes import append_text, prepare_write, provenance, stamp_provenance

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
