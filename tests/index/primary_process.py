"""Run an Engine as a separate process (the primary) until stdin closes: `python -m tests.index.primary_process DIR`.

Prints `role <primary|reader>` once it has taken its role, then `synced` after its first sync.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ragdown.config import Settings
from ragdown.engine import Engine
from ragdown.logs import setup_logging


def main() -> None:
    setup_logging("WARNING")
    docs = Path(sys.argv[1])
    engine = Engine(Settings.from_env(), "stdio", docs_dir=docs)
    engine.start(background=False, initial_sync=False)
    print(f"role {engine.role}", flush=True)
    engine.sync()
    print("synced", flush=True)
    sys.stdin.read()
    engine.close()


if __name__ == "__main__":
    main()
