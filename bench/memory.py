"""Server memory: VmRSS of `ragdown stdio` on a vault, serving an existing index and right after a first index.

    .venv/bin/python bench/memory.py [--reps 2] [--before /tmp/before/src] [--corpus obsidian-help]
                                     [--embedder minilm]

Each run is one fresh `ragdown stdio` process (`RAGDOWN_DOCS_DIR` = a copy of the vault, its own cache root):

- `first index`: an empty cache, so the server indexes the whole vault with the model (its first sync);
- `existing index`: the cache the previous `first index` run left, so the server only checks the files.

The bench sends `initialize`, waits for the first sync to end (a `sync` request on the primary's socket,
which is answered after the sync that runs), makes one `ragdown_recall` call (the query path: the model's
query pass, the dense matrix, BM25), waits a second and reads `/proc/PID/status`: `VmRSS` (what the process
holds now, the figure compared with the peers) and `VmHWM` (its peak). Two baselines run in the same rotation:
the imports alone (`mcp`'s server, numpy, onnxruntime, tokenizers: what any server with this model pays before
loading anything) and a minimal server on the same SDK. With `--before SRC` (an older `src/`, e.g.
`git archive HEAD src | tar -x -C /tmp/before`) the same runs on that code are interleaved and `ratio` is
before / after; `--after SRC` measures another copy than this tree's `src/` as "after" (a snapshot, so
the tree can change while a long run goes on).

`--data-dir D --vault V [--models M]`: only the `existing` state, on an index of V built beforehand in D
(a first index with a model takes ~15 min on a loaded machine).

`--components MODEL.onnx ...` instead builds one ONNX Runtime session of each model (as `onnx.py` does) in a
fresh process and prints VmRSS after the imports, after the session, after `heap.trim()`, and after five
passes of 8 x 256 tokens with the arena kept and with it shrunk after each pass.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from _common import CORPORA, exit_cleanly_on_sigterm, median, table, write_result

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
QUERY = "how do I embed a PDF in a note"
PROTOCOL = "2025-06-18"
IMPORTS = "import mcp.server.stdio, numpy, onnxruntime, tokenizers, time, sys; print('ok', flush=True); time.sleep(60)"


def status(pid: int) -> dict[str, int]:
    """`VmRSS` and `VmHWM` of a process, in MB."""
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition(":")
        if key in {"VmRSS", "VmHWM"}:
            out[key] = int(value.split()[0]) // 1024
    return out


def _line(obj: dict[str, object]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def _answer(proc: subprocess.Popen[bytes], want_id: int) -> dict[str, object]:
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


def _sync_over_socket(cache: Path, timeout: float) -> None:
    """Wait until the server's first sync is over: its primary answers a forwarded sync after it."""
    deadline = time.monotonic() + timeout
    while True:
        socks = list(cache.glob("ragdown/*/primary.sock")) + list(cache.glob("primary.sock"))
        if socks:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(timeout)
                try:
                    sock.connect(str(socks[0]))
                    sock.sendall(b'{"op": "sync", "full": false}\n')
                    line = sock.makefile("rb").readline()
                except OSError:
                    line = b""
            if line and json.loads(line).get("ok"):
                return
        if time.monotonic() > deadline:
            raise SystemExit(f"no primary answered a sync under {cache}")
        time.sleep(0.1)


def server_once(
    src: Path, embedder: str, vault: Path, home: Path, data: Path | None = None, models: Path | None = None
) -> dict[str, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
    env.update(
        PYTHONPATH=str(src),
        HOME=str(home),
        XDG_CACHE_HOME=str(home / "cache"),
        RAGDOWN_EMBEDDER=embedder,
        RAGDOWN_DOCS_DIR=str(vault),
        RAGDOWN_LOG_LEVEL="WARNING",
    )
    if data is not None:
        env["RAGDOWN_DATA_DIR"] = str(data)
    if models is not None:
        env["RAGDOWN_MODELS"] = str(models)
    script = Path(sys.executable).with_name("ragdown")
    start = time.perf_counter()
    proc = subprocess.Popen(
        [str(script), "stdio"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    try:
        init = {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        proc.stdin.write(_line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
        proc.stdin.flush()
        _answer(proc, 1)
        proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.flush()
        _sync_over_socket(data if data is not None else home / "cache", timeout=3600)
        synced_ms = int((time.perf_counter() - start) * 1000)
        call = {"name": "ragdown_recall", "arguments": {"query": QUERY}}
        proc.stdin.write(_line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}))
        proc.stdin.flush()
        _answer(proc, 2)
        time.sleep(1.0)
        figures = {**status(proc.pid), "synced_ms": synced_ms}
        proc.stdin.close()
        proc.wait(timeout=60)
        return figures
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def baseline_once(argv: list[str], *, handshake: bool) -> dict[str, int]:
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        if handshake:
            init = {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "b", "version": "1"},
            }
            proc.stdin.write(_line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
            proc.stdin.flush()
            _answer(proc, 1)
        else:
            proc.stdout.readline()
        time.sleep(1.0)
        return status(proc.pid)
    finally:
        proc.kill()
        proc.wait()


COMPONENTS = """
import os, sys, time
import numpy as np, onnxruntime as ort, tokenizers
def rss(tag):
    d = {}
    for line in open(f"/proc/{os.getpid()}/status"):
        if line.startswith(("VmRSS", "VmHWM")):
            d[line.split(":")[0]] = int(line.split()[1]) // 1024
    print(f"{tag}\t{d['VmRSS']}\t{d['VmHWM']}", flush=True)
rss("imports (numpy, onnxruntime, tokenizers)")
options = ort.SessionOptions()
options.intra_op_num_threads = 1
options.log_severity_level = 3
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
session = ort.InferenceSession(sys.argv[1], options, providers=["CPUExecutionProvider"])
rss("session built")
from ragdown.core import heap
heap.trim()
rss("heap trimmed")
run = ort.RunOptions()
if sys.argv[2] == "shrink":
    run.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
ids = np.ones((8, 256), dtype=np.int64)
feeds = {i.name: ids for i in session.get_inputs()}
start = time.perf_counter()
for _ in range(5):
    session.run(None, feeds, run)
rss(f"5 passes of 8 x 256 tokens, arena {sys.argv[2]} ({time.perf_counter() - start:.2f} s)")
"""


def components(model: Path) -> None:
    """Where a session's memory goes: one process per arena mode, RSS after each step (one run each)."""
    for mode in ("kept", "shrink"):
        env = {**os.environ, "PYTHONPATH": str(SRC)}
        done = subprocess.run(
            [sys.executable, "-c", COMPONENTS, str(model), mode],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        print(f"-- {model.name}, arena {mode}")
        for line in done.stdout.splitlines():
            tag, rss, hwm = line.split("\t")
            print(f"   {tag}: VmRSS {rss} MB, VmHWM {hwm} MB")


def main(argv: Sequence[str] | None = None) -> int:
    exit_cleanly_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--before", type=Path, help="an older src/ to run side by side (read only)")
    ap.add_argument(
        "--after", type=Path, default=SRC, help="the src/ measured as after (default: this tree's)"
    )
    ap.add_argument("--data-dir", type=Path, help="only serve this index of --vault, built beforehand")
    ap.add_argument("--vault", type=Path, help="the folder --data-dir indexes")
    ap.add_argument("--models", type=Path, help="RAGDOWN_MODELS for the servers (default: each its own)")
    ap.add_argument("--corpus", default="obsidian-help", choices=sorted(CORPORA))
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument(
        "--components",
        nargs="*",
        type=Path,
        metavar="MODEL",
        help="instead: where an ONNX session's memory goes, for these model.onnx files",
    )
    args = ap.parse_args(argv)
    if args.components:
        for model in args.components:
            components(model)
        return 0
    codes: list[tuple[str, Path]] = [("after", args.after.resolve())]
    if args.before:
        codes.append(("before", args.before.resolve()))
    sys.path.insert(0, str(REPO / "bench"))
    from startup import MINIMAL_SERVER

    samples: dict[str, list[dict[str, int]]] = {}

    def record(key: str, figures: dict[str, int]) -> None:
        samples.setdefault(key, []).append(figures)
        print(f"  {key}: {figures}", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="rdmem-") as tmp:
        root = Path(tmp)
        minimal = root / "minimal_server.py"
        minimal.write_text(MINIMAL_SERVER, encoding="utf-8")
        for rep in range(args.reps):
            order = codes if rep % 2 == 0 else codes[::-1]
            record("imports", baseline_once([sys.executable, "-c", IMPORTS], handshake=False))
            record("minimal", baseline_once([sys.executable, str(minimal)], handshake=True))
            for name, src in order:
                home = root / f"{name}-{rep}"
                if args.data_dir:  # an index built beforehand: only the `existing` state
                    home.mkdir()
                    served = server_once(src, args.embedder, args.vault, home, args.data_dir, args.models)
                    record(f"existing-{name}", served)
                    continue
                vault = home / "vault"
                shutil.copytree(CORPORA[args.corpus], vault)
                record(f"first-{name}", server_once(src, args.embedder, vault, home))
                record(f"existing-{name}", server_once(src, args.embedder, vault, home))
                shutil.rmtree(home)

    def med(key: str, field: str) -> float:
        return median([s[field] for s in samples[key]])

    rows: list[list[object]] = []
    figures: dict[str, object] = {}
    for label, key in [
        ("imports alone (mcp server, numpy, onnxruntime, tokenizers)", "imports"),
        ("minimal server on the same SDK", "minimal"),
    ]:
        rows.append([label, f"{med(key, 'VmRSS'):.0f}", f"{med(key, 'VmHWM'):.0f}", "", "", "", "", ""])
        figures[key] = {"VmRSS": med(key, "VmRSS"), "VmHWM": med(key, "VmHWM")}
    states = [("existing", "serving an existing index"), ("first", "right after a first index")]
    for state, label in states[:1] if args.data_dir else states:
        after = {f: med(f"{state}-after", f) for f in ("VmRSS", "VmHWM", "synced_ms")}
        row: list[object] = [
            f"ragdown stdio, {args.embedder}, {label}",
            f"{after['VmRSS']:.0f}",
            f"{after['VmHWM']:.0f}",
        ]
        entry: dict[str, object] = {"after": after}
        if args.before:
            before = {f: med(f"{state}-before", f) for f in ("VmRSS", "VmHWM", "synced_ms")}
            row += [
                f"{before['VmRSS']:.0f}",
                f"{before['VmHWM']:.0f}",
                f"{before['VmRSS'] / after['VmRSS']:.2f}x",
                f"{after['synced_ms'] / 1000:.1f}",
                f"{before['synced_ms'] / 1000:.1f}",
            ]
            entry["before"] = before
        else:
            row += ["", "", "", f"{after['synced_ms'] / 1000:.1f}", ""]
        rows.append(row)
        figures[state] = entry
    headers = [
        "variant (median MB)",
        "VmRSS",
        "VmHWM",
        "before VmRSS",
        "before VmHWM",
        "before/after RSS",
        "ready s",
        "before ready s",
    ]
    print(table(headers, rows))
    payload = {"reps": args.reps, "corpus": args.corpus, "embedder": args.embedder, "figures": figures}
    path = write_result("memory", {**payload, "samples": samples})
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
