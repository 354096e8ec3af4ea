"""`ragdown search` and `ragdown index` ask a running primary (a real `ragdown stdio` process) over its socket
instead of opening the index and loading the model; they print exactly what they print alone."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragdown.core.config import Settings
from ragdown.storage.sqlite.primary import request, socket_path
from tests.cli.test_cli_imports import run_cli
from tests.conftest import REPO, isolated_env, write

SEARCHES: list[tuple[str, ...]] = [
    ("restore twice",),
    ("restore twice", "--top-k", "1"),
    ("snapshots", "--json", "--path-prefix", "./ops/"),
    ("note", "--tag", "ops"),
    ("restore", "--path-prefix", "nowhere/"),
]


@dataclass
class Served:
    docs: Path
    env: dict[str, str]
    tmp: Path
    alone: dict[tuple[str, ...], str]  # each search's output before any server ran
    server: subprocess.Popen[bytes] | None = None

    @property
    def sock(self) -> Path:
        return socket_path(Settings.from_env(self.env).with_docs_dir(self.docs.resolve()).data_dir("stdio"))


def start_stdio(docs: Path, env: dict[str, str], sock: Path) -> subprocess.Popen[bytes]:
    """A real `ragdown stdio` on `docs`, held open by its stdin; returned once it is the primary."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragdown.cli", "stdio"],
        cwd=REPO,
        env={**env, "RAGDOWN_DOCS_DIR": str(docs)},
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            if request(sock, {"op": "ping"}, timeout=2)["ok"]:
                return proc
        except OSError:
            pass
        assert proc.poll() is None, "ragdown stdio exited"
        assert time.monotonic() < deadline, "ragdown stdio never became the primary"
        time.sleep(0.05)


def stop(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def make_folder(tmp: Path) -> tuple[Path, dict[str, str]]:
    docs = tmp / "docs"
    write(
        docs,
        "ops/backups.md",
        "---\ntags: [ops]\n---\n# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun it twice.",
    )
    write(docs, "notes/today.md", "# Today\n\nA note about restore drills, see [[backups]].\n")
    write(docs, "notes/ops-note.md", "---\ntags: [ops]\n---\n# Ops note\n\nThe note of the ops team.\n")
    return docs, isolated_env(tmp)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("cli-server")
    docs, env = make_folder(tmp)
    alone = {}
    for search in SEARCHES:
        done, modules = run_cli(env, tmp, "search", str(docs), *search)
        assert "ragdown.engine.engine" in modules  # no server yet: the CLI works alone
        alone[search] = done.stdout
    state = Served(docs, env, tmp, alone)
    state.server = start_stdio(docs, env, state.sock)
    try:
        yield state
    finally:
        stop(state.server)


def test_search_through_the_server_prints_what_it_prints_alone(served: Served) -> None:
    assert served.alone[("restore", "--path-prefix", "nowhere/")] == "No matching documents.\n"
    assert json.loads(served.alone[("snapshots", "--json", "--path-prefix", "./ops/")])["hits"]
    for search, alone in served.alone.items():
        done, modules = run_cli(served.env, served.tmp, "search", str(served.docs), *search)
        assert done.stdout == alone, search
        # The answer came from the server: this process never opened the index nor built an embedder.
        assert {"ragdown.engine.engine", "ragdown.storage.sqlite.store", "numpy"} & modules == set(), search


def test_the_cli_s_own_settings_travel_with_the_request(served: Served) -> None:
    env = {**served.env, "RAGDOWN_TEXT_LIMIT": "12"}
    args = ("search", str(served.docs), "restore", "--json")
    through, modules = run_cli(env, served.tmp, *args)
    assert "ragdown.engine.engine" not in modules
    hits = json.loads(through.stdout)["hits"]
    default = json.loads(run_cli(served.env, served.tmp, *args)[0].stdout)["hits"]  # the server's settings
    assert [h["path"] for h in hits] == [d["path"] for d in default]
    assert hits[0]["text"] != default[0]["text"]  # cut at 12 characters

    stop_server = served.server
    assert stop_server is not None
    stop(stop_server)  # the same command alone, with the same settings, prints the same
    try:
        alone, modules = run_cli(env, served.tmp, *args)
        assert "ragdown.engine.engine" in modules
        assert alone.stdout == through.stdout
    finally:
        served.server = start_stdio(served.docs, served.env, served.sock)


def _masked(text: str) -> str:
    return re.sub(r"in \d+ ms|\"ms\":\d+", "in N ms", text)


def test_index_through_the_server_syncs_and_reports_as_alone(served: Served) -> None:
    done, modules = run_cli(served.env, served.tmp, "index", str(served.docs))
    assert "ragdown.engine.engine" not in modules
    assert _masked(done.stdout) == "0 added, 0 updated, 0 removed, 3 unchanged; 0 chunks in N ms\n"

    write(served.docs, "notes/new.md", "# Fresh\n\nA quokka appears.\n")
    try:
        done, modules = run_cli(served.env, served.tmp, "index", str(served.docs), "--json")
        assert "ragdown.engine.engine" not in modules
        report = json.loads(done.stdout)
        assert (report["added"], report["unchanged"]) == (1, 3)
        found, _ = run_cli(served.env, served.tmp, "search", str(served.docs), "quokka", "--top-k", "1")
        assert found.stdout.startswith("notes/new.md:")
    finally:
        (served.docs / "notes" / "new.md").unlink()
        run_cli(served.env, served.tmp, "index", str(served.docs))


def test_a_primary_that_would_answer_otherwise_is_not_asked(served: Served) -> None:
    # Another embedder than the server's: the CLI works alone (a reader of the server's index).
    other = {**served.env, "RAGDOWN_EMBEDDER": f"onnx:{served.tmp / 'no-such-model'}"}
    done, modules = run_cli(other, served.tmp, "search", str(served.docs), "restore twice")
    assert "ragdown.engine.engine" in modules
    assert done.stdout.startswith("ops/backups.md:")
    # Extra --ignore patterns need the index to themselves: the primary syncs with its own rules, so the
    # CLI says so instead of reporting a sync that ignored nothing.
    done, _ = run_cli(served.env, served.tmp, "index", str(served.docs), "--ignore", "notes/", check=False)
    assert done.returncode == 2
    assert "--ignore applies only when this command indexes" in done.stderr
    assert ".ragdownignore" in done.stderr
    found, _ = run_cli(served.env, served.tmp, "search", str(served.docs), "drills")
    assert found.stdout.startswith("notes/today.md:")


def test_a_data_dir_shared_with_another_folders_primary_is_refused(served: Served, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write(other, "b.md", "# Beta\n\nrestore twice, in another folder\n")
    shared = {**served.env, "RAGDOWN_DATA_DIR": str(served.sock.parent)}
    for args in (("search", str(other), "restore twice"), ("index", str(other))):
        done, _ = run_cli(shared, served.tmp, *args, check=False)
        assert done.returncode == 2, done.stdout
        assert f"holds the index of {served.docs.resolve()}, which a running ragdown serves" in done.stderr
        assert done.stdout == ""


def test_the_primary_declines_requests_it_cannot_answer_exactly(served: Served) -> None:
    base = {"op": "search", "query": "restore", "top_k": 3, "env": {}, "root": str(served.docs.resolve())}
    assert request(served.sock, {**base, "root": str(served.tmp)})["ok"] is False  # another folder
    assert request(served.sock, {**base, "env": "RAGDOWN_EMBEDDER=hash"})["ok"] is False
    assert request(served.sock, {**base, "top_k": "3"})["ok"] is False
    assert request(served.sock, {**base, "env": {"RAGDOWN_FUSION": "nope"}})["ok"] is False
    answer = request(served.sock, {**base, "env": dict(served.env)})
    assert answer["ok"] is True
    assert answer["output"].startswith("ops/backups.md:")


def test_a_dead_primary_s_stale_socket_leaves_the_cli_working_alone(tmp_path: Path) -> None:
    docs, env = make_folder(tmp_path)
    sock = socket_path(Settings.from_env(env).with_docs_dir(docs.resolve()).data_dir("stdio"))
    alone, _ = run_cli(env, tmp_path, "search", str(docs), "restore twice")
    proc = start_stdio(docs, env, sock)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert sock.exists()  # nobody removed it
    done, modules = run_cli(env, tmp_path, "search", str(docs), "restore twice")
    assert "ragdown.engine.engine" in modules
    assert done.stdout == alone.stdout
