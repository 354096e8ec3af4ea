"""A compound question's last clause, searched as a query of its own (`query.ask_clause`, `Pools.ask`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.engine.engine import Engine
from ragdown.search.hybrid import SearchOptions
from ragdown.search.query import ask_clause
from ragdown.storage.filter_sql import FileFilter
from tests.conftest import write

OpenEngine = Callable[..., Engine]
SCORE = SearchOptions(top_k=3, fusion="score")
QUESTION = "Sync leaves out the file recovery snapshots; where on my Mac are they kept then?"


@pytest.mark.parametrize(
    ("query", "clause"),
    [
        (QUESTION, "where on my Mac are they kept then?"),
        (
            "I paid for Sync last week. What should I do about the refund?",
            "What should I do about the refund?",
        ),
        ("同步会跳过隐藏文件夹；怎样在手机上打开那个文件夹？", "怎样在手机上打开那个文件夹？"),
        ("how do I fold a heading", None),  # one clause
        ("Sync broke; why?", None),  # the asking part is too short to stand alone
        ("Sync settings: how do I choose what syncs", None),  # a colon elaborates, it does not split
        ("what does obsidian://open do", None),
        ("see version 1.2. then restart", None),  # a sentence's end needs a capital after it
        ("I paid for Sync last week. What should I do?", None),  # the ask says nothing to search on
        ("Someone sent me a link to claim credit; how do I use it?", None),
        # a prompt longer than a question: its last sentence is no more the ask than the rest
        ("Read the sync notes. Check the logs. Compare the plans. Then tell me what to do now.", None),
        ("Sync leaves out hidden folders " + "and many more things " * 8 + "; where are they kept?", None),
    ],
)
def test_the_asking_clause_is_the_last_of_two_or_more(query: str, clause: str | None) -> None:
    assert ask_clause(query) == clause


def write_vault(docs: Path) -> None:
    # Notes that say the question's context in its own words (and name the Mac); one that answers what it asks.
    for n, extra in enumerate(("folders", "settings", "plans", "devices", "history", "limits")):
        write(
            docs,
            f"sync-{n}.md",
            f"# Sync {extra}\n\nOn a Mac, sync leaves out the file recovery snapshots and {extra} of the vault.\n",
        )
    write(
        docs,
        "storage.md",
        "# Stored data\n\nOn a Mac the file recovery snapshots are kept then in your home folder.\n",
    )


def test_what_the_asking_clause_finds_joins_the_question_s_ranking(
    docs: Path, open_engine: OpenEngine
) -> None:
    write_vault(docs)
    searcher = open_engine(docs).require_searcher()
    flt = FileFilter()
    pools = searcher.pools(QUESTION, flt, 40)
    assert pools.ask is not None
    assert pools.ask.clause == "where on my Mac are they kept then?"
    whole = [
        h.path for h in searcher.rank(QUESTION, searcher.pools(QUESTION, flt, 40, ask=False), flt, SCORE)
    ]
    assert "storage.md" not in whole  # the context's words alone fill the first three
    hits = searcher.search(QUESTION, flt, SCORE)
    assert "storage.md" in [h.path for h in hits]
    # The number shown stays the cosine of the whole question, not of its clause.
    found = next(h for h in hits if h.path == "storage.md")
    assert pools.qvec is not None
    assert searcher.matrix is not None
    assert found.similarity == pytest.approx(
        searcher.matrix.cosine(pools.qvec, [found.chunk.id])[found.chunk.id]
    )


def test_rank_fusion_and_one_clause_questions_search_once(docs: Path, open_engine: OpenEngine) -> None:
    write_vault(docs)
    searcher = open_engine(docs).require_searcher()
    flt = FileFilter()
    assert searcher.pools("where are the recovery snapshots kept", flt, 40).ask is None
    # a question naming an identifier leans on its words whole: no second search
    assert (
        searcher.pools("Sync skips workspace-mobile.json files; how do I sync that file?", flt, 40).ask
        is None
    )
    # rank fusion (the spec's default) reads the whole question only: its ranking is that of no clause pools
    rrf = SearchOptions(top_k=3, fusion="rrf")
    alone = searcher.rank(QUESTION, searcher.pools(QUESTION, flt, 40, ask=False), flt, rrf)
    assert [h.chunk.id for h in searcher.search(QUESTION, flt, rrf)] == [h.chunk.id for h in alone]
    # and given a clause's pools, rank fusion still leaves them out
    asked = searcher.pools(QUESTION, flt, 40)
    assert asked.ask is not None
    assert [h.chunk.id for h in searcher.rank(QUESTION, asked, flt, rrf)] == [h.chunk.id for h in alone]
