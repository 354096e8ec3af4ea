"""The index backend's interface: what sync, search and the tools use, wherever the index lives.

Two implementations, chosen by `storage/location.py`'s `open_backend` from the settings:

- SQLite (the default): `storage/sqlite/store.py`'s `Store` (one file in the data dir, FTS5, the dense side a numpy
  matrix per process, `storage/sqlite/vectors.py`), the flock + unix socket primary of `storage/sqlite/primary.py`, hook
  memory in the process and the query log as a JSON-lines file in the data dir.
- PostgreSQL (`RAGDOWN_DATABASE_URL=postgresql://…`, the `ragdown[postgres]` extra): `storage/postgres/backend.py`
  and its store `storage/postgres/store.py` (pgvector HNSW, full-text search in the database), the advisory-lock primary of `storage/postgres/primary.py`
  shared by any number of `ragdown serve` replicas on any number of machines, hook memory and the query log
  in the database, and a cluster-wide lock per document around the write door's read-check-write.
  psycopg is imported only then.

Nothing outside the backends asks which one is in use: they call the methods below.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from ragdown.documents.tree import Node
from ragdown.embedders.base import Vectors
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.query_sql import Cond, SortKey
from ragdown.storage.records import ChunkRecord, FileRecord, FileState, IndexMeta, LinkRow, PendingFile

# Folders as the index groups documents (`walk.folder_of`: `serve`'s top-level directories); None: every one.
Folders = frozenset[str] | None
# A forwarded sync: `full`; the docs-relative paths a reader's write changed, synced alone (None: a sync of
# the tree); the folders that sync of the tree covers and its report counts (None: every one). The report.
SyncHandler = Callable[[bool, list[str] | None, Folders], dict[str, Any]]
RequestHandler = Callable[[dict[str, Any]], dict[str, Any]]
GoneHandler = Callable[[], bool]
LostHandler = Callable[[], None]
DocumentLock = Callable[[Path], contextlib.AbstractContextManager[None]]


class DenseIndex(Protocol):
    """Nearest chunks by cosine (vectors are unit length), under the same file filter as everything else."""

    def search(self, query: Vectors, k: int, flt: FileFilter | None = None) -> list[tuple[int, float]]:
        """The `k` chunks closest to `query`, best first, as (chunk id, cosine); `None`: every file."""
        ...

    def cosine(self, query: Vectors, chunk_ids: list[int]) -> dict[int, float]:
        """The exact cosine of `query` with each given chunk that has a vector."""
        ...

    def mean_vector(self, chunk_ids: list[int]) -> Vectors | None:
        """The unit-length mean of these chunks' vectors (a section's or document's own), None without any."""
        ...

    def warm(self) -> None:
        """Load now what a search reads, so the first search does not pay for it (a no-op where nothing is)."""
        ...


class IndexStore(Protocol):
    """The index: files, chunks, vectors, section trees, skipped files, meta and a generation counter.

    A writable store belongs to the primary; a reader's store refuses writes. Every write transaction
    replaces whole files and bumps `generation()`, which caches (supersession, aliases, links) are keyed by.
    """

    writable: bool

    # -- meta ---------------------------------------------------------------------------------------
    def read_meta(self) -> dict[str, str]: ...
    def ensure_meta(self, meta: IndexMeta) -> bool: ...
    def check_meta(self, meta: IndexMeta) -> None: ...
    def generation(self) -> int: ...
    def read_snapshot(self) -> contextlib.AbstractContextManager[Any]:
        """One read transaction: every read of this thread inside it sees the same committed state."""
        ...

    # -- writes (primary) -----------------------------------------------------------------------------
    def loading(self, files: int, step: Callable[[str], None]) -> contextlib.AbstractContextManager[None]:
        """Around one sync's writes of `files` changed files: a store may put index upkeep off to the end
        (PostgreSQL builds its HNSW graph once after a large load), naming such a step through `step`."""
        ...

    def write_files(self, pending: Sequence[PendingFile]) -> int: ...
    def touch_file(self, path: str, size: int, stat_mtime_ns: int) -> None: ...
    def remove_files(self, paths: Iterable[str]) -> int: ...
    def clear(self) -> None: ...
    def mark_skipped(self, path: str, size: int, stat_mtime_ns: int, reason: str) -> None: ...
    def prune_deleted_log(self) -> None: ...

    # -- reads ----------------------------------------------------------------------------------------
    def file_states(self) -> dict[str, FileState]: ...
    def file_stats(self) -> set[tuple[str, int, int]]: ...
    def file_states_of(self, paths: Sequence[str]) -> dict[str, FileState]:
        """`file_states` of the files at `paths` and under them (a path may name a directory)."""
        ...

    def skipped_states(self) -> dict[str, tuple[int, int, str]]: ...
    def skipped_files(self, flt: FileFilter) -> list[tuple[str, str]]: ...
    def counts(self, flt: FileFilter) -> tuple[int, int]: ...
    def folder_counts(self) -> dict[str, tuple[int, int]]: ...
    def get_file(self, path: str) -> FileRecord | None: ...
    def list_files(
        self, flt: FileFilter, *, sort: str = "path", limit: int | None = None
    ) -> list[FileRecord]: ...
    def count_files(self, flt: FileFilter) -> int: ...
    def all_files(self) -> list[FileRecord]: ...
    def superseded_by(self) -> dict[str, list[str]]: ...
    def file_ids(self, flt: FileFilter) -> list[int]: ...
    def chunks_by_id(self, ids: Sequence[int]) -> dict[int, ChunkRecord]: ...
    def tree_of(self, path: str) -> Node | None: ...
    def links_from(self, path: str) -> list[LinkRow]:
        """The links written in the document at `path` (docs-relative), in line order."""
        ...

    def links_named(self, folder: str, keys: Sequence[str]) -> list[LinkRow]:
        """The links in `folder`'s documents whose target has one of these name keys (`documents/linkkey.py`)."""
        ...

    def document_tokens(self, flt: FileFilter) -> dict[str, int]: ...
    def chunk_ids_of_files(self, file_ids: Sequence[int]) -> list[tuple[int, int]]: ...
    def file_chunk_counts(self, flt: FileFilter) -> list[tuple[str, int]]: ...

    def query_documents(
        self, where: Cond, sort: tuple[SortKey, ...], limit: int, offset: int
    ) -> tuple[int, list[FileRecord], dict[int, dict[str, str]]]:
        """`ragdown_query`: how many files match, one page of them in order, and each page file's
        properties (case-folded key -> its value as JSON)."""
        ...

    # -- retrieval ------------------------------------------------------------------------------------
    def bm25(
        self, match: str, flt: FileFilter, limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        """(chunk id, score, higher is better) for the words of `match` under the filter.

        `match` is the query language of `search.query.fts_match`: double-quoted terms (`""` escapes a
        quote) joined by ` OR `; a term of several words is a phrase. `weights`: breadcrumb, text, aliases."""
        ...

    def substrings(
        self, match: str, flt: FileFilter, limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        """Like `bm25`, for the substrings of `search.query.substring_match` (three characters or more)."""
        ...

    def dense_index(self, dim: int) -> DenseIndex:
        """The dense retriever over this store's vectors of `dim` dimensions (one per searcher)."""
        ...

    def close(self) -> None: ...


class RoleLock(Protocol):
    """Who is the primary of an index: at most one holder among every process that opens it."""

    @property
    def held(self) -> bool: ...

    def try_acquire(self, on_sync: SyncHandler, on_request: RequestHandler | None = None) -> bool:
        """Become the primary if no live one exists (never blocks); serve forwarded syncs with `on_sync`
        (and, where the lock has a local socket, the CLI's other requests with `on_request`)."""
        ...

    def release(self) -> None: ...


class PrimaryWatch(Protocol):
    """A reader's watch on the primary: calls `on_gone` when it may be gone (True from it ends the watch)."""

    @property
    def attached(self) -> bool: ...

    @property
    def running(self) -> bool: ...

    def start(self) -> None: ...

    def stop(self, timeout: float = 2.0) -> None: ...


class SessionMemory(Protocol):
    """The hook's memory: the chunks each (scope, session) was given (`search.hook.HookMemory`)."""

    def seen(self, key: str) -> set[str]: ...
    def add(self, key: str, chunk_keys: list[str]) -> None: ...
    def reset(self, key: str) -> None: ...


class QueryLogStore(Protocol):
    """The query log (`querylog.QueryLog`): one entry per search, hook call and read."""

    def record(self, kind: str, **fields: Any) -> None: ...
    def clear(self) -> None: ...
    def entries(self) -> list[dict[str, Any]]: ...
    def summary(self, min_score: float) -> dict[str, Any]: ...


class Backend(Protocol):
    """Everything an engine needs from where its index lives."""

    name: str  # "sqlite" | "postgres"

    def describe(self) -> str:
        """Where the index is, for logs and status (never a password)."""
        ...

    def open_store(self, *, writable: bool) -> IndexStore: ...

    def primary_lock(self, on_lost: LostHandler) -> RoleLock:
        """The role lock; `on_lost` is called (in another thread) if a held lock is lost without `release`."""
        ...

    def watch_primary(self, on_gone: GoneHandler) -> PrimaryWatch: ...

    def forward_sync(
        self, full: bool, paths: list[str] | None = None, folders: Folders = None
    ) -> dict[str, Any]:
        """A reader's sync, made by the primary: its report, counted in `folders` when given. With `paths`
        (docs-relative) of those alone, beside any sync of the tree the primary runs; a primary that does not
        know them, or paths too many to send, syncs the tree. The sync of the tree covers `folders` only
        (None: every folder). OSError when no primary answers (take over or wait), RuntimeError when the
        primary answered that it could not sync."""
        ...

    def hook_memory(self) -> SessionMemory: ...

    def query_log(self) -> QueryLogStore: ...

    def document_lock(self) -> DocumentLock | None:
        """A lock per document shared by every process of the index (None: the local file lock suffices)."""
        ...

    def close(self) -> None: ...
