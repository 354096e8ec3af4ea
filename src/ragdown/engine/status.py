"""What an engine tells its callers: its status, what a write's sync did, the documents that changed, and that
it is not ready yet."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DocumentChanges:
    """What one sync changed on disk, as docs-relative paths (for `Engine.add_change_listener`)."""

    added: tuple[str, ...]
    updated: tuple[str, ...]
    removed: tuple[str, ...]


ChangeListener = Callable[[DocumentChanges], None]


class NotReady(RuntimeError):
    """The engine could not start (no usable index); the message says why and what to do."""


@dataclass(frozen=True)
class WriteSync:
    """How the sync after a write went: its report, or (`pending`) why the write answers before the index has
    the change."""

    report: dict[str, Any] | None = None
    pending: str | None = None

    def notes(self) -> list[str]:
        return [self.pending] if self.pending else []

    def as_dict(self) -> dict[str, Any]:
        """The sync report of a web answer, `{pending: why}` when there is none yet."""
        return self.report if self.report is not None else {"pending": self.pending}


def log_late_failure(future: Future[dict[str, Any]], closed: threading.Event) -> None:
    """A write's sync that failed after the write stopped waiting for it: logged, as nobody else sees it
    (one stopped by the engine closing is not a failure: the next start syncs the change)."""
    err = future.exception()
    if err is not None and not closed.is_set():
        log.warning("a write's sync failed: %s", err)


def wait_for_write_sync(
    sync: Callable[[], dict[str, Any]], wait: float, closed: threading.Event, still_syncing: Callable[[], str]
) -> WriteSync:
    """Run a write's `sync` in a thread of its own and wait for it at most `wait` seconds (0: not at all):
    its report, else the note the answer carries (`still_syncing()`, or why it failed)."""
    future: Future[dict[str, Any]] = Future()

    def run() -> None:
        try:
            future.set_result(sync())
        except Exception as err:  # handed to the waiter, or logged when it has stopped waiting
            future.set_exception(err)

    threading.Thread(target=run, name="ragdown-write-sync", daemon=True).start()
    try:
        if wait <= 0:  # answers at once, however quick the sync would have been
            raise FutureTimeout
        return WriteSync(report=future.result(timeout=wait))
    except FutureTimeout:
        future.add_done_callback(lambda done: log_late_failure(done, closed))
    except Exception as err:
        log.warning("a write's sync failed: %s", err)
        return WriteSync(pending=f"the index could not sync ({err}): the change is on disk for the next sync")
    return WriteSync(pending=still_syncing())


def docs_relative(root: Path, paths: Sequence[Path]) -> list[str]:
    """The docs-relative POSIX form of each path under the docs dir `root` (others are not this index's);
    none when one is the docs dir itself (the whole tree is synced then)."""
    out: list[str] = []
    for path in paths:
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            continue
        if rel == ".":
            return []
        if rel not in out:
            out.append(rel)
    return out


def tell_listeners(
    listeners: Sequence[ChangeListener],
    changed: list[tuple[str, bytes]],
    added: list[tuple[str, str]],
    removed: list[str],
) -> None:
    """Every change listener hears of the documents one sync added, updated or removed; a broken one is
    logged and never fails the sync."""
    if not listeners:
        return
    changes = DocumentChanges(
        added=tuple(p for p, _ in added), updated=tuple(p for p, _ in changed), removed=tuple(removed)
    )
    for fn in list(listeners):
        try:
            fn(changes)
        except Exception:  # a broken listener must not fail the sync
            log.exception("change listener failed")
