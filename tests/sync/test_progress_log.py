"""A long sync's progress in the log (`index/progress_log.py`): what `ragdown serve` and an MCP client's
stderr show during a first index, where there is no web UI badge to look at."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.engine.engine import Engine
from ragdown.sync.progress_log import ProgressLog
from ragdown.sync.report import SyncProgress
from tests.conftest import pile

OpenEngine = Callable[..., Engine]
LOGGER = "ragdown.sync.progress_log"


class Ticks:
    """A clock one second later at every reading."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def test_a_long_sync_logs_a_line_every_few_seconds(
    docs: Path, open_engine: OpenEngine, caplog: pytest.LogCaptureFixture
) -> None:
    """Each file read is a second on this clock: the sync's start sets it going, and of 12 files with a line
    every 4 s, the 4th, the 8th and the 12th are told."""
    pile(docs, "bulk", 12)
    engine = open_engine(docs, sync=False)
    engine.add_progress_listener(ProgressLog(every_s=4.0, clock=Ticks()))
    caplog.set_level(logging.INFO, logger=LOGGER)
    assert engine.sync()["added"] == 12
    said = lines(caplog)
    assert [re.sub(r"\(\d+ chunks\)", "(N chunks)", line) for line in said] == [
        f"indexing {n} of 12 files (N chunks)" for n in (4, 8, 12)
    ], said


def test_a_short_sync_logs_nothing_and_each_sync_starts_its_own_clock(
    docs: Path, open_engine: OpenEngine, caplog: pytest.LogCaptureFixture
) -> None:
    pile(docs, "bulk", 3)
    engine = open_engine(docs, sync=False)
    engine.add_progress_listener(ProgressLog(every_s=4.0, clock=Ticks()))
    caplog.set_level(logging.INFO, logger=LOGGER)
    engine.sync()
    pile(docs, "more", 3)
    engine.sync()  # 3 + 3 readings on the clock, but each sync its own 3 under the 4 s
    assert lines(caplog) == []


def test_a_step_is_logged_as_it_starts(caplog: pytest.LogCaptureFixture) -> None:
    """PostgreSQL's graph build after a bulk load takes minutes without a file being read: its step is
    news at once, not at the next tick."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    progress_log = ProgressLog(every_s=1000.0, clock=Ticks())
    progress = SyncProgress(files_total=2)
    progress_log(progress)
    progress.files_done, progress.chunks = 2, 9
    progress_log(progress)
    progress.step = "building the vector index"
    progress_log(progress)
    progress_log(progress)  # the same step again: nothing new
    assert lines(caplog) == ["building the vector index"]
