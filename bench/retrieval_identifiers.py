"""The identifier probes of `ragdown-runbooks` (the original's rrf.ts table), with ragdown's code and minilm.

51 probes (`rrf-single` 48, `rrf-pair` 3): a bare name such as `db-curlew-indexer` or `kowalczyk` whose
answer is the one chunk holding it. For each probe, the rank of that chunk in the dense pool, the lexical
pool (both 32 long, as in rrf.ts), a reciprocal-rank fusion of the two computed here (k = 60, what the
original shipped), and ragdown's own `Searcher.search` under each fusion: `rrf` (the default; a query naming
an identifier is fused by score with BM25 at 0.8, a plain word is not routed) and `score`
(`RAGDOWN_FUSION=score`; single terms are routed too). "missed" = not in the list at all. The probes were made by splitting text on spaces, so a probe such as `iyer` or
`kowalczyk` can occur, as a word, in several chunks: those ambiguous probes are counted apart, since no
word-level retriever can tell which of the chunks the generator meant.

    .venv/bin/python bench/retrieval_identifiers.py [--keep DIR] [--embedder minilm]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import retrieval_common as rc
from ragdown.evaluation.metrics import first_rank
from ragdown.evaluation.questions import Question, ResultHit
from ragdown.evaluation.runner import result_hit
from ragdown.search.hybrid import Searcher, SearchOptions
from ragdown.search.query import fts_terms
from ragdown.storage.filter_sql import FileFilter

POOL = 32
RRF_K = 60


def rrf(dense: Sequence[tuple[int, float]], lexical: Sequence[tuple[int, float]]) -> list[int]:
    fused: dict[int, float] = {}
    for pool in (dense, lexical):
        for rank, (cid, _) in enumerate(pool):
            fused[cid] = fused.get(cid, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(fused, key=lambda cid: -fused[cid])


def chunk_hits(searcher: Searcher, ids: Sequence[int]) -> list[ResultHit]:
    records = searcher.store.chunks_by_id(list(ids))
    return [
        ResultHit(records[i].path, records[i].start_line, records[i].end_line, records[i].breadcrumb)
        for i in ids
        if i in records
    ]


def holders(searcher: Searcher, probe: str) -> int:
    """How many chunks hold every term of the probe (each compound as a phrase)."""
    match = " AND ".join(f'"{t}"' for t in fts_terms(probe))
    return len(searcher.store.bm25(match, FileFilter(), 1000, (1.0, 1.0, 1.0))) if match else 0


def summary(ranks: Sequence[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "top1": sum(r == 1 for r in ranks) / n,
        "top4": sum(r is not None and r <= 4 for r in ranks) / n,
        "top8": sum(r is not None and r <= 8 for r in ranks) / n,
        "missed": sum(r is None for r in ranks) / n,
    }


def main() -> None:
    ap = rc.parser(__doc__)
    ap.add_argument("--embedder", default="minilm")
    args = ap.parse_args()
    s = rc.settings(args.models)
    embedder, why = rc.load(s, args.embedder)
    if embedder is None:
        raise SystemExit(f"{args.embedder}: {why}")
    probes: list[Question] = rc.runbooks_questions(rc.RRF_TYPES)
    flt = FileFilter()
    ours = {fusion: f"ragdown, fusion {fusion}" for fusion in rc.FUSIONS}
    methods = ("dense", "lexical", "RRF k=60", *ours.values())
    ranks: dict[str, list[int | None]] = {m: [] for m in methods}
    ambiguous: list[bool] = []
    buried = dict.fromkeys(rc.FUSIONS, 0)
    with rc.corpus_index(s, rc.RUNBOOKS_CORPUS, embedder, args.keep, args.embedder) as (engine, _):
        searcher = engine.require_searcher()
        for q in probes:
            qvec = searcher.embed_query(q.question)
            dense = searcher.dense_pool(qvec, flt, POOL)
            lexical = searcher.lexical_pool(q.question, flt, POOL)
            lists = {
                "dense": [cid for cid, _ in dense],
                "lexical": [cid for cid, _ in lexical],
                "RRF k=60": rrf(dense, lexical),
            }
            for name, ids in lists.items():
                ranks[name].append(first_rank(chunk_hits(searcher, ids), q.golds, "heading"))
            for fusion, name in ours.items():
                hits = searcher.search(q.question, flt, SearchOptions(top_k=8, pool=POOL, fusion=fusion))
                rank = first_rank([result_hit(h) for h in hits], q.golds, "heading")
                ranks[name].append(rank)
                if ranks["lexical"][-1] == 1 and (rank is None or rank > 8):
                    buried[fusion] += 1
            ambiguous.append(holders(searcher, q.question) > 1)
    clear = [i for i, a in enumerate(ambiguous) if not a]
    rows: list[dict[str, Any]] = []
    for m in methods:
        every = summary(ranks[m])
        only_clear = summary([ranks[m][i] for i in clear])
        rows.append({"method": m, "all": every, "unambiguous": only_clear})
    machine = rc.machine()
    print(rc.machine_line(machine))
    print(
        f"{len(probes)} probes, {len(probes) - len(clear)} ambiguous (their words occur in more than one chunk): "
        + ", ".join(q.question for q, a in zip(probes, ambiguous, strict=True) if a)
    )
    print(
        rc.md_table(
            ["method", "top-1", "top-4", "top-8", "missed", f"top-1, {len(clear)} unambiguous"],
            [
                [
                    r["method"],
                    rc.pct(r["all"]["top1"]),
                    rc.pct(r["all"]["top4"]),
                    rc.pct(r["all"]["top8"]),
                    rc.pct(r["all"]["missed"]),
                    rc.pct(r["unambiguous"]["top1"]),
                ]
                for r in rows
            ],
        )
    )
    first = sum(r == 1 for r in ranks["lexical"])
    print()
    for fusion in rc.FUSIONS:
        print(f"lexical rank 1 buried outside ragdown's top 8, fusion {fusion}: {buried[fusion]}/{first}")
    data = {
        "machine": machine,
        "embedder": args.embedder,
        "pool": POOL,
        "rows": rows,
        "ambiguous": [q.question for q, a in zip(probes, ambiguous, strict=True) if a],
        "lexical_first_buried": {fusion: [buried[fusion], first] for fusion in rc.FUSIONS},
        "ranks": {m: dict(zip([q.id for q in probes], ranks[m], strict=True)) for m in methods},
    }
    print(f"written {rc.write_json(args.json, 'retrieval_identifiers', data)}")


if __name__ == "__main__":
    main()
