"""Shared fixtures: real files in temp dirs, the deterministic `hash` embedder, real SQLite."""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from ragdown.core.config import Mode, Settings
from ragdown.engine.engine import Engine

# One line per test file instead of a dot per test (tests/progress.py).
pytest_plugins = ["tests.progress"]

# The behaviour spec's test environment (A13).
TEST_ENV = {
    "RAGDOWN_EMBEDDER": "hash",
    "RAGDOWN_WATCH": "false",
    "RAGDOWN_HOOK_MIN_SCORE": "0.2",
    "RAGDOWN_HOOK_MIN_RATIO": "0",
    # One ONNX thread per model: the suite runs three workers on two cores, where more only spin.
    "RAGDOWN_THREADS": "1",
}

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
BENCH = SHARED / "bench"


def write(root: Path, rel: str, text: str | bytes) -> Path:
    """Write a file the way editors do (temp file, then rename), so a watcher never reads half of it."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.tmp"
    tmp.write_bytes(text if isinstance(text, bytes) else text.encode())
    os.replace(tmp, path)
    return path


def pile(root: Path, under: str, n: int = 300) -> None:
    """`n` new notes under `under`, on disk only: the next sync has them all to index, long enough (about
    0.2 s with the `hash` embedder, against a one-file sync's milliseconds) that a change made with
    `RAGDOWN_WRITE_WAIT=0` always answers before its sync ends, not only when the machine is slow."""
    for i in range(n):
        write(root, f"{under}/{i}.md", f"# Pile {i}\n\nfiller text number {i}\n")


_LAUGHS = "\n".join(
    ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]" for p, n in zip("abcdefgh", "bcdefghi", strict=True)]
)
# Frontmatter a write is made with and its lints once crashed on (a 500 on REST and the web API, an error on
# ragdown_write after the document was written and versioned), and others of their kind.
HOSTILE_FRONTMATTER = {
    "deep": "k: " + "[" * 5000 + "]" * 5000,  # past libyaml's own limit: RecursionError in PyYAML's safe_load
    "nested": "k: " + "[" * 600 + "1" + "]" * 600,  # loads, deeper than anything walks it safely
    "huge-int": "n: " + "9" * 5000,  # int() past Python's 4,300 digits
    "huge-hex": "title: 0x" + "f" * 4000,  # reads as an int that str() cannot write
    "huge-float": "x: 1e999999\ny: " + "9" * 5000 + ".5",
    "laughs": _LAUGHS,
    "itself": "a: &a [*a, *a]",
    "far-date": "created: 9999999-01-01\nwhen: !!timestamp 9999999-01-01",
}


_models_dir: Path | None = None


def shared_models_dir() -> Path:
    """One model cache per test process (removed when it exits): the local copy a model gets on its first
    load (`gather_first.py`) is made once, not once per test. Tests of the cache itself name their own."""
    global _models_dir
    if _models_dir is None:
        _models_dir = Path(tempfile.mkdtemp(prefix="ragdown-test-models-"))
        atexit.register(shutil.rmtree, _models_dir, ignore_errors=True)
    return _models_dir


def isolated_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
    env.update(TEST_ENV)
    env["HOME"] = str(tmp_path / "home")
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["RAGDOWN_MODELS"] = str(shared_models_dir())
    env.update(extra)
    return env


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """This process's environment as a command run in-process (`cli.main.main`) should see it: no `RAGDOWN_*`
    variable of the caller's, the isolated ones (`isolated_env`) set. A module may define its own `env`."""
    values = isolated_env(tmp_path)
    for key in list(os.environ):
        if key.startswith("RAGDOWN_"):
            monkeypatch.delenv(key)
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    return root


# The index backends a test module runs its engine tests on: a module sets `INDEX_BACKENDS = BOTH_BACKENDS`
# and each test that builds its settings through `index_env` (`make_settings`, `open_engine`, stdio's
# `connect`) runs once per backend, `[sqlite]` and `[postgres]`; `@pytest.mark.backends("sqlite")` keeps a
# test that reads SQLite's file itself to that one.
BOTH_BACKENDS = ("sqlite", "postgres")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    backends = getattr(metafunc.module, "INDEX_BACKENDS", None)
    if not backends or "index_backend" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("backends")
    chosen = [b for b in backends if marker is None or b in marker.args]
    metafunc.parametrize("index_backend", chosen, indirect=True)


@pytest.fixture
def index_backend(request: pytest.FixtureRequest) -> str:
    """The backend this test's engines use: `sqlite` unless the module runs on both (`INDEX_BACKENDS`)."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture
def index_env(request: pytest.FixtureRequest, index_backend: str) -> dict[str, str]:
    """The variables that put a test's index on its backend: none for SQLite, the database's URL for
    PostgreSQL (a throwaway server per test process, `tests/storage/postgres/server.py`; each docs dir its own schema)."""
    if index_backend != "postgres":
        return {}
    url = request.getfixturevalue("postgres_url")
    return {"RAGDOWN_DATABASE_URL": str(url)}


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL 16+ server with pgvector for this test process, torn down after it (skipped, saying why,
    where none can start; in CI a failure)."""
    from tests.storage.postgres.server import throwaway_server

    with throwaway_server(tmp_path_factory.mktemp("postgres")) as url:
        yield url


@pytest.fixture
def make_settings(tmp_path: Path, index_env: dict[str, str]) -> Callable[..., Settings]:
    def make(docs_dir: Path, **extra: str) -> Settings:
        env = isolated_env(
            tmp_path,
            RAGDOWN_DOCS_DIR=str(docs_dir),
            RAGDOWN_DATA_DIR=str(tmp_path / "data"),
            **{**index_env, **extra},
        )
        return Settings.from_env(env)

    return make


@pytest.fixture
def open_engine(make_settings: Callable[..., Settings]) -> Iterator[Callable[..., Engine]]:
    engines: list[Engine] = []

    def make(docs_dir: Path, mode: Mode = "stdio", *, sync: bool = True, **extra: str) -> Engine:
        engine = Engine(make_settings(docs_dir, **extra), mode, docs_dir=docs_dir)
        engine.start(background=False, initial_sync=False, watch=False)
        engines.append(engine)
        if sync:
            engine.sync()
        return engine

    yield make
    for engine in engines:
        engine.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServeProcess:
    """`ragdown serve` running as its own process on a loopback port, its output in `log`."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    token: str | None = None  # its RAGDOWN_TOKEN: /api/status tells a caller without it only liveness

    def status(self) -> dict[str, object]:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        body: dict[str, object] = httpx.get(f"{self.url}/api/status", headers=headers, timeout=10).json()
        return body

    def wait_synced(self, timeout: float = 90) -> dict[str, object]:
        """Wait until the first sync has finished (status shows `last_sync` and no sync running)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"ragdown serve exited: {self.log.read_text()[-3000:]}")
            try:
                body = self.status()
                if body.get("ready") and body.get("last_sync") and not body.get("syncing"):
                    return body
            except (httpx.TransportError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"ragdown serve never finished its first sync: {self.log.read_text()[-3000:]}"
                )
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_serve(home: Path, env: dict[str, str], *, timeout: float = 60, attempts: int = 5) -> ServeProcess:
    """Start `ragdown serve` with the test environment plus `env` on a free port; return once it answers.

    The port is found free and then bound by the server: in between, another process (a parallel test's
    server or connection) may take it, and then the server exits saying so and this tries another port."""
    for _ in range(attempts):
        server = _serve_on(home, env, free_port(), timeout)
        if server is not None:
            return server
    raise AssertionError(f"ragdown serve found no free port in {attempts} attempts")


def _serve_on(home: Path, env: dict[str, str], port: int, timeout: float) -> ServeProcess | None:
    """The server on `port` once it answers; None when the port was taken before it could bind it."""
    log = home / f"serve-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ragdown.cli", "serve"],
            cwd=REPO,
            env=isolated_env(home, RAGDOWN_HOST="127.0.0.1", PORT=str(port), **env),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = ServeProcess(f"http://127.0.0.1:{port}", proc, log, env.get("RAGDOWN_TOKEN"))
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            output = log.read_text(errors="replace")
            if "address already in use" in output.lower():
                return None
            raise AssertionError(f"ragdown serve exited: {output[-3000:]}")
        try:
            httpx.get(f"{server.url}/api/status", timeout=2)
            return server
        except httpx.TransportError:
            if time.monotonic() > deadline:
                server.stop()
                raise AssertionError(f"ragdown serve never answered: {log.read_text()[-3000:]}") from None
            time.sleep(0.05)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> Generator[None]:
    """After the short summary, say on a line of its own how many browser tests were skipped and why.
    (Here, not in tests/web: under xdist the controlling process loads no conftest of a subdirectory.)"""
    yield
    from tests.storage.postgres.server import SKIP_REASON

    pg_skipped = [
        str(report.longrepr[2])
        for report in terminalreporter.stats.get("skipped", [])
        if isinstance(getattr(report, "longrepr", None), tuple) and SKIP_REASON in str(report.longrepr[2])
    ]
    if pg_skipped:
        terminalreporter.write_line(
            f"{len(pg_skipped)} {pg_skipped[0].split('Skipped: ', 1)[-1]}", yellow=True, bold=True
        )
    from tests.web.conftest import browser_missing

    reason = browser_missing()
    if reason is None:
        return
    skipped = sum(
        1
        for report in terminalreporter.stats.get("skipped", [])
        if isinstance(getattr(report, "longrepr", None), tuple) and reason in str(report.longrepr[2])
    )
    if skipped:
        terminalreporter.write_line(
            f"{skipped} browser tests skipped: {reason}. They need Debian's Chromium (/usr/bin/chromium, "
            "or RAGDOWN_TEST_CHROMIUM) and the playwright package; never `playwright install`.",
            yellow=True,
            bold=True,
        )
