"""Where a serving process's memory goes: VmRSS (RssAnon + RssFile), SQLite's own heap and its readers.

    RAGDOWN_DATA_DIR=D RAGDOWN_EMBEDDER=hash .venv/bin/python bench/serving_memory.py VAULT [QUESTIONS.jsonl]
                                                                                   [--calls 40]

One process as a server runs it (`Engine.start()` in the background, the first sync, the dense matrix loaded
in its own thread), then `--calls` searches through the CLI's `search_output` from a worker thread, as a
server answers in one. After each step it prints `/proc/self/status`'s VmRSS / RssAnon / RssFile / VmHWM,
`sqlite3_memory_used()` (every connection's page cache and statements) and, at the end, how many reader
connections the store holds. The MCP SDK is imported first so the figures include it. Nothing is asserted;
docs/benchmarks.md section 37 has the figures.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

QUERIES = [
    "how do I embed a PDF in a note",
    "canvas links",
    "sync plugin",
    "publish site",
    "daily notes template",
]


def _sqlite_used() -> float:
    try:
        lib = ctypes.CDLL("libsqlite3.so.0")  # the library Python's sqlite3 module has loaded
    except OSError:
        return float("nan")
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    return float(lib.sqlite3_memory_used()) / 1e6


def report(step: str) -> None:
    fields: dict[str, int] = {}
    for line in Path(f"/proc/{os.getpid()}/status").read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition(":")
        if key in {"VmRSS", "RssAnon", "RssFile", "VmHWM"}:
            fields[key] = int(value.split()[0]) // 1024
    print(f"{step:<20} {json.dumps(fields)} sqlite {_sqlite_used():.1f} MB", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("questions", type=Path, nargs="?")
    ap.add_argument("--calls", type=int, default=40)
    args = ap.parse_args()

    import mcp.server.stdio  # noqa: F401  (what a server has imported)

    from ragdown.core.config import Settings
    from ragdown.engine.engine import Engine
    from ragdown.tools.cli_answers import SearchRequest, search_output

    report("imports")
    if args.questions:
        lines = args.questions.read_text(encoding="utf-8").splitlines()
        queries = [str(json.loads(line)["q"]) for line in lines if line.startswith("{")]
    else:
        queries = QUERIES
    queries = (queries * (1 + args.calls // max(1, len(queries))))[: args.calls]
    settings = Settings.from_env().with_docs_dir(args.vault)
    engine = Engine(settings, "stdio", docs_dir=args.vault)
    engine.start(background=True, watch=False)
    while engine.indexer is None and engine.error is None:
        time.sleep(0.1)
    engine.sync()
    report("first sync over")
    engine.warmed.wait(900)
    time.sleep(0.5)
    report("matrix loaded")
    with ThreadPoolExecutor(4) as pool:
        for q in queries:
            pool.submit(search_output, settings, engine, SearchRequest(q, 8, None, None, True)).result()
    time.sleep(1.0)
    report(f"after {len(queries)} searches")
    conns = getattr(engine.store, "_conns", None)
    print(f"readers open: {len(conns) if conns is not None else '?'}")
    engine.close()


if __name__ == "__main__":
    main()
