"""The PostgreSQL backend (`RAGDOWN_DATABASE_URL`): one index's database, the role, and the shared tables.

Imported only when the URL is set (it needs the `ragdown[postgres]` extra: psycopg 3, psycopg-pool,
pgvector). The index of one docs dir is one schema, `ragdown_<index id>` (`location.index_name`).
`PostgresBackend` holds what every process of the index shares: the connection pool, the schema's
bootstrap, the advisory locks (the primary's role in `storage/postgres/primary.py`, one per document for writes), the
generation and the `LISTEN` connection (`_Listener`), and the tables that are not the index:

- `hook_sessions`, `hook_seen` (`PgHookMemory`) and `query_log` (`PgQueryLog`): the hook's memory and the
  query log, shared by the replicas.

Every write transaction of the index (`storage/postgres/store.py`) bumps `generation` and sends `NOTIFY ragdown_<index id>`
with it; every replica LISTENs, so their caches follow without polling. The channel also carries the
forwarded syncs of `storage/postgres/primary.py`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from ragdown.core.errors import unavailable
from ragdown.storage.backend import (
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
from ragdown.storage.hook_memory import HOOK_SESSIONS
from ragdown.storage.postgres import hnsw as pghnsw
from ragdown.storage.postgres import tsvectors as pgsearch
from ragdown.storage.postgres.primary import Waiter
from ragdown.storage.postgres.store import PgStore
from ragdown.storage.querylog import parse_entries, summarise
from ragdown.storage.records import StoreError

if TYPE_CHECKING:
    from ragdown.storage.postgres.primary import PgPrimaryLock

log = logging.getLogger(__name__)

POOL_SIZE = 8
CONNECT_TIMEOUT_S = 10
POOL_WAIT_S = 30.0  # for a connection of the pool, while the database answers (all of them may be busy)
DOWN_WAIT_S = 0.1  # the same once it was found unreachable (the pool holds none), until one is made again
QUERY_LOG_KEEP = 50_000  # entries kept (about the SQLite log's 10 MB and its rotation)
NOTIFY_LIMIT = 7900  # a NOTIFY payload must stay under 8,000 bytes


_SHARED_SCHEMA = """
CREATE TABLE IF NOT EXISTS hook_sessions(key text PRIMARY KEY, at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS hook_seen(
  key text NOT NULL REFERENCES hook_sessions(key) ON DELETE CASCADE, chunk text NOT NULL, PRIMARY KEY (key, chunk)
);
CREATE TABLE IF NOT EXISTS query_log(id bigserial PRIMARY KEY, entry text NOT NULL);
"""


def _key64(*parts: str) -> int:
    """A signed 64-bit advisory lock key."""
    digest = hashlib.sha256("\x00".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _key32(*parts: str) -> int:
    digest = hashlib.sha256("\x00".join(parts).encode()).digest()
    return int.from_bytes(digest[:4], "big", signed=True)


def redact(url: str) -> str:
    """The URL without its password, for logs and status."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[-1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc}" if user else netloc))


class PostgresBackend:
    """One index in one PostgreSQL database: the pool, the LISTEN connection, the role and the shared tables."""

    name = "postgres"

    def __init__(self, url: str, index: str, root: Path, hnsw: pghnsw.HnswSettings | None = None) -> None:
        self.url = url
        self.index = index
        self.root = root
        self.hnsw = (
            hnsw or pghnsw.HnswSettings()
        )  # the graph's build (the primary's) and this replica's ef_search
        self.schema = f"ragdown_{index}"
        self.channel = f"ragdown_{index}"
        self.lock_key = _key64("ragdown primary", index)  # the primary's role (`storage/postgres/primary.py`)
        self.schema_lock_key = _key64("ragdown schema", index)  # one process sets the tables up at a time
        self.graph_lock_key = _key64("ragdown hnsw", index)  # one process builds the HNSW graph at a time
        self.document_class = _key32("ragdown document", index)
        self._ready_lock = threading.Lock()
        self._pool: ConnectionPool[psycopg.Connection[Any]] | None = None
        self._down = False  # the database was found unreachable and no connection was made or used since
        self._search_path = ""
        self._listener: _Listener | None = None
        self._closed = False
        self._generation = -1
        self._gen_lock = threading.Lock()
        self._waiters: dict[str, Waiter] = {}
        self._waiters_lock = threading.Lock()
        self.sync_handler: Callable[[dict[str, Any]], None] | None = None  # set by the primary's lock
        self.primary_gone = threading.Event()  # a primary said goodbye: watchers try at once
        self.role: PgPrimaryLock | None = None  # this process's try at the primary's role

    # -- setting up ----------------------------------------------------------------------------------

    def describe(self) -> str:
        return f"{redact(self.url)} (schema {self.schema})"

    def connect(self, **options: Any) -> psycopg.Connection[Any]:
        """A connection of its own (the role lock, the listener), with the index's search path."""
        self._ensure_ready()
        try:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, **options)
        except psycopg.Error as err:
            raise StoreError(f"cannot reach the database {redact(self.url)}: {err}") from None
        self._configure(conn)
        return conn

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.SQL(self._search_path)))
        pghnsw.use_ef_search(conn, self.hnsw.ef_search_for(0))  # each search sets its own (`PgDense`)
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        register_vector(conn)
        self._down = False  # a new connection: the database answers again

    @property
    def pool(self) -> ConnectionPool[psycopg.Connection[Any]]:
        self._ensure_ready()
        assert self._pool is not None
        return self._pool

    @contextlib.contextmanager
    def pooled(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection of the pool for one use: the only way the backend and the store take one.

        Every `psycopg.OperationalError` or `InterfaceError` raised while it is used (a database stopped
        or lost, a session ended by the server, no connection within the wait: psycopg_pool's
        `PoolTimeout`) comes out as a `StoreError`, which every face says as `unavailable` (HTTP 503, an
        error result), never as an internal error. Once the database was found unreachable, callers wait
        `DOWN_WAIT_S` for a connection instead of `POOL_WAIT_S`, until one is made or used again: a
        stopped database answers at once, not after half a minute per request."""
        pool = self.pool
        wait = DOWN_WAIT_S if self._down else POOL_WAIT_S
        conn: psycopg.Connection[Any] | None = None
        try:
            with pool.connection(timeout=wait) as conn:
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError) as err:
            if (conn is not None and conn.closed) or isinstance(err, psycopg.InterfaceError):
                self._down = True  # the session is gone
            elif isinstance(err, PoolTimeout) and not pool.get_stats().get("pool_size"):
                self._down = True  # no connection could be made (a pool of busy ones is only busy)
            raise StoreError(f"the index's database cannot be reached: {_first_line(err)}") from None
        self._down = False

    def _ensure_ready(self) -> None:
        if self._pool is not None:
            return
        with self._ready_lock:
            if self._pool is not None:
                return
            if self._closed:
                raise StoreError("the index is closed")
            self._bootstrap()
            self._pool = ConnectionPool(
                self.url,
                min_size=1,
                max_size=POOL_SIZE,
                kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
                configure=self._configure,
                timeout=30,
                name=f"ragdown-{self.index}",
                open=True,
            )
            self._listener = _Listener(self)
            self._listener.start()

    def _bootstrap(self) -> None:
        """pgvector, the schema and the shared tables, made by whichever process comes first."""
        try:
            with (
                psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as conn,
                conn.transaction(),
            ):
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_key64("ragdown setup"),))
                row = conn.execute(
                    "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
                    " WHERE e.extname = 'vector'"
                ).fetchone()
                if row is None:
                    try:
                        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                    except psycopg.Error as err:
                        raise StoreError(
                            f"the database has no pgvector extension and ragdown's user cannot create it "
                            f"({err.diag.message_primary}): run CREATE EXTENSION vector once as its owner"
                        ) from None
                    row = conn.execute(
                        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n"
                        " ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
                    ).fetchone()
                assert row is not None
                extension_schema = str(row[0])
                conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema)))
                conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(self.schema)))
                conn.execute(_SHARED_SCHEMA)
        except psycopg.Error as err:
            raise StoreError(f"cannot open the index in {redact(self.url)}: {err}") from None
        self._search_path = (
            sql.SQL(", ")
            .join([sql.Identifier(self.schema), sql.Identifier(extension_schema)])
            .as_string(None)
        )

    # -- the backend interface -----------------------------------------------------------------------

    def open_store(self, *, writable: bool) -> IndexStore:
        return PgStore(self, writable=writable)

    def primary_lock(self, on_lost: LostHandler) -> RoleLock:
        from ragdown.storage.postgres.primary import PgPrimaryLock

        lock = PgPrimaryLock(self, on_lost)
        self.role = lock
        return lock

    def watch_primary(self, on_gone: GoneHandler) -> PrimaryWatch:
        from ragdown.storage.postgres.primary import PgPrimaryWatch

        return PgPrimaryWatch(self, on_gone)

    def forward_sync(
        self, full: bool, paths: list[str] | None = None, folders: Folders = None
    ) -> dict[str, Any]:
        from ragdown.storage.postgres.primary import forward_sync

        return forward_sync(self, full, paths, folders)

    def hook_memory(self) -> SessionMemory:
        return PgHookMemory(self)

    def query_log(self) -> QueryLogStore:
        return PgQueryLog(self)

    def document_lock(self) -> DocumentLock | None:
        return self._document_lock

    @contextlib.contextmanager
    def _document_lock(self, path: Path) -> Iterator[None]:
        """An advisory lock for one document, held in a transaction for the door's read-check-write."""
        try:
            rel = path.relative_to(self.root).as_posix()
        except ValueError:
            rel = str(path)
        try:
            with self.pooled() as conn, conn.transaction():
                try:
                    conn.execute("SET LOCAL lock_timeout = '30s'")
                    conn.execute(
                        "SELECT pg_advisory_xact_lock(%s, %s)", (self.document_class, _key32("doc", rel))
                    )
                except psycopg.errors.LockNotAvailable:
                    raise unavailable(
                        f"{rel} is being written by another replica for 30 s: try again"
                    ) from None
                yield
        except StoreError as err:
            raise unavailable(f"{err} (to lock {rel})") from None

    def close(self) -> None:
        with self._ready_lock:
            self._closed = True
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.stop()
        with self._ready_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close(timeout=5)

    # -- generation and messages ---------------------------------------------------------------------

    def generation(self) -> int:
        """The index's generation: as the last NOTIFY said, or read when the listener is not listening."""
        listener = self._listener
        if listener is not None and listener.listening.is_set() and self._generation >= 0:
            return self._generation
        return self.read_generation()

    def read_generation(self) -> int:
        try:
            with self.pooled() as conn:
                row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        except psycopg.errors.UndefinedTable:
            return 0
        value = int(row[0]) if row else 0
        self.saw_generation(value)
        return value

    def saw_generation(self, value: int) -> None:
        with self._gen_lock:
            if value > self._generation:
                self._generation = value

    def reset_generation(self, value: int) -> None:
        with self._gen_lock:
            self._generation = value

    def notify(self, message: dict[str, Any], conn: psycopg.Connection[Any] | None = None) -> None:
        payload = json.dumps(message, separators=(",", ":"))
        if len(payload.encode()) > NOTIFY_LIMIT:
            payload = json.dumps({k: v for k, v in message.items() if k != "report"} | {"error": "too long"})
        if conn is not None:
            conn.execute("SELECT pg_notify(%s, %s)", (self.channel, payload))
            return
        with self.pooled() as own:
            own.execute("SELECT pg_notify(%s, %s)", (self.channel, payload))

    def expect(self, request_id: str) -> Waiter:
        waiter = Waiter()
        with self._waiters_lock:
            self._waiters[request_id] = waiter
        return waiter

    def forget(self, request_id: str) -> None:
        with self._waiters_lock:
            self._waiters.pop(request_id, None)

    def wait_listening(self, timeout: float) -> bool:
        self._ensure_ready()
        listener = self._listener
        return listener is not None and listener.listening.wait(timeout)

    def dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("t")
        if kind == "gen":
            self.saw_generation(int(message.get("g", 0)))
        elif kind in ("ack", "done"):
            with self._waiters_lock:
                waiter = self._waiters.get(str(message.get("id")))
            if waiter is None:
                return
            if kind == "ack":
                waiter.acked.set()
            else:
                waiter.report = message.get("report")
                waiter.error = message.get("error")
                waiter.acked.set()
                waiter.done.set()
        elif kind == "sync":
            handler = self.sync_handler
            if handler is not None:
                handler(message)
        elif kind == "bye":
            self.primary_gone.set()


class _Listener:
    """The LISTEN connection of one replica: generations, forwarded syncs and their answers, goodbyes."""

    def __init__(self, backend: PostgresBackend) -> None:
        self.backend = backend
        self.listening = threading.Event()
        self._stop = threading.Event()
        self._conn: psycopg.Connection[Any] | None = None
        self._thread = threading.Thread(target=self._run, name="ragdown-pg-listen", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        pool = self.backend._pool
        if self.listening.is_set() and pool is not None:  # wakes the listener at once (the others ignore it)
            with contextlib.suppress(Exception), pool.connection(timeout=2) as conn:
                conn.execute("SELECT pg_notify(%s, %s)", (self.backend.channel, json.dumps({"t": "wake"})))
        self._thread.join(timeout=3)

    def _run(self) -> None:
        pause = 0.2
        while not self._stop.is_set():
            try:
                with psycopg.connect(
                    self.backend.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
                ) as conn:
                    self._conn = conn
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.backend.channel)))
                    # Listening before reading: no generation committed from here on is missed.
                    self._read_generation(conn)
                    self.listening.set()
                    pause = 0.2
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=1.0):
                            if self._stop.is_set():
                                break
                            self._handle(note.payload)
            except Exception as err:
                if self._stop.is_set():
                    break
                log.warning("listening to %s failed (%s): reconnecting", self.backend.describe(), err)
            finally:
                self.listening.clear()
                self._conn = None
            self._stop.wait(pause)
            pause = min(pause * 2, 5.0)

    def _read_generation(self, conn: psycopg.Connection[Any]) -> None:
        try:
            row = conn.execute(
                sql.SQL("SELECT value FROM {}.meta WHERE key = 'generation'").format(
                    sql.Identifier(self.backend.schema)
                )
            ).fetchone()
        except psycopg.errors.UndefinedTable:
            row = None
        self.backend.reset_generation(int(row[0]) if row else 0)

    def _handle(self, payload: str) -> None:
        try:
            message = json.loads(payload)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        try:
            self.backend.dispatch(message)
        except Exception:  # one bad message must not stop the listening
            log.exception("handling a notification failed")


class PgHookMemory:
    """The hook's session memory in the database: every replica knows what a session was given."""

    def __init__(self, backend: PostgresBackend, capacity: int = HOOK_SESSIONS) -> None:
        self.backend = backend
        self.capacity = capacity

    @staticmethod
    def _key(key: str) -> str:
        """The (scope, session) key as stored: its hash (the key holds a NUL, which text cannot)."""
        return hashlib.sha256(key.encode(errors="surrogatepass")).hexdigest()

    def seen(self, key: str) -> set[str]:
        key = self._key(key)
        try:
            with self.backend.pooled() as conn:
                rows = conn.execute("SELECT chunk FROM hook_seen WHERE key = %s", (key,)).fetchall()
                if rows:
                    conn.execute("UPDATE hook_sessions SET at = now() WHERE key = %s", (key,))
        except (psycopg.Error, StoreError) as err:
            log.warning("hook memory unavailable: %s", err)
            return set()
        return {str(r[0]) for r in rows}

    def add(self, key: str, chunk_keys: list[str]) -> None:
        key = self._key(key)
        try:
            with self.backend.pooled() as conn, conn.transaction():
                conn.execute(
                    "INSERT INTO hook_sessions(key) VALUES (%s) ON CONFLICT (key) DO UPDATE SET at = now()",
                    (key,),
                )
                conn.execute(
                    "INSERT INTO hook_seen(key, chunk) SELECT %s, unnest(%s::text[]) ON CONFLICT DO NOTHING",
                    (key, list(chunk_keys)),
                )
                conn.execute(
                    "DELETE FROM hook_sessions WHERE key IN (SELECT key FROM hook_sessions ORDER BY at DESC"
                    " OFFSET %s)",
                    (self.capacity,),
                )
        except (psycopg.Error, StoreError) as err:
            log.warning("hook memory unavailable: %s", err)

    def reset(self, key: str) -> None:
        key = self._key(key)
        try:
            with self.backend.pooled() as conn:
                conn.execute("DELETE FROM hook_sessions WHERE key = %s", (key,))
        except (psycopg.Error, StoreError) as err:
            log.warning("hook memory unavailable: %s", err)


class PgQueryLog:
    """The query log in the database, one row per entry, the last `QUERY_LOG_KEEP` kept."""

    def __init__(self, backend: PostgresBackend, keep: int = QUERY_LOG_KEEP) -> None:
        self.backend = backend
        self.keep = keep
        self._count = 0

    def record(self, kind: str, **fields: Any) -> None:
        entry = {"at": round(time.time(), 3), "kind": kind, **fields}
        line = pgsearch.clean(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
        try:
            with self.backend.pooled() as conn:
                row = conn.execute(
                    "INSERT INTO query_log(entry) VALUES (%s) RETURNING id", (line,)
                ).fetchone()
                self._count += 1
                if row is not None and self._count % 500 == 0:
                    conn.execute("DELETE FROM query_log WHERE id <= %s", (int(row[0]) - self.keep,))
        except (psycopg.Error, StoreError) as err:
            log.warning("could not write the query log: %s", err)

    def clear(self) -> None:
        try:
            with self.backend.pooled() as conn:
                conn.execute("DELETE FROM query_log")
        except (psycopg.Error, StoreError) as err:
            raise unavailable(f"the query log cannot be cleared: {err}") from None

    def entries(self) -> list[dict[str, Any]]:
        try:
            with self.backend.pooled() as conn:
                rows = conn.execute(
                    "SELECT entry FROM (SELECT id, entry FROM query_log ORDER BY id DESC LIMIT %s) e ORDER BY id",
                    (self.keep,),
                ).fetchall()
        except (psycopg.Error, StoreError) as err:
            raise unavailable(f"the query log cannot be read: {err}") from None
        return parse_entries(line for (line,) in rows)

    def summary(self, min_score: float) -> dict[str, Any]:
        return summarise(self.entries(), min_score)


def _first_line(err: BaseException) -> str:
    """An error's first line (a lost connection's libpq message goes on for three)."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
