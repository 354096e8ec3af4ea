"""The lines of the section under a heading (A9 `headingRange`)."""

from __future__ import annotations

from collections.abc import Sequence

from ragdown.documents.blocks import BlockScan, scan_blocks
from ragdown.documents.frontmatter import frontmatter_end


def heading_range(lines: Sequence[str], anchor: str) -> tuple[int, int] | None:
    """1-based inclusive lines from the heading `anchor` names to the line before the next heading of
    the same or a higher level, or to the end; None when no heading matches.

    Only the last `#`-part of the anchor is compared (`A#B` names `B`), case-insensitively. Headings
    in code and in the frontmatter do not count.
    """
    clean = [line.rstrip("\r") for line in lines]
    return heading_range_in(clean, scan_blocks(clean, frontmatter_end(clean)), anchor)


def heading_range_in(lines: Sequence[str], scan: BlockScan, anchor: str) -> tuple[int, int] | None:
    """`heading_range` over a document already scanned for blocks."""
    wanted = anchor.split("#")[-1].strip().lower()
    headings = scan.headings
    for position, heading in enumerate(headings):
        if heading.text.strip().lower() != wanted:
            continue
        for later in headings[position + 1 :]:
            if later.level <= heading.level:
                return heading.start + 1, later.start
        return heading.start + 1, len(lines)
    return None
