"""What a folder's quota costs a write: `door.save` of a one-line edit with no quota, and with one (the door
then counts the folder's documents on disk, `quota.usage_of`), in folders of 100 to 10,000 documents.

    .venv/bin/python bench/quota_cost.py [--sizes 100,1000,10000] [--reps 30]

Each write makes the note a byte larger, so the quota is checked (an edit that shrinks is never counted).
The variants alternate in each round; medians. History off (`journal` without a store), so the figures are
the door's and the quota's alone. Writes bench/out/quota_cost.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from _common import exit_cleanly_on_sigterm, median, table, write_result

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    exit_cleanly_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    from ragdown.history.journal import Journal
    from ragdown.vault import quota
    from ragdown.writes import door

    rows = []
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            root = Path(tmp) / f"docs-{size}"
            folders = {"none": root / "plain", "quota": root / "limited"}
            for name, folder in folders.items():
                for i in range(size):
                    sub = folder / f"d{i % 50:02d}"
                    sub.mkdir(parents=True, exist_ok=True)
                    (sub / f"note-{i}.md").write_text(f"# Note {i}\n\nwords {i}\n")
                settings = {"max_files": size * 2, "max_bytes": 1 << 40} if name == "quota" else {}
                (folder / ".ragdown.json").write_text(json.dumps(settings))
            times: dict[str, list[float]] = {"none": [], "quota": []}
            scan: list[float] = []
            for rep in range(args.reps):
                for name, folder in folders.items():
                    journal = Journal(None, root, "bench", folder=folder)
                    target = folder / "d00" / "note-0.md"
                    started = time.perf_counter()
                    door.save(
                        target,
                        "note-0.md",
                        door.becomes(
                            f"# Note 0\n\nwords 0 {'x' * (rep + 1)}\n".encode()
                        ),  # larger each time: checked
                        journal=journal,
                    )
                    times[name].append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                quota.usage_of(folders["quota"])
                scan.append((time.perf_counter() - started) * 1000)
            results[size] = {
                "no_quota_ms": round(median(times["none"]), 3),
                "quota_ms": round(median(times["quota"]), 3),
                "usage_scan_ms": round(median(scan), 3),
            }
            r = results[size]
            rows.append(
                [
                    size,
                    r["no_quota_ms"],
                    r["quota_ms"],
                    round(r["quota_ms"] - r["no_quota_ms"], 3),
                    r["usage_scan_ms"],
                ]
            )
    print(
        table(["documents", "save, no quota (ms)", "save, quota (ms)", "difference", "usage_of (ms)"], rows)
    )
    path = write_result("quota_cost", {"reps": args.reps, "results": results})
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
