"""Where the index lives: `open_backend` chooses PostgreSQL when `RAGDOWN_DATABASE_URL` is set, else the
default `SqliteBackend` (one SQLite file and one unix socket in the data dir). Both implement `backend.py`'s
`Backend`; psycopg is imported only for PostgreSQL."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ragdown.core.config import ConfigError, Mode, Settings
from ragdown.storage.backend import (
    Backend,
    DocumentLock,
    Folders,
    GoneHandler,
    IndexStore,
    LostHandler,
    PrimaryWatch,
    QueryLogStore,
    RoleLock,
    SessionMemory,
)
from ragdown.storage.hook_memory import HookMemory
from ragdown.storage.querylog import QueryLog
from ragdown.storage.sqlite import primary
from ragdown.storage.sqlite.store import Store


class SqliteBackend:
    """The default: one SQLite file and one unix socket in the data dir, on one machine."""

    name = "sqlite"

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir

    def describe(self) -> str:
        return str(self.data_dir)

    def open_store(self, *, writable: bool) -> IndexStore:
        return Store(self.data_dir, writable=writable)

    def primary_lock(self, on_lost: LostHandler) -> RoleLock:
        return primary.PrimaryLock(self.data_dir)  # an flock is never lost while the process lives

    def watch_primary(self, on_gone: GoneHandler) -> PrimaryWatch:
        return primary.PrimaryWatcher(self.data_dir, on_gone)

    def forward_sync(
        self, full: bool, paths: list[str] | None = None, folders: Folders = None
    ) -> dict[str, Any]:
        return primary.forward_sync(self.data_dir, full, paths, folders)

    def hook_memory(self) -> SessionMemory:
        return HookMemory()

    def query_log(self) -> QueryLogStore:
        return QueryLog(self.data_dir)

    def document_lock(self) -> DocumentLock | None:
        return None

    def close(self) -> None:
        return None


def open_backend(settings: Settings, root: Path, data_dir: Path, mode: Mode) -> Backend:
    """PostgreSQL when `RAGDOWN_DATABASE_URL` is set, else SQLite in `data_dir`."""
    if settings.database_url:
        try:
            from ragdown.storage.postgres.backend import PostgresBackend
        except ImportError as err:
            raise ConfigError(
                f"RAGDOWN_DATABASE_URL is set, but PostgreSQL support is not installed ({err}): "
                "pip install 'ragdown[postgres]'"
            ) from None
        from ragdown.storage.postgres.hnsw import HNSW_KEYS, HnswSettings

        # a setting not set is chosen from the index's size (`HnswSettings`)
        hnsw = HnswSettings(
            *(getattr(settings, key) if key in settings.env_set else None for key in HNSW_KEYS)
        )
        return PostgresBackend(settings.database_url, index_name(settings, root, mode), root, hnsw)
    return SqliteBackend(data_dir)


def index_name(settings: Settings, root: Path, mode: Mode) -> str:
    """The index's name in the database: `RAGDOWN_INDEX_ID`, else a hash of the mode and the docs dir's path.

    Replicas share an index when they find the same name: mount the docs at the same path on every machine,
    or give them all the same `RAGDOWN_INDEX_ID`."""
    if settings.index_id:
        return settings.index_id
    return hashlib.sha256(f"{mode}:{root}".encode()).hexdigest()[:16]
