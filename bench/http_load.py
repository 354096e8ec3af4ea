"""50 concurrent MCP clients calling `ragdown_recall` over streamable HTTP for 60 s against `ragdown serve`.

    .venv/bin/python bench/http_load.py [--clients 50] [--seconds 60] [--embedder hash|minilm]

The server runs as its own process on a copy of the Obsidian help vault (one folder, MCP on); this process
drives the clients with the official SDK over real HTTP. Prints errors, requests/s and latency percentiles,
and writes them to bench/out/http_load.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parent.parent
VAULT = REPO.parent / "shared" / "bench" / "obsidian-help" / "vault"
TOKEN = "bench-token"
QUERIES = [
    "how do I create a canvas",
    "sync my vault between devices",
    "embed a file in a note",
    "what are properties in obsidian",
    "keyboard shortcut for the command palette",
    "publish a site with a custom domain",
    "how do backlinks work",
    "callout syntax",
    "graph view filters",
    "bases formulas and functions",
    "web clipper templates",
    "restore a file from a snapshot",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(docs: Path, data: Path, port: int, embedder: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "RAGDOWN_DOCS_DIR": str(docs),
        "RAGDOWN_DATA_DIR": str(data),
        "RAGDOWN_EMBEDDER": embedder,
        "RAGDOWN_TOKEN": TOKEN,
        "RAGDOWN_WATCH": "false",
        "RAGDOWN_HOST": "127.0.0.1",
        "RAGDOWN_LOG_LEVEL": "WARNING",
        "PORT": str(port),
    }
    proc = subprocess.Popen([sys.executable, "-m", "ragdown.cli", "serve"], env=env, cwd=REPO)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            # With the token: without it, /api/status says only liveness.
            status = httpx.get(
                f"http://127.0.0.1:{port}/api/status", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=2
            ).json()
            if status.get("last_sync") and not status.get("syncing"):
                return proc
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not finish its first index in time")


async def client_loop(
    url: str,
    until: float,
    latencies: list[float],
    errors: list[str],
    seed: int,
    queries: list[str] = QUERIES,
    timeout: float = 60,
) -> None:
    """One MCP client calling `ragdown_recall` with a random one of `queries` until `until` (also
    `bench/pg_scale.py`'s clients)."""
    rng = random.Random(seed)
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=timeout) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        while time.monotonic() < until:
            started = time.perf_counter()
            try:
                result = await client.call_tool("ragdown_recall", {"query": rng.choice(queries), "top_k": 8})
                if result.is_error:
                    errors.append(str(result.content)[:200])
            except Exception as err:
                errors.append(repr(err)[:200])
                continue
            latencies.append((time.perf_counter() - started) * 1000)


async def drive(url: str, clients: int, seconds: float) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[str] = []
    until = time.monotonic() + seconds
    started = time.perf_counter()
    await asyncio.gather(*(client_loop(url, until, latencies, errors, i) for i in range(clients)))
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 1) if ordered else 0.0

    return {
        "clients": clients,
        "seconds": round(elapsed, 1),
        "requests": len(latencies),
        "errors": len(errors),
        "error_samples": errors[:5],
        "requests_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(statistics.median(ordered), 1) if ordered else 0.0,
        "p90_ms": pct(0.90),
        "p99_ms": pct(0.99),
        "max_ms": round(ordered[-1], 1) if ordered else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--embedder", default="hash")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        shutil.copytree(VAULT, docs / "help")
        (docs / "help" / ".ragdown.json").write_text(json.dumps({"title": "Obsidian help", "mcp": True}))
        port = free_port()
        proc = start_server(docs, Path(tmp) / "data", port, args.embedder)
        try:
            result = asyncio.run(drive(f"http://127.0.0.1:{port}/mcp/help", args.clients, args.seconds))
        finally:
            proc.terminate()
            proc.wait(30)
    result["embedder"] = args.embedder
    out = REPO / "bench" / "out"
    out.mkdir(exist_ok=True)
    (out / "http_load.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
