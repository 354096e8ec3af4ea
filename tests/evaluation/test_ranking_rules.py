"""The general ranking rules: BM25 terms, routing, quoted names, CJK, the two fusions, the hook's gate."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.engine.engine import Engine
from ragdown.search.hook import HookSettings, select
from ragdown.search.hybrid import Hit, SearchOptions
from ragdown.search.query import (
    aliases_in,
    fts_terms,
    holds_phrase,
    is_single_term,
    names_identifier,
    quoted_spans,
)
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.lexical import lexical_text
from ragdown.storage.sqlite.store import DB_NAME, Store
from tests.conftest import write

OpenEngine = Callable[..., Engine]


def test_compounds_are_phrases_and_words_lose_their_stop_words() -> None:
    assert fts_terms("who owns db-curlew-indexer?") == ["owns", "db curlew indexer"]
    assert fts_terms("is it up-to-date") == ["up to date"]
    assert fts_terms("press Ctrl+Shift+T after v1.2.3") == ["press", "ctrl shift t", "after", "v1 2 3"]
    assert fts_terms("the") == ["the"]
    assert fts_terms("backup backup") == ["backup"]


def test_a_single_term_is_a_lookup_but_only_identifiers_are_routed_by_default() -> None:
    for lookup in ("kowalczyk", "db-curlew-indexer", "  achterberg. "):
        assert is_single_term(lookup)
    # The seed's routing: names, not plain words (fusion "score" also routes single terms).
    assert names_identifier("db-curlew-indexer") is False
    assert names_identifier("kowalczyk") is False
    assert names_identifier("db_curlew_indexer") is True
    for prose in ("how do I restore a backup", "is it up-to-date", "e.g. the backups", "", "?!"):
        assert not is_single_term(prose)


def test_quoted_spans_come_from_backticks_and_double_quotes() -> None:
    assert quoted_spans('what does `section:` match, and "star wars"?') == ["section:", "star wars"]
    assert quoted_spans("`a` and `a`") == ["a"]
    assert quoted_spans("nothing quoted") == []


def test_cjk_runs_become_words_bigrams_and_characters_in_the_index_text_and_the_query() -> None:
    assert lexical_text("更改附件位置") == " 更改 改附 附件 件位 位置 更 改 附 件 位 置 "
    assert lexical_text("附") == " 附 "
    assert lexical_text("plain English, unchanged") == "plain English, unchanged"
    assert lexical_text("") == ""
    assert fts_terms("怎么更改附件？") == [
        "更改",
        "改附",
        "附件",
        "更",
        "改",
        "附",
        "件",
    ]  # 怎么: a stop word
    assert holds_phrase("如何取消订阅", "取消订阅")
    assert aliases_in("如何取消订阅？", [("取消订阅", "refund.md")]) == {"refund.md"}
    assert not holds_phrase("bluebirds", "bluebird")


def test_bm25_finds_a_chinese_section_by_a_chinese_question(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "附件.md", "# 附件\n\n## 更改默认附件储存位置\n\n你可以在设置中更改默认的附件储存位置。\n")
    write(docs, "折叠.md", "# 折叠\n\n折叠功能默认是开启的。\n")
    engine = open_engine(docs)
    pool = engine.require_searcher().lexical_pool("怎么更改附件的储存位置？", FileFilter(), 10)
    records = engine.require_store().chunks_by_id([cid for cid, _ in pool])
    assert records[pool[0][0]].breadcrumb == "附件 › 更改默认附件储存位置"
    hits = engine.search("折叠功能", FileFilter(), SearchOptions(top_k=3))
    assert hits[0].path == "折叠.md"


def test_an_index_with_the_old_triggers_is_re_tokenised_when_a_primary_opens_it(
    docs: Path, open_engine: OpenEngine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(docs, "附件.md", "# 附件\n\n更改默认附件储存位置。\n")
    caplog.set_level(logging.INFO, logger="ragdown.storage.sqlite")
    open_engine(docs).close()
    # A new index has nothing to re-tokenise, so it says nothing of it.
    assert not [r for r in caplog.records if "re-tokenising" in r.getMessage()]
    path = tmp_path / "data" / DB_NAME
    conn = sqlite3.connect(path)  # the schema before lexical_text: plain columns in the triggers
    conn.executescript(
        """
        DROP TRIGGER IF EXISTS chunks_ai; DROP TRIGGER chunks_ad; DROP TABLE chunks_fts;
        CREATE VIRTUAL TABLE chunks_fts USING fts5(breadcrumb, text, aliases, content='chunks',
          content_rowid='id', tokenize='unicode61 remove_diacritics 2');
        CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
          INSERT INTO chunks_fts(rowid, breadcrumb, text, aliases) VALUES (new.id, new.breadcrumb, new.text,
            new.aliases);
        END;
        INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
        """
    )
    conn.close()
    store = Store(path.parent, writable=True)
    assert [r for r in caplog.records if "re-tokenising" in r.getMessage()]
    try:
        assert store.bm25('"附件"', FileFilter(), 10, (1.0, 1.0, 1.0))
        sql = store._reader().execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_ad'").fetchone()[0]
        assert "ragdown_lexical" in sql
        assert "deleted_log" in sql
        # the old insert trigger is gone: the store writes the FTS rows itself, once per chunk
        assert (
            store._reader().execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks_ai'").fetchone() is None
        )
    finally:
        store.close()


def test_a_quoted_name_lifts_the_chunk_that_holds_it(docs: Path, open_engine: OpenEngine) -> None:
    write(
        docs,
        "ops.md",
        "# Ops\n\n## Flags\n\nThe `--dry-run` flag prints the plan.\n\n## Plan\n\nThe plan, flags, prints.\n",
    )
    engine = open_engine(docs)
    for fusion in ("rrf", "score"):
        hits = engine.search(
            'what does "--dry-run" print', FileFilter(), SearchOptions(top_k=2, fusion=fusion)
        )
        assert hits[0].chunk.heading == "Ops › Flags", fusion


def _hit(hit: Hit, score: float, similarity: float) -> Hit:
    return Hit(hit.chunk, similarity, score, hit.sources)


def test_the_hook_sorts_by_cosine_and_gates_on_the_share_of_the_best_cosine(
    docs: Path, open_engine: OpenEngine
) -> None:
    for name in "abcd":
        write(docs, f"{name}.md", f"# {name.upper()}\n\nnotes about {name}\n")
    engine = open_engine(docs)
    found = engine.search("notes", FileFilter(), SearchOptions(top_k=4))
    assert len(found) == 4
    # fused scores in search order; cosines in another order; one below min_score
    candidates = [
        _hit(found[0], 1.0, 0.5),
        _hit(found[1], 0.8, 0.9),
        _hit(found[2], 0.7, 0.2),
        _hit(found[3], 0.3, 0.95),
    ]
    settings = HookSettings(top_k=4, min_score=0.4, min_ratio=0.9, max_chars=6000)
    prompt = "notes about everything"
    result = select(candidates, settings, set(), prompt, set(), 0, keep_top=False)
    # The spec's gates: 0.95 is the best cosine: 0.9 keeps 0.855 and up, so 0.9 stays and 0.5 goes.
    assert [h.chunk.id for h in result.injected] == [found[3].chunk.id, found[1].chunk.id]
    assert (result.below_score, result.below_ratio) == (1, 1)
    off = select(candidates, HookSettings(4, 0.4, 0.0, 6000), set(), prompt, set(), 0, keep_top=False)
    assert [h.chunk.id for h in off.injected] == [found[3].chunk.id, found[1].chunk.id, found[0].chunk.id]
    strict = select(candidates, HookSettings(4, 0.4, 1.0, 6000), set(), prompt, set(), 0, keep_top=False)
    assert [h.chunk.id for h in strict.injected] == [found[3].chunk.id]
    # ragdown's: the search's own first hit (cosine 0.5, above min_score) also stays, first.
    kept = select(candidates, settings, set(), prompt, set(), 0, keep_top=1)
    assert [h.chunk.id for h in kept.injected] == [found[0].chunk.id, found[3].chunk.id, found[1].chunk.id]
    assert (kept.below_score, kept.below_ratio) == (1, 0)
    strict = select(candidates, HookSettings(4, 0.4, 1.0, 6000), set(), prompt, set(), 0, keep_top=1)
    assert [h.chunk.id for h in strict.injected] == [found[0].chunk.id, found[3].chunk.id]
    # minilm's (the catalogue's `hook_keep_top` 2) keeps the search's first two, in search order, then the
    # best cosine; settings that name none are the spec's gate alone.
    two = select(candidates, HookSettings(4, 0.4, 1.0, 6000, keep_top=2), set(), prompt, set(), 0)
    assert [h.chunk.id for h in two.injected] == [found[0].chunk.id, found[1].chunk.id, found[3].chunk.id]
    plain = select(candidates, HookSettings(4, 0.4, 1.0, 6000), set(), prompt, set(), 0)
    assert [h.chunk.id for h in plain.injected] == [found[3].chunk.id]


def test_the_searchs_first_hit_stays_only_when_it_reaches_min_score_and_is_new(
    docs: Path, open_engine: OpenEngine
) -> None:
    for name in "abc":
        write(docs, f"{name}.md", f"# {name.upper()}\n\nnotes about {name}\n")
    engine = open_engine(docs)
    found = engine.search("notes", FileFilter(), SearchOptions(top_k=3))
    settings = HookSettings(top_k=4, min_score=0.4, min_ratio=0.9, max_chars=6000)
    prompt = "notes about everything"
    # First by the search but under min_score: the floor still decides (it keeps unrelated text out).
    low = [_hit(found[0], 1.0, 0.3), _hit(found[1], 0.8, 0.9), _hit(found[2], 0.5, 0.5)]
    assert [h.chunk.id for h in select(low, settings, set(), prompt, set(), 0).injected] == [
        found[1].chunk.id
    ]
    # A first hit this session was given before is not sent again, and the next one is not promoted.
    high = [_hit(found[0], 1.0, 0.5), _hit(found[1], 0.8, 0.9), _hit(found[2], 0.5, 0.5)]
    seen = {found[0].chunk.key}
    assert [h.chunk.id for h in select(high, settings, seen, prompt, set(), 0).injected] == [
        found[1].chunk.id
    ]
