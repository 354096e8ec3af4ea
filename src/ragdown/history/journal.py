"""Who changes what: the write door records each change it makes through a `Journal`, and the sync records
the changes it finds on disk (edits made in Obsidian, an editor, `git pull`) through `observe_sync`.

Recording never fails a write: the file on disk is already the new one when the journal hears of it, so a
history that cannot be written is logged, not raised; the same holds for the upkeep the journal runs after
a change (`after`).
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragdown.core.errors import unavailable
from ragdown.history.store import HistoryStore
from ragdown.vault.sandbox import read_plain

log = logging.getLogger(__name__)


ChangeHook = Callable[["Journal", Sequence[Path]], None]


@dataclass
class Journal:
    """One caller's changes through the write door: who made them (a tool's name, `web`, …) and its session.

    It records each change in the version history (when `store` is given), remembers the paths changed, and
    runs `after` (the folder's `index.md` upkeep) once a change is on disk. `notes` gathers what the caller's
    answer should say besides (an index.md left alone, say)."""

    store: HistoryStore | None
    root: Path
    who: str
    session: str | None = None
    after: ChangeHook | None = None
    changed: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # The folder the writes are made in, whose quota the door keeps (`vault/quota.py`); None: no quota applies
    # (the door's own upkeep, or a caller outside any folder).
    folder: Path | None = None
    # How the caller names a docs-relative path in what `notes` say (`Scope.view`); None: as it is.
    view: Callable[[str], str] | None = None

    def _rel(self, path: Path) -> str | None:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return None

    def _done(self, *paths: Path) -> None:
        self.changed.extend(paths)
        if self.after is not None:
            try:
                self.after(self, paths)
            except Exception as err:  # upkeep after a write never undoes or fails the write
                log.exception("after a write of %s", ", ".join(map(str, paths)))
                self.notes.append(f"the follow-up of this write failed: {err}")

    def saved(
        self,
        path: Path,
        before: bytes | None,
        data: bytes,
        *,
        event: str | None = None,
        before_at: float | None = None,
    ) -> None:
        """`path` now holds `data`; `before` it held (saved `before_at`, its mtime) is kept as the original
        version when the document has no history yet."""
        rel = self._rel(path)
        if rel is not None and self.store is not None:
            try:
                self.store.record(
                    rel,
                    data,
                    who=self.who,
                    session=self.session,
                    event=event or ("created" if before is None else "changed"),
                    before=before,
                    before_at=before_at,
                )
            except (sqlite3.Error, OSError) as err:
                log.error("the history could not record %s: %s", rel, err)

    def deleted(self, path: Path, before: bytes) -> None:
        rel = self._rel(path)
        if rel is not None and self.store is not None:
            try:
                saved_at = path.stat().st_mtime  # still there: when its last bytes were written
            except OSError:
                saved_at = None
            try:
                self.store.record_delete(rel, before, who=self.who, session=self.session, before_at=saved_at)
            except (sqlite3.Error, OSError) as err:
                log.error("the history could not record the delete of %s: %s", rel, err)

    def forget(self, path: Path, *, under: bool = False, trash_only: bool = False) -> list[str]:
        """Forget `path` in the history for good: the document followed there, live or in the trash; with
        `under`, every document under the folder `path` (only those in its trash with `trash_only`). The
        docs-relative paths forgotten. Unlike recording, a failure is raised: a delete for good that left the
        text in the history would be a lie."""
        rel = self._rel(path)
        if rel is None or self.store is None:
            return []
        try:
            if under:
                return self.store.purge_under(rel, trash_only=trash_only) if rel not in ("", ".") else []
            return [rel] if self.store.purge(rel) else []
        except (sqlite3.Error, OSError) as err:
            log.error("the history could not forget %s: %s", rel, err)
            raise unavailable(f"the version history could not forget {self._shown(rel)}: {err}") from None

    def finished(self, *paths: Path) -> None:
        """The door is done with `paths` (written, deleted or moved) and holds no lock: run the upkeep."""
        self._done(*paths)

    def moved(self, src: Path, dst: Path) -> None:
        """`src` is now `dst`; a deleted document the history followed where it moved stays in the trash under
        another name, which `notes` says."""
        a, b = self._rel(src), self._rel(dst)
        if a is not None and b is not None and self.store is not None:
            try:
                apart = self.store.record_move(a, b, who=self.who, session=self.session)
            except (sqlite3.Error, OSError) as err:
                log.error("the history could not record the move of %s to %s: %s", a, b, err)
                return
            for was, now in apart:
                self.notes.append(
                    f"the deleted document that was at {self._shown(was)} stays in the trash as "
                    f"{self._shown(now)}, with its versions"
                )

    def _shown(self, rel: str) -> str:
        return self.view(rel) if self.view is not None else rel


def observe_sync(
    store: HistoryStore,
    changed: Sequence[tuple[str, bytes]],
    added: Sequence[tuple[str, str]],
    removed: Sequence[str],
    *,
    root: Path,
    lock: Callable[[Path], contextlib.AbstractContextManager[None]],
) -> None:
    """What a sync found on disk, recorded as `external`.

    - a changed document (its hash differs from the index's) gets a version, recorded under the document's
      lock (the write door's, `lock`) and only while the file under `root` still holds those bytes: a write
      through the door records its own version (and the original before it) inside that lock, so a sync
      that reads the file in between neither records the write's bytes first, without their original, nor
      records bytes another write has replaced since;
    - a new document gets none (a first sync never copies a vault into history): unless a removed document's
      last recorded bytes are its bytes, which is a rename made outside, and its history follows;
    - a removed document with history goes to the trash.
    """
    try:
        moved_from: dict[str, str] = {}
        if removed and added:
            last_hash = {}
            for path in removed:
                doc_id = store.find_doc(path, deleted=False)
                versions = store.versions(doc_id) if doc_id is not None else []
                if versions:
                    last_hash[versions[0].hash] = path
            for path, digest in added:
                source = last_hash.pop(digest, None)
                if source is not None:
                    moved_from[source] = path
        for source, target in moved_from.items():
            for was, now in store.record_move(source, target, who="external"):
                log.info("the deleted document that was at %s stays in the trash as %s", was, now)
        for path, data in changed:
            with lock(root / path):
                if read_plain(root, path) == data:  # else gone or changed since: left to the next sync
                    store.record(path, data, who="external", event="changed")
        for path in removed:
            if path not in moved_from and store.find_doc(path, deleted=False) is not None:
                store.record_delete(path, None, who="external")
    except (sqlite3.Error, OSError) as err:
        log.error("the history could not record what the sync found: %s", err)
