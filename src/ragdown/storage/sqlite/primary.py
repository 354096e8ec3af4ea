"""One primary per index: the process that binds `<data dir>/primary.sock` indexes and watches.

Holding the socket is the lock; an `flock` on `primary.lock` guards the take-over so two processes can
never both remove a stale socket and bind a new one. The kernel drops the flock when a primary dies, so
a crashed primary's stale socket is taken over by the next process that tries. Readers forward sync
requests to the primary as one line of JSON, `{"op": "sync", "full": false, "folders": null}` (`folders`:
the names a sync covers, null for every folder; with `"paths"`, the docs-relative paths a reader's write
changed, synced alone), and read one line back.

A reader also keeps one connection open with `{"op": "watch"}` (`PrimaryWatcher`): the primary answers
`{"ok": true}` at once and then nothing, holding the connection until it releases the lock or dies, when the
kernel closes it. So the reader reads EOF the moment the primary goes and can take over at once; the flock
still decides which of several readers does.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_MAX_SOCKET_PATH = 100  # sun_path is 104-108 bytes; longer paths move to the temp dir
_FORWARD_TIMEOUT_S = 600.0
_REQUEST_LIMIT = 65536  # bytes of a request's line the primary reads
# How long a watcher keeps trying to attach to a primary (or take over) after losing its primary, before it
# leaves the take-over to the engine's periodic loop.
WATCH_RETRY_S = 5.0
# Between tries: 2 ms, doubling to 50 ms. The first try often comes before a killed primary's flock is
# dropped (its socket's EOF can arrive first), or before the reader that won has bound the socket.
_WATCH_FIRST_PAUSE_S = 0.002
_WATCH_PAUSE_S = 0.05
_WATCH_CONNECT_TIMEOUT_S = 2.0

Folders = frozenset[str] | None  # the folders a sync covers; None: every one (`backend.Folders`)
SyncHandler = Callable[[bool, list[str] | None, Folders], dict[str, Any]]
# Every other op (the CLI's `search` and `index`, `tools/cli_answers.py`): the request in, the reply out.
RequestHandler = Callable[[dict[str, Any]], dict[str, Any]]


def socket_path(data_dir: Path) -> Path:
    path = data_dir / "primary.sock"
    if len(os.fsencode(str(path))) <= _MAX_SOCKET_PATH:
        return path
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"ragdown-{digest}.sock"


class PrimaryLock:
    """Try to become the primary for a data dir; serve forwarded sync requests while holding it."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.sock_path = socket_path(data_dir)
        self._lock_path = data_dir / "primary.lock"
        self._lock_fd: int | None = None
        self._server: socket.socket | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._watch_mutex = threading.Lock()
        self._watchers: set[socket.socket] = set()
        self._on_request: RequestHandler | None = None

    @property
    def held(self) -> bool:
        return self._server is not None

    def try_acquire(self, on_sync: SyncHandler, on_request: RequestHandler | None = None) -> bool:
        """Become the primary if no live primary exists. Never blocks. `on_request` answers the ops
        other than `sync`, `ping` and `watch`."""
        if self.held:
            return True
        self.data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        try:
            if self.sock_path.exists() and _answers(self.sock_path):
                raise OSError("a live primary answers on the socket")
            with contextlib.suppress(FileNotFoundError):
                self.sock_path.unlink()
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(str(self.sock_path))
            os.chmod(self.sock_path, 0o600)
            server.listen(16)
            server.settimeout(0.5)  # before the thread starts: a release right after closes the socket
        except OSError as err:
            log.debug("could not become primary: %s", err)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            return False
        self._lock_fd = fd
        self._server = server
        self._on_request = on_request
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._serve, args=(server, on_sync), name="ragdown-primary", daemon=True
        )
        self._thread.start()
        return True

    def _serve(self, server: socket.socket, on_sync: SyncHandler) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn, on_sync), daemon=True).start()

    def _answer(self, conn: socket.socket, on_sync: SyncHandler) -> None:
        with conn:
            try:
                conn.settimeout(30)
                line = conn.makefile("rb").readline(_REQUEST_LIMIT)
                request = json.loads(line or b"{}")
                if request.get("op") == "watch":
                    self._hold(conn)
                    return
                if request.get("op") == "ping":
                    reply: dict[str, Any] = {"ok": True}
                elif request.get("op") == "sync":
                    conn.settimeout(_FORWARD_TIMEOUT_S)
                    paths = paths_received(request.get("paths"))
                    report = on_sync(bool(request.get("full")), paths, folders_of(request))
                    reply = {"ok": True, "report": report}
                elif self._on_request is not None:
                    conn.settimeout(_FORWARD_TIMEOUT_S)
                    reply = self._on_request(request)
                else:
                    reply = {"ok": False, "error": f"unknown op {request.get('op')!r}"}
            except Exception as err:
                reply = {"ok": False, "error": str(err)}
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps(reply).encode() + b"\n")

    def _hold(self, conn: socket.socket) -> None:
        """A watching reader: say yes, then keep the connection open until it hangs up or we release."""
        with self._watch_mutex:
            if self._stop.is_set():
                return
            self._watchers.add(conn)
        try:
            conn.sendall(b'{"ok": true}\n')
            conn.settimeout(None)
            while conn.recv(4096):  # a reader sends nothing more; b"" is its hang-up or our shutdown
                pass
        except OSError:
            pass
        finally:
            with self._watch_mutex:
                self._watchers.discard(conn)

    def release(self) -> None:
        self._stop.set()
        if self._server is not None:
            with contextlib.suppress(OSError):
                # Wakes the serving thread's accept() at once (Linux). close() alone leaves it waiting out
                # its 0.5 s timeout in the join below: every `ragdown index`/`search` paid that on exit.
                self._server.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                self._server.close()
            with contextlib.suppress(FileNotFoundError):
                self.sock_path.unlink()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
        if self._lock_fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None
        # Watching readers hear of it last, when the flock is free: the first to try takes over at once.
        with self._watch_mutex:
            watchers, self._watchers = self._watchers, set()
        for conn in watchers:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


def paths_to_send(paths: list[str] | None, limit: int) -> list[str] | None:
    """The paths a forwarded sync sends (here and in `pgprimary.py`): None (a sync of the whole tree
    instead) past `limit` bytes of JSON, what the channel carries in one message."""
    if paths is None or len(json.dumps(paths)) > limit:
        return None
    return paths


def paths_received(raw: object) -> list[str] | None:
    """The paths of a forwarded sync as received: a list of strings, else None (a sync of the whole tree)."""
    if isinstance(raw, list) and all(isinstance(p, str) for p in raw):
        return raw
    return None


def folders_of(message: dict[str, Any]) -> Folders:
    """The folders a forwarded sync names (`folders`: a list of names, or null for every folder)."""
    names = message.get("folders")
    if not isinstance(names, list):
        return None
    return frozenset(str(n) for n in names)


def folders_json(folders: Folders) -> list[str] | None:
    """`folders` as a forwarded sync sends them (`folders_of` reads them back)."""
    return sorted(folders) if folders is not None else None


def _answers(path: Path) -> bool:
    try:
        request(path, {"op": "ping"}, timeout=2.0)
    except OSError:
        return False
    return True


def request(path: Path, payload: dict[str, Any], *, timeout: float = _FORWARD_TIMEOUT_S) -> dict[str, Any]:
    """Send one request to the primary and return its answer; OSError when no primary answers."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(json.dumps(payload).encode() + b"\n")
        line = sock.makefile("rb").readline()
    if not line:
        raise ConnectionError("the primary closed the connection without answering")
    answer: dict[str, Any] = json.loads(line)
    return answer


def forward_sync(
    data_dir: Path, full: bool, paths: list[str] | None = None, folders: Folders = None
) -> dict[str, Any]:
    """A reader's sync: ask the primary to sync (`paths` alone, when given; the tree of `folders` only, when
    given) and return its report, counted in those folders."""
    payload: dict[str, Any] = {"op": "sync", "full": full, "folders": folders_json(folders)}
    sent = paths_to_send(paths, _REQUEST_LIMIT - 100 - len(json.dumps(payload["folders"])))
    if sent is not None:
        payload["paths"] = sent
    answer = request(socket_path(data_dir), payload)
    if not answer.get("ok"):
        raise RuntimeError(f"the primary could not sync: {answer.get('error')}")
    report: dict[str, Any] = answer["report"]
    return report


GoneHandler = Callable[[], bool]


class _Unsupported(Exception):
    """The primary refused the `watch` op (an older ragdown): only the periodic take-over is left."""


class PrimaryWatcher:
    """A reader's open connection to the primary, to learn the moment it goes.

    In a daemon thread: connect, send `{"op": "watch"}`, read the primary's `{"ok": true}`, and block until EOF.
    EOF, a refused connection and a missing socket all mean "no primary", and call `on_gone` at once. It
    returns True when watching is over (this process is the primary now, or closing); on False the watcher
    attaches to whichever process is the primary now, retrying within 2-50 ms, and calls `on_gone` again on
    each failure. After `retry_s` without a primary to attach to, or when the primary does not know the op,
    the thread ends: the engine's periodic take-over is the safety net.
    """

    def __init__(self, data_dir: Path, on_gone: GoneHandler, *, retry_s: float = WATCH_RETRY_S) -> None:
        self.sock_path = socket_path(data_dir)
        self._on_gone = on_gone
        self._retry_s = retry_s
        self._mutex = threading.Lock()
        self._stopped = False
        self._sock: socket.socket | None = None
        self._attached = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def attached(self) -> bool:
        """Connected to a primary that agreed to be watched."""
        return self._attached.is_set()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait_attached(self, timeout: float | None = None) -> bool:
        return self._attached.wait(timeout)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="ragdown-primary-watch", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Hang up and end the thread (it may be inside `on_gone`: that is waited for up to `timeout`)."""
        with self._mutex:
            self._stopped = True
            sock = self._sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked recv() at once
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _run(self) -> None:
        gone_since: float | None = None
        pause = _WATCH_FIRST_PAUSE_S
        while not self._stopped:
            try:
                watched = self._watch()
            except _Unsupported as err:
                log.debug("the primary cannot be watched (%s): take-over checks run periodically", err)
                return
            except Exception:  # never let the thread die with a traceback; the periodic loop remains
                log.exception("watching the primary failed")
                return
            if self._stopped:
                return
            if watched:
                log.debug("the primary hung up")
                gone_since = None
                pause = _WATCH_FIRST_PAUSE_S
            try:
                if self._on_gone():
                    return
            except Exception:
                log.exception("taking over from the primary failed")
                return
            now = time.monotonic()
            gone_since = now if gone_since is None else gone_since
            if now - gone_since >= self._retry_s:
                log.info(
                    "no primary to watch for %.0f s: take-over checks run periodically", now - gone_since
                )
                return
            time.sleep(pause)
            pause = min(pause * 2, _WATCH_PAUSE_S)

    def _watch(self) -> bool:
        """Attach and block until the connection ends: True when a primary was watched, False when none
        could be attached to."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with self._mutex:
            if self._stopped:
                sock.close()
                return False
            self._sock = sock
        try:
            with sock:
                try:
                    sock.settimeout(_WATCH_CONNECT_TIMEOUT_S)
                    sock.connect(str(self.sock_path))
                    sock.sendall(b'{"op": "watch"}\n')
                    line = sock.makefile("rb").readline(65536)
                except OSError:
                    return False
                if not line:
                    return False
                try:
                    answer = json.loads(line)
                except ValueError as err:
                    raise _Unsupported(f"answer {line[:80]!r}") from err
                if not (isinstance(answer, dict) and answer.get("ok")):
                    error = answer.get("error") if isinstance(answer, dict) else answer
                    raise _Unsupported(str(error))
                with self._mutex:
                    if self._stopped:
                        return True
                    self._attached.set()
                sock.settimeout(None)
                with contextlib.suppress(OSError):
                    while sock.recv(4096):
                        pass
                return True
        finally:
            self._attached.clear()
            with self._mutex:
                self._sock = None
