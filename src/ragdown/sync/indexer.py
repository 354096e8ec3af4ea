"""Diff sync from disk into the store, one sync at a time.

1. Files whose size and mtime match the index are skipped without being read.
2. A content hash decides whether a changed file is re-embedded (a touched file is not).
3. Files gone from disk are dropped.

Syncs of the whole tree never overlap: a request made while one runs gets the single follow-up that every
later caller shares. A write's own files are synced beside it (`sync_paths`), never after it: a long sync
(a first index, a large backlog, a slow model) does not hold a write's answer back. The two take turns only
for each transaction, and a path a `sync_paths` has written is left alone by the sync of the tree that
began before it, which may have read older bytes. Searches never wait for a sync: they read committed
state through their own connections.

A sync of the tree may cover some folders only (`serve`'s top-level directories; a folder key's
`ragdown_reindex`, a key's write): it walks, drops and re-embeds (`full`) nothing else, and a follow-up covers
what every caller joining it asked for. Its report and its progress count per folder, so each caller is told
about the folders it asked for and nothing of the others, even from a shared follow-up.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragdown.core import heap
from ragdown.core.paths import is_hidden, is_usable
from ragdown.embedders.base import Embedder
from ragdown.storage.backend import Folders, IndexStore
from ragdown.storage.records import FileState, PendingFile
from ragdown.sync.inputs import embed_chunks, read_file
from ragdown.sync.report import ProgressFn, SyncError, SyncProgress, SyncReport, SyncRequest
from ragdown.vault.ignore import IgnoreRules
from ragdown.vault.walk import FileStat, folder_of, markdown_at, walk_markdown

if TYPE_CHECKING:
    from ragdown.documents import Document

log = logging.getLogger(__name__)

# Chunks embedded and committed together: large enough for efficient batches, small enough that searches
# see the first index grow and memory stays bounded.
BATCH_CHUNKS = 256
# The first batch of a sync is this small, and each after it twice the one before up to `BATCH_CHUNKS`:
# a first index with a model on the CPU commits (so searches find, and the progress moves) within seconds,
# not after a full batch's ~20 s.
FIRST_BATCH_CHUNKS = 16
BYTES_PER_CHUNK = 1200  # how a batch's chunks are estimated before the files are parsed
# A sync of the tree with more than this to embed (estimated from the files' sizes, as batches are) is long:
# a write does not wait for it, only for its own files (`sync_written`). About a second with a model on the
# CPU (docs/benchmarks.md, section 19: 12.6-21.7 chunks/s).
SHORT_SYNC_CHUNKS = 16

# What a sync found, for the version history: changed files (path, bytes), new files (path, hash), removed paths.
SyncObserver = Callable[[list[tuple[str, bytes]], list[tuple[str, str]], list[str]], None]


@dataclass
class _Work:
    stat: FileStat
    data: bytes
    digest: str
    existed: bool


class _Pass:
    """One sync's bookkeeping: its report, what the history hears of, and its kind. A sync of named paths
    (`own`) puts the paths it writes aside; a sync of the tree leaves the paths put aside alone."""

    def __init__(self, *, own: bool, covers: Folders = None) -> None:
        self.own = own
        self.report = SyncReport(covers=covers)
        self.changed: list[tuple[str, bytes]] = []
        self.added: list[tuple[str, str]] = []


def _is_under(path: str, target: str) -> bool:
    """`path` is `target`, or inside the directory `target` (docs-relative paths)."""
    return path == target or path.startswith(f"{target}/")


class Indexer:
    """Keeps one store in step with one docs dir."""

    def __init__(
        self,
        root: Path,
        store: IndexStore,
        embedder: Embedder | None,
        *,
        folders: bool,
        observer: SyncObserver | None = None,
        ignore: Sequence[str] = (),
    ) -> None:
        self.root = root
        self.ignore = tuple(ignore)  # `ragdown index --ignore`: exclusions on top of the rules on disk
        self.store = store
        self.embedder = embedder
        self.observer = observer
        self.folders = folders
        self.loose_files: list[str] = []
        self.last_sync: SyncReport | None = None
        # The last report of each folder a sync of the tree covered (None: the last sync of every folder),
        # for `last_for`.
        self._last: dict[str | None, SyncReport] = {}
        self.last_error: str | None = None
        self.settled = False  # a sync of the tree has ended (or failed): the first index is as far as it gets
        self.progress = SyncProgress()
        self._run_lock = threading.Lock()  # one sync of the tree at a time
        self._paths_lock = threading.Lock()  # one sync of named paths at a time
        # Around each index write of either kind, with `_aside`: the paths the syncs of named paths wrote
        # since the running sync of the tree began (None while none runs), which that sync leaves alone.
        self._commit_lock = threading.Lock()
        self._aside: set[str] | None = None
        self._state_lock = threading.Lock()
        # Told when a sync of the tree ends, and when one turns out long (`_long`): what `sync_written` waits on.
        self._told = threading.Condition()
        self._long = False
        self._running: Future[SyncReport] | None = None
        self._follow_up: Future[SyncReport] | None = None
        self._follow_up_request = SyncRequest()
        self._listeners: list[ProgressFn] = []
        self._retired = False
        self._stopping = threading.Event()

    @property
    def syncing(self) -> bool:
        with self._state_lock:
            return self._running is not None

    def add_progress_listener(self, fn: ProgressFn) -> None:
        self._listeners.append(fn)

    @contextlib.contextmanager
    def retiring(self) -> Iterator[None]:
        """Wait for the running syncs to finish, then retire this indexer: later syncs are refused."""
        with self._run_lock, self._paths_lock:
            self._retired = True
            yield

    def shut_down(self, timeout: float = 10.0) -> bool:
        """Stop for good: a running sync stops after its current batch (what it committed stays), later
        syncs are refused. True when no sync runs any more (False: it did not stop within `timeout`)."""
        self._stopping.set()
        deadline = time.monotonic() + timeout
        if not self._run_lock.acquire(timeout=timeout):
            return False
        try:
            if not self._paths_lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
                return False
            self._retired = True
            self._paths_lock.release()
        finally:
            self._run_lock.release()
        return True

    def _refuse_when_retired(self) -> None:
        if self._retired:
            raise SyncError(
                "the index is closing"
                if self._stopping.is_set()
                else "this indexer was replaced (the embedder changed); sync again"
            )

    # -- single flight -----------------------------------------------------------------------------

    def request_sync(self, full: bool = False, folders: Folders = None) -> Future[SyncReport]:
        """Start a sync of the tree (of `folders` only when given), or join the one follow-up of the sync
        already running (which then covers what every caller joining it asked for)."""
        request = SyncRequest.of(full, self._grouped(folders))
        with self._state_lock:
            if self._running is None:
                fut: Future[SyncReport] = Future()
                fut.add_done_callback(self._tell)
                self._running = fut
                threading.Thread(
                    target=self._loop, args=(fut, request), name="ragdown-sync", daemon=True
                ).start()
                return fut
            if self._follow_up is None:
                self._follow_up = Future()
                self._follow_up.add_done_callback(self._tell)
                self._follow_up_request = request
            else:
                self._follow_up_request = self._follow_up_request.merge(request)
            return self._follow_up

    def _grouped(self, folders: Folders) -> Folders:
        """`folders` as this index groups documents: in one-folder mode (`stdio`) there is only the whole."""
        return folders if self.folders else None

    def _tell(self, _: object = None) -> None:
        with self._told:
            self._told.notify_all()

    def sync_written(self, paths: Sequence[str], wait_s: float, folders: Folders = None) -> SyncReport:
        """The sync a write of `paths` answers after: those paths at once (`sync_paths`), beside whatever
        runs; then a sync of the tree of `folders` (the writer's; None: every folder; started, or the
        follow-up of the one running), for the changes made outside ragdown, waited for (at most `wait_s`)
        unless it is long (`SHORT_SYNC_CHUNKS`), or a sync of the tree before it is. The report of both, or
        of the write's paths alone."""
        deadline = time.monotonic() + wait_s
        own = self.sync_paths(paths)
        tree = self.request_sync(folders=folders)
        with self._told:
            while not tree.done() and not self._long:
                left = deadline - time.monotonic()
                if left <= 0:
                    return own
                self._told.wait(left)
        if not tree.done() or tree.exception() is not None:  # long, or failed: the write's files are in
            return own
        return own.then(tree.result())

    def _loop(self, fut: Future[SyncReport], request: SyncRequest) -> None:
        while True:
            try:
                fut.set_result(self.run(request))
            except BaseException as err:  # the caller sees it; the loop goes on with the follow-up
                (log.info if self._stopping.is_set() else log.error)("sync failed: %s", err)
                fut.set_exception(err)
            with self._state_lock:
                if self._follow_up is None:
                    self._running = None
                    return
                fut, request = self._follow_up, self._follow_up_request
                self._running, self._follow_up, self._follow_up_request = fut, None, SyncRequest()

    def last_for(self, folders: Folders) -> SyncReport | None:
        """The last sync of the tree that covered some of `folders` (None: the last sync)."""
        if folders is None:
            return self.last_sync
        found = [r for key, r in self._last.items() if key is None or key in folders]
        return max(found, key=lambda r: r.at) if found else None

    # -- the sync itself ---------------------------------------------------------------------------

    def sync(self, full: bool = False, folders: Folders = None) -> SyncReport:
        """One diff sync, in the calling thread. `full` drops every chunk first and re-embeds all; with
        `folders`, only those folders are walked (and re-embedded)."""
        return self.run(SyncRequest.of(full, self._grouped(folders)))

    def run(self, request: SyncRequest) -> SyncReport:
        """One sync of the tree as `request` says, in the calling thread."""
        with self._run_lock:
            self._refuse_when_retired()
            whole = request.folders is None
            try:
                report = self._sync(request)
            except Exception as err:
                self.last_error = str(err)
                self.settled = self.settled or whole
                raise
            self.last_error = None
            self.last_sync = report
            if whole:
                self._last = {None: report}
            else:
                self._last.update(dict.fromkeys(request.folders or (), report))
            if report.added or report.updated or report.removed:
                heap.trim()  # the parsed documents and the embedder's batches: back to the system
            self.settled = self.settled or whole  # once it has let go, not only reported
            return report

    def sync_paths(self, paths: Iterable[str]) -> SyncReport:
        """Sync only `paths` (docs-relative; a directory stands for everything under it), in the calling
        thread and at once: beside a running sync of the tree, not after it. What a write answers after.

        Each path is indexed as the walk would (`walk.markdown_at`): read, and written when its bytes differ
        from the index's; one gone from disk (or now ignored) is dropped. The sync of the tree that began
        before leaves these paths alone (`_committing`): it may have read them before the write."""
        started = time.perf_counter()
        wanted = sorted({p.strip("/") for p in paths} - {""})
        with self._paths_lock:
            self._refuse_when_retired()
            sync = _Pass(own=True, covers=self._grouped(frozenset(self._folder(p) for p in wanted)))
            report = sync.report
            rules = IgnoreRules(self.root, folders=self.folders, extra=self.ignore)
            on_disk = {
                s.path: s
                for p in wanted
                for s in markdown_at(self.root, p, folders=self.folders, rules=rules)
            }
            known = self.store.file_states_of(wanted)
            skipped = {
                p: s for p, s in self.store.skipped_states().items() if any(_is_under(p, w) for w in wanted)
            }
            gone = sorted({p for p in known if p not in on_disk} | {p for p in skipped if p not in on_disk})
            candidates: list[FileStat] = []
            for stat in sorted(on_disk.values()):
                state, skip = known.get(stat.path), skipped.get(stat.path)
                if state is not None and (state.size, state.stat_mtime_ns) == (stat.size, stat.mtime_ns):
                    report.tally(self._folder(stat.path)).unchanged += 1
                elif state is None and skip is not None and skip[:2] == (stat.size, stat.mtime_ns):
                    self._skip(report, stat.path, skip[2])
                else:
                    candidates.append(stat)
            self._index(sync, candidates, known)
            if gone:
                with self._committing(sync, gone):
                    self.store.remove_files(gone)
                for folder, count in self._per_folder([p for p in gone if p in known]).items():
                    report.tally(folder).removed += count
        if self.observer is not None and (sync.changed or sync.added or gone):
            self.observer(sync.changed, sync.added, [p for p in gone if p not in skipped])
        report.ms = round((time.perf_counter() - started) * 1000)
        report.at = time.time()
        log.debug("synced %s of %s in %d ms: %s", ", ".join(wanted), self.root, report.ms, report.as_dict())
        return report

    def _sync(self, request: SyncRequest) -> SyncReport:
        with self._commit_lock:  # from here on, what `sync_paths` writes is theirs
            self._aside = set()
            if request.full is None:
                self.store.clear()
            elif request.full:  # some folders re-embedded from scratch: their documents dropped first
                dropped = [p for p, _, _ in self.store.file_stats() if self._folder(p) in request.full]
                dropped += [p for p in self.store.skipped_states() if self._folder(p) in request.full]
                self.store.remove_files(dropped)
        try:
            return self._sync_tree(request.folders)
        finally:
            with self._commit_lock:
                self._aside = None
            self._set_long(False)

    def _set_long(self, long: bool) -> None:
        with self._told:
            self._long = long
            self._told.notify_all()

    def _walk(self, rules: IgnoreRules, folders: Folders) -> tuple[list[FileStat], dict[str, str]]:
        """The Markdown files (and unusable names, with why) of `folders`, or of the whole docs dir (None)."""
        if folders is None:
            walked = walk_markdown(self.root, folders=self.folders, rules=rules)
            if walked.loose != self.loose_files and walked.loose:
                log.info("not indexed, outside every folder: %s", ", ".join(walked.loose))
            self.loose_files = walked.loose
            return walked.files, walked.unusable
        files: list[FileStat] = []
        unusable: dict[str, str] = {}
        for name in sorted(folders):
            top = self.root / name
            # What the whole walk would leave out (a link, a hidden or unusable name, an ignored or missing
            # directory) is left out here too: its indexed documents then go.
            if (
                "/" in name
                or is_hidden(name)
                or not is_usable(name)
                or not top.is_dir()
                or top.is_symlink()
                or rules.ignored(name, is_dir=True)
            ):
                continue
            part = walk_markdown(self.root, folders=self.folders, rules=rules, under=f"{name}/")
            files += part.files
            unusable.update(part.unusable)
        return files, unusable

    def _folder(self, path: str) -> str:
        return folder_of(path, folders=self.folders)

    def _skip(self, report: SyncReport, path: str, reason: str) -> None:
        report.tally(self._folder(path)).skipped.add(path)
        report.skipped[path] = reason

    def _per_folder(self, paths: Iterable[str]) -> Counter[str]:
        """How many of `paths` each folder holds (one count in one-folder mode, without a look at each)."""
        if not self.folders:
            return Counter({"": sum(1 for _ in paths)})
        return Counter(p.partition("/")[0] for p in paths)

    def _sync_tree(self, scope: Folders) -> SyncReport:
        started = time.perf_counter()
        sync = _Pass(own=False, covers=scope)
        report = sync.report
        rules = IgnoreRules(self.root, folders=self.folders, extra=self.ignore)  # read once per sync
        walked_files, walked_unusable = self._walk(rules, scope)
        # Unchanged files cost one set lookup each (in C): the index's (path, size, stat mtime) rows
        # against the walk's, which are the same tuples. Hashes are read only when some stat differs.
        indexed = self.store.file_stats()
        skipped = self.store.skipped_states()
        if scope is not None:  # what the index holds of the folders walked, and nothing else
            indexed = {row for row in indexed if self._folder(row[0]) in scope}
            skipped = {p: state for p, state in skipped.items() if self._folder(p) in scope}
        changed = [f for f in walked_files if f not in indexed]
        unchanged = len(walked_files) - len(changed)
        for folder, count in self._per_folder(p.path for p in walked_files).items():
            report.tally(folder).unchanged += count
        for folder, count in self._per_folder(p.path for p in changed).items():
            report.tally(folder).unchanged -= count
        # A name ragdown cannot carry, with why: recorded under a printable one.
        for name, why in walked_unusable.items():
            self._skip(report, name, why)
            if skipped.get(name, (0, 0, ""))[2] != why:
                log.warning("skipping %s: %s", name, why)
                self.store.mark_skipped(name, 0, 0, why)
                skipped[name] = (0, 0, why)

        gone: list[str] = []
        if unchanged < len(indexed) or skipped:  # else every indexed path matched a file on disk
            on_disk = {f.path for f in walked_files}.union(walked_unusable)
            gone = [p for p, _, _ in indexed if p not in on_disk] + [p for p in skipped if p not in on_disk]
        if gone:
            with self._committing(sync, gone) as kept:
                gone = [p for p in gone if p in kept]
                self.store.remove_files(gone)
            was_indexed = {p for p, _, _ in indexed}
            for folder, count in self._per_folder([p for p in gone if p in was_indexed]).items():
                report.tally(folder).removed += count

        if not changed:
            known: dict[str, FileState] = {}
        elif scope is None:
            known = self.store.file_states()
        else:
            known = self.store.file_states_of(sorted(scope))
        candidates: list[FileStat] = []
        for stat in changed:
            state = known.get(stat.path)
            skip = skipped.get(stat.path)
            if state is None and skip is not None and skip[0] == stat.size and skip[1] == stat.mtime_ns:
                self._skip(report, stat.path, skip[2])
                continue
            candidates.append(stat)

        self.progress = SyncProgress(files_total=len(candidates), covers=scope)
        for folder, count in self._per_folder(c.path for c in candidates).items():
            self.progress.by_folder[folder] = [0, count, 0]
        self._notify()
        if sum(max(1, c.size // BYTES_PER_CHUNK) for c in candidates) > SHORT_SYNC_CHUNKS:
            self._set_long(True)
        # The files sure to be written (new, or of another size), not those whose stat alone moved: a
        # checkout that touches every file must not make PostgreSQL rebuild its HNSW graph from scratch.
        sure = sum(1 for c in candidates if (k := known.get(c.path)) is None or k.size != c.size)
        with self.store.loading(sure, self._step):
            self._index(sync, candidates, known)
        if self.observer is not None and (sync.changed or sync.added or gone):
            self.observer(sync.changed, sync.added, [p for p in gone if p not in skipped])
        if report.removed or report.added or report.updated:
            self.store.prune_deleted_log()
        report.ms = round((time.perf_counter() - started) * 1000)
        report.at = time.time()
        if report.added or report.updated or report.removed:
            log.info(
                "synced %s: %d added, %d updated, %d removed, %d unchanged, %d skipped; %d chunks in %.1f s",
                self.root if scope is None else f"{self.root} ({', '.join(sorted(scope))})",
                report.added,
                report.updated,
                report.removed,
                report.unchanged,
                len(report.skipped),
                report.chunks,
                report.ms / 1000,
            )
        return report

    def _index(self, sync: _Pass, candidates: Sequence[FileStat], known: dict[str, FileState]) -> None:
        """Read each candidate; index those whose bytes differ from the index's (`known`), in batches."""
        report = sync.report
        batch: list[_Work] = []
        batch_chunks, batch_limit = 0, FIRST_BATCH_CHUNKS
        for stat in candidates:
            if self._stopping.is_set():
                raise SyncError("the index is closing: the sync stopped (what it indexed is kept)")
            data, reason = read_file(self.root / stat.path, stat.size)
            if data is None:
                assert reason is not None
                with self._committing(sync, [stat.path]) as kept:
                    if kept:
                        log.warning("skipping %s: %s", stat.path, reason)
                        self._skip(report, stat.path, reason)
                        self.store.mark_skipped(stat.path, stat.size, stat.mtime_ns, reason)
                self._advance(sync, stat.path, 0)
                continue
            digest = hashlib.sha256(data).hexdigest()
            state = known.get(stat.path)
            if state is not None and state.hash == digest:
                with self._committing(sync, [stat.path]) as kept:
                    if kept:
                        self.store.touch_file(stat.path, stat.size, stat.mtime_ns)
                report.tally(self._folder(stat.path)).unchanged += 1
                self._advance(sync, stat.path, 0)
                continue
            batch.append(_Work(stat, data, digest, state is not None))
            batch_chunks += max(1, len(data) // BYTES_PER_CHUNK)
            if batch_chunks >= batch_limit:
                self._flush(sync, batch)
                batch, batch_chunks = [], 0
                batch_limit = min(batch_limit * 2, BATCH_CHUNKS)
        if batch:
            self._flush(sync, batch)

    @contextlib.contextmanager
    def _committing(self, sync: _Pass, paths: Iterable[str]) -> Iterator[set[str]]:
        """Around one of a sync's index writes for `paths`: the paths it may write. A sync of named paths
        writes them all and puts them aside; a sync of the tree only those not put aside since it began
        (a write's own sync read them after this sync did, or wrote them, and is newer)."""
        wanted = set(paths)
        with self._commit_lock:
            if sync.own:
                if self._aside is not None:
                    self._aside |= wanted
                yield wanted
            else:
                yield wanted - self._aside if self._aside else wanted

    def _flush(self, sync: _Pass, batch: list[_Work]) -> None:
        from ragdown.documents import parse_document  # here: a sync that finds no change never parses

        docs = []
        for work in batch:
            self._at(sync, f"parsing {work.stat.path}", work.stat.path)
            doc = parse_document(
                work.stat.path, work.data, folder=folder_of(work.stat.path, folders=self.folders)
            )
            for warning in doc.warnings:
                log.warning("%s: %s", work.stat.path, warning)
                sync.report.warnings.append(f"{work.stat.path}: {warning}")
            docs.append(doc)
        chunks = sum(len(d.chunks) for d in docs)
        if chunks > SHORT_SYNC_CHUNKS and not sync.own:
            self._set_long(True)  # short by its bytes, long by its sections: a write need not wait for it
        told = None
        if self.embedder is not None and chunks and not sync.own:
            told = self._embedding([d for d in docs if d.chunks], chunks)
            told(0)
        vectors, windows = embed_chunks(self.embedder, docs, told)
        pending = [
            PendingFile(
                path=w.stat.path,
                folder=folder_of(w.stat.path, folders=self.folders),
                size=w.stat.size,
                stat_mtime_ns=w.stat.mtime_ns,
                mtime_ns=w.stat.mtime_ns,
                hash=w.digest,
                document=doc,
                vectors=vec,
                windows=more,
            )
            for w, doc, vec, more in zip(batch, docs, vectors, windows, strict=True)
        ]
        # Written here, not in a thread of its own behind the next batch's parsing: measured, a writer
        # thread gained nothing with a model (its embedding is most of the time) and cost 1.3x without
        # one, the two threads trading the GIL (docs/benchmarks.md, section 15).
        with self._committing(sync, [w.stat.path for w in batch]) as kept:
            if len(kept) < len(batch):
                pending = [p for p in pending if p.path in kept]
                batch = [w for w in batch if w.stat.path in kept]
            if pending:
                self.store.write_files(pending)
        for doc in docs:
            self._advance(sync, doc.path, len(doc.chunks))
        self._written(sync, batch, {doc.path: len(doc.chunks) for doc in docs})

    def _written(self, sync: _Pass, batch: list[_Work], chunks: dict[str, int]) -> None:
        """A batch's bookkeeping once the store holds it: the report (each file's `chunks`, by path) and
        the history's lists."""
        report = sync.report
        for w in batch:
            if self.observer is not None:
                if w.existed:
                    sync.changed.append((w.stat.path, w.data))
                else:
                    sync.added.append((w.stat.path, w.digest))
            tally = report.tally(self._folder(w.stat.path))
            tally.chunks += chunks[w.stat.path]
            if w.existed:
                tally.updated += 1
            else:
                tally.added += 1

    def _step(self, name: str) -> None:
        self.progress.step = name
        self.progress.clear_at()
        self._notify()
        self._set_long(True)  # a step (PostgreSQL's vector graph) takes minutes

    def _at(self, sync: _Pass, what: str, path: str | None = None) -> None:
        """What a sync of the tree works on now (`path`: the file it names, if any), for its progress (a sync
        of named paths has none). Read by whoever asks (`/api/status`, `ragdown_stats`); listeners hear of
        each file done and each pass of the embedder (`_embedding`), not of this."""
        if not sync.own:
            self.progress.at = what
            self.progress.at_folder = None if path is None else self._folder(path)

    def _embedding(self, docs: list[Document], total: int) -> Callable[[int], None]:
        """What tells the progress of a sync of the tree how many of the `total` sections of `docs` are
        embedded (`embedding notes/big.md: 1,280 of 4,290 sections`). Listeners hear of each pass the
        embedder tells of, not of the start (`0 of`): with an embedder that tells nothing (`hash`), they hear
        of files done only, as before."""
        path = docs[0].path if len(docs) == 1 else None
        folder = None if path is None else self._folder(path)

        def told(done: int) -> None:
            self.progress.embedding(done, total, len(docs), path, folder)
            if done:
                self._notify()

        return told

    def _advance(self, sync: _Pass, path: str, chunks: int) -> None:
        """One more file done: read unchanged, skipped, or written."""
        if sync.own:
            return
        self.progress.files_done += 1
        self.progress.chunks += chunks
        self.progress.clear_at()
        mine = self.progress.by_folder.get(self._folder(path))
        if mine is not None:
            mine[0] += 1
            mine[2] += chunks
        self._notify()

    def _notify(self) -> None:
        for fn in self._listeners:
            try:
                fn(self.progress)
            except Exception:  # a broken progress display must not stop indexing
                log.debug("progress listener failed", exc_info=True)
