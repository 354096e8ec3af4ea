"""What one process holds after a no-change sync and a few searches of an existing index (the CLI's path).

    RAGDOWN_DATA_DIR=D RAGDOWN_EMBEDDER=hash .venv/bin/python bench/search_memory.py VAULT [QUERY ...]

Opens the engine as `ragdown search DIR` does, syncs (nothing changed), runs each query through the same
`search_output` and prints seconds and `VmRSS` / `RssAnon` / `RssFile` (/proc/self/status) after each step.
Nothing is asserted; section 24 of docs/benchmarks.md has the figures at 10,000 notes.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from ragdown.cli.local import open_engine
from ragdown.core.config import Settings
from ragdown.tools.cli_answers import SearchRequest, search_output


def rss(step: str, seconds: float) -> None:
    fields = []
    for line in Path(f"/proc/{os.getpid()}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith(("VmRSS", "RssAnon", "RssFile")):
            key, _, value = line.partition(":")
            fields.append(f"{key} {int(value.split()[0]) // 1024} MB")
    print(f"{step:<28} {seconds:7.3f} s  " + "  ".join(fields), flush=True)


def main() -> None:
    vault = Path(sys.argv[1])
    queries = sys.argv[2:] or ["services you the your", "your picker document", "sync vault plugin"]
    settings = Settings.from_env()
    rss("imports", 0.0)
    t = time.perf_counter()
    engine = open_engine(settings, vault)
    rss("engine open", time.perf_counter() - t)
    t = time.perf_counter()
    engine.sync()
    rss("no-change sync", time.perf_counter() - t)
    try:
        for q in queries:
            t = time.perf_counter()
            search_output(settings, engine, SearchRequest(q, 8, None, None, True))
            rss(f"search {q[:18]!r}", time.perf_counter() - t)
    finally:
        engine.close()


if __name__ == "__main__":
    main()
