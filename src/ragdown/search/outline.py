"""Structure-first navigation: the folder tree of a scope and a document's section tree, cut to a depth,
and answers paged under a budget. Shared by `ragdown_outline`, the CLI and the `markindex` tool set.

Everything here works on what the index holds (records and stored trees); paths are docs-relative and the
caller's `view` turns them into what the endpoint shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ragdown.core.errors import bad_request, not_found

if TYPE_CHECKING:  # annotations only: the CLI's parser reads DEFAULT_DEPTH without loading the index
    from ragdown.documents.tree import Node
    from ragdown.storage.records import FileRecord

MAX_ANSWER_CHARS = 95_000  # no answer of an outline or a node's text is longer than this
DEPTH_RANGE = (1, 10)
DEFAULT_DEPTH = 2


@dataclass(frozen=True)
class Shown:
    """A node as an outline shows it at a cut: how deep it sits and how many nodes lie below the cut."""

    node: Node
    depth: int
    below: int


def cut(start: Node, depth: int, *, include_start: bool) -> list[Shown]:
    """`start`'s subtree to `depth` levels below it, in document order; a node at the cut counts what it hides."""
    shown: list[Shown] = []

    def visit(node: Node, level: int) -> None:
        at_cut = level >= depth
        shown.append(Shown(node, level, node.count() if at_cut else 0))
        if not at_cut:
            for child in node.children:
                visit(child, level + 1)

    if include_start:
        visit(start, 0)
    else:
        for child in start.children:
            visit(child, 1)
    return shown


def find_node(tree: Node, node_id: str, display: str) -> Node:
    """The node `node_id` names; a stale id (the outline changed) is refused, never matched to another."""
    node = tree.find(node_id.strip())
    if node is None:
        raise not_found(
            f"node {node_id!r} is not in the outline of {display}: the document changed since the id was "
            f"read; re-read the outline (ragdown_outline path={display!r})"
        )
    return node


def check_depth(depth: int) -> int:
    low, high = DEPTH_RANGE
    if not low <= depth <= high:
        raise bad_request(f"depth must be from {low} to {high}")
    return depth


def _tokens(n: int) -> str:
    return f"{n:,} tokens"


def node_line(shown: Shown, base_depth: int = 0, summary: str | None = None) -> str:
    node = shown.node
    indent = "  " * max(0, shown.depth - base_depth)
    extra = f", {shown.below} below" if shown.below else ""
    kind = "" if node.kind == "section" else f" ({node.kind})"
    line = f"{indent}- {node.title}{kind} [{node.node_id}] L{node.start_line}-{node.end_line}, {_tokens(node.tokens)}{extra}"
    if node.key_items:
        line += f"\n{indent}  also: " + " · ".join(node.key_items)
    if summary:
        line += f"\n{indent}  summary: " + " ".join(summary.split())
    return line


def document_outline_text(
    display: str,
    record: FileRecord,
    tree: Node,
    depth: int,
    node_id: str | None,
    summaries: Mapping[str, str] | None = None,
) -> str:
    """A document's outline as text: a header, then one line per node to `depth` (from `node_id` if given),
    each with the summary `ragdown index --summary-model` kept for it (`summaries`, by node id), if any."""
    start = find_node(tree, node_id, display) if node_id else tree
    shown = cut(start, depth, include_start=start is not tree)
    total = tree.count() + 1
    header = (
        f"{display} — {record.title}: {total} node{'s' if total != 1 else ''}, {_tokens(tree.tokens)}, "
        f"lines {tree.start_line}-{tree.end_line}"
    )
    if start is not tree:
        header += f"; the subtree of [{start.node_id}] {start.title}"
    lines = [header]
    if tree.key_items and start is tree:
        lines.append("also: " + " · ".join(tree.key_items))
    base = shown[0].depth if shown else 0
    kept = summaries or {}
    lines.extend(node_line(s, base, kept.get(s.node.node_id)) for s in shown)
    if not shown:
        lines.append("(one section: read it whole)")
    lines.append(
        f"Read a node's lines with ragdown_read_doc path={display!r} node_id=…; expand a node with "
        f"ragdown_outline path={display!r} node_id=…. Cite as [{display}, L<start>-<end>]."
    )
    return "\n".join(lines)


@dataclass
class _Dir:
    path: str  # docs-relative
    dirs: dict[str, _Dir] = field(default_factory=dict)
    docs: list[FileRecord] = field(default_factory=list)
    documents: int = 0
    tokens: int = 0


def _grouped(records: Sequence[FileRecord], tokens: dict[str, int], base: str) -> _Dir:
    root = _Dir(base)
    for record in records:
        rel = record.path[len(base) + 1 :] if base else record.path
        parts = rel.split("/")
        here = root
        here.documents += 1
        here.tokens += tokens.get(record.path, 0)
        for name in parts[:-1]:
            child = here.dirs.get(name)
            if child is None:
                child = here.dirs[name] = _Dir(f"{here.path}/{name}" if here.path else name)
            here = child
            here.documents += 1
            here.tokens += tokens.get(record.path, 0)
        here.docs.append(record)
    return root


def folder_outline_text(
    records: Sequence[FileRecord],
    tokens: dict[str, int],
    view: Callable[[str], str],
    base: str,
    depth: int,
    heading: str,
    descriptions: Mapping[str, str] | None = None,
) -> str:
    """The folder tree under `base` (docs-relative, '' for all): its documents (title, tokens, description,
    else the one `ragdown index --summary-model` made: `descriptions`, by path) and subfolders (documents,
    tokens), opened `depth` levels down; deeper folders are one line each."""
    root = _grouped(records, tokens, base.strip("/"))
    plural = "s" if root.documents != 1 else ""
    lines = [f"{heading}: {root.documents} document{plural}, {_tokens(root.tokens)}"]

    def render(directory: _Dir, level: int) -> None:
        indent = "  " * level
        for record in sorted(directory.docs, key=lambda r: r.path.lower()):
            description = record.description or (descriptions or {}).get(record.path)
            desc = f": {description}" if description else ""
            size = _tokens(tokens.get(record.path, 0))
            lines.append(f"{indent}{view(record.path)} — {record.title} ({size}){desc}")
        for name in sorted(directory.dirs, key=str.lower):
            sub = directory.dirs[name]
            closed = level + 1 >= depth
            note = " (closed: path_prefix or a larger depth opens it)" if closed else ""
            count = f"{sub.documents} document{'s' if sub.documents != 1 else ''}"
            lines.append(f"{indent}{view(sub.path)}/ — {count}, {_tokens(sub.tokens)}{note}")
            if not closed:
                render(sub, level + 1)

    render(root, 0)
    lines.append("Open a document's outline with ragdown_outline path=…; a folder's with path_prefix=….")
    return "\n".join(lines)


def page(text: str, part: int, next_call: Callable[[int], str], budget: int = MAX_ANSWER_CHARS) -> str:
    """Part `part` (1-based) of `text` cut at line ends into parts under `budget` characters, each saying how
    to get the next; a text that fits is returned whole."""
    if part < 1:
        raise bad_request("part must be 1 or more")
    if len(text) <= budget and part == 1:
        return text
    room = budget - 200  # for the part line
    parts: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.split("\n"):
        while len(line) > room:  # a single line longer than a part: cut by characters
            if current:
                parts.append("\n".join(current))
                current, size = [], 0
            parts.append(line[:room])
            line = line[room:]
        if size + len(line) + 1 > room and current:
            parts.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        parts.append("\n".join(current))
    if part > len(parts):
        raise bad_request(f"part {part} is past the end: this answer has {len(parts)} part(s)")
    head = f"part {part} of {len(parts)}"
    if part < len(parts):
        head += f"; the next: {next_call(part + 1)}"
    return f"{head}\n{parts[part - 1]}"
