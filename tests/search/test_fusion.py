"""Score fusion's BM25 share follows how sure each side is (`FusionRule`): behaviour, not the tuned numbers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ragdown.engine.engine import Engine
from ragdown.search.hybrid import FUSION_RULE, Pools, SearchOptions, bm25_lead
from ragdown.search.query import coverage, fts_terms
from ragdown.storage.filter_sql import FileFilter
from tests.conftest import write

OpenEngine = Callable[..., Engine]
SCORE = SearchOptions(top_k=5, fusion="score")


def test_the_share_grows_with_what_bm25s_best_hit_holds_and_its_lead() -> None:
    rule = FUSION_RULE
    assert rule.share(1.0, 0.2, 0.2) > rule.share(0.4, 0.2, 0.2)  # holds more of the query
    assert rule.share(0.8, 0.2, 0.1) > rule.share(0.8, 0.8, 0.1)  # holds more than dense's best hit
    leading = replace(rule, lead=1.0)  # the default gives the lead no weight (measured: it added nothing)
    assert leading.share(0.8, 0.8, 0.5) > leading.share(0.8, 0.8, 0.0)
    assert rule.share(1.0, 0.0, 1.0) == rule.high
    assert rule.share(0.0, 1.0, 0.0) == rule.low
    assert rule.low < rule.high


def test_bm25_lead_is_the_first_scores_margin_over_the_second() -> None:
    assert bm25_lead([(1, 10.0), (2, 5.0)]) == 0.5
    assert bm25_lead([(1, 4.0), (2, 4.0)]) == 0.0
    assert bm25_lead([(1, 3.0)]) == 1.0
    assert bm25_lead([]) == 0.0


def test_coverage_counts_the_query_terms_a_text_holds_as_indexed() -> None:
    terms = fts_terms("restore the kestrel-ingest replica")
    assert coverage(terms, "Kestrel Ingest › Restore\n\nthe kestrel-ingest replica") == 1.0
    assert coverage(terms, "the replica") == 1 / len(terms)
    assert coverage(fts_terms("更改附件位置"), "设置 › 更改附件位置的方法") == 1.0
    assert 0 < coverage(fts_terms("更改附件位置"), "附件 › 默认储存位置") < 1
    assert coverage([], "anything") == 0.0


def chunk_ids(engine: Engine) -> dict[str, int]:
    store = engine.require_store()
    out: dict[str, int] = {}
    for f in store.all_files():
        (cid,) = [cid for cid, _ in store.chunk_ids_of_files([f.id])]
        out[f.path] = cid
    return out


def test_a_decisive_bm25_hit_holding_the_query_outranks_the_dense_favourite(
    docs: Path, open_engine: OpenEngine
) -> None:
    write(
        docs, "table.md", "# Marten Notifier\n\n| setting | value |\n|---|---|\n| production replicas | 6 |\n"
    )
    write(docs, "deploy.md", "# Deploys\n\nHow a release is rolled out, step by step.\n")
    engine = open_engine(docs)
    ids = chunk_ids(engine)
    searcher = engine.require_searcher()
    query = "marten notifier production replicas"
    # Dense prefers the deploy page by a wide margin; BM25 finds the table far ahead of anything else.
    pools = Pools(
        dense=[(ids["deploy.md"], 0.70), (ids["table.md"], 0.40)],
        lexical=[(ids["table.md"], 12.0), (ids["deploy.md"], 2.0)],
        qvec=searcher.embed_query(query),
    )
    hits = searcher.rank(query, pools, FileFilter(), SCORE)
    assert hits[0].path == "table.md"


def test_a_paraphrase_bm25_matches_on_stray_words_leaves_the_dense_favourite_first(
    docs: Path, open_engine: OpenEngine
) -> None:
    write(docs, "recorder.md", "# Audio recorder\n\nRecord sound from the microphone and embed it.\n")
    write(docs, "clipper.md", "# Web Clipper\n\nCapture pages into a note from the browser.\n")
    engine = open_engine(docs)
    ids = chunk_ids(engine)
    searcher = engine.require_searcher()
    query = "where does a voice memo I capture inside a note end up"
    # BM25 matches two stray words ("capture", "note") with no lead; dense is sure of the recorder.
    pools = Pools(
        dense=[(ids["recorder.md"], 0.62), (ids["clipper.md"], 0.35)],
        lexical=[(ids["clipper.md"], 3.1), (ids["recorder.md"], 3.0)],
        qvec=searcher.embed_query(query),
    )
    hits = searcher.rank(query, pools, FileFilter(), SCORE)
    assert hits[0].path == "recorder.md"
    # The same pools under the old fixed BM25 share of 0.6 put the stray-word hit first.
    fixed = type(FUSION_RULE)(base=0.6, coverage=0.0, agreement=0.0, lead=0.0, low=0.6, high=0.6)
    assert searcher.rank(query, pools, FileFilter(), SCORE, fixed)[0].path == "clipper.md"


def test_a_short_bm25_pool_keeps_its_last_hit_above_the_chunks_it_did_not_find(
    docs: Path, open_engine: OpenEngine
) -> None:
    write(docs, "owner.md", "# Kestrel scheduler\n\nOwned by Iyer.\n")
    write(docs, "other.md", "# Other\n\nNothing about owners.\n")
    write(docs, "third.md", "# Third\n\nStill nothing.\n")
    engine = open_engine(docs)
    ids = chunk_ids(engine)
    searcher = engine.require_searcher()
    query = "iyer"
    # BM25 found two chunks of the 40 asked for; the owner is its last. Dense is unsure of everything.
    dense = [(ids["other.md"], 0.21), (ids["third.md"], 0.20), (ids["owner.md"], 0.19)]
    lexical = [(ids["other.md"], 3.9), (ids["owner.md"], 3.2)]
    qvec = searcher.embed_query(query)
    short = Pools(dense=dense, lexical=lexical, qvec=qvec, size=40)
    order = [h.path for h in searcher.rank(query, short, FileFilter(), SCORE)]
    assert order.index("owner.md") < order.index("third.md")
    # Normalised over itself, the pool's last hit counts as absent, and the owner falls below a chunk BM25
    # never found.
    unsized = Pools(dense=dense, lexical=lexical, qvec=qvec)
    order = [h.path for h in searcher.rank(query, unsized, FileFilter(), SCORE)]
    assert order.index("owner.md") > order.index("third.md")


def test_a_cjk_query_leans_on_bm25_only_for_an_embedder_that_does_not_read_cjk(
    docs: Path, open_engine: OpenEngine
) -> None:
    write(docs, "hotkey.md", "# 快捷键\n\n如何给命令设置快捷键。\n")
    write(docs, "theme.md", "# 主题\n\n更换外观。\n")
    engine = open_engine(docs)
    ids = chunk_ids(engine)
    searcher = engine.require_searcher()
    query = "怎么改外观的快捷键"
    pools = Pools(
        dense=[(ids["theme.md"], 0.70), (ids["hotkey.md"], 0.40)],
        lexical=[(ids["hotkey.md"], 5.0), (ids["theme.md"], 4.0)],
        qvec=searcher.embed_query(query),
    )
    assert searcher.reads_cjk  # the hash embedder reads CJK: the share follows the rule
    weighed = searcher.lexical_share(query, pools)
    assert weighed != FUSION_RULE.unread
    searcher.reads_cjk = False  # as minilm's catalog entry says
    assert searcher.lexical_share(query, pools) == FUSION_RULE.unread
    assert searcher.lexical_share(query, pools, replace(FUSION_RULE, unread=None)) == weighed
    assert searcher.lexical_share("the theme hotkey", pools) != FUSION_RULE.unread
