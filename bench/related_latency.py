"""`ragdown_related` and `ragdown_backlinks` latency at 10,000 generated notes (hash embedder).

    .venv/bin/python bench/related_latency.py [--notes 10000] [--calls 200]

Writes `--notes` notes (each 3 wikilinks to random notes, 2 of 50 tags, two sections of Zipf-free random
words) into a temporary folder, indexes them with the `hash` embedder through `ragdown stdio`'s server
(in-process, the SDK's client over its in-memory transport), then calls each tool on random notes and
prints p50 / p95 of the whole call as the client sees it (JSON-RPC included).
"""

from __future__ import annotations

import ragdown  # noqa: F401  first, as in every ragdown process: it pins OPENBLAS_NUM_THREADS=1

# isort: split
import argparse
import asyncio
import os
import random
import tempfile
import time
from pathlib import Path

from mcp import Client

from _common import percentile
from ragdown.core.config import Settings
from ragdown.mcpserver.server import prepare_stdio

WORDS = [f"w{i}" for i in range(3000)]


def make_notes(docs: Path, n: int, rng: random.Random) -> None:
    for i in range(n):
        links = " ".join(f"[[n{rng.randrange(n)}]]" for _ in range(3))
        tags = ", ".join(f"t{rng.randrange(50)}" for _ in range(2))
        body = " ".join(rng.choices(WORDS, k=60))
        more = " ".join(rng.choices(WORDS, k=60))
        folder = docs / f"d{i % 20}"
        folder.mkdir(exist_ok=True)
        (folder / f"n{i}.md").write_text(
            f"---\ntags: [{tags}]\n---\n# Note {i}\n\n{body} {links}\n\n## More\n\n{more}\n", encoding="utf-8"
        )


async def main(notes: int, calls: int) -> None:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        docs.mkdir()
        make_notes(docs, notes, rng)
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
        env.update(
            RAGDOWN_DOCS_DIR=str(docs),
            RAGDOWN_DATA_DIR=str(Path(tmp) / "data"),
            RAGDOWN_EMBEDDER="hash",
            RAGDOWN_WATCH="false",
            RAGDOWN_TOOLSET="ragdown,extra",
        )
        started = time.perf_counter()
        served = prepare_stdio(Settings.from_env(env))
        try:
            async with Client(served.server, mode="legacy", read_timeout_seconds=600) as client:
                await client.call_tool("ragdown_reindex", {})
                print(f"indexed {notes} notes in {time.perf_counter() - started:.1f} s")
                for name, args in (
                    ("ragdown_related", {}),
                    ("ragdown_related", {"depth": 2}),
                    ("ragdown_backlinks", None),
                ):
                    times: list[float] = []
                    for _ in range(calls):
                        i = rng.randrange(notes)
                        path = f"d{i % 20}/n{i}.md"
                        t0 = time.perf_counter()
                        result = await client.call_tool(name, {"path": path, **(args or {})})
                        times.append((time.perf_counter() - t0) * 1000)
                        assert not result.is_error, result
                    times.sort()
                    label = f"{name} {args or ''}".strip()
                    print(f"{label}: p50 {percentile(times, 50):.1f} ms, p95 {percentile(times, 95):.1f} ms")
        finally:
            served.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200)
    ns = parser.parse_args()
    asyncio.run(main(ns.notes, ns.calls))
