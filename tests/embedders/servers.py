"""Real local HTTP servers for the embedder tests: a hub-like file server and an `/embeddings` endpoint.

Both run `http.server` on 127.0.0.1 with an ephemeral port in a background thread, speak HTTP/1.1 with
keep-alive, and count the TCP connections they accept.
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt


class _CountingServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.connections = 0
        self.lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.lock:
            self.connections += 1
        super().process_request(request, client_address)


@contextmanager
def _serving(server: _CountingServer) -> Iterator[None]:
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def unused_port() -> int:
    """A port nothing listens on (bound, then released): connecting to it is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# -- a hub-like file server ----------------------------------------------------------------------


@dataclass
class Hub:
    """Serves `files` at `/<path>`; `truncate` paths send a Content-Length they never finish."""

    files: dict[str, Path]
    truncate: set[str] = field(default_factory=set)
    sha256: dict[str, str] = field(default_factory=dict)
    """`X-Linked-Etag` to announce per path, as the hub does for LFS files."""
    requests: list[str] = field(default_factory=list)
    url: str = ""
    server: _CountingServer | None = None

    def requested(self, suffix: str) -> int:
        return sum(1 for r in self.requests if r.endswith(suffix))


class _HubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10
    hub: ClassVar[Hub]

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        hub = self.hub
        hub.requests.append(self.path)
        path = self.path.split("?", 1)[0]
        source = hub.files.get(path)
        if source is None:
            body = b"Entry not found"
            self.send_response(404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        data = source.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        if path in hub.sha256:
            self.send_header("X-Linked-Etag", f'"{hub.sha256[path]}"')
        self.end_headers()
        if path in hub.truncate:
            self.wfile.write(data[: len(data) // 3])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(data)


@contextmanager
def hub_server(
    files: dict[str, Path], truncate: set[str] | None = None, sha256: dict[str, str] | None = None
) -> Iterator[Hub]:
    hub = Hub(files=files, truncate=truncate or set(), sha256=sha256 or {})
    handler = type("HubHandler", (_HubHandler,), {"hub": hub})
    server = _CountingServer(handler)
    hub.server = server
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    with _serving(server):
        yield hub


# -- an OpenAI-compatible /embeddings endpoint ---------------------------------------------------


def fake_vector(text: str, dim: int) -> npt.NDArray[np.float64]:
    """What the fake endpoint answers for `text`: deterministic, not normalised, never all zero."""
    digest = hashlib.sha256(text.encode()).digest()
    values = np.frombuffer(digest * (dim // 32 + 1), dtype=np.uint8)[:dim].astype(np.float64)
    return values - 100.0


@dataclass
class EmbeddingsEndpoint:
    dim: int = 8
    mode: str = "ok"  # ok | malformed | error | payload
    payload: object = None
    batches: list[list[str]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    url: str = ""
    server: _CountingServer | None = None

    @property
    def connections(self) -> int:
        assert self.server is not None
        return self.server.connections


class _EmbeddingsHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30
    endpoint: ClassVar[EmbeddingsEndpoint]

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _answer(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        endpoint = self.endpoint
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length))
        endpoint.paths.append(self.path)
        endpoint.authorizations.append(self.headers.get("Authorization"))
        endpoint.models.append(request["model"])
        texts: list[str] = list(request["input"])
        endpoint.batches.append(texts)
        if not self.path.endswith("/embeddings"):
            self._answer(404, {"error": {"message": "not found"}})
        elif endpoint.mode == "error":
            self._answer(500, {"error": {"message": "the model crashed"}})
        elif endpoint.mode == "payload":
            self._answer(200, endpoint.payload)
        elif endpoint.mode == "malformed":
            self._answer(
                200, {"data": [{"idx": i, "vector": [1.0] * endpoint.dim} for i in range(len(texts))]}
            )
        else:
            items = [
                {"object": "embedding", "index": i, "embedding": fake_vector(t, endpoint.dim).tolist()}
                for i, t in enumerate(texts)
            ]
            items.reverse()  # clients must order by `index`, not by position
            self._answer(200, {"object": "list", "data": items, "model": request["model"]})


@contextmanager
def embeddings_server(dim: int = 8) -> Iterator[EmbeddingsEndpoint]:
    endpoint = EmbeddingsEndpoint(dim=dim)
    handler = type("EmbeddingsHandler", (_EmbeddingsHandler,), {"endpoint": endpoint})
    server = _CountingServer(handler)
    endpoint.server = server
    endpoint.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    with _serving(server):
        yield endpoint
