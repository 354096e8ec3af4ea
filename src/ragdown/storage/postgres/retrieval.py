"""Retrieval on PostgreSQL: BM25 and the substring pass in SQL (`PgRetrieval`, `PgStore`'s retrieval half) and
dense search on pgvector (`PgDense`)."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from ragdown.embedders.base import Vectors
from ragdown.storage.backend import DenseIndex
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.postgres import tsvectors as pgsearch
from ragdown.storage.postgres.schema import NotCreatedYet, vector_type
from ragdown.storage.records import unit_mean

BM25_K1 = 1.2
BM25_B = 0.75


class PgRetrieval:
    """BM25, the substring pass and the dense index over the store's reads; mixed into `PgStore`, which
    gives what is declared here."""

    _cache_lock: threading.Lock
    _stats_cache: tuple[int, float, float] | None
    _df_cache: tuple[int, dict[str, int]]

    def generation(self) -> int:
        raise NotImplementedError

    def _rows(
        self, query: str | sql.Composable, params: Sequence[Any] = (), *, ef_search: int | None = None
    ) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _ef_search(self) -> int:
        """`hnsw.ef_search` for a search of this index's graph (set, or chosen from its size)."""
        raise NotImplementedError

    def _narrowing(self, flt: FileFilter | None, column: str) -> tuple[str, list[Any]]:
        raise NotImplementedError

    def _stats(self) -> tuple[float, float]:
        """(chunks, mean tokens per chunk), for BM25's IDF and length normalisation."""
        gen = self.generation()
        with self._cache_lock:
            cached = self._stats_cache
            if cached is not None and cached[0] == gen:
                return cached[1], cached[2]
        values = dict(self._rows("SELECT key, value FROM meta WHERE key IN ('chunks', 'tokens')"))
        n = float(values.get("chunks", 0) or 0)
        avg = float(values.get("tokens", 0) or 0) / n if n else 1.0
        with self._cache_lock:
            self._stats_cache = (gen, n, max(avg, 1.0))
        return n, max(avg, 1.0)

    def bm25(
        self, match: str, flt: FileFilter, limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        """BM25 over the words (`storage/postgres/tsvectors.py`): the same terms, IDF and length normalisation as FTS5.

        Scored MaxScore-style, so a common word does not make PostgreSQL rank most of the index: the terms
        are taken rarest first, and only the chunks holding one of those taken are scored (by every term);
        once the last of the `limit` best scores reaches the most the other terms could give a chunk that
        holds none of them (each term's IDF × (k1 + 1)), the ranking is the full one. `_next_pass` picks
        the terms of each pass: that changes how many passes run, never the ranking."""
        queries = list(dict.fromkeys(q for t in pgsearch.match_terms(match) if (q := pgsearch.term_query(t))))
        if not queries:
            return []
        n, avg = self._stats()
        dfs = self._document_frequencies(queries)
        idf = {q: max(math.log(max(n - dfs[q] + 0.5, 1e-9) / (dfs[q] + 0.5)), 1e-6) for q in queries}
        ranked = sorted((q for q in queries if dfs[q] > 0), key=lambda q: -idf[q])
        if not ranked:
            return []
        top = max(max(weights), 1e-6)
        rank_weights = [max(w / top, 1e-3) for w in (weights[1], 0.001, weights[2], weights[0])]  # D C B A
        narrow, narrow_params = self._narrowing(flt, "c.file_id")
        # One row per candidate chunk, its score summed over the terms it holds (each term's weighted
        # frequency computed once: `OFFSET 0` keeps the planner from inlining it twice), kept in a top-N
        # heap: no join of chunks × terms to sort and group (at 30,000 candidates that sort spilled ~50 MB
        # to disk; `bench/pg_tail.py`, docs/benchmarks.md section 14).
        query = (
            "SELECT c.id, s.score FROM chunks c CROSS JOIN LATERAL"
            " (SELECT sum(q.idf * r.x * %s / (r.x + %s * (1 - %s + %s * c.ntok / %s))) AS score"
            " FROM unnest(%s::tsquery[], %s::float8[]) AS q(query, idf)"
            " CROSS JOIN LATERAL (SELECT ts_rank_cd(%s::float4[], c.tsv, q.query) * %s AS x OFFSET 0) r"
            " WHERE c.tsv @@ q.query) s"
            f" WHERE c.tsv @@ %s::tsquery{narrow} ORDER BY s.score DESC, c.id LIMIT %s"
        )
        bound = [idf[q] * (BM25_K1 + 1) * top for q in ranked]
        dfs_ranked = [dfs[q] for q in ranked]
        taken = _next_pass(dfs_ranked, max(1, _rare_prefix(dfs_ranked)), limit, n)
        while True:
            params = [
                BM25_K1 + 1,
                BM25_K1,
                BM25_B,
                BM25_B,
                avg,
                ranked,
                [idf[q] for q in ranked],
                rank_weights,
                top,
                " | ".join(f"({q})" for q in ranked[:taken]),
                *narrow_params,
                int(limit),
            ]
            rows = [(int(cid), float(score)) for cid, score in self._rows(query, params)]
            rest = sum(bound[taken:])
            if taken == len(ranked) or (len(rows) >= limit and rows[-1][1] >= rest):
                return rows
            taken = _next_pass(dfs_ranked, taken + 1, limit, n)

    def _document_frequencies(self, queries: list[str]) -> dict[str, int]:
        """How many chunks hold each term (BM25's document frequency), cached per generation."""
        gen = self.generation()
        with self._cache_lock:
            if self._df_cache[0] != gen:
                self._df_cache = (gen, {})
            cache = self._df_cache[1]
            missing = [q for q in queries if q not in cache]
        if missing:
            rows = self._rows(
                "SELECT t.query::text, (SELECT count(*) FROM chunks c WHERE c.tsv @@ t.query)"
                " FROM unnest(%s::tsquery[]) AS t(query)",
                (missing,),
            )
            found = dict(zip(missing, (int(count) for _, count in rows), strict=True))
            with self._cache_lock:
                if self._df_cache[0] == gen:
                    if len(cache) > 50_000:
                        cache.clear()
                    cache.update(found)
        else:
            found = {}
        return {q: cache.get(q, found.get(q, 0)) for q in queries}

    def substrings(
        self, match: str, flt: FileFilter, limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        """The chunks holding the substrings (trigram GIN, then confirmed in the folded text), scored by
        each substring's IDF times the weights of the parts that hold it."""
        found = [q for t in pgsearch.match_terms(match) if (q := pgsearch.substring_query(t))]
        found = list(dict.fromkeys(found))
        if not found:
            return []
        n, _ = self._stats()
        narrow, narrow_params = self._narrowing(flt, "h.file_id")
        sep = pgsearch.FOLD_SEPARATOR
        query = (
            "WITH q AS (SELECT t.query, t.needle, t.i FROM unnest(%s::tsquery[], %s::text[]) WITH ORDINALITY"
            " AS t(query, needle, i)),"
            " m AS MATERIALIZED (SELECT c.id, c.file_id, c.fold, c.tri FROM chunks c WHERE c.tri @@ %s::tsquery),"
            " h AS (SELECT m.id, m.file_id, q.i,"
            " (CASE WHEN strpos(split_part(m.fold, %s, 1), q.needle) > 0 THEN %s ELSE 0 END"
            " + CASE WHEN strpos(split_part(m.fold, %s, 2), q.needle) > 0 THEN %s ELSE 0 END"
            " + CASE WHEN strpos(split_part(m.fold, %s, 3), q.needle) > 0 THEN %s ELSE 0 END) AS w"
            " FROM m JOIN q ON m.tri @@ q.query AND strpos(m.fold, q.needle) > 0),"
            " d AS (SELECT q.i, greatest(ln(greatest(%s - count(h.id) + 0.5, 1e-9) / (count(h.id) + 0.5)), 1e-6)"
            " AS idf FROM q LEFT JOIN h ON h.i = q.i GROUP BY q.i)"
            " SELECT h.id, sum(d.idf * h.w) AS score FROM h JOIN d ON d.i = h.i"
            f" WHERE h.w > 0{narrow} GROUP BY h.id ORDER BY score DESC, h.id LIMIT %s"
        )
        params = [
            [q for q, _ in found],
            [needle for _, needle in found],
            " | ".join(f"({q})" for q, _ in found),
            sep,
            float(weights[0]),
            sep,
            float(weights[1]),
            sep,
            float(weights[2]),
            n,
            *narrow_params,
            int(limit),
        ]
        return [(int(cid), float(score)) for cid, score in self._rows(query, params)]

    def dense_index(self, dim: int) -> DenseIndex:
        return PgDense(self, dim)


# The rarest terms scored first, until they hold this many chunks together (then one more at a time).
_FIRST_PASS_CHUNKS = 20_000


def _rare_prefix(dfs: list[int]) -> int:
    """How many of the terms (rarest first) the first pass of `bm25` takes."""
    total = 0
    for i, df in enumerate(dfs):
        total += df
        if total > _FIRST_PASS_CHUNKS:
            return max(1, i)
    return len(dfs)


# A pass that scores this share of the index scores it all: the remaining terms are then taken at once.
_FULL_PASS_SHARE = 0.5


def _next_pass(dfs: list[int], taken: int, limit: int, n: float) -> int:
    """How many terms (rarest first) a pass of `bm25` takes, at least `taken`.

    Which terms a pass takes never changes the ranking (a pass returns only once it is the full one), only
    how many passes it takes: none is run that must fail (the chunks of its terms, at most the sum of their
    document frequencies, cannot fill the `limit`), and once a pass scores half the index, it takes every
    term (a common word's pass costs about what the full ranking does, and would be followed by others)."""
    taken = min(taken, len(dfs))
    while taken < len(dfs) and sum(dfs[:taken]) < limit:
        taken += 1
    if sum(dfs[:taken]) >= _FULL_PASS_SHARE * n:
        return len(dfs)
    return taken


class PgDense:
    """Dense search on pgvector: HNSW (cosine) with iterative scans under a filter; exact cosines by id."""

    def __init__(self, store: PgRetrieval, dim: int) -> None:
        self.store = store
        self.dim = dim
        kind, _ = vector_type(dim)
        self._cast = "::halfvec" if kind.startswith("halfvec") else ""

    def search(self, query: Vectors, k: int, flt: FileFilter | None = None) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        narrow, params = self.store._narrowing(flt, "v.file_id")
        vec = np.ascontiguousarray(query, dtype=np.float32)
        try:
            rows = self.store._rows(
                f"SELECT v.id, 1 - (v.emb <=> %s{self._cast}) AS cos FROM vecs v WHERE TRUE{narrow}"
                f" ORDER BY v.emb <=> %s{self._cast} LIMIT %s",
                [vec, *params, vec, int(k)],
                ef_search=self.store._ef_search(),
            )
        except (NotCreatedYet, psycopg.errors.UndefinedTable):  # an unreachable database is said, not empty
            return []
        # The iterative scan returns nearly in order: exactly in order from here (ties by id, as numpy's).
        return sorted(((int(cid), float(cos)) for cid, cos in rows), key=lambda r: (-r[1], r[0]))

    def cosine(self, query: Vectors, chunk_ids: list[int]) -> dict[int, float]:
        if not chunk_ids:
            return {}
        vec = np.ascontiguousarray(query, dtype=np.float32)
        try:
            rows = self.store._rows(
                f"SELECT id, 1 - (emb <=> %s{self._cast}) FROM vecs WHERE id = ANY(%s)",
                (vec, [int(i) for i in chunk_ids]),
            )
        except (NotCreatedYet, psycopg.errors.UndefinedTable):
            return {}
        return {int(cid): float(cos) for cid, cos in rows}

    def mean_vector(self, chunk_ids: list[int]) -> Vectors | None:
        if not chunk_ids:
            return None
        try:
            rows = self.store._rows(
                "SELECT emb::text FROM vecs WHERE id = ANY(%s)", ([int(i) for i in chunk_ids],)
            )
        except (NotCreatedYet, psycopg.errors.UndefinedTable):
            return None
        if not rows:
            return None
        return unit_mean(np.asarray([json.loads(r[0]) for r in rows], dtype=np.float32))

    def warm(self) -> None:
        """Nothing to load: the HNSW index lives in the database."""
