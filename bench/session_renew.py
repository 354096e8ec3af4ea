"""What an ONNX session keeps after a run of embedding, and what `OnnxEmbedder.renew` gives back.

    .venv/bin/python bench/session_renew.py [--sizes 16,64,256,1024,4096] [--embedder minilm] [--reps 1]

Each size runs in a fresh process (`--child`): the embedder loaded as a server loads it (`load_configured`
with the environment's settings), the first N chunks of the Obsidian help vault (its notes parsed and
chunked as a sync does, in path order, repeated when N is more than the vault holds) embedded as a sync
embeds them (`sync.inputs.embed_chunks`, windows included), then `heap.trim()`, then `renew()`, then 20
queries. VmRSS is read after each step; `renew`'s own wall and CPU seconds are timed. Prints the medians
as a table for docs/benchmarks.md and writes bench/out/session_renew.json; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from _common import CORPORA, median, table, write_result

QUERIES = ("graph view", "sync settings", "how do I pin a command", "canvas cards", "hotkeys")


def rss_mb() -> int:
    for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def child(size: int, spec: str, in_thread: bool) -> dict[str, float]:
    from ragdown.core import heap
    from ragdown.core.config import Settings
    from ragdown.documents import parse_document
    from ragdown.embedders import load_configured
    from ragdown.embedders.base import RenewableEmbedder
    from ragdown.sync.inputs import embed_chunks

    root = CORPORA["obsidian-help"]
    docs = [
        parse_document(p.relative_to(root).as_posix(), p.read_bytes()) for p in sorted(root.rglob("*.md"))
    ]
    picked, chunks = [], 0
    while chunks < size:
        for doc in docs:
            if chunks >= size:
                break
            picked.append(doc)
            chunks += len(doc.chunks)
    embedder = load_configured(spec, Settings.from_env())
    assert isinstance(embedder, RenewableEmbedder), f"{spec} cannot renew"
    heap.trim()
    out: dict[str, float] = {"chunks": chunks, "loaded": rss_mb()}

    def embed_all() -> None:
        for start in range(0, len(picked), 32):  # batches about a sync's size
            embed_chunks(embedder, picked[start : start + 32])

    if in_thread:  # as a server embeds: in its sync's thread, not the one that loaded the model
        worker = threading.Thread(target=embed_all)
        worker.start()
        worker.join()
    else:
        embed_all()
    heap.trim()
    out["embedded"] = rss_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    embedder.renew()
    out["renew_s"] = time.perf_counter() - wall
    out["renew_cpu_s"] = time.process_time() - cpu
    heap.trim()
    out["renewed"] = rss_mb()
    for _ in range(4):
        for q in QUERIES:
            embedder.embed_query(q)
    heap.trim()
    out["queried"] = rss_mb()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="16,64,256,1024,4096")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--thread", action="store_true", help="embed in a thread of its own, as a sync does")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.embedder, args.thread)))
        return
    runs: dict[int, list[dict[str, float]]] = {}
    for _ in range(args.reps):
        for size in (int(s) for s in args.sizes.split(",")):
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(size), "--embedder", args.embedder]
                + (["--thread"] if args.thread else []),
                capture_output=True,
                text=True,
                check=True,
                env=os.environ,
            )
            runs.setdefault(size, []).append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(size, runs[size][-1], file=sys.stderr, flush=True)
    rows = []
    for got in runs.values():
        m = {k: median([g[k] for g in got]) for k in got[0]}
        rows.append(
            [
                f"{int(m['chunks']):,}",
                f"{m['loaded']:.0f}",
                f"{m['embedded']:.0f}",
                f"{m['renewed']:.0f}",
                f"{m['queried']:.0f}",
                f"{m['embedded'] - m['renewed']:.0f}",
                f"{m['renew_s']:.2f} / {m['renew_cpu_s']:.2f}",
            ]
        )
    print(
        table(
            [
                "chunks embedded",
                "VmRSS loaded",
                "after embedding",
                "after renew",
                "after 20 queries",
                "given back",
                "renew wall / CPU s",
            ],
            rows,
        )
    )
    write_result("session_renew", {"embedder": args.embedder, "runs": {str(k): v for k, v in runs.items()}})


if __name__ == "__main__":
    main()
