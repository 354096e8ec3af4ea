"""Advisory lints on what a writer just wrote (hallouminate's, and a few more). A write is never refused for
them: they come back with the write's answer so an agent can fix its own Markdown.

- a heading more than one level deeper than the heading before it (`heading level jumps from h1 to h3`),
- a link or image with an empty destination (`[text]()`),
- a mermaid fence with nothing in it,
- a wikilink that resolves to nothing, or to several documents,
- a relative link or embed to a file that does not exist,
- frontmatter that is not valid YAML.

Pure: the caller gives the folder's `LinkResolver` (its documents and attachments).
"""

from __future__ import annotations

import re

from ragdown.documents.blocks import scan_blocks
from ragdown.documents.frontmatter import frontmatter_end
from ragdown.documents.links import LinkResolver, find_links
from ragdown.documents.text import mask_code_spans, normalize_text, split_lines

# `(`, blanks, an optional `<>` with blanks after it, `)`: one way to match each blank, so a run of them with no
# `)` after it is read once (`\(\s*(?:<\s*>)?\s*\)` tried every split of the run: O(n²), hours for a 4 MiB line).
_EMPTY_DESTINATION = re.compile(r"(!?)\[([^\[\]\n]*)\]\(\s*(?:<\s*>\s*)?\)")
_MERMAID = re.compile(r"^\s{0,3}(```+|~~~+)\s*mermaid\b", re.IGNORECASE)
MAX_WARNINGS = 50


def lint(text: str, path: str, resolver: LinkResolver | None = None) -> list[str]:
    """Warnings for `text`, the document at folder-relative `path`, each `line N: what`; at most 50."""
    lines = split_lines(normalize_text(text))
    warnings: list[str] = []
    body = frontmatter_end(lines)
    warnings.extend(_frontmatter(lines, body))
    scan = scan_blocks(lines, body)
    previous = 0
    for heading in scan.headings:
        if previous and heading.level > previous + 1:
            warnings.append(
                f"line {heading.start + 1}: heading level jumps from h{previous} to h{heading.level}"
            )
        previous = heading.level
    for number, line in enumerate(lines, 1):
        if number - 1 < body or scan.is_code(number - 1):
            continue
        for match in _EMPTY_DESTINATION.finditer(mask_code_spans(line)):
            what = "an image" if match.group(1) else "a link"
            warnings.append(f"line {number}: {what} with an empty destination: {match.group(0)}")
    warnings.extend(_empty_mermaid(lines, scan.fences))
    if resolver is not None:
        warnings.extend(_links(text, path, resolver))
    warnings.sort(key=lambda w: int(w.split(":", 1)[0].split()[1]))  # by line, stable within one
    return warnings[:MAX_WARNINGS]


def _frontmatter(lines: list[str], body: int) -> list[str]:
    if body == 0 or not lines or lines[0].strip() != "---":
        return []
    raw = "\n".join(lines[1 : body - 1])
    import yaml  # here: only a document with frontmatter needs it

    try:
        yaml.safe_load(raw)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 2}" if mark is not None else "line 1"
        problem = getattr(err, "problem", None) or str(err).split("\n", 1)[0]
        return [f"{where}: the frontmatter is not valid YAML ({problem})"]
    return []


def _empty_mermaid(lines: list[str], fences: tuple[tuple[int, int], ...]) -> list[str]:
    out = []
    for start, end in fences:
        if _MERMAID.match(lines[start]) and not any(line.strip() for line in lines[start + 1 : end - 1]):
            out.append(f"line {start + 1}: an empty mermaid diagram")
    return out


def _links(text: str, path: str, resolver: LinkResolver) -> list[str]:
    out = []
    for link in find_links(text):
        if link.kind == "wiki":
            found = resolver.candidates(link.raw, path)
            if not found:
                out.append(f"line {link.line}: {link.raw} links to nothing in this folder")
            elif len(found) > 1:
                out.append(
                    f"line {link.line}: {link.raw} could mean several documents: {', '.join(found[:5])}"
                )
            continue
        target = link.target.strip()
        if not target or target.startswith(("#", "/")) or re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:", target):
            continue
        if resolver.resolve_link(link, path) is None:
            what = "an embed" if link.embed else "a link"
            out.append(f"line {link.line}: {what} to a missing file: {target}")
    return out
