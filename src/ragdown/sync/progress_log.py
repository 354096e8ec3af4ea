"""A long sync's progress in the log, for whoever watches `ragdown serve` or an MCP client's stderr instead
of the web UI's badge: `indexing 800 of 9,800 files (6,120 chunks)` every `every_s` seconds while the sync
runs, and each step it starts once the files are in (PostgreSQL's vector graph). A sync shorter than
`every_s` logs nothing more than its report."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from ragdown.sync.report import SyncProgress

log = logging.getLogger(__name__)

PROGRESS_LOG_S = 10.0


class ProgressLog:
    """A progress listener (`Engine.add_progress_listener`) that logs at most one line per `every_s`."""

    def __init__(self, every_s: float = PROGRESS_LOG_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.every_s = every_s
        self._clock = clock
        self._lock = threading.Lock()  # each sync runs in a thread of its own
        self._sync: SyncProgress | None = None  # each sync has a progress of its own
        self._next_at = 0.0
        self._step: str | None = None

    def __call__(self, progress: SyncProgress) -> None:
        now = self._clock()
        with self._lock:
            if progress is not self._sync:
                self._sync, self._next_at, self._step = progress, now + self.every_s, None
                return
            new_step = progress.step is not None and progress.step != self._step
            self._step = progress.step
            if not new_step and now < self._next_at:
                return
            self._next_at = now + self.every_s
            line = progress.describe()
            if progress.step is None:
                line += f" ({progress.chunks:,} chunks)"
        log.info("%s", line)
