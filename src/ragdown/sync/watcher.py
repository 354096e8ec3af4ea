"""Watch the docs dir and ask for a sync once changes settle (750 ms), or poll every 60 s if watching fails.

The watch is recursive from the docs dir. The file watcher cannot take a path that is not UTF-8: a
directory named so anywhere below makes a recursive watch fail, and an event on such a file ends the
watch. Then the watcher goes on in *shallow* mode: every walked directory watched on its own (never the
undecodable ones), re-planned when directories come and go. Only when watching keeps failing does it
fall back to polling.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import watchfiles

from ragdown.core.paths import is_document, is_hidden, is_usable

log = logging.getLogger(__name__)

DEBOUNCE_MS = 750
POLL_INTERVAL_S = 60.0
# Restarts of the watch (after a path it could not decode) allowed per minute before falling back to polling.
MAX_RESTARTS_PER_MINUTE = 20


RULE_FILES = frozenset({".gitignore", ".ragdownignore", ".markindexignore", ".ragdown.json"})


def relevant_change(root: Path, path: str) -> bool:
    """Documents (Markdown, plain text), extensionless paths (directory renames), and the files whose rules
    decide what is indexed (`.gitignore`, `.ragdownignore`, `.markindexignore`, `.ragdown.json`), outside
    dot-folders and node_modules."""
    try:
        rel = Path(path).relative_to(root)
    except ValueError:
        return False
    parts = rel.parts
    if not parts or any(is_hidden(p) for p in parts[:-1]):
        return False
    name = parts[-1]
    if name in RULE_FILES:
        return True
    return not is_hidden(name) and (is_document(name) or "." not in name)


def watched_directories(root: Path) -> list[str]:
    """Every directory the walk enters (not hidden, a UTF-8 name, not a symlink), the docs dir first."""
    out = [str(root)]
    stack = [str(root)]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            try:
                if (
                    entry.is_dir(follow_symlinks=False)
                    and not is_hidden(entry.name)
                    and is_usable(entry.name)
                ):
                    out.append(entry.path)
                    stack.append(entry.path)
            except OSError:
                continue
    return out


def _undecodable(err: Exception) -> bool:
    return "decode path" in str(err).lower()


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

    def _watch(self, paths: list[str], *, recursive: bool) -> bool:
        """Fire on every settled batch until stopped (True), or until the directory list changes in shallow
        mode (False)."""
        for _changes in watchfiles.watch(
            *paths,
            watch_filter=lambda _change, path: relevant_change(self.root, path),
            step=DEBOUNCE_MS,
            debounce=10 * DEBOUNCE_MS,
            stop_event=self._stop,
            raise_interrupt=False,
            ignore_permission_denied=True,
            recursive=recursive,
        ):
            self._fire()
            if not recursive and set(watched_directories(self.root)) != set(paths):
                return False
        return True

    def _run(self) -> None:
        shallow = False
        restarts: list[float] = []
        while not self._stop.is_set():
            try:
                if shallow:
                    self.mode = "watching (directory by directory)"
                    if self._watch(watched_directories(self.root), recursive=False):
                        return
                    continue
                self.mode = "watching"
                if self._watch([str(self.root)], recursive=True):
                    return
            except Exception as err:
                now = time.monotonic()
                restarts = [t for t in restarts if now - t < 60] + [now]
                if _undecodable(err) and len(restarts) <= MAX_RESTARTS_PER_MINUTE:
                    if not shallow:
                        log.warning(
                            "%s: a path below it is not UTF-8 (%s): watching each directory on its own",
                            self.root,
                            err,
                        )
                    shallow = True
                    self._fire()  # something changed where the watch could not say what: sync
                    continue
                log.warning(
                    "watching %s failed (%s): polling every %.0f s instead", self.root, err, POLL_INTERVAL_S
                )
                break
        if self._stop.is_set():
            return
        self.mode = "polling"
        while not self._stop.wait(POLL_INTERVAL_S):
            self._fire()

    def _fire(self) -> None:
        try:
            self._on_change()
        except Exception:
            log.exception("sync after a change failed")
