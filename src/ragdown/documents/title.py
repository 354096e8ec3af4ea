"""A document's title: one rule for its chunks' breadcrumbs, its section tree's root and its metadata."""

from __future__ import annotations

from ragdown.documents.blocks import BlockScan
from ragdown.documents.frontmatter import scalar_text
from ragdown.documents.text import stem


def document_title(front_title: object, scan: BlockScan, path: str) -> str:
    """Frontmatter `title`, else the first top-level H1, else the file name without its extension."""
    text = scalar_text(front_title)
    if text:
        return text
    for heading in scan.headings:
        if heading.level == 1 and heading.text:
            return heading.text
    return stem(path)
