"""Watch the docs dir and ask for a sync once changes settle (750 ms), or poll every 60 s if watching fails."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

import watchfiles

from ragdown.index.walk import is_markdown, is_skipped_dir

log = logging.getLogger(__name__)

DEBOUNCE_MS = 750
POLL_INTERVAL_S = 60.0


def relevant_change(root: Path, path: str) -> bool:
    """Markdown files and extensionless paths (directory renames) outside dot-folders and node_modules."""
    try:
        rel = Path(path).relative_to(root)
    except ValueError:
        return False
    parts = rel.parts
    if any(is_skipped_dir(p) for p in parts[:-1]) or not parts:
        return False
    name = parts[-1]
    if name.startswith(".") or name == "node_modules":
        return False
    return is_markdown(name) or "." not in name


class Watcher:
    def __init__(self, root: Path, on_change: Callable[[], object]) -> None:
        self.root = root
        self._on_change = on_change
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.mode = "off"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="ragdown-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _run(self) -> None:
        try:
            self.mode = "watching"
            for _changes in watchfiles.watch(
                self.root,
                watch_filter=lambda _change, path: relevant_change(self.root, path),
                step=DEBOUNCE_MS,
                debounce=10 * DEBOUNCE_MS,
                stop_event=self._stop,
                raise_interrupt=False,
                ignore_permission_denied=True,
            ):
                self._fire()
            if self._stop.is_set():
                return
        except Exception as err:
            log.warning(
                "watching %s failed (%s): polling every %.0f s instead", self.root, err, POLL_INTERVAL_S
            )
        self.mode = "polling"
        while not self._stop.wait(POLL_INTERVAL_S):
            self._fire()

    def _fire(self) -> None:
        try:
            self._on_change()
        except Exception:
            log.exception("sync after a change failed")
