"""`ragdown serve` as a real process on a free loopback port, driven over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ServeProcess, start_serve

TOKEN = "test-token-0123456789"


@dataclass
class Server:
    url: str
    token: str | None
    process: ServeProcess
    docs: Path
    data: Path
    clients: list[httpx.Client] = field(default_factory=list)

    @property
    def log(self) -> Path:
        return self.process.log

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
        return dict(self.process.wait_synced())

    def stop(self) -> None:
        for client in self.clients:
            client.close()
        self.process.stop()


StartServer = Callable[..., Server]


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[StartServer]:
    servers: list[Server] = []

    def start(
        docs: Path, *, token: str | None = TOKEN, wait: bool = True, data: Path | None = None, **env: str
    ) -> Server:
        data_dir = data or tmp_path / "data"
        extra = {"RAGDOWN_DOCS_DIR": str(docs), "RAGDOWN_DATA_DIR": str(data_dir)}
        if token:
            extra["RAGDOWN_TOKEN"] = token
        extra.update(env)
        process = start_serve(tmp_path, extra)
        server = Server(process.url, token, process, docs, data_dir)
        servers.append(server)
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
