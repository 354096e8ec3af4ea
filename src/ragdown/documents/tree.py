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

import bisect
import hashlib
import math
import posixpath
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ragdown.core.paths import is_plain_text
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
        """This node and every node below it, in document order (one visit each, without recursion)."""
        return list(self._preorder())

    def _preorder(self) -> Iterator[Node]:
        pending: list[Node] = [self]
        while pending:
            node = pending.pop()
            yield node
            pending.extend(reversed(node.children))

    def find(self, node_id: str) -> Node | None:
        return next((n for n in self._preorder() if n.node_id == node_id), None)

    def deepest_at(self, line: int) -> Node:
        """The deepest node whose lines hold `line` (the node a section starting there belongs to).

        Siblings are in document order and their lines do not overlap, so at each level the only child that
        can hold `line` is the last one starting at or before it: a binary search, not a scan of them all.
        """
        node = self
        while node.children:
            at = bisect.bisect_right(node.children, line, key=_start_line) - 1
            if at < 0 or not node.children[at].start_line <= line <= node.children[at].end_line:
                break
            node = node.children[at]
        return node

    def count(self) -> int:
        return sum(1 for _ in self._preorder()) - 1

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


def _start_line(node: Node) -> int:
    return node.start_line


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
    """The optimised section tree of a document (`path` names it when it has no title); a plain-text
    document's (`todo.txt`) is its one body, titled by its file name, as `plain.parse_plain` indexes it."""
    lines = split_lines(normalize_text(text))
    if is_plain_text(path):
        return tree_of(lines, 0, BlockScan(), posixpath.basename(path))
    front = frontmatter_of_lines(lines)
    body_start = front.body_start_line - 1
    scan = scan_blocks(lines, body_start)
    return tree_of(lines, body_start, scan, document_title(front.data.get("title"), scan, path))


def heading_tree(text: str, path: str) -> Node:
    """The tree of a document's headings as written (no sections split or merged): where a line sits in
    the outline its author sees."""
    lines = split_lines(normalize_text(text))
    front = frontmatter_of_lines(lines)
    body_start = front.body_start_line - 1
    scan = scan_blocks(lines, body_start)
    return raw_tree(lines, body_start, scan, document_title(front.data.get("title"), scan, path))


def tree_of(lines: Sequence[str], body_start: int, scan: BlockScan, title: str) -> Node:
    """The optimised section tree of a document already split into lines and scanned (as `parse` does)."""
    if len(lines) > 1 and lines[-1] == "":
        lines = lines[:-1]  # a final line break does not start another line
    counter = _Lines(lines)
    root = raw_tree(lines, body_start, scan, title, counter)
    _split_oversized(root, _Doc(lines, scan, counter, body_start + 1))
    _measure(root)
    _merge(root)
    return root


def raw_tree(
    lines: Sequence[str], body_start: int, scan: BlockScan, title: str, counter: _Lines | None = None
) -> Node:
    """The tree of headings as written, before splitting and merging (own tokens not yet counted).

    One pass over the headings with a stack of open sections: a heading closes every open section of its
    level or deeper (their subtrees end on the line before it), so each heading is pushed and popped once.
    """
    total = max(1, len(lines))
    counter = counter if counter is not None else _Lines(lines)
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
    # Open sections, shallowest first (their levels strictly rise), each with how many section children it
    # has so far (its next child's ordinal). Levels are 1 to 6, so the document (level 0) is never closed.
    stack: list[tuple[Node, int]] = [(root, 0)]
    for index, heading in enumerate(headings):
        start = heading.start + 1
        while len(stack) > 1 and stack[-1][0].level >= heading.level:
            stack.pop()[0].end_line = heading.start  # the line before this heading (`start` is 0-based)
        parent, ordinal = stack[-1]
        stack[-1] = (parent, ordinal + 1)
        own_end = headings[index + 1].start if index + 1 < len(headings) else total
        label = heading.text or f"(untitled heading, line {start})"
        # `end_line` is `total` until a later heading closes the section (above or at the end of the loop);
        # its own lines never run past the next heading, which is at or before that.
        node = Node(
            node_id([parent.node_id, label], ordinal),
            "section",
            label,
            heading.level,
            start,
            own_end,
            total,
            0,
        )
        parent.children.append(node)
        stack.append((node, 0))
    for node in root._preorder():
        node.own_tokens = counter.tokens(node.start_line, node.own_end)
    return root


class _Doc:
    """What splitting oversized nodes reads, looked up in O(1): the lines and their token counts, each closed
    fence's last line and each heading's last line by its first line (all 1-based)."""

    def __init__(self, lines: Sequence[str], scan: BlockScan, counter: _Lines, body_first: int) -> None:
        self.lines = lines
        self.counter = counter
        self.body_first = body_first
        self.fence_last = {start + 1: end for start, end in scan.fences}
        # `end` is exclusive and 0-based: the heading's last line, 1-based. The first of two headings on one
        # line (none in a CommonMark parse) wins, as a search in document order would find it.
        self.heading_last: dict[int, int] = {}
        for heading in scan.headings:
            self.heading_last.setdefault(heading.start + 1, heading.end)


def _blocks(doc: _Doc, first: int, last: int) -> list[tuple[int, int]]:
    """The blocks of lines `first`..`last` (1-based, inclusive): runs of non-blank lines (a table is one),
    a fenced block always whole; each block takes the blank lines after it."""
    lines, fence_last = doc.lines, doc.fence_last  # first line → last line, both 1-based
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


def _split_oversized(node: Node, doc: _Doc) -> None:
    """Give a node whose own text is over `MAX_NODE_TOKENS` chunk children, cut at block boundaries; its
    heading (or, for the document, its frontmatter) stays its own."""
    for child in node.children:
        _split_oversized(child, doc)
    if node.own_tokens <= MAX_NODE_TOKENS or node.kind == "chunk":
        return
    if node.kind == "section":
        first = doc.heading_last[node.start_line] + 1
    elif node.kind == "document" and node.children:
        return  # the document then owns only its frontmatter
    else:
        first = doc.body_first if node.kind == "document" else node.start_line
    counter = doc.counter
    chunks: list[Node] = []
    group_start, group_end, group_tokens = -1, -1, 0
    for start, end in _blocks(doc, first, node.own_end):
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


def _merge(node: Node) -> int:
    """Bottom-up: fold each subtree that costs no more to read whole than to route through into its node.
    Returns the node's `tree_cost` once its subtree is settled (each node's cost worked out once, from its
    children's).

    A subtree past `MAX_NODE_TOKENS` is never folded back: it was split because it is too big to read.
    """
    if not node.children:
        return node.tokens
    cost = ROUTING_COST + max(node.own_tokens, max(_merge(child) for child in node.children))
    if node.tokens > MAX_NODE_TOKENS or node.tokens > cost:
        return cost
    items: list[str] = []
    for below in node.walk()[1:]:
        if below.kind == "section":
            items.append(below.title)
        items.extend(below.key_items)
    node.key_items = items
    node.children = []
    node.own_end = node.end_line
    node.own_tokens = node.tokens
    return node.tokens
