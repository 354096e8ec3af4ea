"""What a tool call runs against: the server-wide runtime and the scope of the endpoint it came through."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ragdown.access.scope import Scope
from ragdown.core.errors import unavailable
from ragdown.engine.engine import Engine, NotReady
from ragdown.engine.runtime import Runtime
from ragdown.history.journal import Journal
from ragdown.storage.backend import IndexStore
from ragdown.writes.wiki import new_journal

T = TypeVar("T")


@dataclass(frozen=True)
class ToolContext:
    runtime: Runtime
    scope: Scope

    @property
    def engine(self) -> Engine:
        return self.runtime.engine

    @property
    def docs_root(self) -> Path:
        return self.scope.root

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
