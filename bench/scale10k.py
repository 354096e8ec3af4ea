"""A `ragdown stdio` server on a big vault (bench/vault10k.py's 10,000 notes), over MCP: memory and latency.

    .venv/bin/python bench/scale10k.py VAULT DATA QUESTIONS.jsonl [--reps 3] [--before /tmp/before/src]
                                       [--embedder hash] [--calls 50] [--pause 0]

DATA holds an index of VAULT built beforehand (`RAGDOWN_DATA_DIR=DATA ragdown index VAULT`); each run is a
fresh `ragdown stdio` on it (`RAGDOWN_DOCS_DIR=VAULT`, `RAGDOWN_DATA_DIR=DATA`). Per run: seconds from the
spawn to the answer of `tools/list` after `initialize` (ready), VmRSS then, the first sync's end (a `sync`
on the primary's socket), the first `ragdown_recall` call's milliseconds, then `--calls` more (one question
of QUESTIONS each, 8 hits) and their p50/p95, and VmRSS (RssAnon + RssFile) / VmHWM after them. With `--before SRC` (an older
`src/`, `git archive HEAD src | tar -x -C /tmp/before`) the same runs on that code alternate with these
ones (the order swapped every other repetition). `--pause S` waits S seconds after the first sync before the first call (an agent's first question
seldom comes the instant its server is up; a server loads its dense matrix then). Prints medians; no
figure is asserted anywhere.

With a model (`--embedder minilm`), each call's time includes embedding its question; `--embed-times`
then also times the model's `embed_query` on the same questions in this process (after the runs, the model
loaded as a server loads it: `load_configured` with the environment's settings), so the search's own part
can be told apart: p50 of the calls minus p50 of the embeddings.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from _common import median, percentile

REPO = Path(__file__).resolve().parents[1]
PROTOCOL = "2025-06-18"


def status(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition(":")
        if key in {"VmRSS", "VmHWM", "RssAnon", "RssFile"}:
            out[key] = int(value.split()[0]) // 1024
    return out


def send(proc: subprocess.Popen[bytes], obj: dict[str, object]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(obj).encode() + b"\n")
    proc.stdin.flush()


def answer(proc: subprocess.Popen[bytes], want_id: int) -> dict[str, object]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"the server closed stdout before answering request {want_id}")
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("id") == want_id:
            if "error" in message:
                raise SystemExit(f"request {want_id} failed: {message['error']}")
            return message


def wait_sync(data: Path, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while True:
        sock_path = data / "primary.sock"
        if sock_path.exists():
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(timeout)
                try:
                    sock.connect(str(sock_path))
                    sock.sendall(b'{"op": "sync", "full": false}\n')
                    line = sock.makefile("rb").readline()
                except OSError:
                    line = b""
            if line and json.loads(line).get("ok"):
                return
        if time.monotonic() > deadline:
            raise SystemExit(f"no primary answered a sync in {data}")
        time.sleep(0.05)


def run_once(
    src: Path, vault: Path, data: Path, embedder: str, questions: list[str], pause: float = 0.0
) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
    env.update(
        PYTHONPATH=str(src),
        RAGDOWN_EMBEDDER=embedder,
        RAGDOWN_DOCS_DIR=str(vault),
        RAGDOWN_DATA_DIR=str(data),
        RAGDOWN_LOG_LEVEL="WARNING",
    )
    start = time.perf_counter()
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("ragdown")), "stdio"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        init = {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        answer(proc, 1)
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        answer(proc, 2)
        ready = time.perf_counter() - start
        at_ready = status(proc.pid)["VmRSS"]
        wait_sync(data)
        synced = time.perf_counter() - start
        at_sync = status(proc.pid)["VmRSS"]
        time.sleep(pause)
        times: list[float] = []
        for i, q in enumerate(questions):
            call = {"name": "ragdown_recall", "arguments": {"query": q, "top_k": 8}}
            t0 = time.perf_counter()
            send(proc, {"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": call})
            answer(proc, 10 + i)
            times.append((time.perf_counter() - t0) * 1000)
        after = status(proc.pid)
        return {
            "ready_s": ready,
            "rss_ready": at_ready,
            "synced_s": synced,
            "rss_synced": at_sync,
            "first_ms": times[0],
            "p50_ms": percentile(times[1:], 50),
            "p95_ms": percentile(times[1:], 95),
            "rss_after": after["VmRSS"],
            "anon_after": after["RssAnon"],
            "file_after": after["RssFile"],
            "hwm": after["VmHWM"],
        }
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("vault", type=Path)
    parser.add_argument("data", type=Path)
    parser.add_argument("questions", type=Path)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--before", type=Path)
    parser.add_argument("--pause", type=float, default=0.0)
    parser.add_argument("--embed-times", action="store_true", help="also time embed_query on the questions")
    args = parser.parse_args()
    lines = args.questions.read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["q"] for line in lines if line.startswith("{")][: args.calls + 1]
    sides = {"after": REPO / "src"} | ({"before": args.before} if args.before else {})
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in sides}
    print(f"# load {os.getloadavg()}", flush=True)
    for rep in range(args.reps):
        order = list(sides.items())
        for key, src in order if rep % 2 == 0 else order[::-1]:
            figures = run_once(src, args.vault, args.data, args.embedder, questions, args.pause)
            runs[key].append(figures)
            print(key, json.dumps({k: round(v, 3) for k, v in figures.items()}), flush=True)
    print(f"# load {os.getloadavg()}")
    for key, rows in runs.items():
        print(key, "medians", json.dumps({k: round(median([r[k] for r in rows]), 3) for k in rows[0]}))
    if args.embed_times:
        embed_ms = embed_times(args.embedder, questions)
        print(
            "embed_query",
            json.dumps(
                {
                    "p50_ms": round(percentile(embed_ms[1:], 50), 2),
                    "p95_ms": round(percentile(embed_ms[1:], 95), 2),
                    "first_ms": round(embed_ms[0], 2),
                }
            ),
        )
        for key, rows in runs.items():
            calls = median([r["p50_ms"] for r in rows])
            print(f"{key}: call p50 {calls:.1f} ms - embedding p50 {percentile(embed_ms[1:], 50):.1f} ms")


def embed_times(spec: str, questions: list[str]) -> list[float]:
    """Milliseconds of the model's `embed_query` on each question, loaded as a server loads it."""
    from ragdown.core.config import Settings
    from ragdown.embedders import load_configured

    embedder = load_configured(spec, Settings.from_env())
    times = []
    for q in questions:
        t0 = time.perf_counter()
        embedder.embed_query(q)
        times.append((time.perf_counter() - t0) * 1000)
    return times


if __name__ == "__main__":
    main()
