"""How soon a first index with a model answers a search: the first batch's size, side by side.

    .venv/bin/python bench/first_hit.py [--corpus obsidian-help] [--embedder minilm] [--rounds 2]
        [--first 256,16]

Each round indexes the corpus from an empty data dir once per first-batch size (`sync.FIRST_BATCH_CHUNKS`;
256 is `BATCH_CHUNKS`, i.e. every batch full-size as before the ramp), the variants interleaved and taking
turns going first. The model is loaded once, before the timings. Reported per variant: seconds from the
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
from ragdown.config import Settings
from ragdown.engine import Engine
from ragdown.index import sync
from ragdown.index.embedders import load_configured
from ragdown.index.embedders.base import Embedder
from ragdown.index.store import FileFilter
from ragdown.index.sync import SyncProgress
from ragdown.search.hybrid import SearchOptions

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


def main() -> None:
    exit_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", default="obsidian-help", choices=sorted(CORPORA))
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--first", default="256,16", help="first-batch sizes to compare, comma-separated")
    args = parser.parse_args()
    docs = CORPORA[args.corpus]
    sizes = [int(n) for n in args.first.split(",")]
    embedder = load_configured(args.embedder, Settings.from_env({}))
    runs: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    for round_ in range(args.rounds):
        order = sizes[round_ % len(sizes) :] + sizes[: round_ % len(sizes)]
        for first in order:
            times = one_run(docs, embedder, first)
            runs[first].append(times)
            print(f"round {round_ + 1}, first batch {first}: {times}", file=sys.stderr, flush=True)
    keys = ("first_hit_s", "first_progress_s", "done_s")
    summary: dict[str, Any] = {
        str(n): {k: round(median([r[k] for r in runs[n]]), 2) for k in keys} for n in sizes
    }
    rows = [[n, *(summary[str(n)][k] for k in keys)] for n in sizes]
    print(table(["first batch (chunks)", "first hit s", "progress moves s", "done s"], rows))
    out = write_result(
        "first_hit",
        {
            "machine": machine(),
            "args": vars(args),
            "runs": {str(n): r for n, r in runs.items()},
            "median": summary,
        },
    )
    print(out)


if __name__ == "__main__":
    main()
