"""What a sync is asked and what it says: the request (which folders, full or not), its progress, each
folder's tally and the report."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from ragdown.storage.backend import Folders

ProgressFn = Callable[["SyncProgress"], None]


@dataclass(frozen=True)
class SyncRequest:
    """What one sync of the tree does: the folders it walks (None: every one) and those it re-embeds from
    scratch (`full`: None every folder, empty none). Requests joining one follow-up merge into their union."""

    folders: Folders = None
    full: Folders = frozenset()

    @staticmethod
    def of(full: bool, folders: Folders = None) -> SyncRequest:
        return SyncRequest(folders, folders if full else frozenset())

    def merge(self, other: SyncRequest) -> SyncRequest:
        def union(a: Folders, b: Folders) -> Folders:
            return None if a is None or b is None else a | b

        return SyncRequest(union(self.folders, other.folders), union(self.full, other.full))


@dataclass
class SyncProgress:
    """Where a running sync stands: files read of those that needed reading, chunks embedded, what it is
    doing now (`at`: `parsing notes/big.md`, `embedding notes/big.md: 1,280 of 4,290 sections`) with the
    sections embedded of those it embeds now (one long note, or a batch of files: a model takes minutes
    over a long note, all of it before the file counts as done), and the step it is at once the files are
    written, where that takes a while (PostgreSQL's HNSW graph); the same per folder (`of`), for a caller
    who may hear of its own folders only."""

    files_done: int = 0
    files_total: int = 0
    chunks: int = 0
    step: str | None = None
    at: str | None = None
    at_folder: str | None = None  # the folder of the file `at` names (None: it names none)
    sections_done: int = 0  # of the sections being embedded now (`embedding`)
    sections_total: int = 0  # 0: none being embedded
    covers: Folders = None  # the folders the sync walks
    by_folder: dict[str, list[int]] = field(default_factory=dict)  # folder -> [done, total, chunks]

    def embedding(self, done: int, total: int, files: int, path: str | None, folder: str | None) -> None:
        """`done` of `total` sections embedded, of `files` files (`path`, in `folder`, when it is one)."""
        self.sections_done, self.sections_total = done, total
        what = path if files == 1 and path else f"{files:,} files"
        self.at = f"embedding {what}: {done:,} of {total:,} sections"
        self.at_folder = folder if files == 1 and path else None

    def clear_at(self) -> None:
        """Nothing under way any more (a file done, a step begun)."""
        self.at = self.at_folder = None
        self.sections_done = self.sections_total = 0

    def of(self, folders: Folders) -> SyncProgress | None:
        """This progress counted in `folders` only (None: all of it); None when the sync covers none of them.
        `at` only when it names no file, or one of theirs."""
        if folders is None:
            return self
        if self.covers is not None and not self.covers & folders:
            return None
        done = total = chunks = 0
        for folder in folders:
            d, t, c = self.by_folder.get(folder, (0, 0, 0))
            done, total, chunks = done + d, total + t, chunks + c
        theirs = self.at_folder is None or self.at_folder in folders
        at = self.at if theirs else None
        if not theirs and self.sections_total:  # embedding another folder's long note: how far, not which
            at = f"embedding: {self.sections_done:,} of {self.sections_total:,} sections"
        return SyncProgress(
            files_done=done,
            files_total=total,
            chunks=chunks,
            step=self.step,
            at=at,
            sections_done=self.sections_done,
            sections_total=self.sections_total,
            covers=self.covers & folders if self.covers is not None else folders,
        )

    def as_dict(self) -> dict[str, int | str]:
        """`{files_done, files_total, chunks}`, and `at`, `sections_done` / `sections_total` (while it
        embeds) and `step` when there are (`/api/status`, `ragdown_stats`)."""
        out: dict[str, int | str] = {
            "files_done": self.files_done,
            "files_total": self.files_total,
            "chunks": self.chunks,
        }
        if self.at:
            out["at"] = self.at
        if self.sections_total:
            out["sections_done"] = self.sections_done
            out["sections_total"] = self.sections_total
        if self.step:
            out["step"] = self.step
        return out

    def describe(self) -> str:
        """`indexing 0 of 1 files: embedding notes/big.md: 1,280 of 4,290 sections`, or the step once the
        files are in (as the web UI's badge says)."""
        if self.step:
            return self.step
        at = f": {self.at}" if self.at else ""
        return f"indexing {self.files_done:,} of {self.files_total:,} files{at}"

    def doing(self) -> str:
        """What a progress bar of files says beside it: the step, else what the sync does now
        (`embedding notes/big.md: 1,280 of 4,290 sections`), else `indexing`."""
        return self.step or self.at or "indexing"


@dataclass
class Tally:
    """One folder's part of a sync report."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    chunks: int = 0
    skipped: set[str] = field(default_factory=set)  # the paths left out

    def then(self, tree: Tally) -> Tally:
        """This folder's count of a write's own paths with the sync of the tree after it (`SyncReport.then`)."""
        return Tally(
            added=self.added + tree.added,
            updated=self.updated + tree.updated,
            removed=self.removed + tree.removed,
            unchanged=max(0, tree.unchanged - self.added - self.updated),
            chunks=self.chunks + tree.chunks,
            skipped=self.skipped | tree.skipped,
        )


@dataclass
class SyncReport:
    """What a sync did, per folder (`folders`; one folder, '', in `stdio`): the counts are their sums, or
    (`as_dict(folders)`) the sums over some folders, what one caller may hear of."""

    ms: int = 0
    at: float = 0.0
    skipped: dict[str, str] = field(default_factory=dict)  # path -> why it was left out
    covers: Folders = None  # the folders the sync of the tree walked (None: every one)
    folders: dict[str, Tally] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # `<path>: <what>` of the files parsed (page breaks, …)

    def tally(self, folder: str) -> Tally:
        found = self.folders.get(folder)
        if found is None:
            found = self.folders[folder] = Tally()
        return found

    def _sum(self, name: str, folders: Collection[str] | None = None) -> int:
        return sum(getattr(t, name) for f, t in self.folders.items() if folders is None or f in folders)

    @property
    def added(self) -> int:
        return self._sum("added")

    @property
    def updated(self) -> int:
        return self._sum("updated")

    @property
    def removed(self) -> int:
        return self._sum("removed")

    @property
    def unchanged(self) -> int:
        return self._sum("unchanged")

    @property
    def chunks(self) -> int:
        return self._sum("chunks")

    def then(self, tree: SyncReport) -> SyncReport:
        """This report of a write's own paths (`sync_paths`) with that of the sync of the tree after it,
        which found those paths unchanged: one report of both, each file counted once (folder by folder)."""
        return SyncReport(
            ms=self.ms + tree.ms,
            at=tree.at,
            skipped={**tree.skipped, **self.skipped},
            covers=tree.covers,
            warnings=[*self.warnings, *tree.warnings],
            folders={
                name: self.folders.get(name, Tally()).then(tree.folders.get(name, Tally()))
                for name in sorted(self.folders.keys() | tree.folders.keys())
            },
        )

    def as_dict(self, folders: Folders = None) -> dict[str, int]:
        """The report of the spec, `{added, updated, removed, unchanged, chunks, ms}`, and `skipped`: the
        files (and directories) left out with a logged reason: too large, binary, unreadable, a name that
        is not UTF-8. Counted in `folders` only when given (what one caller may hear of)."""
        return {
            "added": self._sum("added", folders),
            "updated": self._sum("updated", folders),
            "removed": self._sum("removed", folders),
            "unchanged": self._sum("unchanged", folders),
            "chunks": self._sum("chunks", folders),
            "ms": self.ms,
            "skipped": sum(
                len(t.skipped) for f, t in self.folders.items() if folders is None or f in folders
            ),
        }


class SyncError(RuntimeError):
    """A sync stopped before it finished (the embedder failed); what was committed stays."""
