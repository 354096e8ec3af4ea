"""The running index of one docs dir: embedder, store, role, sync, watcher and search, wired together.

`Engine.start()` returns at once; the model loads and the store opens in the background so an MCP
handshake never waits for them. Whichever process binds the primary socket indexes and watches; the
others are readers that search the same SQLite file and forward syncs. A reader keeps a connection open to
the primary (`PrimaryWatcher`) and tries to take over the moment it closes; a check every 30 s backs that up.
With `RAGDOWN_DATABASE_URL` the backend (`storage/backend.py`) is PostgreSQL instead: the primary is the
process holding the index's advisory lock, on any machine (`storage/postgres/primary.py`), with the same roles.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdown.core.config import OFFLINE_EMBEDDER, Mode, Settings
from ragdown.documents import CHUNKER_VERSION, blocks
from ragdown.embedders import load_configured, load_or_offline
from ragdown.embedders.base import Embedder
from ragdown.engine.status import (
    ChangeListener,
    NotReady,
    WriteSync,
    docs_relative,
    tell_listeners,
    wait_for_write_sync,
)
from ragdown.search.hybrid import Hit, Searcher, SearchOptions, fusion_for
from ragdown.storage.backend import Folders, IndexStore, PrimaryWatch
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.location import open_backend
from ragdown.storage.records import IndexMeta, StoreError
from ragdown.sync.indexer import Indexer
from ragdown.sync.report import ProgressFn, SyncProgress, SyncReport

if TYPE_CHECKING:  # imported where used: watchfiles only by a primary that watches
    from ragdown.history import HistoryStore
    from ragdown.sync.watcher import Watcher

log = logging.getLogger(__name__)

TAKEOVER_INTERVAL_S = 30.0
# Tool calls give the first sync this long (from the first call) to finish before answering from what is
# indexed so far; later calls, and calls during any later sync, never wait for a sync.
FIRST_SYNC_WAIT_S = 2.0
# How long a reader whose primary went away waits for another process to take over before giving up.
HANDOVER_WAIT_S = 10.0
# How long a store replaced by a change of role stays open for the calls that took it before the change.
RETIRED_GRACE_S = 60.0


CliAnswer = Callable[["Engine", Mapping[str, Any]], dict[str, Any]]


class Engine:
    def __init__(
        self,
        settings: Settings,
        mode: Mode,
        *,
        docs_dir: Path | None = None,
        embedder: Embedder | None = None,
        takeover_interval_s: float = TAKEOVER_INTERVAL_S,
        ignore: tuple[str, ...] = (),
        cli_answer: CliAnswer | None = None,
    ) -> None:
        self.settings = settings
        blocks.read_setext(settings.setext)  # how this process parses Markdown: one choice per process
        # How this process, as the primary, answers `ragdown search` / `ragdown index` of another process
        # (`commands.answer`); without it they are told to work alone.
        self._cli_answer = cli_answer
        self.mode = mode
        self.root = (docs_dir or settings.require_docs_dir()).resolve()
        self.folders = mode == "serve"
        self.data_dir = settings.data_dir_override or settings.with_docs_dir(self.root).data_dir(mode)
        self.embedder: Embedder | None = embedder
        self.embedder_error: str | None = None
        self.error: str | None = None
        self.store: IndexStore | None = None
        # Stores replaced by a change of role, kept open a while for the calls still holding them.
        self._retired: list[tuple[float, IndexStore]] = []
        self.indexer: Indexer | None = None
        self.searcher: Searcher | None = None
        self.watcher: Watcher | None = None
        self.role = "starting"
        self._preloaded = embedder is not None
        # Where the index lives: SQLite in the data dir, or PostgreSQL (`storage/backend.py`).
        self.backend = open_backend(settings, self.root, self.data_dir, mode)
        self._lock = self.backend.primary_lock(self._on_lock_lost)
        shared_lock = self.backend.document_lock()
        self._unshare_lock = None
        if shared_lock is not None:  # PostgreSQL's: the write door (imported only then) takes it too
            from ragdown.writes.door import share_document_lock

            self._unshare_lock = share_document_lock(self.root, shared_lock)
        self._ready = threading.Event()
        self._first_sync_deadline: float | None = None  # set by the first tool call (`wait_ready_async`)
        self._closed = threading.Event()
        self._takeover_interval_s = takeover_interval_s
        self.ignore = ignore  # `ragdown index --ignore` patterns, on top of the ignore rules on disk
        self._role_lock = threading.Lock()
        self._primary_watch: PrimaryWatch | None = None
        self._progress_listeners: list[ProgressFn] = []
        self._change_listeners: list[ChangeListener] = []
        self._initial_sync: bool = True
        self._warm = False  # load the dense matrix ahead of the first search (`start`)
        self.warmed = threading.Event()  # set once a warming (`_warm_searcher`) is over, loaded or not
        self._warming: list[threading.Thread] = []  # joined by `close` before the stores they read close
        self._warming_lock = threading.Lock()
        self._watch: bool = settings.watch
        self.embedder_spec: str | None = None  # overrides settings.embedder (saved server settings)
        # The user named the embedder (RAGDOWN_EMBEDDER, or saved in the web UI): never swapped for another.
        self.embedder_chosen = settings.embedder_chosen
        self.embedder_notice: str | None = None  # that another embedder than the default is in use
        self.embedder_notice_reason: str | None = None  # why: the default's error
        # Every version of every document, beside the documents (not derived: it outlives the data dir).
        # Made (and its module imported) when first asked for (`history`): a search never asks.
        self._history_on = settings.history
        self._history: HistoryStore | None = None
        self._history_lock = threading.Lock()

    @property
    def history(self) -> HistoryStore | None:
        """The folder's version history; None when it is off (`RAGDOWN_HISTORY`)."""
        if not self._history_on:
            return None
        if self._history is None:
            with self._history_lock:
                if self._history is None:
                    from ragdown.history import HistoryStore

                    self._history = HistoryStore(
                        self.root,
                        keep_days=self.settings.history_days,
                        keep=self.settings.history_keep,
                        trash_days=self.settings.history_trash_days,
                    )
        return self._history

    # -- start-up ----------------------------------------------------------------------------------

    def start(
        self,
        *,
        background: bool = True,
        initial_sync: bool = True,
        watch: bool | None = None,
        warm: bool | None = None,
    ) -> None:
        """Load the model, open the store and take a role; in a thread unless `background` is False. With
        `warm` (by default when in the background: a server), the searcher loads what a search reads in a
        thread of its own once the first sync is over, so the first search is as fast as the later ones."""
        self._initial_sync = initial_sync
        self._warm = background if warm is None else warm
        if watch is not None:
            self._watch = watch
        if background:
            threading.Thread(target=self._start, name="ragdown-start", daemon=True).start()
        else:
            self._start()

    def add_progress_listener(self, fn: ProgressFn) -> None:
        self._progress_listeners.append(fn)
        if self.indexer is not None:
            self.indexer.add_progress_listener(fn)

    def add_change_listener(self, fn: ChangeListener) -> None:
        """Call `fn` (in the sync's thread; it must not block) after each sync of this process that added,
        updated or removed documents. Only the primary syncs: a reader hears nothing."""
        self._change_listeners.append(fn)

    def remove_change_listener(self, fn: ChangeListener) -> None:
        with contextlib.suppress(ValueError):
            self._change_listeners.remove(fn)

    def _start(self) -> None:
        try:
            if not self._preloaded:
                self._load_embedder()
            self._take_role()
        except Exception as err:
            self.error = str(err)
            log.error("%s", err)
        finally:
            self._ready.set()

    def load_embedder(self, spec: str) -> Embedder:
        """Load an embedder by its `RAGDOWN_EMBEDDER` spec; `EmbedderError` says why it cannot."""
        started = time.perf_counter()
        embedder = load_configured(spec, self.settings)
        log.info("embedder %s loaded in %.0f ms", embedder.name, (time.perf_counter() - started) * 1000)
        return embedder

    def _load_embedder(self) -> None:
        """The chosen embedder; when none was chosen and the default cannot load (no hub on a first run
        offline), the installed offline model instead, said in `embedder_notice`. An embedder the user
        chose is never swapped: the error says what to set instead, and search runs on BM25 meanwhile."""
        loaded = load_or_offline(
            self.embedder_spec or self.settings.embedder, self.load_embedder, chosen=self.embedder_chosen
        )
        self.embedder = loaded.embedder
        self.embedder_notice = loaded.notice
        self.embedder_notice_reason = loaded.reason if loaded.notice is not None else None
        if loaded.explained is not None:
            log.warning("%s", loaded.explained)
        if loaded.embedder is None:
            self.embedder_error = (
                f"{loaded.reason}. Search runs on BM25 alone until the embedder can load: fix that, or set "
                f"RAGDOWN_EMBEDDER={OFFLINE_EMBEDDER} (installed with ragdown, works offline)."
            )
            log.error(
                "embedder %s could not load: %s",
                self.embedder_spec or self.settings.embedder,
                self.embedder_error,
            )

    def _meta(self) -> IndexMeta:
        emb = self.embedder
        return IndexMeta(
            embedder=emb.name if emb else "none",
            dim=emb.dim if emb else 0,
            chunker_version=CHUNKER_VERSION,
            setext=self.settings.setext,
        )

    def _take_role(self) -> None:
        with self._role_lock:
            if self._closed.is_set():
                return
            if self._lock.try_acquire(self._on_forwarded_sync, self._on_cli_request):
                self._become_primary(sync=self._initial_sync)
            else:
                self._become_reader()
        if self.role == "reader":
            self._watch_primary()
            threading.Thread(target=self._takeover_loop, name="ragdown-takeover", daemon=True).start()

    def _retire_store(self) -> None:
        """Let go of the current store without closing it under a call in flight (a write that took it just
        before a take-over still lints against it): it is closed at the next change of role after
        `RETIRED_GRACE_S`, or when the engine closes."""
        now = time.monotonic()
        keep: list[tuple[float, IndexStore]] = []
        for since, store in self._retired:
            if now - since >= RETIRED_GRACE_S:
                store.close()
            else:
                keep.append((since, store))
        if self.store is not None:  # still the engine's store until the new one is assigned over it
            keep.append((now, self.store))
        self._retired = keep

    def _become_primary(self, *, sync: bool) -> None:
        """Open the index for writing and start indexing; the role's lock is held. When the index cannot be
        opened (a database that went away, a full disk), the lock is let go, so this process or another
        can try again, and the error raised: nothing holds the role without indexing."""
        store: IndexStore | None = None
        try:
            store = self.backend.open_store(writable=True)
            if store.ensure_meta(self._meta()):
                log.info("building a new index in %s", self.backend.describe())
        except Exception:
            if store is not None:
                store.close()
            self._lock.release()
            raise
        self._retire_store()
        self.store = store
        self.searcher = Searcher(store, self.embedder, folders=self.folders)
        self.indexer = Indexer(
            self.root,
            store,
            self.embedder,
            folders=self.folders,
            observer=self._observe_sync,
            ignore=self.ignore,
        )
        for fn in self._progress_listeners:
            self.indexer.add_progress_listener(fn)
        self.role = "primary"
        self.error = None
        log.info("primary for %s (index %s)", self.root, self.backend.describe())
        # The watcher before the sync, so a change made while the sync walks the tree is not left to the next one.
        if self._watch:
            from ragdown.sync.watcher import Watcher

            self.watcher = Watcher(self.root, lambda: self.indexer.request_sync() if self.indexer else None)
            self.watcher.start()
        if sync:
            first = self.indexer.request_sync()
            if self._warm:
                first.add_done_callback(lambda _: self._warm_searcher(self.searcher))
        elif self._warm:
            self._warm_searcher(self.searcher)

    def _warm_searcher(self, searcher: Searcher | None) -> None:
        """Load `searcher`'s dense matrix in a thread of its own (`Searcher.warm`); a failure only logs."""
        if searcher is None:
            return

        links = self.embedder is not None and fusion_for(self.settings.fusion, self.embedder.name) == "score"

        def warm() -> None:
            try:
                searcher.warm(links=links)
            except Exception as err:  # a store closed meanwhile: the first search loads it, as before
                log.debug("warming the searcher failed: %s", err)
            finally:
                self.warmed.set()

        with self._warming_lock:  # never one that `close` would not see: it reads the stores it closes
            if self._closed.is_set():
                return
            thread = threading.Thread(target=warm, name="ragdown-warm", daemon=True)
            self._warming.append(thread)
            thread.start()

    def _become_reader(self) -> None:
        store = self.backend.open_store(writable=False)
        self.role = "reader"
        self.store = store
        self.searcher = Searcher(store, self.embedder, folders=self.folders)
        if self.embedder is not None:
            try:
                store.check_meta(self._meta())
            except StoreError as err:
                self.error = str(err)
                log.error("%s", err)
                return
        log.info("reader of %s: another process is the primary", self.backend.describe())
        if self._warm:
            self._warm_searcher(self.searcher)

    def _watch_primary(self) -> None:
        """Keep a connection to the primary, and try to take over the moment it closes (see `PrimaryWatcher`)."""
        with self._role_lock:
            if self._closed.is_set() or self.role != "reader":
                return
            if self._primary_watch is not None and self._primary_watch.running:
                return
            self._primary_watch = self.backend.watch_primary(self._on_primary_gone)
            self._primary_watch.start()

    def _on_primary_gone(self) -> bool:
        """The watcher's callback: True when it can stop (this process is the primary, or closing)."""
        return self._closed.is_set() or self.try_promote()

    @property
    def watching_primary(self) -> bool:
        """A reader attached to the primary's socket, so it learns of the primary's exit at once."""
        watch = self._primary_watch
        return watch is not None and watch.attached

    def _takeover_loop(self) -> None:
        """The safety net of the watcher: a try every `takeover_interval_s`, and a watcher restarted if it
        gave up (no primary to attach to for a while, or one that cannot be watched)."""
        while not self._closed.wait(self._takeover_interval_s):
            if self.try_promote():
                return
            self._watch_primary()

    def try_promote(self) -> bool:
        """A reader's attempt to take over a primary that went away; True when this process is the primary.

        A take-over syncs at once, whatever `initial_sync` the engine started with: the files changed while no
        process was the primary (or not yet indexed by the one that died) are seen by no watcher.
        """
        with self._role_lock:
            if self.role == "primary":
                return True
            if self._closed.is_set() or not self._lock.try_acquire(
                self._on_forwarded_sync, self._on_cli_request
            ):
                return False
            log.info("the primary went away: taking over")
            try:
                self._become_primary(sync=True)
            except Exception as err:
                log.error("could not take over the index (%s): still a reader, trying again later", err)
                return False
            return True

    def _on_lock_lost(self) -> None:
        """The role lock was lost under this primary (its database session died): stop indexing, become a
        reader and watch for the lock like any other; by then another process may have taken over."""
        with self._role_lock:
            if self._closed.is_set() or self.role != "primary":
                return
            log.error("lost the primary role of %s: indexing stops here until it is won back", self.root)
            if self.watcher is not None:
                self.watcher.stop()
                self.watcher = None
            if self.indexer is not None:
                self.indexer.shut_down()
                self.indexer = None
            self._retire_store()
            self._become_reader()
        self._watch_primary()
        threading.Thread(target=self._takeover_loop, name="ragdown-takeover", daemon=True).start()

    def _on_forwarded_sync(self, full: bool, paths: list[str] | None, folders: Folders) -> dict[str, Any]:
        """A reader's sync: of the tree (of `folders` only, when given), or (`paths`, after a write of the
        reader's) of those paths alone, then of the tree of `folders` while it is short. Its report, counted
        in `folders`."""
        self._ready.wait()
        with self._role_lock:  # a take-over that bound the socket finishes becoming the primary first
            indexer = self.indexer
        if indexer is None:
            raise NotReady("the primary is still starting")
        folders = self._grouped(folders)
        if paths is not None and not full:
            return indexer.sync_written(paths, self.settings.write_wait, folders).as_dict(folders)
        return indexer.request_sync(full, folders).result().as_dict(folders)

    def _on_cli_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """`ragdown search` / `ragdown index` of another process, answered on this one's model and index."""
        if self._cli_answer is None:
            return {"ok": False, "error": "this process does not answer the CLI"}
        self._ready.wait()
        return self._cli_answer(self, request)

    def _observe_sync(
        self, changed: list[tuple[str, bytes]], added: list[tuple[str, str]], removed: list[str]
    ) -> None:
        """Edits the sync found on disk (made outside ragdown) go into the history, as `external`; the
        change listeners hear of every document the sync added, updated or removed."""
        try:
            if self.history is not None:
                from ragdown.history.journal import observe_sync
                from ragdown.writes.door import document_lock

                observe_sync(self.history, changed, added, removed, root=self.root, lock=document_lock)
        finally:
            tell_listeners(self._change_listeners, changed, added, removed)

    # -- use ---------------------------------------------------------------------------------------

    def wait_ready(self, timeout: float | None = None) -> bool:
        return self._ready.wait(timeout)

    async def wait_ready_async(self, first_sync_s: float = FIRST_SYNC_WAIT_S) -> None:
        """Wait for the model and the store; then give the first sync a moment (small folders finish in it):
        `first_sync_s` from the first call, shared by every call after it, so a long first index makes
        the first calls wait that once, not every call for as long as it runs. Once the first sync has
        ended, no call waits for a sync."""
        import asyncio  # here, not at the top: `ragdown index` and `search` never need it

        while not self._ready.is_set():
            await asyncio.sleep(0.02)
        if self._first_sync_deadline is None:
            self._first_sync_deadline = time.monotonic() + first_sync_s
        deadline = self._first_sync_deadline
        while (indexer := self.indexer) is not None and not indexer.settled and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    def require_searcher(self) -> Searcher:
        self._ready.wait()
        if self.searcher is None or self.error:
            raise NotReady(self.error or "the index is not open")
        return self.searcher

    def require_store(self) -> IndexStore:
        self._ready.wait()
        if self.store is None:
            raise NotReady(self.error or "the index is not open")
        return self.store

    def search(self, query: str, flt: FileFilter, opts: SearchOptions) -> list[Hit]:
        return self.require_searcher().search(query, flt, opts)

    def _grouped(self, folders: Folders) -> Folders:
        """A caller's `folders` as this index groups documents: with one folder, the docs dir (`stdio`), a
        caller's folders are all of it (None)."""
        return folders if self.folders else None

    def sync(self, full: bool = False, folders: Folders = None) -> dict[str, Any]:
        """Sync now and wait: in the primary directly, in a reader through the primary. With `folders`, only
        those are walked (`full`: re-embedded), and the report counts only them."""
        self._ready.wait()
        folders = self._grouped(folders)
        if self.indexer is not None:
            return self.indexer.request_sync(full, folders).result().as_dict(folders)
        if self.role == "reader":
            return self._forward_sync(full, None, folders)
        raise NotReady(self.error or "the index is not open")

    def sync_written(self, paths: Sequence[str], wait_s: float, folders: Folders = None) -> dict[str, Any]:
        """The sync after a write of these docs-relative paths (a folder: everything under it), and wait:
        they are synced beside any sync of the tree (of `folders`, the writer's, only when given) that runs,
        which is waited for only while short (`Indexer.sync_written`); in the primary directly, in a reader
        through the primary. The report counts only `folders`."""
        self._ready.wait()
        folders = self._grouped(folders)
        indexer = self.indexer
        if indexer is not None:
            return indexer.sync_written(paths, wait_s, folders).as_dict(folders)
        if self.role == "reader":
            return self._forward_sync(False, list(paths), folders)
        raise NotReady(self.error or "the index is not open")

    def _forward_sync(self, full: bool, paths: list[str] | None, folders: Folders) -> dict[str, Any]:
        """A reader's sync, made by the primary. When the primary has gone, this process takes over, or
        waits for the reader that did: a change already on disk is never reported as failed for that."""
        deadline = time.monotonic() + HANDOVER_WAIT_S
        while True:
            try:
                return self.backend.forward_sync(full, paths, folders)
            except TimeoutError as err:  # the primary is there, busy with a sync longer than a reader waits
                raise NotReady(f"the primary's sync did not end in time: {err}") from None
            except OSError as err:
                if self.try_promote() and self.indexer is not None:
                    if paths is not None:
                        wait = self.settings.write_wait
                        return self.indexer.sync_written(paths, wait, folders).as_dict(folders)
                    return self.indexer.request_sync(full, folders).result().as_dict(folders)
                if time.monotonic() >= deadline:
                    raise NotReady(
                        f"the primary went away and no process took over the index: {err}"
                    ) from None
                time.sleep(0.05)
            except RuntimeError as err:
                raise NotReady(str(err)) from None

    async def sync_async(self, full: bool = False, folders: Folders = None) -> dict[str, Any]:
        import asyncio

        return await asyncio.to_thread(self.sync, full, folders)

    def sync_after_write(
        self, changed: Sequence[Path] = (), wait_s: float | None = None, folders: Folders = None
    ) -> WriteSync:
        """The sync a write waits for before it answers, for at most `wait_s` (`RAGDOWN_WRITE_WAIT`, 30 s by
        default: a first index or a vector graph being built can take minutes, longer than MCP clients wait
        for an answer; 0 answers at once).

        `changed`: the paths the write changed (`door.recording`). They are synced first, beside whatever
        sync of the tree runs; the sync of the tree after them (for changes made outside ragdown) is waited
        for only while it is short: a first index, a large backlog, a large document on a slow model never
        hold the write back (`Indexer.sync_written`). Without them (nothing recorded), a sync of the whole
        tree, joined as any other. `folders`: the writer's, the only ones that sync of the tree walks and the
        only ones counted in the report and the note (None: every folder).

        Its report once the index has the change; else a note for the answer saying why it comes first: the
        sync still runs (a large document on a slow model, a first index, a vector graph being built), or
        it failed. The change is on disk either way, and is indexed by the sync still running or the next
        one."""
        rels = docs_relative(self.root, changed)
        wait = self.settings.write_wait if wait_s is None else wait_s

        def sync() -> dict[str, Any]:
            return self.sync_written(rels, wait, folders) if rels else self.sync(folders=folders)

        def still_syncing() -> str:
            progress = self.progress_of(folders)
            where = f" ({progress.describe()})" if progress is not None else ""
            who = "the index" if self.role == "primary" else "the primary"
            return (
                f"{who} is still syncing{where}: the change is on disk and searchable once that sync ends"
                " (ragdown_stats shows how far it is)"
            )

        return wait_for_write_sync(sync, wait, self._closed, still_syncing)

    async def sync_after_write_async(
        self, changed: Sequence[Path] = (), folders: Folders = None
    ) -> WriteSync:
        import asyncio

        return await asyncio.to_thread(self.sync_after_write, changed, None, folders)

    @property
    def syncing(self) -> bool | None:
        return self.indexer.syncing if self.indexer is not None else None

    @property
    def progress(self) -> SyncProgress | None:
        """Where the running sync stands (files read of those it must read), None when none runs."""
        indexer = self.indexer
        return indexer.progress if indexer is not None and indexer.syncing else None

    def progress_of(self, folders: Folders) -> SyncProgress | None:
        """The running sync's progress counted in `folders` (None: all of it); None when none runs, or when
        it covers none of them."""
        progress = self.progress
        if progress is None or not self.folders:
            return progress
        return progress.of(folders)

    def last_sync_of(self, folders: Folders) -> dict[str, Any] | None:
        """The last sync of the tree that covered some of `folders` (None: the last one), counted in them,
        with its time (Unix ms); None before any."""
        scoped = self._grouped(folders)
        last = self.indexer.last_for(scoped) if self.indexer is not None else None
        if last is None:
            return None
        return {**last.as_dict(scoped), "at": round(last.at * 1000)}

    @property
    def sync_error(self) -> str | None:
        """Why the last sync failed (it stopped; what it committed stays), None after one that finished."""
        return self.indexer.last_error if self.indexer is not None else None

    @property
    def last_sync(self) -> SyncReport | None:
        return self.indexer.last_sync if self.indexer is not None else None

    @property
    def embedder_name(self) -> str:
        return self.embedder.name if self.embedder is not None else "none (BM25 only)"

    def set_watch(self, on: bool) -> None:
        """Start or stop watching (the primary only watches)."""
        self._watch = on
        with self._role_lock:
            if self.role != "primary":
                return
            if on and self.watcher is None:
                from ragdown.sync.watcher import Watcher

                self.watcher = Watcher(
                    self.root, lambda: self.indexer.request_sync() if self.indexer else None
                )
                self.watcher.start()
            elif not on and self.watcher is not None:
                self.watcher.stop()
                self.watcher = None

    def switch_embedder(self, embedder: Embedder) -> None:
        """Use an already loaded embedder: the index is dropped and rebuilt with it in the background."""
        with self._role_lock:
            if self.role != "primary" or self.store is None or self.indexer is None:
                raise NotReady("only the primary can change the embedder")
            old = self.indexer
            with old.retiring():
                self.embedder = embedder
                self.embedder_error = None
                self.embedder_notice = None
                self.embedder_notice_reason = None
                self.store.ensure_meta(self._meta())
                self.searcher = Searcher(self.store, embedder, folders=self.folders)
                self.indexer = Indexer(
                    self.root,
                    self.store,
                    embedder,
                    folders=self.folders,
                    observer=self._observe_sync,
                    ignore=self.ignore,
                )
                for fn in self._progress_listeners:
                    self.indexer.add_progress_listener(fn)
        self.indexer.request_sync()

    def close(self) -> None:
        self._closed.set()
        watch = self._primary_watch
        if watch is not None:
            watch.stop(timeout=0)  # hangs up at once; joined below, outside the role lock it may wait for
        # A take-over in flight finishes first (none starts once closed), so what it built is torn down here.
        # Bounded: switch_embedder holds the lock while a running sync finishes.
        locked = self._role_lock.acquire(timeout=10)
        try:
            watch = self._primary_watch  # one started just before `_closed` was set
            if watch is not None:
                watch.stop(timeout=0)
            if self.watcher is not None:
                self.watcher.stop()
            if self.indexer is not None and not self.indexer.shut_down():
                log.warning("a sync did not stop within 10 s; closing the index under it")
            with self._warming_lock:
                warming = list(self._warming)
            for thread in warming:  # a connection closed under a query crashes the process (SQLite's C code)
                thread.join(timeout=30)
            self._lock.release()
            self._retire_store()
            for _, store in self._retired:
                store.close()
            self._retired = []
            if self._history is not None:
                self._history.close()
            if self._unshare_lock is not None:
                self._unshare_lock()
            self.backend.close()
        finally:
            if locked:
                self._role_lock.release()
        if watch is not None:
            watch.stop()
