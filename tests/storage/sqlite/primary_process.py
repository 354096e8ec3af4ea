"""Run an Engine as a separate process until stdin closes or SIGTERM: `python -m tests.storage.sqlite.primary_process
DIR [TAKEOVER_INTERVAL_S]`.

Prints `role <primary|reader>` once it has taken its role, then `synced` after its first sync (a reader's
is forwarded to the primary). Then it answers one line per command line on stdin:

- `role`: `primary` or `reader`;
- `watching`: `yes` when a reader is attached to the primary's socket, else `no`;
- `search WORDS`: the hits as a JSON list of `[path, chunk text]`;
- `sync`: the sync report, as JSON.

On EOF or SIGTERM it closes the engine (a clean exit: the primary hands over) and exits 0.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

from ragdown.core.config import Settings
from ragdown.core.logs import setup_logging
from ragdown.engine.engine import TAKEOVER_INTERVAL_S, Engine
from ragdown.search.hybrid import SearchOptions
from ragdown.storage.filter_sql import FileFilter


def answer(engine: Engine, line: str) -> str:
    command, _, rest = line.strip().partition(" ")
    if command == "role":
        return engine.role
    if command == "watching":
        return "yes" if engine.watching_primary else "no"
    if command == "search":
        hits = engine.search(rest, FileFilter(), SearchOptions(top_k=8))
        return json.dumps([[hit.path, hit.chunk.text] for hit in hits])
    if command == "sync":
        return json.dumps(engine.sync())
    return f"unknown command {command!r}"


def main() -> None:
    setup_logging("WARNING")
    docs = Path(sys.argv[1])
    interval = float(sys.argv[2]) if len(sys.argv) > 2 else TAKEOVER_INTERVAL_S
    engine = Engine(Settings.from_env(), "stdio", docs_dir=docs, takeover_interval_s=interval)

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    try:
        engine.start(background=False, initial_sync=False)
        print(f"role {engine.role}", flush=True)
        engine.sync()
        print("synced", flush=True)
        for line in sys.stdin:
            print(answer(engine, line), flush=True)
    finally:
        engine.close()


if __name__ == "__main__":
    main()
