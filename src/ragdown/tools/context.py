"""What a tool call runs against: the server-wide runtime and the scope of the endpoint it came through."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ragdown.access.caller import Access
from ragdown.access.scope import Scope
from ragdown.core.errors import unavailable
from ragdown.core.paths import without_server_paths
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.engine.status import NotReady, WriteSync
from ragdown.history.journal import Journal
from ragdown.storage.backend import Folders, IndexStore
from ragdown.writes.wiki import new_journal

T = TypeVar("T")


@dataclass(frozen=True)
class ToolContext:
    runtime: Runtime
    scope: Scope
    # The HTTP caller (`access.caller.Access`); None: stdio, the local user, who owns the machine. A key
    # holder learns what its folders hold and nothing else: no absolute path of the server (`location`,
    # `redact`), no count of another folder (syncs and their reports cover `folders`).
    access: Access | None = None
    # The server's address as this call's client reached it (`RAGDOWN_PUBLIC_URL`, else the request's scheme
    # and Host), for links into the web UI; None under stdio.
    base_url: str | None = None

    @property
    def engine(self) -> Engine:
        return self.runtime.engine

    @property
    def docs_root(self) -> Path:
        return self.scope.root

    @property
    def folders(self) -> Folders:
        """The folders this call's syncs walk and its reports count (`Scope.index_folders`)."""
        return self.scope.index_folders

    @property
    def shows_server_paths(self) -> bool:
        """Whether this caller may see the server's absolute paths: the local stdio user and the admin (who
        set them, `RAGDOWN_DOCS_DIR`), never a key."""
        return self.access is None or self.access.is_admin

    def location(self, path: Path) -> str:
        """Where `path` (under the docs dir) is, as this caller may be told: its absolute path, or for a key
        the folder-named path under the docs dir (`work/notes`, `.` for the docs dir itself)."""
        if self.shows_server_paths:
            return str(path)
        try:
            return path.relative_to(self.docs_root).as_posix()
        except ValueError:
            return "."

    def redact(self, text: str) -> str:
        """An error's words as this caller may read them (`paths.without_server_paths` for a key)."""
        if self.shows_server_paths:
            return text
        return without_server_paths(text, str(self.docs_root), str(self.engine.data_dir), str(Path.home()))

    def sync(self, full: bool = False) -> dict[str, Any]:
        """Sync this call's folders now and wait (a key's reindex touches nothing else); their report."""
        return self.engine.sync(full, self.folders)

    def sync_after_write(self, changed: Sequence[Path] = ()) -> WriteSync:
        """The sync a write of `changed` (`door.recording`) waits for: those paths, then the tree of this
        call's folders, reported in them (`Engine.sync_after_write`)."""
        return self._told(self.engine.sync_after_write(changed, folders=self.folders))

    async def sync_after_write_async(self, changed: Sequence[Path] = ()) -> WriteSync:
        return self._told(await self.engine.sync_after_write_async(changed, self.folders))

    def _told(self, done: WriteSync) -> WriteSync:
        return WriteSync(done.report, self.redact(done.pending)) if done.pending else done

    async def ready(self) -> None:
        """Tool calls wait for the model and the store; the handshake never does."""
        await self.engine.wait_ready_async()

    def store(self) -> IndexStore:
        try:
            return self.engine.require_store()
        except NotReady as err:
            raise unavailable(f"the index is not available: {err}") from None

    def journal(self, who: str, session: str | None = None) -> Journal:
        """How this call's writes are recorded: in the version history (when on), followed by the folder's
        index.md upkeep (when its settings ask for it)."""
        journal = new_journal(self.engine.history, self.docs_root, self.scope.folder_dir, who, session)
        journal.view = self.scope.view  # its notes name paths as the caller does
        return journal

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Blocking work (SQLite, embedding, disk) off the event loop."""
        return await asyncio.to_thread(fn, *args)
