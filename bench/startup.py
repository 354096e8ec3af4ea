"""Start-up, whole processes: `--version`, the MCP handshake, and one `ragdown search` / `index` from the CLI.

    .venv/bin/python bench/startup.py [--reps 7] [--before /tmp/ragdown-before/src] [--corpus obsidian-help]
                                      [--corpus-dir DIR] [--embedders hash,minilm] [--no-bytecode]

Each variant is one fresh process, timed from its spawn (the wall clock a user waits):

- `--version`;
- the MCP handshake over stdio: until the answer to `initialize`, and until the answer to the first
  `tools/list` (sent right after `notifications/initialized`), for a minimal server written on the same `mcp`
  SDK (one tool, nothing else: what the SDK's own import costs) and for `ragdown stdio` with each embedder;
- `ragdown search DIR QUERY` with each embedder, alone (no process serves the folder: the CLI opens the index
  and loads the model itself) and with a `ragdown stdio` serving the folder (kept running for the whole run);
- `ragdown index DIR` on an unchanged folder, alone and with the server running;
- the floor of a search alone: `python -c "import numpy, sqlite3"`.

Each is timed twice: the wall clock, and the CPU the process used (user + sys: of the whole process for a
command, read from `/proc` when `tools/list` is answered for a handshake), which a loaded machine inflates
far less than the wall clock. `--no-bytecode` runs every process without Python's byte-code caches
(`PYTHONPYCACHEPREFIX` an empty folder, `PYTHONDONTWRITEBYTECODE=1`): each module is compiled from its source
at every start, as in a venv installed without byte-code by a user who also forbids writing it.

The index of every folder is built before the timed runs, so `search` and `index` time a no-change sync.
With `--before SRC` (a copy of an older `src/`, e.g. `git archive HEAD src | tar -x -C /tmp/ragdown-before`)
every ragdown variant also runs on that code (`PYTHONPATH=SRC`), with its own cache root and copies of the
folder, so the two never share an index; the older code has no way to ask a server, so its "server running"
runs are the CLI as a reader (it loads the model and forwards the sync). Variants are interleaved (the order
rotates every repetition) and the table shows medians; `ratio` is before / after. The outputs of `search`
are compared: alone and through the server must print the same bytes, and so must before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from _common import CORPORA, exit_cleanly_on_sigterm, median, table, write_result

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
QUERY = "how do I embed a PDF in a note"
PROTOCOL = "2025-06-18"

MINIMAL_SERVER = textwrap.dedent(
    '''
    """The least an MCP server on the `mcp` SDK can be: one tool, stdio."""
    import asyncio
    from typing import Any

    import mcp_types as types
    from mcp.server import Server, ServerRequestContext
    from mcp.server.stdio import stdio_server


    async def list_tools(_: ServerRequestContext[Any], __: Any) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        return types.ListToolsResult(tools=[types.Tool(name="echo", description="Echo", input_schema=schema)])


    async def call_tool(_: ServerRequestContext[Any], params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text=str(params.arguments))])


    async def main() -> None:
        server: Server[Any] = Server("minimal", on_list_tools=list_tools, on_call_tool=call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


    asyncio.run(main())
    '''
)


@dataclass(frozen=True)
class Code:
    """One version of ragdown's code: where its `src/` is, and its own cache root and folder copies."""

    name: str
    src: Path
    home: Path
    no_bytecode: Path | None = None  # an empty folder as PYTHONPYCACHEPREFIX: every module compiled at start

    def env(self, embedder: str, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
        if self.no_bytecode is not None:
            env.update(PYTHONPYCACHEPREFIX=str(self.no_bytecode), PYTHONDONTWRITEBYTECODE="1")
        env.update(
            PYTHONPATH=str(self.src),
            HOME=str(self.home),
            XDG_CACHE_HOME=str(self.home / "cache"),
            RAGDOWN_EMBEDDER=embedder,
            RAGDOWN_LOG_LEVEL="WARNING",
        )
        env.update(extra)
        return env

    def folder(self, embedder: str, served: bool) -> Path:
        return self.home / f"vault-{embedder}-{'served' if served else 'alone'}"


@dataclass
class Variant:
    key: str
    label: str
    code: str
    argv: list[str]
    env: dict[str, str]
    kind: str = "run"  # run | handshake
    times: list[float] = field(default_factory=list)
    list_times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # user + sys of the process (at tools/list: handshakes)
    outputs: set[str] = field(default_factory=set)


def ragdown_argv(*args: str) -> list[str]:
    script = Path(sys.executable).with_name("ragdown")
    if script.is_file():
        return [str(script), *args]
    return [sys.executable, "-c", "import sys; from ragdown.cli.main import main; sys.exit(main())", *args]


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _process_cpu(pid: int) -> float:
    """User + sys seconds of a running process so far (`/proc/PID/stat`, its threads included)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_once(variant: Variant) -> None:
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(variant.argv, env=variant.env, capture_output=True, text=True, timeout=600)
    variant.times.append(time.perf_counter() - start)
    variant.cpu.append(_children_cpu() - cpu)
    if done.returncode != 0:
        raise SystemExit(f"{variant.label} ({variant.code}) failed: {done.stderr.strip()[-2000:]}")
    if variant.key.startswith("search"):
        variant.outputs.add(done.stdout)


def _line(obj: dict[str, object]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def _read_answer(proc: subprocess.Popen[bytes], want_id: int) -> None:
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
            return


def handshake_once(variant: Variant) -> None:
    """Spawn, send `initialize` at once, time its answer; then `tools/list`; then close stdin."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        variant.argv,
        env=variant.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    try:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        }
        proc.stdin.write(_line(init))
        proc.stdin.flush()
        _read_answer(proc, 1)
        variant.times.append(time.perf_counter() - start)
        proc.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.write(_line({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}))
        proc.stdin.flush()
        _read_answer(proc, 2)
        variant.list_times.append(time.perf_counter() - start)
        variant.cpu.append(_process_cpu(proc.pid))
        proc.stdin.close()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def data_dir_of(code: Code, embedder: str, folder: Path) -> Path:
    """Where that code's `ragdown stdio` keeps the folder's index (the current code's rule; unchanged)."""
    from ragdown.core.config import Settings

    return Settings.from_env(code.env(embedder)).with_docs_dir(folder.resolve()).data_dir("stdio")


def start_server(code: Code, embedder: str, folder: Path) -> subprocess.Popen[bytes]:
    """A `ragdown stdio` serving `folder`, held open (its stdin is never closed) until the run ends."""
    env = code.env(embedder, RAGDOWN_DOCS_DIR=str(folder))
    proc = subprocess.Popen(
        ragdown_argv("stdio"),
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    sock = data_dir_of(code, embedder, folder) / "primary.sock"
    deadline = time.monotonic() + 120
    while not sock.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the {code.name} server on {folder} did not become the primary")
        time.sleep(0.05)
    # The primary syncs once it has loaded the model; a forwarded no-change sync returns when that is done.
    subprocess.run(
        ragdown_argv("index", str(folder)), env=code.env(embedder), capture_output=True, timeout=600
    )
    return proc


def build(codes: Sequence[Code], embedders: Sequence[str], corpus: Path) -> None:
    for code in codes:
        for embedder in embedders:
            for served in (False, True):
                folder = code.folder(embedder, served)
                shutil.copytree(corpus, folder)
                started = time.perf_counter()
                done = subprocess.run(
                    ragdown_argv("index", str(folder)), env=code.env(embedder), capture_output=True, text=True
                )
                if done.returncode != 0:
                    raise SystemExit(f"indexing {folder} with {code.name} failed: {done.stderr[-2000:]}")
                print(
                    f"  built {folder.name} ({code.name}) in {time.perf_counter() - started:.1f} s",
                    file=sys.stderr,
                )


def variants(codes: Sequence[Code], embedders: Sequence[str], minimal: Path) -> list[Variant]:
    out: list[Variant] = []
    first = codes[0]
    out.append(
        Variant(
            "floor-search",
            'floor of a search alone: python -c "import numpy, sqlite3"',
            "floor",
            [sys.executable, "-c", "import numpy, sqlite3"],
            first.env("hash"),
        )
    )
    out.append(
        Variant(
            "handshake-minimal",
            "MCP handshake, minimal server on the same SDK",
            "sdk",
            [sys.executable, str(minimal)],
            first.env("hash"),
            kind="handshake",
        )
    )
    for code in codes:
        out.append(
            Variant("version", "ragdown --version", code.name, ragdown_argv("--version"), code.env("hash"))
        )
        for emb in embedders:
            alone, served = code.folder(emb, False), code.folder(emb, True)
            handshake_env = code.env(emb, RAGDOWN_DOCS_DIR=str(alone))
            out += [
                Variant(
                    f"handshake-{emb}",
                    f"MCP handshake, ragdown stdio, {emb}",
                    code.name,
                    ragdown_argv("stdio"),
                    handshake_env,
                    kind="handshake",
                ),
                Variant(
                    f"search-{emb}-alone",
                    f"search, {emb}, alone",
                    code.name,
                    ragdown_argv("search", str(alone), QUERY),
                    code.env(emb),
                ),
                Variant(
                    f"search-{emb}-served",
                    f"search, {emb}, server running",
                    code.name,
                    ragdown_argv("search", str(served), QUERY),
                    code.env(emb),
                ),
                Variant(
                    f"index-{emb}-alone",
                    f"index (no change), {emb}, alone",
                    code.name,
                    ragdown_argv("index", str(alone)),
                    code.env(emb),
                ),
                Variant(
                    f"index-{emb}-served",
                    f"index (no change), {emb}, server running",
                    code.name,
                    ragdown_argv("index", str(served)),
                    code.env(emb),
                ),
            ]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    exit_cleanly_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument(
        "--warmup", type=int, default=1, help="untimed rounds first (byte-code caches, page cache)"
    )
    ap.add_argument("--before", type=Path, help="an older src/ to run side by side (read only)")
    ap.add_argument("--corpus", default="obsidian-help", choices=sorted(CORPORA))
    ap.add_argument(
        "--corpus-dir", type=Path, help="the corpus's folder, where it is not beside the checkout"
    )
    ap.add_argument("--embedders", default="hash,minilm")
    ap.add_argument(
        "--no-bytecode", action="store_true", help="no byte-code caches: every module compiled at start"
    )
    args = ap.parse_args(argv)
    embedders = [e for e in args.embedders.split(",") if e]
    with tempfile.TemporaryDirectory(prefix="ragdown-bench-startup-") as tmp:
        root = Path(tmp)
        empty = root / "no-bytecode" if args.no_bytecode else None
        if empty is not None:
            empty.mkdir()
        codes = [Code("after", SRC, root / "after", empty)]
        if args.before is not None:
            codes.append(Code("before", args.before.resolve(), root / "before", empty))
        minimal = root / "minimal_server.py"
        minimal.write_text(MINIMAL_SERVER, encoding="utf-8")
        print("building the indexes", file=sys.stderr)
        build(codes, embedders, args.corpus_dir or CORPORA[args.corpus])
        servers = [start_server(c, e, c.folder(e, True)) for c in codes for e in embedders]
        try:
            runs = variants(codes, embedders, minimal)
            for rep in range(args.warmup + args.reps):
                shift = rep % len(runs)
                for variant in runs[shift:] + runs[:shift]:
                    (handshake_once if variant.kind == "handshake" else run_once)(variant)
                if rep < args.warmup:
                    for variant in runs:
                        variant.times.clear()
                        variant.list_times.clear()
                        variant.cpu.clear()
                print(f"  round {rep + 1}/{args.warmup + args.reps} done", file=sys.stderr)
        finally:
            for proc in servers:
                assert proc.stdin is not None
                proc.stdin.close()
            for proc in servers:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        report(runs, codes, args)
    return 0


def _cells(after: Sequence[float], before: Sequence[float] | None) -> list[str]:
    a = median(after)
    if not before:
        return [f"{a:.3f}", "", ""]
    b = median(before)
    return [f"{a:.3f}", f"{b:.3f}", f"{b / a:.2f}x"]


def _gap(after: Sequence[float], before: Sequence[float] | None, base: Sequence[float]) -> list[str]:
    floor = median(base)
    return [f"{median(after) - floor:+.3f}", f"{median(before) - floor:+.3f}" if before else "", ""]


def report(runs: list[Variant], codes: Sequence[Code], args: argparse.Namespace) -> None:
    """Medians: wall seconds and CPU seconds (user + sys), after and before side by side; the handshakes
    to `tools/list` and the search alone also as their distance from their floors (the minimal server, and
    `import numpy, sqlite3`)."""
    by = {(v.key, v.code): v for v in runs}
    keys = list(dict.fromkeys(v.key for v in runs))
    has_before = any(c.name == "before" for c in codes)
    rows: list[list[object]] = []
    figures: dict[str, dict[str, float]] = {}
    minimal = by[("handshake-minimal", "sdk")]
    floor = by[("floor-search", "floor")]
    for key in keys:
        label = next(v.label for v in runs if v.key == key)
        if key in ("handshake-minimal", "floor-search"):
            own = minimal if key == "handshake-minimal" else floor
            figures[key] = {"wall": median(own.times), "cpu": median(own.cpu)}
            if own is minimal:
                figures[key]["wall_tools_list"] = median(minimal.list_times)
                rows.append([label + " (initialize)", *_cells(own.times, None), "", "", ""])
                rows.append(["  … first tools/list", *_cells(own.list_times, None), *_cells(own.cpu, None)])
            else:
                rows.append([label, *_cells(own.times, None), *_cells(own.cpu, None)])
            continue
        after, before = by[(key, "after")], by.get((key, "before"))
        figures[key] = {"after": median(after.times), "after_cpu": median(after.cpu)}
        if before:
            figures[key] |= {"before": median(before.times), "before_cpu": median(before.cpu)}
        if after.kind == "handshake":
            initialize = _cells(after.times, before.times if before else None)
            rows.append([label + " (initialize)", *initialize, "", "", ""])
            rows.append(
                [
                    "  … first tools/list",
                    *_cells(after.list_times, before.list_times if before else None),
                    *_cells(after.cpu, before.cpu if before else None),
                ]
            )
            figures[key] |= {"after_tools_list": median(after.list_times)}
            rows.append(
                [
                    "  … minus the minimal server",
                    *_gap(after.list_times, before.list_times if before else None, minimal.list_times),
                    *_gap(after.cpu, before.cpu if before else None, minimal.cpu),
                ]
            )
            continue
        rows.append(
            [
                label,
                *_cells(after.times, before.times if before else None),
                *_cells(after.cpu, before.cpu if before else None),
            ]
        )
        if key == "search-hash-alone":
            rows.append(
                [
                    "  … minus the floor (import numpy, sqlite3)",
                    *_gap(after.times, before.times if before else None, floor.times),
                    *_gap(after.cpu, before.cpu if before else None, floor.cpu),
                ]
            )
    headers = [
        "variant (median s, whole process)",
        "wall after",
        "wall before" if has_before else "",
        "before/after",
        "CPU after",
        "CPU before" if has_before else "",
        "before/after",
    ]
    print(table(headers, rows))
    print(f"byte-code caches: {'none (compiled at every start)' if args.no_bytecode else 'as installed'}")

    checks: dict[str, bool] = {}
    for key in keys:
        if not key.startswith("search-"):
            continue
        outs = [o for v in runs if v.key == key for o in v.outputs]
        checks[f"{key}: the same output every run, before and after"] = len(set(outs)) == 1
    for emb in {k.split("-")[1] for k in keys if k.startswith("search-")}:
        alone = by[(f"search-{emb}-alone", "after")].outputs
        served = by[(f"search-{emb}-served", "after")].outputs
        checks[f"search-{emb}: alone and through the server print the same"] = alone == served
    for name, ok in checks.items():
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
    path = write_result(
        "startup",
        {
            "reps": args.reps,
            "corpus": args.corpus,
            "query": QUERY,
            "no_bytecode": args.no_bytecode,
            "figures": figures,
            "samples": {f"{v.key}/{v.code}": v.times for v in runs},
            "cpu_samples": {f"{v.key}/{v.code}": v.cpu for v in runs},
            "checks": checks,
        },
    )
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
