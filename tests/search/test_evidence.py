"""Evidence lent by a section's page and its links under score fusion (`search/evidence.py`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from ragdown.engine.engine import Engine
from ragdown.search import evidence, linking
from ragdown.search.evidence import names_title
from ragdown.search.format import ORDER_NOTE, out_of_order, recall_text
from ragdown.search.hybrid import Hit, Pools, SearchOptions
from ragdown.storage.filter_sql import FileFilter
from tests.conftest import write

OpenEngine = Callable[..., Engine]
SCORE = SearchOptions(top_k=5, fusion="score")

GRAPH = """# Graph view

Graph view shows how the notes relate, as a picture of nodes and lines.

## Filters

Which nodes the graph shows: search files, tags, attachments.

## Display

How the graph shows nodes and links: arrows, text fade, node size.

## Forces

The forces on each node of the graph: center, repel, link.
"""


def section_ids(engine: Engine) -> dict[str, int]:
    """Chunk id by breadcrumb, over every indexed document."""
    store = engine.require_store()
    ids = [cid for f in store.all_files() for cid, _ in store.chunk_ids_of_files([f.id])]
    return {rec.breadcrumb: cid for cid, rec in store.chunks_by_id(ids).items()}


def test_names_title_wants_every_word_of_the_title() -> None:
    assert names_title("What does the graph view show?", "Graph view")
    assert names_title("what are callouts for", "Callouts")
    assert names_title("what is a callout", "Callouts")
    assert not names_title("what does the graph show", "Graph view")


def test_a_question_naming_a_page_lifts_its_introduction_above_its_subsections(
    docs: Path, open_engine: OpenEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(docs, "graph.md", GRAPH)
    write(docs, "other.md", "# Canvas\n\nCards on an endless board.\n")
    engine = open_engine(docs)
    ids = section_ids(engine)
    searcher = engine.require_searcher()
    query = "what does the graph view show"
    sections = ["Graph view › Filters", "Graph view", "Graph view › Display", "Graph view › Forces"]
    pools = Pools(
        dense=[(ids[s], c) for s, c in zip(sections, (0.60, 0.59, 0.58, 0.57), strict=True)],
        lexical=[(ids[s], b) for s, b in zip(sections, (10.0, 9.6, 9.0, 8.0), strict=True)],
        qvec=searcher.embed_query(query),
        size=40,
    )
    hits = searcher.rank(query, pools, FileFilter(), SCORE)
    assert hits[0].chunk.breadcrumb == "Graph view"
    assert "page" in hits[0].sources
    monkeypatch.setattr(evidence, "PAGE_LIFT", 0.0)  # as before: the best subsection first
    assert searcher.rank(query, pools, FileFilter(), SCORE)[0].chunk.breadcrumb == "Graph view › Filters"
    monkeypatch.setattr(evidence, "PAGE_LIFT", 0.1)
    # A query that names one of the page's sections by its heading asks about that section.
    pointed = "what does the graph view show in its filters"
    assert searcher.rank(pointed, pools, FileFilter(), SCORE)[0].chunk.breadcrumb == "Graph view › Filters"
    # A query that does not name the page lends nothing to its introduction.
    other = "which nodes are drawn and how"
    assert searcher.rank(other, pools, FileFilter(), SCORE)[0].chunk.breadcrumb == "Graph view › Filters"


def test_the_section_a_top_hit_links_to_is_lifted_and_filters_still_hold(
    docs: Path, open_engine: OpenEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(docs, "random.md", "# Random note\n\nOpen a random note from the [[Ribbon]] strip of icons.\n")
    write(docs, "ribbon.md", "# Ribbon\n\nThe strip of icons: hide it from its right-click menu.\n")
    write(docs, "decoy.md", "# Decoy\n\nA strip of icons somewhere else entirely.\n")
    engine = open_engine(docs)
    ids = section_ids(engine)
    searcher = engine.require_searcher()
    query = "random note opens from an icon strip; how do I hide that strip"
    qvec = searcher.embed_query(query)
    matrix = searcher.matrix
    assert qvec is not None
    assert matrix is not None
    cos = matrix.cosine(qvec, [ids["Random note"], ids["Ribbon"], ids["Decoy"]])
    assert cos[ids["Ribbon"]] > 0  # the lift scales with the linked section's own cosine
    pools = Pools(
        dense=[(ids["Random note"], 0.9), (ids["Decoy"], 0.8), (ids["Ribbon"], 0.79)],
        lexical=[(ids["Random note"], 10.0), (ids["Decoy"], 8.0), (ids["Ribbon"], 7.9)],
        qvec=qvec,
        size=40,
    )
    order = [h.path for h in searcher.rank(query, pools, FileFilter(), SCORE)]
    assert order.index("ribbon.md") < order.index("decoy.md")
    monkeypatch.setattr(evidence, "LINK_LIFT", 0.0)
    before = [h.path for h in searcher.rank(query, pools, FileFilter(), SCORE)]
    assert before.index("decoy.md") < before.index("ribbon.md")
    monkeypatch.setattr(evidence, "LINK_LIFT", 0.3)
    # A linked note outside the search's filter is never lent to, nor shown.
    only = FileFilter(paths=("random.md", "decoy.md"))
    kept = Pools(dense=pools.dense[:2], lexical=pools.lexical[:2], qvec=qvec, size=40)
    assert "ribbon.md" not in [h.path for h in searcher.rank(query, kept, only, SCORE)]


def test_the_text_answer_says_why_when_similarity_does_not_fall_down_the_list(
    docs: Path, open_engine: OpenEngine
) -> None:
    write(docs, "a.md", "# Alpha\n\nFirst words.\n")
    write(docs, "b.md", "# Beta\n\nSecond words.\n")
    engine = open_engine(docs)
    hits = engine.require_searcher().search("words", FileFilter(), SearchOptions(top_k=2))
    assert len(hits) == 2
    falling: list[Hit] = [replace(hits[0], similarity=0.7), replace(hits[1], similarity=0.5)]
    rising: list[Hit] = [replace(hits[0], similarity=0.5), replace(hits[1], similarity=0.7)]
    assert not out_of_order(falling)
    assert out_of_order(rising)
    assert not recall_text(falling, 0).endswith(ORDER_NOTE)
    text = recall_text(rising, 0)
    assert text.startswith("[1] ")
    assert text.endswith(ORDER_NOTE)
    assert not out_of_order([replace(h, has_similarity=False) for h in rising])


def linked(searcher: object, query: str, pools: Pools) -> set[str]:
    """The breadcrumbs that only link evidence brought into the hits."""
    from ragdown.search.hybrid import Searcher

    assert isinstance(searcher, Searcher)
    return {
        h.chunk.breadcrumb for h in searcher.rank(query, pools, FileFilter(), SCORE) if h.sources == ("link",)
    }


def test_a_link_to_a_heading_lends_to_that_section_when_anchors_are_on(
    docs: Path, open_engine: OpenEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(docs, "random.md", "# Random note\n\nOpen a random note; see [[Ribbon#Hide the ribbon]].\n")
    write(
        docs,
        "ribbon.md",
        "# Ribbon\n\nThe ribbon: a strip of icons to open a random note.\n\n"
        "## Hide the ribbon\n\nRight-click the empty space and turn it off.\n",
    )
    engine = open_engine(docs)
    ids = section_ids(engine)
    searcher = engine.require_searcher()
    query = "random note icons on the ribbon strip"
    pools = Pools(
        dense=[(ids["Random note"], 0.9)],
        lexical=[(ids["Random note"], 10.0)],
        qvec=searcher.embed_query(query),
    )
    assert linked(searcher, query, pools) == {"Ribbon"}  # the default: the note's best section by cosine
    monkeypatch.setattr(evidence, "LINK_ANCHOR", True)
    assert linked(searcher, query, pools) == {"Ribbon › Hide the ribbon"}


def test_novelty_lends_only_to_a_linked_section_holding_what_the_source_lacks(
    docs: Path, open_engine: OpenEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        docs,
        "random.md",
        "---\naliases: [dice note]\n---\n# Random note\n\nOpen a random note from the strip: [[Ribbon]], [[Toolbar]].\n",
    )
    write(docs, "ribbon.md", "# Ribbon\n\nHide the strip of icons from its menu.\n")
    write(docs, "toolbar.md", "# Toolbar\n\nThe strip of icons at the top.\n")
    engine = open_engine(docs)
    ids = section_ids(engine)
    searcher = engine.require_searcher()

    def pools(query: str) -> Pools:
        rid = ids["Random note"]
        return Pools(dense=[(rid, 0.9)], lexical=[(rid, 10.0)], qvec=searcher.embed_query(query))

    query = "random note strip: how do I hide it"
    assert linked(searcher, query, pools(query)) == {"Ribbon", "Toolbar"}
    monkeypatch.setattr(evidence, "LINK_NOVELTY", 1.0)
    monkeypatch.setattr(evidence, "LINK_BASE", 0.0)
    assert linked(searcher, query, pools(query)) == {"Ribbon"}  # only the ribbon says "hide"
    # A note the query names by its alias lends nothing along its links.
    named = "dice note strip: how do I hide it"
    assert linked(searcher, named, pools(named)) == {"Ribbon"}
    monkeypatch.setattr(evidence, "LINK_SKIP_NAMED", True)
    assert linked(searcher, named, pools(named)) == set()


def test_the_links_of_top_hits_are_resolved_by_one_resolver_per_index_generation(
    docs: Path, open_engine: OpenEngine
) -> None:
    """A fresh resolver per top hit cost three builds over every note of the folder per query (~0.1 s of CPU
    each at 10,000 notes): the lending reuses the folder's resolver until the index changes."""
    write(docs, "random.md", "# Random note\n\nOpen a random note from the [[Ribbon]] strip of icons.\n")
    write(docs, "ribbon.md", "# Ribbon\n\nThe strip of icons: hide it from its right-click menu.\n")
    engine = open_engine(docs)
    searcher = engine.require_searcher()
    store = engine.require_store()
    query = "random note opens from an icon strip; how do I hide that strip"
    first = [h.path for h in searcher.search(query, FileFilter(), SCORE)]
    built = linking._resolvers[store][""]
    assert [h.path for h in searcher.search(query, FileFilter(), SCORE)] == first
    assert linking._resolvers[store][""] is built
    write(docs, "more.md", "# More\n\nanother note\n")
    engine.sync()
    searcher.search(query, FileFilter(), SCORE)
    assert linking._resolvers[store][""] is not built  # the index changed: built again
