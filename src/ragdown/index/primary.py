"""One primary per index: the process that binds `<data dir>/primary.sock` indexes and watches.

Holding the socket is the lock; an `flock` on `primary.lock` guards the take-over so two processes can
never both remove a stale socket and bind a new one. The kernel drops the flock when a primary dies, so
a crashed primary's stale socket is taken over by the next process that tries. Readers forward sync
requests to the primary as one line of JSON, `{"op": "sync", "full": false}`, and read one line back.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_MAX_SOCKET_PATH = 100  # sun_path is 104-108 bytes; longer paths move to the temp dir
_FORWARD_TIMEOUT_S = 600.0

SyncHandler = Callable[[bool], dict[str, Any]]


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

    @property
    def held(self) -> bool:
        return self._server is not None

    def try_acquire(self, on_sync: SyncHandler) -> bool:
        """Become the primary if no live primary exists. Never blocks."""
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
        except OSError as err:
            log.debug("could not become primary: %s", err)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            return False
        self._lock_fd = fd
        self._server = server
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._serve, args=(server, on_sync), name="ragdown-primary", daemon=True
        )
        self._thread.start()
        return True

    def _serve(self, server: socket.socket, on_sync: SyncHandler) -> None:
        server.settimeout(0.5)
        while not self._stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn, on_sync), daemon=True).start()

    @staticmethod
    def _answer(conn: socket.socket, on_sync: SyncHandler) -> None:
        with conn:
            try:
                conn.settimeout(30)
                line = conn.makefile("rb").readline(65536)
                request = json.loads(line or b"{}")
                if request.get("op") == "ping":
                    reply: dict[str, Any] = {"ok": True}
                elif request.get("op") == "sync":
                    conn.settimeout(_FORWARD_TIMEOUT_S)
                    reply = {"ok": True, "report": on_sync(bool(request.get("full")))}
                else:
                    reply = {"ok": False, "error": f"unknown op {request.get('op')!r}"}
            except Exception as err:
                reply = {"ok": False, "error": str(err)}
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps(reply).encode() + b"\n")

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


def forward_sync(data_dir: Path, full: bool) -> dict[str, Any]:
    """A reader's sync: ask the primary to sync and return its report."""
    answer = request(socket_path(data_dir), {"op": "sync", "full": full})
    if not answer.get("ok"):
        raise RuntimeError(f"the primary could not sync: {answer.get('error')}")
    report: dict[str, Any] = answer["report"]
    return report
