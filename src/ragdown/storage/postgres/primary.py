"""One primary per index across machines: the process whose database session holds the index's advisory lock.

The same roles as `storage/sqlite/primary.py` (the engine cannot tell them apart), with PostgreSQL as the arbiter:

- `PgPrimaryLock.try_acquire`: `pg_try_advisory_lock(<index key>)` on a connection of its own, never blocking.
  The lock lives as long as that session: when the process dies (even by SIGKILL) the server ends the
  session and frees the lock; when its machine vanishes, TCP keepalives (set on both sides of the
  connection, about 10 s) do the same. The primary writes the index on that very connection, so a primary
  whose session died can write nothing more; a ping every second notices the loss and the engine steps down.
- Readers `PgPrimaryWatch`: try the lock every `POLL_S` (at once when a primary says goodbye on release), so
  one of them takes over within about a second of the primary's session ending. PostgreSQL grants the lock
  to exactly one.
- Forwarded syncs (`forward_sync`) go through the database, not the network between replicas: a reader sends
  `NOTIFY {"t": "sync", "id", "full", "folders"}` (and `paths`: a write's own, synced alone), the primary
  answers `ack` at once and `done` (the report, or the error) when the sync is over. No `ack` within
  `ACK_WAIT_S` means no primary is there: the engine takes over or waits for the process that does, as with
  SQLite. Replicas need only reach the database.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import psycopg

from ragdown.storage.backend import Folders, GoneHandler, LostHandler, RequestHandler, SyncHandler
from ragdown.storage.records import StoreError
from ragdown.storage.sqlite.primary import folders_json, folders_of, paths_received, paths_to_send


@dataclass
class Waiter:
    """A forwarded sync this replica waits for: acknowledged, then done (with a report or an error)."""

    acked: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    report: dict[str, Any] | None = None
    error: str | None = None


class RoleHost(Protocol):
    """What the role and the forwarded syncs take from the backend (`backend.py`'s `RoleHost`)."""

    lock_key: int
    sync_handler: Callable[[dict[str, Any]], None] | None
    primary_gone: threading.Event

    def connect(self, **options: Any) -> psycopg.Connection[Any]: ...
    def notify(self, message: dict[str, Any], conn: psycopg.Connection[Any] | None = None) -> None: ...
    def expect(self, request_id: str) -> Waiter: ...
    def forget(self, request_id: str) -> None: ...
    def wait_listening(self, timeout: float) -> bool: ...


log = logging.getLogger(__name__)

POLL_S = 1.0  # a reader's try at the lock
PING_S = 1.0  # the primary's check that its session still holds it
ACK_WAIT_S = 3.0
FORWARD_TIMEOUT_S = 600.0
_PATHS_LIMIT = (
    7500  # bytes of a forwarded sync's paths and folders, in a NOTIFY of at most 8,000 (`NOTIFY_LIMIT`)
)
# The lock's session: the server drops it ~10 s after its client's machine stops answering.
_KEEPALIVE = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2, "keepalives_count": 3}
_SERVER_KEEPALIVE = (
    "SET tcp_keepalives_idle = 5",
    "SET tcp_keepalives_interval = 2",
    "SET tcp_keepalives_count = 3",
)


class PgPrimaryLock:
    """The index's advisory lock, held by one session of one process; the primary's write connection."""

    def __init__(self, backend: RoleHost, on_lost: LostHandler) -> None:
        self.backend = backend
        self._on_lost = on_lost
        self._mutex = threading.RLock()  # the connection: a write transaction, a ping, a try
        self._conn: psycopg.Connection[Any] | None = None
        self._held = False
        self._on_sync: SyncHandler | None = None
        self._stop = threading.Event()
        self._pinger: threading.Thread | None = None

    @property
    def held(self) -> bool:
        return self._held

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            conn = self.backend.connect(**_KEEPALIVE)
            for statement in _SERVER_KEEPALIVE:
                conn.execute(statement)
            conn.execute("SET application_name = 'ragdown primary lock'")
            self._conn = conn
        return self._conn

    def try_acquire(self, on_sync: SyncHandler, on_request: RequestHandler | None = None) -> bool:
        """Become the primary if no session holds the lock. Never blocks (a try is one short query)."""
        with self._mutex:
            if self._held:
                return True
            try:
                conn = self._connection()
                row = conn.execute("SELECT pg_try_advisory_lock(%s)", (self.backend.lock_key,)).fetchone()
            except (psycopg.Error, StoreError) as err:
                log.debug("could not try the primary lock: %s", err)
                self._drop_connection()
                return False
            if not (row and row[0]):
                return False
            self._held = True
            self._on_sync = on_sync
            self._stop.clear()
        self.backend.sync_handler = self._answer_sync
        self.backend.primary_gone.clear()
        self._pinger = threading.Thread(target=self._ping, name="ragdown-pg-primary", daemon=True)
        self._pinger.start()
        return True

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The lock's connection, for the primary's write transactions (refused once the lock is gone)."""
        with self._mutex:
            if not self._held or self._conn is None or self._conn.closed:
                raise StoreError("this process is no longer the primary: the index is written by another")
            try:
                yield self._conn
            except (psycopg.OperationalError, psycopg.InterfaceError) as err:
                raise StoreError(f"the primary's database session failed: {err}") from None

    def _ping(self) -> None:
        """Every second, the lock's session is asked to answer; when it cannot, the lock is lost."""
        while not self._stop.wait(PING_S):
            if not self._mutex.acquire(timeout=PING_S):
                continue  # a write transaction is using the connection: it answers for itself
            try:
                if not self._held:
                    return
                conn = self._conn
                if conn is None:
                    lost = True
                else:
                    try:
                        conn.execute("SELECT 1")
                        lost = False
                    except psycopg.Error:
                        lost = True
                if lost:
                    log.error("the primary's database session was lost: another replica may take over")
                    self._held = False
                    self._drop_connection()
            finally:
                self._mutex.release()
            if lost:
                if self.backend.sync_handler == self._answer_sync:
                    self.backend.sync_handler = None
                threading.Thread(target=self._on_lost, name="ragdown-pg-lost", daemon=True).start()
                return

    def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def _answer_sync(self, message: dict[str, Any]) -> None:
        """A reader's forwarded sync (in the listener's thread): acknowledged now, answered when done."""
        on_sync = self._on_sync
        if not self._held or on_sync is None:
            return
        request_id = str(message.get("id"))
        try:
            self.backend.notify({"t": "ack", "id": request_id})
        except (psycopg.Error, StoreError) as err:
            log.warning("could not acknowledge a forwarded sync: %s", err)
            return

        def run() -> None:
            answer: dict[str, Any] = {"t": "done", "id": request_id}
            try:
                answer["report"] = on_sync(
                    bool(message.get("full")), paths_received(message.get("paths")), folders_of(message)
                )
            except Exception as err:
                answer["error"] = str(err) or type(err).__name__
            try:
                self.backend.notify(answer)
            except (psycopg.Error, StoreError) as err:
                log.warning("could not answer a forwarded sync: %s", err)

        threading.Thread(target=run, name="ragdown-pg-forwarded-sync", daemon=True).start()

    def release(self) -> None:
        self._stop.set()
        if self.backend.sync_handler == self._answer_sync:
            self.backend.sync_handler = None
        with self._mutex:
            was_held, self._held = self._held, False
            conn = self._conn
            if was_held and conn is not None and not conn.closed:
                with contextlib.suppress(psycopg.Error):
                    conn.execute("SELECT pg_advisory_unlock(%s)", (self.backend.lock_key,))
            self._drop_connection()
        if self._pinger is not None and self._pinger is not threading.current_thread():
            self._pinger.join(timeout=2)
            self._pinger = None
        if was_held:  # the readers try at once instead of at their next poll
            with contextlib.suppress(psycopg.Error, StoreError):
                self.backend.notify({"t": "bye"})


class PgPrimaryWatch:
    """A reader's watch: a try at the lock every `POLL_S`, or at once when the primary says goodbye."""

    def __init__(self, backend: RoleHost, on_gone: GoneHandler, *, poll_s: float = POLL_S) -> None:
        self.backend = backend
        self._on_gone = on_gone
        self._poll_s = poll_s
        self._stopped = threading.Event()
        self._attached = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def attached(self) -> bool:
        """Watching: the database answers, and another session holds the lock."""
        return self._attached.is_set()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="ragdown-pg-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stopped.set()
        self.backend.primary_gone.set()  # wakes the wait below
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        while not self._stopped.is_set():
            try:
                if self._on_gone():
                    return
                self._attached.set()
            except Exception:
                self._attached.clear()
                log.exception("taking over from the primary failed")
            if self.backend.primary_gone.wait(self._poll_s):
                self.backend.primary_gone.clear()


def forward_sync(
    backend: RoleHost, full: bool, paths: list[str] | None = None, folders: Folders = None
) -> dict[str, Any]:
    """A reader's sync (of `paths` alone, when given; the tree of `folders` only, when given), made by the
    primary through the database; its report, counted in those folders."""
    if not backend.wait_listening(ACK_WAIT_S):
        raise ConnectionError("not listening to the index's database, so no primary can answer")
    request_id = new_request_id()
    waiter = backend.expect(request_id)
    try:
        try:
            names = folders_json(folders)
            message: dict[str, Any] = {"t": "sync", "id": request_id, "full": full, "folders": names}
            sent = paths_to_send(paths, _PATHS_LIMIT - len(json.dumps(names)))
            if sent is not None:
                message["paths"] = sent
            backend.notify(message)
        except psycopg.Error as err:
            raise ConnectionError(f"the index's database cannot be reached: {err}") from None
        if not waiter.acked.wait(ACK_WAIT_S):
            raise ConnectionError(f"no primary answered within {ACK_WAIT_S:.0f} s")
        deadline = time.monotonic() + FORWARD_TIMEOUT_S
        while not waiter.done.wait(1.0):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the primary's sync took longer than {FORWARD_TIMEOUT_S:.0f} s")
        if waiter.error is not None:
            raise RuntimeError(f"the primary could not sync: {waiter.error}")
        return dict(waiter.report or {})
    finally:
        backend.forget(request_id)


def new_request_id() -> str:
    return uuid.uuid4().hex
