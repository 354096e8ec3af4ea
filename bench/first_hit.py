"""How soon a first index with a model answers a search: the first batch's size, side by side.

    .venv/bin/python bench/first_hit.py [--corpus obsidian-help] [--embedder minilm] [--rounds 2]
        [--first 256,16] [--threads 1,2]

Each round indexes the corpus from an empty data dir once per first-batch size (`sync.FIRST_BATCH_CHUNKS`;
256 is `BATCH_CHUNKS`, i.e. every batch full-size as before the ramp), the variants interleaved and taking
turns going first; with `--threads`, each first-batch size at each ONNX thread count. The model is loaded
once per thread count, before the timings. Reported per variant: seconds from the
sync's start to the first search that finds a hit (polled every 50 ms), to the first progress report of a
file done, and to the end of the sync, with medians over the rounds.

Writes bench/out/first_hit.json.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import CORPORA, exit_cleanly_on_sigterm, machine, median, table, write_result
from ragdown.core.config import Settings
from ragdown.core.cpus import default_threads
from ragdown.embedders import load_configured
from ragdown.embedders.base import Embedder
from ragdown.engine.engine import Engine
from ragdown.search.hybrid import SearchOptions
from ragdown.storage.filter_sql import FileFilter
from ragdown.sync import indexer as sync
from ragdown.sync.report import SyncProgress

QUERY = "how do I link to a heading in another note"
POLL_S = 0.05


def one_run(docs: Path, embedder: Embedder, first: int) -> dict[str, float]:
    """One first index of `docs` with the first batch `first` chunks: its three times, in seconds."""
    sync.FIRST_BATCH_CHUNKS = first
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            "RAGDOWN_DOCS_DIR": str(docs),
            "RAGDOWN_DATA_DIR": str(Path(tmp) / "data"),
            "RAGDOWN_WATCH": "false",
        }
        engine = Engine(Settings.from_env(env), "stdio", docs_dir=docs, embedder=embedder)
        committed = threading.Event()
        committed_at: list[float] = []

        def on_progress(progress: SyncProgress) -> None:
            if progress.files_done > 0 and not committed.is_set():
                committed_at.append(time.perf_counter())
                committed.set()

        engine.add_progress_listener(on_progress)
        times: dict[str, float] = {}
        started = time.perf_counter()
        engine.start(background=False)
        try:
            while not engine.search(QUERY, FileFilter(), SearchOptions(top_k=5)):
                time.sleep(POLL_S)
            times["first_hit_s"] = time.perf_counter() - started
            committed.wait()
            times["first_progress_s"] = committed_at[0] - started
            engine.sync()  # the first index, then an empty follow-up
            times["done_s"] = time.perf_counter() - started
        finally:
            engine.close()
    return times


def name(variant: tuple[int, int]) -> str:
    return f"first {variant[0]}, {variant[1]} threads"


def main() -> None:
    exit_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", default="obsidian-help", choices=sorted(CORPORA))
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--first", default="256,16", help="first-batch sizes to compare, comma-separated")
    parser.add_argument(
        "--threads", default="", help="ONNX thread counts to compare, comma-separated (default: ragdown's)"
    )
    args = parser.parse_args()
    docs = CORPORA[args.corpus]
    sizes = [int(n) for n in args.first.split(",")]
    thread_counts = [int(n) for n in args.threads.split(",")] if args.threads else [default_threads()]
    embedders = {
        t: load_configured(args.embedder, Settings.from_env({"RAGDOWN_THREADS": str(t)}))
        for t in thread_counts
    }
    variants = [(first, t) for t in thread_counts for first in sizes]
    runs: dict[str, list[dict[str, float]]] = {name(v): [] for v in variants}
    for round_ in range(args.rounds):
        order = variants[round_ % len(variants) :] + variants[: round_ % len(variants)]
        for first, threads in order:
            times = one_run(docs, embedders[threads], first)
            runs[name((first, threads))].append(times)
            print(f"round {round_ + 1}, {name((first, threads))}: {times}", file=sys.stderr, flush=True)
    keys = ("first_hit_s", "first_progress_s", "done_s")
    summary: dict[str, Any] = {
        v: {k: round(median([r[k] for r in rs]), 2) for k in keys} for v, rs in runs.items()
    }
    rows = [
        [first, threads, *(summary[name((first, threads))][k] for k in keys)] for first, threads in variants
    ]
    print(table(["first batch (chunks)", "threads", "first hit s", "progress moves s", "done s"], rows))
    out = write_result(
        "first_hit",
        {"machine": machine(), "args": vars(args), "runs": runs, "median": summary},
    )
    print(out)


if __name__ == "__main__":
    main()
