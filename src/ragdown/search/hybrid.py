"""Hybrid search: dense and BM25 pools under the same filters, fused, with every hit's exact cosine.

- Pools of `max(4 × top_k, 20)` from each retriever, with the same file-level SQL prefilter.
- BM25 reads the breadcrumb, the text and the aliases, a breadcrumb match weighing 3 text matches.
- Fusion `rrf` (the default, as the spec says): reciprocal rank fusion, k = 60. A query naming an
  identifier is fused by score instead (each side min-max normalised over its own pool, BM25 weighted
  0.8), and a candidate holding a span the query quotes gains half the best score.
- A prose query holding a document's alias adds one rank-1 share to each candidate of that document.
- Fusion `score` (`RAGDOWN_FUSION=score`, measured better with the offline model, `docs/benchmarks.md`):
  every query fused by score, alias boost 0.5. Identifier and single-term queries give BM25 0.9, and so
  does a CJK query when the embedder does not read CJK (`reads_cjk`); for any other query BM25's share follows
  how sure each side is (`FusionRule`): more when BM25's best hit holds more of the query's terms, and
  more of them than the dense side's best hit. A BM25 pool shorter than asked is normalised from 0 (every
  chunk outside it truly scores 0), so its last hit is not pushed down to "absent".
- Score fusion then lends a prose query evidence from a section's page and its links (`search/evidence.py`): the
  introduction of a page whose title the query names, and the best section of a note a top hit links to.
- A compound prose question under score fusion ("Sync skips hidden folders; how do I open that one?",
  `query.ask_clause`) is also searched by its last clause, the part that asks: that ranking is added, its best
  hit gaining `ASK_WEIGHT` of the whole question's best. The context's words often match the note that links
  to the answer better than the answer itself (docs/benchmarks.md section 44).
- Optional: a cap of sections per document, and following the wikilinks of the best hits.
Ranking uses the fused score; `similarity` is always the cosine of the query and the chunk.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from ragdown.embedders.base import Embedder, Vectors
from ragdown.search.query import (
    aliases_in,
    ask_clause,
    coverage,
    fts_match,
    fts_terms,
    holds_phrase,
    is_single_term,
    names_identifier,
    quoted_spans,
    substring_match,
)
from ragdown.storage.backend import IndexStore
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.lexical import has_cjk
from ragdown.storage.records import ChunkRecord, StoreError

log = logging.getLogger(__name__)

RRF_K = 60
LEXICAL_WEIGHT = 0.8  # BM25's share for an identifier query under rrf (score fusion: `FusionRule.routed`)
BM25_WEIGHTS = (3.0, 1.0, 1.0)  # breadcrumb, text, aliases
SUBSTRING_PASS = True  # fill a short BM25 pool from the trigram table (`lexical_pool`)
NAME_BOOST = 0.5  # an alias the query says, or a span it quotes: half the best fused score (1.0)
LINKED_SECTIONS = 2
# What a compound question's last clause finds, added under score fusion: its best hit gains this share of
# the whole question's best score (docs/benchmarks.md section 44).
ASK_WEIGHT = 0.5


Fusion = Literal["rrf", "score"]


def as_fusion(name: str | None) -> Fusion:
    return "score" if name == "score" else "rrf"


def fusion_for(chosen: str | None, embedder_name: str) -> Fusion:
    """The fusion in effect: the one chosen (`RAGDOWN_FUSION`), else the one the embedder was measured best
    with (`embedders.default_fusion`)."""
    from ragdown.embedders import default_fusion

    return as_fusion(chosen or default_fusion(embedder_name))


def pool_size(top_k: int) -> int:
    return max(4 * top_k, 20)


def rrf_share(rank: int) -> float:
    """What one list adds for a chunk at 0-based `rank`."""
    return 1.0 / (RRF_K + rank + 1)


@dataclass(frozen=True)
class FusionRule:
    """BM25's share in score fusion for a prose query, from how sure each side is of its best hit.

    `share = base + coverage × (C_bm25 − pivot) + agreement × (C_bm25 − C_dense) + lead × (L − lead_pivot)`,
    kept within [`low`, `high`]: C_bm25 and C_dense are the shares of the query's BM25 terms that BM25's best
    hit and the dense side's best hit hold (`query.coverage`), L is BM25's lead, (s1 − s2) / s1 of its first
    two scores. A paraphrase that shares few words with its answer leaves BM25 matching stray words (low
    C_bm25): dense leads. A query whose words BM25's best hit holds, and the dense side's does not (a table
    cell, a name), leans on BM25. An identifier or single-term query gives BM25 `routed`, and so does a CJK
    query for an embedder that does not read CJK (`unread`). Tuned on four development sets at once, no
    loss to either side alone on any (`bench/retrieval_fusion.py`, `docs/benchmarks.md` section 16); BM25's
    lead added nothing there, so its weight is 0.
    """

    base: float = 0.6
    coverage: float = 1.0
    pivot: float = 0.7
    agreement: float = 0.5
    lead: float = 0.0
    lead_pivot: float = 0.1
    low: float = 0.2
    high: float = 0.8
    routed: float = 0.9
    unread: float | None = 0.9  # None: a CJK query is weighed as any other
    short_pool: bool = True  # a BM25 pool shorter than asked is normalised from 0 (`_score_fusion`)

    def share(self, bm25_coverage: float, dense_coverage: float, lead: float) -> float:
        raw = (
            self.base
            + self.coverage * (bm25_coverage - self.pivot)
            + self.agreement * (bm25_coverage - dense_coverage)
            + self.lead * (lead - self.lead_pivot)
        )
        return min(self.high, max(self.low, raw))


FUSION_RULE = FusionRule()


def bm25_lead(lexical: Sequence[tuple[int, float]]) -> float:
    """How far BM25's first score is ahead of its second, as a share of the first (1 for a single hit)."""
    if not lexical:
        return 0.0
    first = lexical[0][1]
    if len(lexical) < 2:
        return 1.0
    return max(0.0, (first - lexical[1][1]) / first) if first > 0 else 0.0


@dataclass(frozen=True)
class Pools:
    """What each retriever found for one query, best first, and the query's vector (None without one)."""

    dense: list[tuple[int, float]]
    lexical: list[tuple[int, float]]
    qvec: Vectors | None
    size: int = 0  # the pool size asked for; a BM25 pool shorter than it found every chunk holding a term
    ask: Pools | None = None  # a compound question's: the pools of its last clause (`query.ask_clause`)
    clause: str = ""  # the text these pools were made for, when it is a clause of the query


@dataclass(frozen=True)
class Hit:
    chunk: ChunkRecord
    similarity: float
    score: float
    sources: tuple[str, ...]
    via_link: bool = False
    has_similarity: bool = True  # False when no embedder scored the query: `similarity` is then no cosine

    @property
    def path(self) -> str:
        return self.chunk.path


@dataclass(frozen=True)
class SearchOptions:
    top_k: int = 8
    max_per_document: int = 0
    follow_links: int = 0
    pool: int | None = None
    fusion: Fusion = "rrf"


class Searcher:
    """Answers queries from whatever the store has committed; never waits for a sync."""

    def __init__(self, store: IndexStore, embedder: Embedder | None, *, folders: bool) -> None:
        self.store = store
        self.embedder = embedder
        self.folders = folders
        # An English-only model (`reads_cjk` false) ranks CJK text by noise: a CJK query then leans on BM25.
        self.reads_cjk = bool(getattr(embedder, "reads_cjk", True))
        # The backend's dense retriever: SQLite's in-memory matrix, or pgvector's HNSW index.
        self.matrix = store.dense_index(embedder.dim) if embedder is not None else None
        self._alias_lock = threading.Lock()
        self._alias_cache: tuple[int, list[tuple[str, str]]] | None = None
        self._lexical_runner = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ragdown-bm25")

    def warm(self, *, links: bool = False) -> None:
        """Load what a search reads (the dense matrix, the aliases) before the first search needs it; with
        `links` (score fusion, whose searches lend along wikilinks), each folder's link resolver too: built
        by the first search instead, it cost that search ~0.5 s at 10,000 notes (docs/benchmarks.md section
        43)."""
        if self.matrix is not None:
            self.matrix.warm()
        self._aliases()
        if links:
            from ragdown.search.linking import warm_resolvers

            warm_resolvers(self.store)

    # -- the pieces --------------------------------------------------------------------------------

    def embed_query(self, query: str) -> Vectors | None:
        if self.embedder is None:
            return None
        try:
            return self.embedder.embed_query(query)
        except Exception as err:
            log.warning("query embedding failed, answering from BM25 alone: %s", err)
            return None

    def dense_pool(self, qvec: Vectors | None, flt: FileFilter, size: int) -> list[tuple[int, float]]:
        if qvec is None or self.matrix is None:
            return []
        return self.matrix.search(qvec, size, flt)

    def lexical_pool(
        self,
        query: str,
        flt: FileFilter,
        size: int,
        weights: tuple[float, float, float] | None = None,
    ) -> list[tuple[int, float]]:
        """BM25 over the words; when they find fewer than `size` chunks, the substring pass fills the pool.
        `weights`: the breadcrumb's, the text's and the aliases' (another tool set may weigh them its way);
        `BM25_WEIGHTS`, read at the call, when left out."""
        weights = weights or BM25_WEIGHTS
        match = fts_match(query)
        pool: list[tuple[int, float]] = []
        if match is not None:
            try:
                pool = self.store.bm25(match, flt, size, weights)
            except StoreError:  # the index unreachable: said as such, never as a search that found nothing
                raise
            except Exception as err:  # an FTS parse error must not fail the search: dense still answers
                log.warning("BM25 failed for %r, answering from dense search alone: %s", query, err)
                return []
        if SUBSTRING_PASS and len(pool) < size:
            pool = self._fill_with_substrings(query, flt, size, pool, weights)
        return pool

    def _fill_with_substrings(
        self,
        query: str,
        flt: FileFilter,
        size: int,
        pool: list[tuple[int, float]],
        weights: tuple[float, float, float],
    ) -> list[tuple[int, float]]:
        """`pool`, then the chunks the trigram table finds that it lacks, in their trigram BM25 order.

        Ranked after every word match (a substring is weaker evidence than a word), with scores below the
        pool's lowest and in the same order, so either fusion keeps them behind. Measured against fusing the
        two lists by rank in `docs/benchmarks.md` ("CJK segmentation").
        """
        match = substring_match(query)
        if match is None:
            return pool
        try:
            found = self.store.substrings(match, flt, size, weights)
        except StoreError:
            raise
        except Exception as err:
            log.warning("the substring pass failed for %r: %s", query, err)
            return pool
        have = {cid for cid, _ in pool}
        extra = [(cid, score) for cid, score in found if cid not in have][: size - len(pool)]
        if not extra:
            return pool
        if not pool:
            return extra
        floor = min(score for _, score in pool)
        n = len(extra)
        return pool + [(cid, floor * (n - i) / (n + 1)) for i, (cid, _) in enumerate(extra)]

    def _aliases(self) -> list[tuple[str, str]]:
        gen = self.store.generation()
        with self._alias_lock:
            if self._alias_cache is not None and self._alias_cache[0] == gen:
                return self._alias_cache[1]
        pairs = [(alias, f.path) for f in self.store.all_files() for alias in f.aliases]
        with self._alias_lock:
            self._alias_cache = (gen, pairs)
        return pairs

    # -- search ------------------------------------------------------------------------------------

    def search(self, query: str, flt: FileFilter, opts: SearchOptions) -> list[Hit]:
        size = opts.pool or pool_size(opts.top_k)
        return self.rank(query, self.pools(query, flt, size, ask=opts.fusion == "score"), flt, opts)

    def pools(self, query: str, flt: FileFilter, size: int, *, ask: bool = True) -> Pools:
        """Both retrievers' pools of `size` for `query` under `flt`; with `ask`, a compound question's last
        clause gets its own pools too (`Pools.ask`: score fusion adds what they find, `rank`)."""
        # A query that leans on its words reads its clauses together: `rank` would add nothing for them, so
        # they cost no second search.
        clause = ask_clause(query) if ask and not self.leans_on_words(query) else None
        # BM25 runs in a second thread while the query is embedded and the dense pool scored: SQLite and
        # numpy both release the GIL, so the two pools cost about the slower one, not their sum.
        lexical_future = self._lexical_runner.submit(self.lexical_pool, query, flt, size)
        clause_future = self._lexical_runner.submit(self.lexical_pool, clause, flt, size) if clause else None
        qvec = self.embed_query(query)
        dense = self.dense_pool(qvec, flt, size)
        asked = None
        if clause is not None and clause_future is not None:
            cvec = self.embed_query(clause)
            asked = Pools(self.dense_pool(cvec, flt, size), clause_future.result(), cvec, size, clause=clause)
        return Pools(dense, lexical_future.result(), qvec, size, ask=asked)

    def lexical_share(
        self, query: str, pools: Pools, rule: FusionRule = FUSION_RULE, *, routed: bool = False
    ) -> float:
        """BM25's share in score fusion for `query` (`FusionRule`); 0 or 1 when one side is empty."""
        if not pools.lexical:
            return 0.0
        if not pools.dense:
            return 1.0
        if routed:
            return rule.routed
        if rule.unread is not None and self._unread(query):
            return rule.unread
        top_bm25, top_dense = pools.lexical[0][0], pools.dense[0][0]
        records = self.store.chunks_by_id([top_bm25, top_dense])
        terms = fts_terms(query)

        def covered(cid: int) -> float:
            rec = records.get(cid)
            if rec is None:
                return 0.0
            return coverage(terms, f"{rec.breadcrumb}\n{rec.text}\n{' '.join(rec.file.aliases)}")

        return rule.share(covered(top_bm25), covered(top_dense), bm25_lead(pools.lexical))

    def rank(
        self, query: str, pools: Pools, flt: FileFilter, opts: SearchOptions, rule: FusionRule = FUSION_RULE
    ) -> list[Hit]:
        """Fuse `pools` (`opts.fusion`, `rule` for score fusion) into the hits of `query`, best first."""
        dense, qvec = pools.dense, pools.qvec
        fused = self._fuse(query, pools, flt, opts, rule)
        # A compound question's last clause, ranked as a query of its own, adds its ranking: its best hit gains
        # `ASK_WEIGHT` of the whole question's best (score fusion, a prose question).
        if opts.fusion == "score" and pools.ask is not None and fused and not self.leans_on_words(query):
            _add_scaled(fused, self._fuse(pools.ask.clause, pools.ask, flt, opts, rule), ASK_WEIGHT)
        ranked = sorted(fused, key=lambda cid: -fused[cid][0])
        # Only the hits that will be shown need their rows, unless the per-document cap reorders them all.
        order, records = self._records(ranked, None if opts.max_per_document > 0 else opts.top_k)
        cosines = dict(dense)
        missing = [cid for cid in order if cid not in cosines]
        if missing and qvec is not None and self.matrix is not None:
            cosines.update(self.matrix.cosine(qvec, missing))
        hits = [
            Hit(
                records[cid],
                cosines.get(cid, 0.0),
                fused[cid][0],
                tuple(sorted(fused[cid][1])),
                has_similarity=qvec is not None,
            )
            for cid in order
        ]
        if opts.max_per_document > 0:
            hits = cap_per_document(hits, opts.max_per_document)
        if opts.follow_links > 0 and qvec is not None:
            hits = self._follow_links(hits, qvec, flt, opts)
        return hits[: opts.top_k]

    def leans_on_words(self, query: str) -> bool:
        """Whether score fusion routes `query` to its words: an identifier, a single term, or CJK an
        English-only model cannot read (BM25 gets `FusionRule.routed` / `unread`; no evidence is lent)."""
        return self._unread(query) or names_identifier(query) or is_single_term(query)

    def _unread(self, query: str) -> bool:
        return not self.reads_cjk and has_cjk(query)

    def _fuse(
        self, query: str, pools: Pools, flt: FileFilter, opts: SearchOptions, rule: FusionRule
    ) -> dict[int, tuple[float, set[str]]]:
        """`query`'s candidates and fused scores, with boosts and evidence lent."""
        dense, lexical, qvec = pools.dense, pools.lexical, pools.qvec
        routed = names_identifier(query)
        unread = self._unread(query)
        if opts.fusion == "score":
            routed = routed or is_single_term(query)
            share = self.lexical_share(query, pools, rule, routed=routed)
            fused = _score_fusion(dense, lexical, share, lexical_size=pools.size if rule.short_pool else 0)
            boost = NAME_BOOST
        elif routed:
            fused = _score_fusion(dense, lexical, LEXICAL_WEIGHT)
            boost = NAME_BOOST
        else:
            fused = _rrf(dense, lexical)
            boost = rrf_share(0)
        # A query routed to score fusion is not alias-boosted; a quoted span lifts its chunk under score fusion.
        boosted = set() if routed else aliases_in(query, self._aliases())
        quoted = quoted_spans(query) if routed or opts.fusion == "score" else []
        if boosted or quoted:
            self._boost_names(fused, boosted, quoted, boost)
        # A routed query leans on its words: no evidence is lent (measured: the held-out sets lost one question
        # each without this).
        if opts.fusion == "score" and fused and not routed and not unread:
            from ragdown.search.evidence import lend_link_evidence, lend_page_evidence  # score fusion's

            lend_page_evidence(self.store, query, fused)
            if qvec is not None and self.matrix is not None and dense:
                lend_link_evidence(
                    self.store, self.matrix, qvec, dense[0][1], flt, fused, query, frozenset(boosted)
                )
        return fused

    def _records(self, ranked: list[int], want: int | None) -> tuple[list[int], dict[int, ChunkRecord]]:
        """The first `want` (or all) ranked chunks still in the index, and their rows."""
        records: dict[int, ChunkRecord] = {}
        kept: list[int] = []
        start = 0
        while start < len(ranked) and (want is None or len(kept) < want):
            batch = ranked[start:] if want is None else ranked[start : start + want - len(kept)]
            start += len(batch)
            found = self.store.chunks_by_id(batch)
            records.update(found)
            kept.extend(cid for cid in batch if cid in found)
        return kept, records

    def _boost_names(
        self, fused: dict[int, tuple[float, set[str]]], paths: set[str], quoted: list[str], boost: float
    ) -> None:
        """Lift each candidate of an aliased document, and each holding a quoted span whole, by `boost`."""
        records = self.store.chunks_by_id(list(fused))
        for cid, rec in records.items():
            lift = 0.0
            if rec.path in paths:
                lift += boost
            if quoted:
                text = (rec.breadcrumb + "\n" + rec.text).lower()
                if any(holds_phrase(text, span) for span in quoted):
                    lift += boost
            if lift:
                score, sources = fused[cid]
                fused[cid] = (score + lift, sources)

    # -- link following ----------------------------------------------------------------------------

    def _follow_links(
        self, hits: list[Hit], qvec: Vectors, flt: FileFilter, opts: SearchOptions
    ) -> list[Hit]:
        from ragdown.documents import find_links
        from ragdown.search.linking import folder_resolver  # imported by the searches that follow links

        assert self.matrix is not None
        allowed = set(self.store.file_ids(flt))
        out: list[Hit] = []
        placed: set[int] = set()
        for rank, hit in enumerate(hits):
            if hit.chunk.id in placed:
                continue
            out.append(hit)
            placed.add(hit.chunk.id)
            if rank >= opts.follow_links:
                continue
            folder = hit.chunk.folder
            strip = len(folder) + 1 if folder else 0
            resolver = folder_resolver(self.store, folder)
            targets: list[str] = []
            for link in find_links(hit.chunk.text):
                if link.kind != "wiki":
                    continue
                resolved = resolver.resolve(link.target, hit.chunk.path[strip:])
                if resolved is None:
                    continue
                full = (folder + "/" if folder else "") + resolved.path
                if full != hit.chunk.path and full not in targets:
                    targets.append(full)
            for target in targets:
                record = self.store.get_file(target)
                if record is None or record.id not in allowed:
                    continue
                chunk_ids = [cid for cid, _ in self.store.chunk_ids_of_files([record.id])]
                sims = self.matrix.cosine(qvec, chunk_ids)
                best = sorted(sims.items(), key=lambda kv: -kv[1])[:LINKED_SECTIONS]
                linked = self.store.chunks_by_id([cid for cid, _ in best])
                for cid, sim in best:
                    if cid in placed or cid not in linked:
                        continue
                    out.append(Hit(linked[cid], sim, hit.score, ("link",), via_link=True))
                    placed.add(cid)
        return out


def _rrf(
    dense: Sequence[tuple[int, float]], lexical: Sequence[tuple[int, float]]
) -> dict[int, tuple[float, set[str]]]:
    fused: dict[int, tuple[float, set[str]]] = {}
    for name, pool in (("dense", dense), ("lexical", lexical)):
        for rank, (cid, _) in enumerate(pool):
            score, sources = fused.get(cid, (0.0, set()))
            sources.add(name)
            fused[cid] = (score + rrf_share(rank), sources)
    return fused


def _normalise(pool: Sequence[tuple[int, float]], floor_at_zero: bool = False) -> dict[int, float]:
    """Min-max over the pool; `floor_at_zero` (a BM25 pool shorter than asked): from 0 instead of its last."""
    if not pool:
        return {}
    values = [s for _, s in pool]
    lo, hi = min(values), max(values)
    if floor_at_zero and lo > 0:
        lo = 0.0
    if hi - lo <= 1e-12:
        return {cid: 1.0 for cid, _ in pool}
    return {cid: (s - lo) / (hi - lo) for cid, s in pool}


def _score_fusion(
    dense: Sequence[tuple[int, float]],
    lexical: Sequence[tuple[int, float]],
    lexical_weight: float,
    *,
    lexical_size: int = 0,
) -> dict[int, tuple[float, set[str]]]:
    """Each pool min-max normalised over itself, then `(1 - w) × dense + w × lexical` (0 where absent).

    With `lexical_size` (the pool size asked for), a shorter BM25 pool is normalised from 0: it holds every
    chunk with a query term, and the rest score 0, not its last hit's score.
    """
    short = 0 < len(lexical) < lexical_size
    fused: dict[int, tuple[float, set[str]]] = {}
    for name, weight, pool in (("dense", 1.0 - lexical_weight, dense), ("lexical", lexical_weight, lexical)):
        for cid, norm in _normalise(pool, short and name == "lexical").items():
            score, sources = fused.get(cid, (0.0, set()))
            sources.add(name)
            fused[cid] = (score + weight * norm, sources)
    return fused


def _add_scaled(
    fused: dict[int, tuple[float, set[str]]], more: dict[int, tuple[float, set[str]]], weight: float
) -> None:
    """Add `more`'s scores to `fused`, scaled so that its best gains `weight` × `fused`'s best."""
    if not more:
        return
    top = max(score for score, _ in fused.values())
    more_top = max(score for score, _ in more.values())
    if top <= 0 or more_top <= 0:
        return
    scale = weight * top / more_top
    for cid, (score, names) in more.items():
        have, sources = fused.get(cid, (0.0, set()))
        fused[cid] = (have + scale * score, sources | names)


def cap_per_document(hits: list[Hit], cap: int) -> list[Hit]:
    """Past `cap` sections of one document, its further sections move behind every other document's."""
    kept: list[Hit] = []
    spill: list[Hit] = []
    seen: dict[str, int] = {}
    for hit in hits:
        n = seen.get(hit.path, 0)
        (kept if n < cap else spill).append(hit)
        seen[hit.path] = n + 1
    return kept + spill
