"""The query log (`RAGDOWN_QUERY_LOG`): one JSON line per search, hook call and read, in the data dir.

It holds queries, never document text, stays on the server, and rotates at 10 MB to one `.1` file.
`summary()` sums it up for the web UI's Settings → Usage: the gaps (searches whose best hit was under the
minimum score), the share of hook calls that injected anything, and the reads that followed a search
showing the same document (the same folder and path) within 10 minutes.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

LOG_NAME = "query-log.jsonl"
ROTATE_BYTES = 10 * 1024 * 1024
FOLLOW_WINDOW_S = 600.0
MAX_GAPS = 50
MAX_TOP = 20
Place = tuple[str | None, str]  # a document as hits and reads name it: its folder (None: an older line), path


class QueryLog:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOG_NAME
        self._lock = threading.Lock()

    def record(self, kind: str, **fields: Any) -> None:
        entry = {"at": round(time.time(), 3), "kind": kind, **fields}
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                if self.path.exists() and self.path.stat().st_size + len(line) > ROTATE_BYTES:
                    os.replace(self.path, self.path.with_name(LOG_NAME + ".1"))
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(line)
            except OSError as err:
                log.warning("could not write the query log %s: %s", self.path, err)

    def clear(self) -> None:
        with self._lock:
            for path in (self.path.with_name(LOG_NAME + ".1"), self.path):
                path.unlink(missing_ok=True)

    def entries(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for path in (self.path.with_name(LOG_NAME + ".1"), self.path):
            try:
                with path.open(encoding="utf-8") as fh:
                    out.extend(parse_entries(fh))
            except FileNotFoundError:
                continue
        return out

    def summary(self, min_score: float) -> dict[str, Any]:
        return summarise(self.entries(), min_score)


def parse_entries(lines: Iterable[str]) -> list[dict[str, Any]]:
    """The entries among the log's lines (JSON objects, one a line); a damaged line is skipped."""
    out: list[dict[str, Any]] = []
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def summarise(entries: list[dict[str, Any]], min_score: float) -> dict[str, Any]:
    """What Usage shows of a query log's entries (the file's here, the database's with PostgreSQL)."""
    searches = [e for e in entries if e.get("kind") in ("recall", "search")]
    hooks = [e for e in entries if e.get("kind") == "context" and not e.get("skipped")]
    reads = [e for e in entries if e.get("kind") == "read"]
    gaps = []
    for e in searches:
        hits = e.get("hits", [])
        # A hit found by words alone (no embedder) has no cosine: such a search is no gap by score.
        cosines = [s for h in hits if isinstance(s := h.get("similarity"), int | float)]
        best = max(cosines, default=None)
        if not hits or (best is not None and best < min_score):
            gaps.append({"query": e.get("query"), "best_similarity": best, "at": e.get("at")})
    shown: list[tuple[float, Place]] = [
        (float(e.get("at", 0.0)), _place(h)) for e in (*searches, *hooks) for h in e.get("hits", [])
    ]
    read_counts: Counter[Place] = Counter()
    after_search: Counter[Place] = Counter()
    for r in reads:
        place = _place(r)
        read_counts[place] += 1
        at = float(r.get("at", 0.0))
        if any(p == place and 0 <= at - t <= FOLLOW_WINDOW_S for t, p in shown):
            after_search[place] += 1
    injected = sum(1 for e in hooks if e.get("hits"))
    return {
        "searches": len(searches),
        "hook_calls": len(hooks),
        "hook_injections": injected,
        "hook_injection_rate": round(injected / len(hooks), 4) if hooks else None,
        "gaps": gaps[-MAX_GAPS:][::-1],
        "reads": len(reads),
        "reads_after_search": sum(after_search.values()),
        "top_read": [
            {"folder": p[0], "path": p[1], "reads": n, "after_search": after_search[p]}
            for p, n in read_counts.most_common(MAX_TOP)
        ],
    }


def _place(entry: dict[str, Any]) -> Place:
    """A hit's or a read's document: its folder and the path in it (`format.log_place`); a line written
    before lines named the folder has None there, so it matches only another such line."""
    folder = entry.get("folder")
    return (str(folder) if folder is not None else None, str(entry.get("path")))
