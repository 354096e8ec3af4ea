"""Footnote definitions of a document (`[^1]: …`, `[^note]: …`), found outside code, with their lines.

A definition starts a line with `[^label]:` and goes on over the lines indented by four spaces or a tab
(blank lines between them included), as CommonMark's footnote extension and Obsidian read them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragdown.documents.blocks import scan_blocks
from ragdown.documents.frontmatter import frontmatter_end
from ragdown.documents.text import normalize_text, split_lines

_DEFINITION = re.compile(r"^ {0,3}\[\^([^\]\s]+)\]:[ \t]?(.*)$")


@dataclass(frozen=True)
class Footnote:
    label: str
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str  # the definition's text, its `[^label]:` and the continuation indent dropped


def footnotes(text: str) -> list[Footnote]:
    """Every footnote definition, in document order (a label defined twice: the first counts, as in CommonMark)."""
    lines = split_lines(normalize_text(text))
    body = frontmatter_end(lines)
    scan = scan_blocks(lines, body)
    found: list[Footnote] = []
    seen: set[str] = set()
    i = body
    while i < len(lines):
        match = _DEFINITION.match(lines[i]) if not scan.is_code(i) else None
        if match is None:
            i += 1
            continue
        label, first = match.group(1), match.group(2)
        parts = [first]
        end = i
        j = i + 1
        while j < len(lines):
            line = lines[j]
            if line.startswith(("    ", "\t")):
                parts.append(line[4:] if line.startswith("    ") else line[1:])
                end = j
            elif not line.strip() and j + 1 < len(lines) and lines[j + 1].startswith(("    ", "\t")):
                parts.append("")
            else:
                break
            j += 1
        if label not in seen:
            seen.add(label)
            found.append(Footnote(label, i + 1, end + 1, "\n".join(parts).strip()))
        i = end + 1
    return found


def without_footnotes(lines: list[str], notes: list[Footnote]) -> list[tuple[int, str]]:
    """(1-based number, line) of every line that is not part of a footnote definition."""
    skipped = {n for note in notes for n in range(note.start_line, note.end_line + 1)}
    return [(n, line) for n, line in enumerate(lines, 1) if n not in skipped]
