"""What ignore rules cost a no-change resync of 10,000 files: rules on (a `.gitignore` at the root and in each
of the 500 folders, a `.ragdownignore`, a folder `exclude` setting) against no rule files, interleaved.

The patterns match none of the notes (`*.tmp.md`, `drafts/`, `scratch-*.md`), so both variants index the
same files and every sync is a no-change sync: the difference is reading and applying the rules.

    .venv/bin/python bench/ignore_cost.py --files 10000 --reps 15
"""

from __future__ import annotations

import ragdown  # noqa: F401  first, as in every ragdown process: it pins OPENBLAS_NUM_THREADS=1

# isort: split
import argparse
import json
import tempfile
import time
from pathlib import Path

from _common import median, percentile, table, write_result
from ragdown.embedders import HashEmbedder
from ragdown.storage.sqlite.store import Store
from ragdown.sync.indexer import Indexer
from resync import generate_notes

RULE_FILES = {".gitignore": "*.tmp.md\ndrafts/\n", ".ragdownignore": "scratch-*.md\n"}


def rules(root: Path, on: bool) -> None:
    """Put the rule files in place (on) or take them away (off)."""
    targets = [root / ".gitignore", root / ".ragdownignore", root / ".ragdown.json"]
    targets += [d / ".gitignore" for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")]
    for path in targets:
        if not on:
            path.unlink(missing_ok=True)
        elif path.name == ".ragdown.json":
            path.write_text(json.dumps({"exclude": ["archive/"]}))
        else:
            path.write_text(RULE_FILES.get(path.name, RULE_FILES[".gitignore"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragdown-ignore-bench-") as tmp:
        root, data = Path(tmp) / "docs", Path(tmp) / "data"
        root.mkdir()
        generate_notes(root, args.files)
        store = Store(data, writable=True)
        indexer = Indexer(root, store, HashEmbedder(), folders=False)
        indexer.sync()
        times: dict[str, list[float]] = {"rules on": [], "rules off": []}
        for rep in range(args.reps):
            order = [True, False] if rep % 2 == 0 else [False, True]
            for on in order:
                rules(root, on)
                indexer.sync()  # settles: the rule files themselves are not Markdown, nothing changes
                started = time.perf_counter()
                report = indexer.sync()
                times["rules on" if on else "rules off"].append((time.perf_counter() - started) * 1000)
                if report.unchanged != args.files or report.added or report.removed or report.updated:
                    raise SystemExit(f"not a no-change sync: {report.as_dict()}")
        store.close()
    rows = [[k, f"{median(v):.1f}", f"{percentile(v, 95):.1f}", f"{min(v):.1f}"] for k, v in times.items()]
    print(f"no-change sync of {args.files:,} files, {args.reps} interleaved rounds, wall-clock ms")
    print(table(["", "median", "p95", "min"], rows))
    ratio = median(times["rules on"]) / median(times["rules off"])
    print(f"rules on / off: {ratio:.2f}x")
    write_result("ignore_cost", {"files": args.files, "ms": times, "ratio": ratio})


if __name__ == "__main__":
    main()
