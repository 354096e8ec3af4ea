"""Two real `ragdown serve` replicas on one PostgreSQL database and one docs dir (each its own data dir, as
on two machines): writes through either are searchable through the other at once, concurrent `base_hash`
writes through both lose nothing, and killing the primary hands the indexing to the other."""

from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ServeProcess, start_serve, write

TOKEN = "replica-token-0123456789"


def _client(server: ServeProcess) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)


def _wait(server: ServeProcess, ready: Any, what: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        if server.proc.poll() is not None:
            raise AssertionError(f"ragdown serve exited: {server.log.read_text()[-3000:]}")
        try:
            with _client(server) as status_client:  # without the token, /api/status says only liveness
                body: dict[str, Any] = status_client.get("/api/status").json()
            if ready(body):
                return body
        except (httpx.TransportError, ValueError):
            pass
        assert time.monotonic() < deadline, f"{what}: {server.log.read_text()[-3000:]}"
        time.sleep(0.05)


def _save(
    name: str,
    client: httpx.Client,
    base: str,
    round_: int,
    barrier: threading.Barrier,
    answers: dict[str, httpx.Response],
) -> None:
    text = f"# Kiwi\n\nround {round_} by {name}\n"
    barrier.wait()
    answers[name] = client.post("/api/doc", json={"path": "ops/kiwi.md", "text": text, "base_hash": base})


def _paths(client: httpx.Client, query: str) -> list[str]:
    answer = client.get("/api/search", params={"folder": "ops", "q": query, "top_k": 3})
    assert answer.status_code == 200, answer.text
    return [hit["path"] for hit in answer.json()["hits"]]


@pytest.fixture
def replicas(tmp_path: Path, postgres_url: str) -> Any:
    docs = tmp_path / "docs"
    write(docs, "ops/backups.md", "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n")
    write(docs, "ops/.ragdown.json", json.dumps({"title": "Operations", "mcp": True}))
    env = {
        "RAGDOWN_DOCS_DIR": str(docs),
        "RAGDOWN_DATABASE_URL": postgres_url,
        "RAGDOWN_TOKEN": TOKEN,
        "RAGDOWN_WATCH": "true",
    }
    servers: list[ServeProcess] = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    try:
        first = start_serve(tmp_path / "a", {**env, "RAGDOWN_DATA_DIR": str(tmp_path / "a" / "data")})
        servers.append(first)
        status = _wait(
            first, lambda b: b.get("role") == "primary" and b.get("last_sync"), "the first never indexed"
        )
        assert status["index"] == "postgres"
        second = start_serve(tmp_path / "b", {**env, "RAGDOWN_DATA_DIR": str(tmp_path / "b" / "data")})
        servers.append(second)
        _wait(
            second, lambda b: b.get("ready") and b.get("role") == "reader", "the second never became a reader"
        )
        yield docs, first, second
    finally:
        for server in servers:
            server.stop()


def test_two_replicas_share_one_index(replicas: Any) -> None:
    docs, primary, reader = replicas
    with _client(primary) as a, _client(reader) as b:
        # A write through the reader is indexed (by the primary) before the answer, and found by both.
        made = b.post("/api/doc", json={"path": "ops/kiwi.md", "text": "# Kiwi\n\nkiwi fruit salad\n"})
        assert made.status_code == 201, made.text
        assert _paths(a, "kiwi fruit salad")[0] == "ops/kiwi.md"
        assert _paths(b, "kiwi fruit salad")[0] == "ops/kiwi.md"
        made = a.post("/api/doc", json={"path": "ops/mango.md", "text": "# Mango\n\nmango chutney\n"})
        assert made.status_code == 201, made.text
        assert _paths(b, "mango chutney")[0] == "ops/mango.md"

        # The same base_hash sent through both at once: exactly one write wins each round, none is lost.
        for round_ in range(6):
            base = a.get("/api/doc", params={"path": "ops/kiwi.md"}).json()["hash"]
            barrier = threading.Barrier(2)
            answers: dict[str, httpx.Response] = {}

            threads = [
                threading.Thread(target=_save, args=(n, c, base, round_, barrier, answers))
                for n, c in (("a", a), ("b", b))
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(60)
            codes = sorted(r.status_code for r in answers.values())
            assert codes == [200, 409], {n: r.text for n, r in answers.items()}
            winner = next(n for n, r in answers.items() if r.status_code == 200)
            assert (docs / "ops/kiwi.md").read_text() == f"# Kiwi\n\nround {round_} by {winner}\n"
            assert answers["b" if winner == "a" else "a"].json()["code"] == "changed"

        # The primary dies without a word: the reader takes the index over and watches the files.
        primary.proc.send_signal(signal.SIGKILL)
        primary.proc.wait(10)
        _wait(reader, lambda s: s.get("role") == "primary", "the reader never took over", timeout=30)
        write(docs, "ops/after.md", "# After\n\nwritten once the primary was gone: quince jelly\n")
        deadline = time.monotonic() + 30
        while "ops/after.md" not in _paths(b, "quince jelly"):
            assert time.monotonic() < deadline, reader.log.read_text()[-3000:]
            time.sleep(0.1)
