"""Shared helpers of the benchmarks in `bench/`: machine facts, statistics, tables, JSON results.

Not a benchmark itself (its name starts with `_`); the scripts import it as `_common` because Python puts
the script's own folder first on `sys.path`.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import signal
import statistics
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

OUT_DIR = Path(__file__).resolve().parent / "out"
# The shared corpora beside the checkout (`/work/main` -> `/work/shared`); a worktree one level deeper
# (`/work/wt/NAME`) finds them one level up.
_PARENTS = Path(__file__).resolve().parents
SHARED_BENCH = next(
    (p / "shared" / "bench" for p in (_PARENTS[2], _PARENTS[3]) if (p / "shared" / "bench").is_dir()),
    _PARENTS[2] / "shared" / "bench",
)
CORPORA: dict[str, Path] = {
    "obsidian-help": SHARED_BENCH / "obsidian-help" / "vault",
    "ragdown-runbooks": SHARED_BENCH / "ragdown-runbooks" / "corpus",
}


def exit_cleanly_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit, so `with TemporaryDirectory()` blocks still remove their folders."""

    def _exit(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_pressure() -> str | None:
    """`/proc/pressure/cpu` "some" line: the share of time runnable tasks waited for a CPU (Linux PSI)."""
    try:
        return Path("/proc/pressure/cpu").read_text(encoding="utf-8").splitlines()[0]
    except (OSError, IndexError):
        return None


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine() -> dict[str, Any]:
    """What the figures were measured on: they only compare within one run of one machine."""
    import sqlite3

    import numpy as np

    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "cpu": cpu_model(),
        "loadavg": list(os.getloadavg()),
        "cpu_pressure": cpu_pressure(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "onnxruntime": _version("onnxruntime"),
        "sqlite": sqlite3.sqlite_version,
        "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
    }


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def percentile(values: Sequence[float], q: float) -> float:
    """The `q`-th percentile (0-100), linear between the closest ranks; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table (it reads fine in a terminal too), numbers right-aligned."""
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) + " |"

    sep = "| " + " | ".join("-" * w for w in widths) + " |"
    return "\n".join([line(cells[0]), sep, *(line(r) for r in cells[1:])])


def write_result(name: str, payload: Mapping[str, Any]) -> Path:
    """`bench/out/<name>.json` (git-ignored): the machine, the command line and the figures."""
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / f"{name}.json"
    body = {"benchmark": name, "command": " ".join(sys.argv), "machine": machine(), **payload}
    path.write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
