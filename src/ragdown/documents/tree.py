"""A document's own outline as a tree of sections (MarkIndex's structure-first index), built without a model.

Built from the same markdown-it block scan as the chunks (`blocks.scan_blocks`):

- Headings (ATX and setext; a `#` in code is no heading) make section nodes; a skipped level nests under
  the nearest shallower heading. Text before the first heading is a `preface` node. A document without a
  heading is its root node alone. Every line belongs to exactly one node: the frontmatter (and blank lines
  no section owns) to the document itself.
- A node whose own text is over `MAX_NODE_TOKENS` is split at block boundaries (blank lines; a fenced
  block or a table is one block, never split) into `chunk` children.
- PageIndex's cost model then merges small subtrees into their parent: with routing cost R,
  `tree_cost(leaf) = S(leaf)`, `tree_cost(v) = R + max(own(v), max tree_cost(child))`, and a subtree is
  merged when `S(v) <= tree_cost(v)` (reading it whole is no dearer than routing through it). The merged
  headings are kept as the node's `key_items`.
- Node ids are short hashes of the parent's id, the node's title and its sibling ordinal (so of the whole
  chain of titles and ordinals above it), computed before merging: they survive edits that leave the
  outline alone, two sections of one title under two parents of one title differ, and an id no node has
  is stale, never another node's.

Tokens are estimated as one per CJK character and one per four other characters.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ragdown.documents.blocks import BlockScan, scan_blocks
from ragdown.documents.frontmatter import frontmatter_of_lines
from ragdown.documents.text import is_blank, normalize_text, split_lines
from ragdown.documents.title import document_title

ROUTING_COST = 150
MAX_NODE_TOKENS = 8000
ID_CHARS = 10

NodeKind = Literal["document", "preface", "section", "chunk"]


# Hiragana and katakana, CJK ideographs (the extension A block, the unified block, the compatibility block,
# the supplementary planes' extensions) and Hangul syllables: one token each. One class, so counting them
# is one C loop (a sync counts every line of every document it reads).
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002fa1f]")


def estimate_tokens(text: str) -> int:
    """About how many tokens `text` is: one per CJK character, one per four other characters."""
    cjk = len(_CJK.findall(text)) if not text.isascii() else 0
    return cjk + math.ceil((len(text) - cjk) / 4)


@dataclass
class Node:
    """One node: its own lines are `start_line`..`own_end` (1-based, inclusive), its subtree's end `end_line`."""

    node_id: str
    kind: NodeKind
    title: str
    level: int  # the heading's level; 0 for the document, a preface or a chunk
    start_line: int
    own_end: int
    end_line: int
    own_tokens: int
    tokens: int = 0  # the whole subtree's
    key_items: list[str] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)

    def walk(self) -> list[Node]:
        """This node and every node below it, in document order."""
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out

    def find(self, node_id: str) -> Node | None:
        return next((n for n in self.walk() if n.node_id == node_id), None)

    def deepest_at(self, line: int) -> Node:
        """The deepest node whose lines hold `line` (the node a section starting there belongs to)."""
        for child in self.children:
            if child.start_line <= line <= child.end_line:
                return child.deepest_at(line)
        return self

    def count(self) -> int:
        return sum(1 + child.count() for child in self.children)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.node_id,
            "kind": self.kind,
            "title": self.title,
            "level": self.level,
            "lines": [self.start_line, self.end_line],
            "own_end": self.own_end,
            "own_tokens": self.own_tokens,
            "tokens": self.tokens,
        }
        if self.key_items:
            out["key_items"] = list(self.key_items)
        if self.children:
            out["children"] = [c.as_json() for c in self.children]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Node:
        first, last = data["lines"]
        return cls(
            node_id=data["id"],
            kind=data["kind"],
            title=data["title"],
            level=data["level"],
            start_line=first,
            own_end=data["own_end"],
            end_line=last,
            own_tokens=data["own_tokens"],
            tokens=data["tokens"],
            key_items=list(data.get("key_items", ())),
            children=[cls.from_json(c) for c in data.get("children", ())],
        )


def node_id(chain: Sequence[str], ordinal: int) -> str:
    """The id of the node named by `chain` (its parent's id, then its own title) at sibling `ordinal`."""
    digest = hashlib.sha1(("\x1f".join(chain) + f"\x1e{ordinal}").encode("utf-8")).hexdigest()
    return digest[:ID_CHARS]


class _Lines:
    """Token counts of line ranges (1-based, inclusive) in O(1) each."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self._prefix = [0]
        for line in lines:
            self._prefix.append(self._prefix[-1] + estimate_tokens(line + "\n"))

    def tokens(self, first: int, last: int) -> int:
        if last < first:
            return 0
        return self._prefix[last] - self._prefix[first - 1]


def build_tree(text: str, path: str) -> Node:
    """The optimised section tree of a document (`path` names it when it has no title)."""
    lines = split_lines(normalize_text(text))
    front = frontmatter_of_lines(lines)
    body_start = front.body_start_line - 1
    scan = scan_blocks(lines, body_start)
    return tree_of(lines, body_start, scan, document_title(front.data.get("title"), scan, path))


def tree_of(lines: Sequence[str], body_start: int, scan: BlockScan, title: str) -> Node:
    """The optimised section tree of a document already split into lines and scanned (as `parse` does)."""
    if len(lines) > 1 and lines[-1] == "":
        lines = lines[:-1]  # a final line break does not start another line
    root = raw_tree(lines, body_start, scan, title)
    counter = _Lines(lines)
    _split_oversized(root, lines, scan, counter, body_start + 1)
    _measure(root)
    _merge(root)
    return root


def raw_tree(lines: Sequence[str], body_start: int, scan: BlockScan, title: str) -> Node:
    """The tree of headings as written, before splitting and merging (own tokens not yet counted)."""
    total = max(1, len(lines))
    counter = _Lines(lines)
    root = Node(node_id([title], 0), "document", title, 0, 1, total, total, 0)
    headings = scan.headings
    first_heading = headings[0].start + 1 if headings else total + 1
    body_first = body_start + 1
    if headings and any(not is_blank(lines[i]) for i in range(body_start, first_heading - 1)):
        preface = Node(
            node_id([title, "\x00preface"], 0),
            "preface",
            "Preface",
            0,
            body_first,
            first_heading - 1,
            first_heading - 1,
            0,
        )
        root.children.append(preface)
        root.own_end = body_first - 1
    elif headings:
        root.own_end = first_heading - 1
    stack: list[Node] = [root]
    for index, heading in enumerate(headings):
        start = heading.start + 1
        while len(stack) > 1 and stack[-1].level >= heading.level:
            stack.pop()
        parent = stack[-1]
        end = total
        for later in headings[index + 1 :]:
            if later.level <= heading.level:
                end = later.start
                break
        ordinal = sum(1 for c in parent.children if c.kind == "section")
        own_end = headings[index + 1].start if index + 1 < len(headings) else total
        own_end = min(own_end, end)
        label = heading.text or f"(untitled heading, line {start})"
        node = Node(
            node_id([parent.node_id, label], ordinal), "section", label, heading.level, start, own_end, end, 0
        )
        parent.children.append(node)
        stack.append(node)
    for node in root.walk():
        node.own_tokens = counter.tokens(node.start_line, node.own_end)
    return root


def _blocks(lines: Sequence[str], first: int, last: int, scan: BlockScan) -> list[tuple[int, int]]:
    """The blocks of lines `first`..`last` (1-based, inclusive): runs of non-blank lines (a table is one),
    a fenced block always whole; each block takes the blank lines after it."""
    fence_last = {start + 1: end for start, end in scan.fences}  # first line → last line, both 1-based
    blocks: list[tuple[int, int]] = []
    line = first
    while line <= last:
        start = line
        if line in fence_last:
            line = fence_last[line] + 1
        else:
            while (
                line <= last and not is_blank(lines[line - 1]) and (line == start or line not in fence_last)
            ):
                line += 1
        while line <= last and is_blank(lines[line - 1]):
            line += 1
        blocks.append((start, min(line - 1, last)))
    return blocks


def _split_oversized(
    node: Node, lines: Sequence[str], scan: BlockScan, counter: _Lines, body_first: int
) -> None:
    """Give a node whose own text is over `MAX_NODE_TOKENS` chunk children, cut at block boundaries; its
    heading (or, for the document, its frontmatter) stays its own."""
    for child in node.children:
        _split_oversized(child, lines, scan, counter, body_first)
    if node.own_tokens <= MAX_NODE_TOKENS or node.kind == "chunk":
        return
    if node.kind == "section":
        heading = next(h for h in scan.headings if h.start + 1 == node.start_line)
        first = heading.end + 1  # `end` is exclusive and 0-based: the heading's last line, 1-based
    elif node.kind == "document" and node.children:
        return  # the document then owns only its frontmatter
    else:
        first = body_first if node.kind == "document" else node.start_line
    chunks: list[Node] = []
    group_start, group_end, group_tokens = -1, -1, 0
    for start, end in _blocks(lines, first, node.own_end, scan):
        size = counter.tokens(start, end)
        if group_start >= 0 and group_tokens + size > MAX_NODE_TOKENS:
            chunks.append(_chunk(node, len(chunks), group_start, group_end, group_tokens))
            group_start = -1
        if group_start < 0:
            group_start, group_tokens = start, 0
        group_end = end
        group_tokens += size
    if group_start >= 0:
        chunks.append(_chunk(node, len(chunks), group_start, group_end, group_tokens))
    if len(chunks) < 2:
        return  # one block larger than the limit (a huge fence or table): nothing to cut it at
    node.children = chunks + node.children
    node.own_end = first - 1
    node.own_tokens = counter.tokens(node.start_line, node.own_end)


def _chunk(parent: Node, index: int, first: int, last: int, tokens: int) -> Node:
    return Node(
        node_id([parent.node_id, "\x00chunk"], index),
        "chunk",
        f"{parent.title} (part {index + 1})",
        0,
        first,
        last,
        last,
        tokens,
    )


def _measure(node: Node) -> int:
    node.tokens = node.own_tokens + sum(_measure(child) for child in node.children)
    return node.tokens


def tree_cost(node: Node) -> int:
    """PageIndex's cost of reaching anything in this subtree by routing through its outline."""
    if not node.children:
        return node.tokens
    return ROUTING_COST + max(node.own_tokens, max(tree_cost(c) for c in node.children))


def _merge(node: Node) -> None:
    """Bottom-up: fold each subtree that costs no more to read whole than to route through into its node.

    A subtree past `MAX_NODE_TOKENS` is never folded back: it was split because it is too big to read.
    """
    for child in node.children:
        _merge(child)
    if not node.children or node.tokens > MAX_NODE_TOKENS or node.tokens > tree_cost(node):
        return
    items: list[str] = []
    for below in node.walk()[1:]:
        if below.kind == "section":
            items.append(below.title)
        items.extend(below.key_items)
    node.key_items = items
    node.children = []
    node.own_end = node.end_line
    node.own_tokens = node.tokens
