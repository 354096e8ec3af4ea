"""Take-over: how long a reader takes to become the primary once the primary process dies (or exits).

    .venv/bin/python bench/takeover.py [--rounds 10] [--files 200] [--readers 1] [--exit kill|term]

Generates `--files` small notes in a temporary folder. Each round starts a primary process (this script with
`--primary`: an Engine with the `hash` embedder, no watcher, after its first sync) and `--readers` reader
Engines in this process (no watcher, `initial_sync=False`, periodic take-over every hour, so only the
connection to the primary's socket can trigger it), waits until every reader is attached to that socket,
writes one new note (the primary does not watch, so only a take-over's sync can index it), then kills the
primary (`--exit kill`: SIGKILL; `term`: SIGTERM, a clean `Engine.close()`) and measures from just before
the signal:

- **primary**: until a reader's `engine.role` is "primary" (polled every 1 ms);
- **searchable**: until the new note is the first hit of a search for its word in that reader;
- **reattached** (with 2+ readers): until every other reader is attached to the new primary's socket.

It also times `Engine.close()` of each reader at the end of a round (the new primary and the others).
Before this mechanism a reader tried every 30 s: a take-over came 0-30 s after the primary's death.
"""

from __future__ import annotations

import ragdown  # noqa: F401  first, as in every ragdown process: it pins OPENBLAS_NUM_THREADS=1

# isort: split
import argparse
import dataclasses
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from _common import exit_cleanly_on_sigterm, median, table, write_result
from ragdown.core.config import Settings
from ragdown.core.logs import setup_logging
from ragdown.engine.engine import Engine
from ragdown.search.hybrid import SearchOptions
from ragdown.storage.filter_sql import FileFilter

POLL_S = 0.001
DEADLINE_S = 60.0
WORDS = "alpha backup cache deploy error fix guide host index job key log mirror node owner page".split()


def generate_notes(root: Path, count: int) -> None:
    for i in range(count):
        folder = root / f"area-{i % 10:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        body = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(60))
        (folder / f"note-{i:04d}.md").write_text(f"# Note {i}\n\n## Part\n\n{body}\n", encoding="utf-8")


def run_primary(docs: Path) -> None:
    """`--primary DOCS`: be the primary until stdin closes or SIGTERM (then close the engine cleanly)."""
    setup_logging("WARNING")
    exit_cleanly_on_sigterm()
    engine = Engine(Settings.from_env(), "stdio", docs_dir=docs)
    try:
        engine.start(background=False, initial_sync=False)
        if engine.role != "primary":
            raise SystemExit(f"the primary process is a {engine.role}")
        engine.sync()
        print("ready", flush=True)
        sys.stdin.read()
    finally:
        engine.close()


def wait_for(check: Callable[[], bool], what: str) -> float:
    """Poll `check()` every POLL_S; the perf_counter() when it first held."""
    deadline = time.perf_counter() + DEADLINE_S
    while not check():
        if time.perf_counter() > deadline:
            raise SystemExit(f"not within {DEADLINE_S:.0f} s: {what}")
        time.sleep(POLL_S)
    return time.perf_counter()


@dataclass(frozen=True)
class Round:
    primary_ms: float
    searchable_ms: float
    reattached_ms: float | None
    takeover_sync_ms: int | None
    close_ms: list[float]


def one_round(i: int, docs: Path, env: dict[str, str], readers: int, how: str) -> Round:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--primary", str(docs)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    engines: list[Engine] = []
    try:
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise SystemExit("the primary process did not start")
        settings = Settings.from_env(env)
        for _ in range(readers):
            engine = Engine(settings, "stdio", docs_dir=docs, takeover_interval_s=3600)
            engines.append(engine)
            engine.start(background=False, initial_sync=False, watch=False)
            if engine.role != "reader":
                raise SystemExit(f"a reader engine is a {engine.role}")
        wait_for(lambda: all(e.watching_primary for e in engines), "every reader attached")
        path, word = f"round-{i:03d}.md", f"quokka{i}x"
        (docs / path).write_text(f"# Round {i}\n\n{word} arrives\n", encoding="utf-8")

        def found(engine: Engine) -> bool:
            hits = engine.search(word, FileFilter(), SearchOptions(top_k=1))
            return bool(hits) and hits[0].path == path

        # One loop polls all three, so each is timed from the signal on its own.
        start = time.perf_counter()
        proc.send_signal(signal.SIGKILL if how == "kill" else signal.SIGTERM)
        primary_at = searchable_at = reattached_at = None
        winner: Engine | None = None
        while searchable_at is None or (readers > 1 and reattached_at is None):
            now = time.perf_counter()
            if now - start > DEADLINE_S:
                raise SystemExit(f"round {i}: no take-over within {DEADLINE_S:.0f} s")
            if winner is None:
                winner = next((e for e in engines if e.role == "primary"), None)
                if winner is not None:
                    primary_at = now
            if winner is not None:
                if reattached_at is None and all(e.watching_primary for e in engines if e is not winner):
                    reattached_at = now
                if searchable_at is None and found(winner):
                    searchable_at = time.perf_counter()
            time.sleep(POLL_S)
        assert winner is not None
        assert primary_at is not None
        assert searchable_at is not None
        others = [e for e in engines if e is not winner]
        if not others:
            reattached_at = None
        if any(e.role == "primary" for e in others):
            raise SystemExit("two readers became the primary")
        # SIGTERM: exit_cleanly_on_sigterm's SystemExit(128 + 15), after Engine.close().
        if proc.wait(timeout=DEADLINE_S) != (-signal.SIGKILL if how == "kill" else 128 + signal.SIGTERM):
            raise SystemExit(f"the primary process ended with {proc.returncode}")
        sync = winner.last_sync
        close_ms: list[float] = []
        for engine in [winner, *others]:
            t = time.perf_counter()
            engine.close()
            close_ms.append((time.perf_counter() - t) * 1000)
        engines.clear()
        return Round(
            primary_ms=(primary_at - start) * 1000,
            searchable_ms=(searchable_at - start) * 1000,
            reattached_ms=(reattached_at - start) * 1000 if reattached_at is not None else None,
            takeover_sync_ms=sync.ms if sync is not None else None,
            close_ms=close_ms,
        )
    finally:
        for engine in engines:
            engine.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()


def stats(values: list[float]) -> list[str]:
    return [f"{median(values):.1f}", f"{min(values):.1f}", f"{max(values):.1f}"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--readers", type=int, default=1)
    parser.add_argument("--exit", choices=("kill", "term"), default="kill", dest="how")
    parser.add_argument("--primary", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.primary is not None:
        run_primary(args.primary)
        return
    exit_cleanly_on_sigterm()
    setup_logging("WARNING")
    rounds: list[Round] = []
    with tempfile.TemporaryDirectory(prefix="ragdown-bench-takeover-") as tmp:
        docs = Path(tmp) / "docs"
        generate_notes(docs, args.files)
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
        env.update(
            RAGDOWN_EMBEDDER="hash",
            RAGDOWN_WATCH="false",
            RAGDOWN_DATA_DIR=str(Path(tmp) / "data"),
            XDG_CACHE_HOME=str(Path(tmp) / "cache"),
        )
        for i in range(args.rounds):
            rounds.append(one_round(i, docs, env, args.readers, args.how))
    signal_name = "SIGKILL" if args.how == "kill" else "SIGTERM"
    rows = [
        ["reader is the primary", *stats([r.primary_ms for r in rounds])],
        ["new note searchable", *stats([r.searchable_ms for r in rounds])],
    ]
    reattached = [r.reattached_ms for r in rounds if r.reattached_ms is not None]
    if reattached:
        rows.append(["other readers re-attached", *stats(reattached)])
    syncs = [float(r.takeover_sync_ms) for r in rounds if r.takeover_sync_ms is not None]
    if syncs:
        rows.append(["  the take-over's sync (report ms)", *stats(syncs)])
    rows.append(["Engine.close() of a reader/new primary", *stats([c for r in rounds for c in r.close_ms])])
    print(
        f"take-over after {signal_name} of the primary: {args.rounds} rounds, {args.files} notes (+1 a round),"
        f" {args.readers} reader(s), ms from the signal\n" + table(["", "median", "min", "max"], rows)
    )
    path = write_result(
        "takeover",
        {
            "rounds": args.rounds,
            "files": args.files,
            "readers": args.readers,
            "exit": args.how,
            "raw": [dataclasses.asdict(r) for r in rounds],
        },
    )
    print(f"results: {path}")


if __name__ == "__main__":
    main()
