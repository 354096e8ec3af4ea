"""`ragdown serve` as a real process on a free loopback port, driven over real HTTP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import REPO, isolated_env

TOKEN = "test-token-0123456789"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    token: str | None
    proc: subprocess.Popen[bytes]
    docs: Path
    data: Path
    log: Path
    clients: list[httpx.Client] = field(default_factory=list)

    def client(self, *, token: str | None = "default") -> httpx.Client:
        headers = {}
        use = self.token if token == "default" else token
        if use:
            headers["Authorization"] = f"Bearer {use}"
        client = httpx.Client(base_url=self.url, headers=headers, timeout=60)
        self.clients.append(client)
        return client

    @property
    def api(self) -> httpx.Client:
        return self.client()

    def wait_synced(self) -> dict[str, Any]:
        """Wait until the first sync has finished (status shows `last_sync`)."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            body: dict[str, Any] = httpx.get(f"{self.url}/api/status", timeout=10).json()
            if body.get("ready") and body.get("last_sync") and not body.get("syncing"):
                return body
            time.sleep(0.05)
        raise AssertionError(f"the server never finished its first sync: {self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


StartServer = Callable[..., Server]


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[StartServer]:
    servers: list[Server] = []

    def start(
        docs: Path, *, token: str | None = TOKEN, wait: bool = True, data: Path | None = None, **env: str
    ) -> Server:
        port = free_port()
        data_dir = data or tmp_path / "data"
        extra = {"RAGDOWN_DOCS_DIR": str(docs), "RAGDOWN_DATA_DIR": str(data_dir), "PORT": str(port)}
        extra["RAGDOWN_HOST"] = "127.0.0.1"
        if token:
            extra["RAGDOWN_TOKEN"] = token
        extra.update(env)
        log = tmp_path / f"serve-{port}.log"
        proc = subprocess.Popen(
            [sys.executable, "-m", "ragdown.cli", "serve"],
            cwd=REPO,
            env=isolated_env(tmp_path, **extra),
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        server = Server(f"http://127.0.0.1:{port}", token, proc, docs, data_dir, log)
        servers.append(server)
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"ragdown serve exited: {log.read_text()[-3000:]}")
            try:
                httpx.get(f"{server.url}/api/status", timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"ragdown serve never answered: {log.read_text()[-3000:]}") from None
                time.sleep(0.05)
        if wait:
            server.wait_synced()
        return server

    yield start
    for server in servers:
        server.stop()


def ops_folder(docs: Path, *, mcp: bool = True, title: str = "Operations") -> None:
    from tests.conftest import write

    write(docs, "ops/backups.md", "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.")
    write(docs, "ops/.ragdown.json", json.dumps({"title": title, "mcp": mcp}))
