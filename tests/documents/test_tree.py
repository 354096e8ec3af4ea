"""The section tree (MarkIndex's structure-first index): the rules of issue 9, on real Markdown."""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import ragdown
from ragdown.documents import parse_document
from ragdown.documents.blocks import scan_blocks
from ragdown.documents.lint import lint
from ragdown.documents.tree import MAX_NODE_TOKENS, ROUTING_COST, Node, build_tree, estimate_tokens, tree_cost
from ragdown.documents.writes import append_text
from ragdown.search.outline import cut


def words(n: int, word: str = "word") -> str:
    """About `n` estimated tokens of text: each `word ` is 5 characters, so 4 words are 5 tokens."""
    return " ".join([word] * (n * 4 // 5))


def shape(node: Node) -> list[tuple[int, str, str]]:
    """(depth, kind, title) of every node, in document order."""
    out: list[tuple[int, str, str]] = []

    def visit(n: Node, depth: int) -> None:
        out.append((depth, n.kind, n.title))
        for child in n.children:
            visit(child, depth + 1)

    visit(node, 0)
    return out


def owned_lines(root: Node) -> list[int]:
    """Every line some node owns (its own text), counted once per owner."""
    return [line for n in root.walk() for line in range(n.start_line, n.own_end + 1)]


def assert_every_line_owned_once(text: str, root: Node) -> None:
    lines = text.replace("\r\n", "\n").split("\n")
    total = len(lines) - 1 if text.endswith("\n") else len(lines)
    assert sorted(owned_lines(root)) == list(range(1, total + 1))


BIG = 400  # tokens per section: enough that routing through the outline is cheaper than reading it all


def test_headings_nest_skipped_levels_under_the_nearest_shallower_one() -> None:
    text = (
        f"# Guide\n\n{words(BIG)}\n\n### Deep\n\n{words(BIG)}\n\n## Middle\n\n{words(BIG)}\n\n"
        f"# Second\n\n{words(BIG)}\n"
    )
    root = build_tree(text, "guide.md")
    assert shape(root) == [
        (0, "document", "Guide"),
        (1, "section", "Guide"),
        (2, "section", "Deep"),
        (2, "section", "Middle"),
        (1, "section", "Second"),
    ]
    assert_every_line_owned_once(text, root)


def test_setext_headings_count_and_a_hash_in_a_fence_does_not() -> None:
    fence = "```bash\n# not a heading\necho hi\n```"
    text = f"Title\n=====\n\n{words(BIG)}\n\nPart two\n--------\n\n{fence}\n\n{words(BIG)}\n"
    root = build_tree(text, "setext.md")
    assert shape(root) == [(0, "document", "Title"), (1, "section", "Title"), (2, "section", "Part two")]
    part_two = root.children[0].children[0]
    assert (part_two.start_line, part_two.end_line) == (6, 14)
    assert_every_line_owned_once(text, root)


def test_text_before_the_first_heading_is_a_preface_and_frontmatter_belongs_to_the_document() -> None:
    text = f"---\ntitle: Notes\ntags: [a]\n---\n\n{words(BIG)}\n\n# One\n\n{words(BIG)}\n\n# Two\n\n{words(BIG)}\n"
    root = build_tree(text, "notes.md")
    assert shape(root) == [
        (0, "document", "Notes"),
        (1, "preface", "Preface"),
        (1, "section", "One"),
        (1, "section", "Two"),
    ]
    assert (root.start_line, root.own_end) == (1, 4)  # the frontmatter
    preface = root.children[0]
    assert (preface.start_line, preface.end_line) == (5, 7)
    assert_every_line_owned_once(text, root)


def test_a_document_without_headings_is_one_root_node() -> None:
    text = f"{words(BIG)}\n\n{words(BIG)}\n"
    root = build_tree(text, "plain note.md")
    assert shape(root) == [(0, "document", "plain note")]
    assert (root.start_line, root.end_line, root.own_end) == (1, 3, 3)


def test_bom_and_crlf_keep_the_same_lines_and_ids() -> None:
    lf = f"# A\n\n{words(BIG)}\n\n## B\n\n{words(BIG)}\n\n## C\n\n{words(BIG)}\n"
    crlf = "\ufeff" + lf.replace("\n", "\r\n")
    one, two = build_tree(lf, "x.md"), build_tree(crlf, "x.md")
    assert [(n.node_id, n.start_line, n.end_line) for n in one.walk()] == [
        (n.node_id, n.start_line, n.end_line) for n in two.walk()
    ]
    assert_every_line_owned_once(crlf, two)


def test_an_oversized_section_is_split_at_block_boundaries_and_fences_and_tables_stay_whole() -> None:
    paragraph = words(2_000)
    table = "\n".join(["| a | b |", "| - | - |", *[f"| {words(40)} | x |" for _ in range(60)]])
    fence = "```\n" + "\n".join(words(40) for _ in range(60)) + "\n```"
    body = "\n\n".join([paragraph, paragraph, table, paragraph, fence, paragraph, paragraph])
    text = f"# Huge\n\n{body}\n\n# Small\n\n{words(BIG)}\n"
    root = build_tree(text, "huge.md")
    huge = root.children[0]
    chunks = [c for c in huge.children if c.kind == "chunk"]
    assert len(chunks) >= 2
    assert all(c.own_tokens <= MAX_NODE_TOKENS or c.start_line == c.end_line for c in chunks)
    assert (huge.start_line, huge.own_end) == (1, 1)  # the heading stays the node's
    lines = text.split("\n")
    table_first = lines.index("| a | b |") + 1
    fence_first = lines.index("```") + 1
    for first in (table_first, fence_first):  # the block's first line starts a chunk or lies inside one whole
        holder = next(c for c in chunks if c.start_line <= first <= c.end_line)
        last = first + 61
        assert holder.end_line >= last, (first, holder.start_line, holder.end_line)
    assert_every_line_owned_once(text, root)


def test_the_merge_rule_with_hand_computed_costs() -> None:
    # Section A owns 100 tokens and has two children of 60 and 40: S(A) = 200,
    # tree_cost(A) = R + max(100, 60, 40) = 250 >= 200: reading A whole is cheaper, so A is merged.
    # Section B owns 100 with children of 300 and 200: S(B) = 600, tree_cost(B) = 150 + 300 = 450 < 600: kept.
    def section(title: str, tokens: int, level: int = 1) -> str:
        heading = "#" * level + " " + title
        # the heading line and its blank line count too: subtract them from the body
        body_tokens = tokens - estimate_tokens(heading + "\n") - estimate_tokens("\n")
        return f"{heading}\n\n{'x' * (body_tokens * 4 - 1)}\n"

    text = "".join(
        [
            section("A", 100),
            section("A1", 60, 2),
            section("A2", 40, 2),
            section("B", 100),
            section("B1", 300, 2),
            section("B2", 200, 2),
        ]
    )
    root = build_tree(text, "costs.md")
    a, b = root.children
    assert (a.title, a.tokens, a.children, a.key_items) == ("A", 200, [], ["A1", "A2"])
    assert b.tokens == 600
    assert [c.title for c in b.children] == ["B1", "B2"]
    assert tree_cost(b) == ROUTING_COST + 300
    # The document: S = 800, tree_cost = 150 + max(0, tree_cost(A) = 200, tree_cost(B) = 450) = 600 < 800.
    assert root.tokens == 800
    assert tree_cost(root) == 600
    assert [c.title for c in root.children] == ["A", "B"]


def test_a_short_document_is_read_whole_with_its_headings_as_key_items() -> None:
    root = build_tree("# Note\n\nshort\n\n## Setup\n\nx\n\n## Use\n\ny\n", "note.md")
    assert root.children == []
    assert root.key_items == ["Note", "Setup", "Use"]


def test_ids_survive_an_edit_below_a_node_and_a_stale_id_names_nothing() -> None:
    before = f"# Guide\n\n{words(BIG)}\n\n## Install\n\n{words(BIG)}\n\n## Use\n\n{words(BIG)}\n"
    edited = before.replace(words(BIG) + "\n\n## Use", words(BIG + 100, "other") + "\n\n## Use")
    one, two = build_tree(before, "g.md"), build_tree(edited, "g.md")
    ids = {n.title: n.node_id for n in one.walk()}
    assert ids == {n.title: n.node_id for n in two.walk()}
    assert len(set(ids.values())) == len(ids)
    renamed = build_tree(before.replace("## Use", "## Usage"), "g.md")
    assert renamed.find(ids["Use"]) is None  # never another node


def test_sections_of_one_title_under_parents_of_one_title_have_ids_of_their_own() -> None:
    part = f"## Setup\n\n{words(BIG)}\n\n### Notes\n\n{words(BIG)}\n\n"
    text = f"# Manual\n\n{words(BIG)}\n\n{part}{part.replace(words(BIG), words(BIG, 'quokka'))}"
    root = build_tree(text, "m.md")
    notes = [n for n in root.walk() if n.title == "Notes"]
    assert len(notes) == 2
    assert notes[0].node_id != notes[1].node_id
    for node in notes:
        assert root.find(node.node_id) is node
    ids = [n.node_id for n in root.walk()]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("sample", ["", "\n", "---\ntitle: x\n---\n", "# Only\n"])
def test_edge_documents_build_a_tree(sample: str) -> None:
    root = build_tree(sample, "e.md")
    assert root.kind == "document"
    assert root.end_line >= 1


def test_chunks_carry_the_node_of_the_section_they_start_in() -> None:
    text = f"# Guide\n\n{words(BIG)}\n\n## Install\n\n{words(BIG)}\n\n## Use\n\n{words(BIG)}\n"
    doc = parse_document("g.md", text)
    assert doc.tree is not None
    by_title = {n.title: n.node_id for n in doc.tree.walk()}
    by_heading = {c.heading.split(" › ")[-1]: c.node_id for c in doc.chunks}
    assert by_heading == {"Guide": by_title["Guide"], "Install": by_title["Install"], "Use": by_title["Use"]}


def test_the_json_form_round_trips() -> None:
    root = build_tree(f"# A\n\n{words(BIG)}\n\n## B\n\n{words(BIG)}\n\n## C\n\n{words(BIG)}\n", "a.md")
    assert Node.from_json(root.as_json()) == root


def test_tokens_count_cjk_characters_one_each() -> None:
    assert estimate_tokens("附件默认") == 4
    assert estimate_tokens("abcd" * 10) == 10
    assert estimate_tokens("附件 abcd") == 2 + 2


RAGDOWN_SOURCE = str(Path(ragdown.__file__).resolve().parent)


def steps(work: Callable[[], object]) -> int:
    """How many lines of ragdown's own code `work` runs (a count of work, not a time: the same on any machine
    under any load). markdown-it's and the standard library's lines are not counted."""
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def start(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(RAGDOWN_SOURCE) else None

    previous = sys.gettrace()
    sys.settrace(start)
    try:
        work()
    finally:
        sys.settrace(previous)
    return count


def journal(headings: int) -> str:
    """A long flat note (a log, a glossary): one H1 and `headings` H2 sections below it, every other one with
    an H3, a link and a tag; the shape that made the section tree quadratic (each heading looked through the
    ones after it, counted its parent's children, and each chunk searched the H1's children for its node)."""
    parts = ["# Journal\n\nWhat this is.\n"]
    for i in range(headings):
        parts.append(f"## Entry {i}\n\nDid [[thing {i % 7}]] today. #log\n")
        if i % 2:
            parts.append(f"### Detail {i}\n\nMore on it.\n")
    return "\n".join(parts)


def _parse(text: str) -> None:
    parse_document("journal.md", text)


def _outline(text: str) -> None:
    tree = build_tree(text, "journal.md")
    last = tree.walk()[-1]
    assert tree.find(last.node_id) is last
    assert tree.deepest_at(last.start_line) is last
    cut(tree, 3, include_start=False)


def _write(text: str) -> None:
    lint(text, "journal.md")
    append_text(text, "added", heading="Journal")


@pytest.mark.parametrize("work", [_parse, _outline, _write], ids=["parse", "outline", "write"])
def test_the_work_on_a_document_grows_linearly_with_its_headings(work: Callable[[str], None]) -> None:
    """Twice the headings, twice the work (within 15 %): a quadratic step counts about 4x."""
    small, large = journal(300), journal(600)
    once, twice = steps(lambda: work(small)), steps(lambda: work(large))
    assert twice / once < 2.3, (once, twice)


def test_the_block_scan_pauses_garbage_collection_and_leaves_the_collector_as_it_found_it() -> None:
    """markdown-it's tokens all live until the scan ends, so each of the collector's passes meanwhile walks all
    of them (1.5-2x a heading-dense parse): a scan runs none (at most one as it ends, of what is young then),
    scans in several threads at once leave it on, and one that found it off leaves it off."""
    lines = journal(2000).split("\n")
    passes: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            passes.append(info["generation"])

    assert gc.isenabled()
    scan_blocks(lines, 0)  # the parser built, so the scan below allocates only what a scan does
    gc.collect()
    gc.callbacks.append(count)
    try:
        scan_blocks(lines, 0)
    finally:
        gc.callbacks.remove(count)
    assert len(passes) <= 1, passes
    threads = [threading.Thread(target=scan_blocks, args=(lines, 0)) for _ in range(3)]
    for thread in threads:
        thread.start()
    scan_blocks(lines, 0)
    for thread in threads:
        thread.join()
    assert gc.isenabled()
    gc.disable()
    try:
        scan_blocks(lines, 0)
        assert not gc.isenabled()
    finally:
        gc.enable()
