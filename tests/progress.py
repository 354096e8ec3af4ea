"""Progress as one line per test file, printed once the file's last test has finished, instead of a dot
per test:

    tests/http/test_routes.py           14 passed             3.2 s

with the count of each outcome and the seconds its tests took (setup, call and teardown added up, so a
module fixture's start-up counts towards its file). It works alone and under pytest-xdist, where the
controller learns what each file holds from the workers' collection. Failures are still shown in full at
the end, as usual; `-v` keeps pytest's own line per test as well. Loaded by `tests/conftest.py`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

# The order of pytest's own closing line.
OUTCOMES = ("failed", "passed", "skipped", "xfailed", "xpassed", "error")
# When several phases of one test report, the worst one is the test's outcome.
SEVERITY = {"passed": 0, "skipped": 1, "xfailed": 2, "xpassed": 3, "error": 4, "failed": 5}


@dataclass
class _File:
    expected: set[str] = field(default_factory=set)
    done: set[str] = field(default_factory=set)
    outcome: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    printed: bool = False

    def counts(self) -> Counter[str]:
        return Counter(self.outcome[nodeid] for nodeid in self.done if nodeid in self.outcome)


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def phase_outcome(report: pytest.TestReport) -> str | None:
    """What one phase's report says of its test, or None when the phase says nothing (a passed setup)."""
    xfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if report.passed:
            return "xpassed" if xfail else "passed"
        if report.skipped:
            return "xfailed" if xfail else "skipped"
        return "failed"
    if report.failed:
        # An error in setup or teardown; xdist reports a test whose worker crashed with `when == "???"`.
        return "error" if report.when in ("setup", "teardown") else "failed"
    if report.skipped:
        return "xfailed" if xfail else "skipped"
    return None


class FileProgress:
    """Registered on the controlling process only (never on an xdist worker)."""

    def __init__(self, config: pytest.Config, reporter: Any) -> None:
        self.config = config
        self.reporter = reporter
        self.files: dict[str, _File] = {}
        self.width = 0
        self.known = False
        self.verbose = config.get_verbosity() > 0
        if not self.verbose:
            reporter.showfspath = False  # no "tests/x.py " in front of the (now empty) dots

    def expect(self, nodeids: Iterable[str]) -> None:
        if self.known:
            return
        self.known = True
        for nodeid in nodeids:
            self.files.setdefault(_file_of(nodeid), _File()).expected.add(nodeid)
        self.width = max((len(name) for name in self.files), default=0)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if session.items:  # alone; under xdist the controller collects nothing
            self.expect(item.nodeid for item in session.items)
            self.reporter.write_line("")  # as xdist leaves one after its "N workers [M items]"

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: Sequence[str]) -> None:
        # Every worker collects the whole run (xdist checks they agree): the first one tells.
        self.expect(ids)

    @pytest.hookimpl(wrapper=True)
    def pytest_report_teststatus(
        self, report: pytest.TestReport, config: pytest.Config
    ) -> Generator[None, Any, Any]:
        status = yield
        if self.verbose or not status:
            return status
        category, _letter, word = status
        return category, "", word  # counted as before, but no dot

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        name = _file_of(report.nodeid)
        entry = self.files.setdefault(name, _File())
        entry.seconds += report.duration
        outcome = phase_outcome(report)
        if outcome is not None:
            before = entry.outcome.get(report.nodeid)
            if before is None or SEVERITY[outcome] > SEVERITY[before]:
                entry.outcome[report.nodeid] = outcome
        if report.when in ("teardown", "???"):
            entry.outcome.setdefault(report.nodeid, "passed")
            entry.done.add(report.nodeid)
            if entry.expected and entry.expected <= entry.done and not entry.printed:
                self.print_file(name, entry)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        try:
            return (yield)
        finally:
            # Files a stop (-x, Ctrl-C, a crash) left half done: what they got to.
            for name, entry in self.files.items():
                if entry.done and not entry.printed:
                    self.print_file(name, entry, unfinished=len(entry.expected - entry.done))

    def print_file(self, name: str, entry: _File, unfinished: int = 0) -> None:
        entry.printed = True
        counts = entry.counts()
        summary = ", ".join(f"{counts[o]} {o}" for o in OUTCOMES if counts[o])
        if unfinished:
            summary += f", {unfinished} not run"
        if counts["failed"] or counts["error"]:
            markup = {"red": True}
        elif counts["skipped"] or counts["xpassed"] or unfinished:
            markup = {"yellow": True}
        else:
            markup = {"green": True}
        self.reporter.write_line(f"{name:<{self.width}}  {summary:<20}  {entry.seconds:6.1f} s", **markup)


@pytest.hookimpl(trylast=True)  # after the terminal reporter is set up
def pytest_configure(config: pytest.Config) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or hasattr(config, "workerinput"):
        return
    config.pluginmanager.register(FileProgress(config, reporter), "ragdown-file-progress")
