"""What the version history costs: a write through the write door with history on and off, and the history's
size after many edits of one note.

1. Write cost: two docs dirs, one 20 KB note each; `door.save` of a small edit (the read, `base_hash`
   check, atomic write and fsync, and with history on the version record), alternating on/off for `--writes`
   rounds. Wall-clock ms, median and p95, and the difference.
2. Size: `--edits` edits of the 20 KB note (a line changed each time, as a person or an agent edits), each
   through the door with history on; then the size of `.ragdown/history.sqlite*` on disk.

    .venv/bin/python bench/history_cost.py --writes 200 --edits 1000
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from _common import median, percentile, table, write_result
from ragdown.history import HistoryStore
from ragdown.history.journal import Journal
from ragdown.writes import door


def note(seed: int, size: int = 20_000) -> bytes:
    rng = random.Random(seed)
    words = ["backup", "restore", "postgres", "snapshot", "nightly", "replica", "failover", "index", "vault"]
    lines = ["# Runbook", ""]
    while sum(len(line) + 1 for line in lines) < size:
        lines.append(" ".join(rng.choice(words) for _ in range(12)))
    return ("\n".join(lines) + "\n").encode()


def edited(data: bytes, i: int) -> bytes:
    """One line of the note rewritten, the note's size kept."""
    lines = data.decode().split("\n")
    at = 2 + i % (len(lines) - 3)
    mark = f"edit {i} "
    lines[at] = mark + lines[at][len(mark) :]
    return "\n".join(lines).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--edits", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragdown-history-bench-") as tmp:
        root = Path(tmp)
        on_dir, off_dir = root / "on", root / "off"
        for d in (on_dir, off_dir):
            d.mkdir()
            (d / "note.md").write_bytes(note(1))
        store = HistoryStore(on_dir)
        journal = Journal(store, on_dir, "bench")
        times: dict[str, list[float]] = {"history on": [], "history off": []}
        text = note(1)
        for i in range(args.writes):
            text = edited(text, i)
            order = [("history on", on_dir, journal), ("history off", off_dir, None)]
            if i % 2:
                order.reverse()
            for label, directory, j in order:
                started = time.perf_counter()
                door.save(directory / "note.md", "note.md", door.becomes(text), journal=j)
                times[label].append((time.perf_counter() - started) * 1000)
        rows = [
            [label, f"{median(v):.2f}", f"{percentile(v, 95):.2f}", f"{min(v):.2f}"]
            for label, v in times.items()
        ]
        extra = median(times["history on"]) - median(times["history off"])
        print(f"write through the door, 20 KB note, {args.writes} interleaved rounds, wall-clock ms")
        print(table(["", "median", "p95", "min"], rows))
        print(
            f"history adds {extra:.2f} ms at the median ({median(times['history on']) / median(times['history off']):.2f}x)"
        )
        store.close()

        size_dir = root / "size"
        size_dir.mkdir()
        text = note(2)
        (size_dir / "note.md").write_bytes(text)
        sized = HistoryStore(size_dir)
        size_journal = Journal(sized, size_dir, "bench")
        for i in range(args.edits):
            text = edited(text, i)
            door.save(size_dir / "note.md", "note.md", door.becomes(text), journal=size_journal)
        doc = sized.find_doc("note.md")
        versions = len(sized.versions(doc)) if doc is not None else 0
        sized._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        total = sized.size_bytes()
        sized.close()
        raw = args.edits * len(text)
        print(
            f"{args.edits} edits of a {len(text):,}-byte note: {versions} versions, history {total / 1e6:.2f} MB on disk "
            f"({total / raw:.1%} of the {raw / 1e6:.1f} MB the versions hold)"
        )
        write_result(
            "history_cost",
            {
                "writes_ms": times,
                "history_extra_ms_median": extra,
                "edits": args.edits,
                "versions": versions,
                "history_bytes": total,
                "versions_raw_bytes": raw,
            },
        )


if __name__ == "__main__":
    main()
