"""Hybrid search: dense and BM25 pools under the same filters, fused, with every hit's exact cosine.

- Pools of `max(4 × top_k, 20)` from each retriever, with the same file-level SQL prefilter.
- BM25 reads the breadcrumb, the text and the aliases, a breadcrumb match weighing 3 text matches.
- Fusion `rrf` (the default, as the spec says): reciprocal rank fusion, k = 60. A query naming an
  identifier is fused by score instead (each side min-max normalised over its own pool, BM25 weighted
  0.8), and a candidate holding a span the query quotes gains half the best score.
- A prose query holding a document's alias adds one rank-1 share to each candidate of that document.
- Fusion `score` (`RAGDOWN_FUSION=score`, measured better with the offline model, `docs/benchmarks.md`):
  every query fused by score (BM25 0.6; identifier and single-term queries 0.8), alias boost 0.5.
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

import numpy as np

from ragdown.documents import find_links
from ragdown.index.embedders.base import Embedder, Vectors
from ragdown.index.store import ChunkRecord, FileFilter, Store
from ragdown.index.vectors import DenseMatrix
from ragdown.linking import folder_resolver
from ragdown.search.query import (
    aliases_in,
    fts_match,
    holds_phrase,
    is_single_term,
    names_identifier,
    quoted_spans,
    substring_match,
)

log = logging.getLogger(__name__)

RRF_K = 60
LEXICAL_WEIGHT = 0.8  # the BM25 side's share in score fusion for a query naming an identifier
PROSE_LEXICAL_WEIGHT = 0.6  # and, with fusion "score", for every other query
BM25_WEIGHTS = (3.0, 1.0, 1.0)  # breadcrumb, text, aliases
SUBSTRING_PASS = True  # fill a short BM25 pool from the trigram table (`lexical_pool`)
NAME_BOOST = 0.5  # an alias the query says, or a span it quotes: half the best fused score (1.0)
LINKED_SECTIONS = 2


Fusion = Literal["rrf", "score"]


def as_fusion(name: str | None) -> Fusion:
    return "score" if name == "score" else "rrf"


def pool_size(top_k: int) -> int:
    return max(4 * top_k, 20)


def rrf_share(rank: int) -> float:
    """What one list adds for a chunk at 0-based `rank`."""
    return 1.0 / (RRF_K + rank + 1)


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

    def __init__(self, store: Store, embedder: Embedder | None, *, folders: bool) -> None:
        self.store = store
        self.embedder = embedder
        self.folders = folders
        self.matrix = DenseMatrix(store, embedder.dim) if embedder is not None else None
        self._alias_lock = threading.Lock()
        self._alias_cache: tuple[int, list[tuple[str, str]]] | None = None
        self._lexical_runner = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ragdown-bm25")

    # -- the pieces --------------------------------------------------------------------------------

    def embed_query(self, query: str) -> Vectors | None:
        if self.embedder is None:
            return None
        try:
            return self.embedder.embed_query(query)
        except Exception as err:
            log.warning("query embedding failed, answering from BM25 alone: %s", err)
            return None

    def _allowed_files(self, flt: FileFilter) -> np.ndarray | None:
        """File ids the filter allows, or None when it allows every file (the fast, unfiltered path)."""
        narrowed = bool(flt.prefixes and "" not in flt.prefixes) or bool(
            flt.tag
            or flt.written_by
            or flt.session
            or flt.folders is not None
            or flt.changed_since_ns is not None
        )
        if not narrowed and not (flt.hide_superseded and self.store.superseded_by()):
            return None
        return np.asarray(self.store.file_ids(flt), dtype=np.int64)

    def dense_pool(self, qvec: Vectors | None, flt: FileFilter, size: int) -> list[tuple[int, float]]:
        if qvec is None or self.matrix is None:
            return []
        return self.matrix.search(qvec, size, self._allowed_files(flt))

    def lexical_pool(self, query: str, flt: FileFilter, size: int) -> list[tuple[int, float]]:
        """BM25 over the words; when they find fewer than `size` chunks, the substring pass fills the pool."""
        match = fts_match(query)
        pool: list[tuple[int, float]] = []
        if match is not None:
            try:
                pool = self.store.bm25(match, flt, size, BM25_WEIGHTS)
            except Exception as err:  # an FTS parse error must not fail the search: dense still answers
                log.warning("BM25 failed for %r, answering from dense search alone: %s", query, err)
                return []
        if SUBSTRING_PASS and len(pool) < size:
            pool = self._fill_with_substrings(query, flt, size, pool)
        return pool

    def _fill_with_substrings(
        self, query: str, flt: FileFilter, size: int, pool: list[tuple[int, float]]
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
            found = self.store.substrings(match, flt, size, BM25_WEIGHTS)
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
        # BM25 runs in a second thread while the query is embedded and the dense pool scored: SQLite and
        # numpy both release the GIL, so the two pools cost about the slower one, not their sum.
        lexical_future = self._lexical_runner.submit(self.lexical_pool, query, flt, size)
        qvec = self.embed_query(query)
        dense = self.dense_pool(qvec, flt, size)
        lexical = lexical_future.result()
        routed = names_identifier(query)
        if opts.fusion == "score":
            routed = routed or is_single_term(query)
            fused = _score_fusion(dense, lexical, LEXICAL_WEIGHT if routed else PROSE_LEXICAL_WEIGHT)
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


def _normalise(pool: Sequence[tuple[int, float]]) -> dict[int, float]:
    if not pool:
        return {}
    values = [s for _, s in pool]
    lo, hi = min(values), max(values)
    if hi - lo <= 1e-12:
        return {cid: 1.0 for cid, _ in pool}
    return {cid: (s - lo) / (hi - lo) for cid, s in pool}


def _score_fusion(
    dense: Sequence[tuple[int, float]], lexical: Sequence[tuple[int, float]], lexical_weight: float
) -> dict[int, tuple[float, set[str]]]:
    """Each pool min-max normalised over itself, then `(1 - w) × dense + w × lexical` (0 where absent)."""
    fused: dict[int, tuple[float, set[str]]] = {}
    for name, weight, pool in (("dense", 1.0 - lexical_weight, dense), ("lexical", lexical_weight, lexical)):
        for cid, norm in _normalise(pool).items():
            score, sources = fused.get(cid, (0.0, set()))
            sources.add(name)
            fused[cid] = (score + weight * norm, sources)
    return fused


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
