"""Real third-party clients against `ragdown serve`: the MCP Inspector CLI and Claude Code's CLI, from npm.

They skip, saying so, only where `npx` is missing. The packages come through npx, fetched once into npm's
cache (`tests/npm_clients.py`); each command runs with a temporary HOME, so nothing of the user's
configuration is read or written.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.http.conftest import TOKEN, StartServer, ops_folder
from tests.npm_clients import CLAUDE_CODE, FIRST_RUN_TIMEOUT_S, INSPECTOR, NPX, npm_command

pytestmark = [
    pytest.mark.skipif(NPX is None, reason="npx (Node.js) is not installed: the npm clients cannot run"),
    pytest.mark.timeout(FIRST_RUN_TIMEOUT_S + 300),  # the first use on a machine fetches the packages
]


@pytest.fixture(scope="module")
def npm_bin() -> dict[str, Path]:
    return {"inspector": npm_command(INSPECTOR), "claude": npm_command(CLAUDE_CODE)}


def run(cmd: list[str], home: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "NO_UPDATE_NOTIFIER": "1", "DISABLE_AUTOUPDATER": "1"}
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=home)


def test_the_inspector_calls_recall_over_http_with_the_bearer_header(
    docs: Path, start_server: StartServer, npm_bin: dict[str, Path], tmp_path: Path
) -> None:
    ops_folder(docs)
    server = start_server(docs)
    home = tmp_path / "home"
    home.mkdir()
    base = [str(npm_bin["inspector"]), "--cli", f"{server.url}/mcp/ops", "--transport", "http"]
    listed = run([*base, "--header", f"Authorization: Bearer {TOKEN}", "--method", "tools/list"], home)
    assert listed.returncode == 0, listed.stderr
    names = {t["name"] for t in json.loads(listed.stdout)["tools"]}
    assert {"ragdown_recall", "ragdown_read_doc", "ragdown_context"} <= names
    called = run(
        [
            *base,
            "--header",
            f"Authorization: Bearer {TOKEN}",
            "--method",
            "tools/call",
            "--tool-name",
            "ragdown_recall",
            "--tool-arg",
            "query=restore twice",
        ],
        home,
    )
    assert called.returncode == 0, called.stderr
    result = json.loads(called.stdout)
    assert result["isError"] is False
    assert result["content"][0]["text"].startswith("[1] backups.md:7-7 — Backups › Restore")
    refused = run([*base, "--header", "Authorization: Bearer wrong", "--method", "tools/list"], home)
    assert refused.returncode != 0


def test_claude_code_connects_to_the_folder_endpoint_and_fails_with_a_wrong_token(
    docs: Path, start_server: StartServer, npm_bin: dict[str, Path], tmp_path: Path
) -> None:
    ops_folder(docs)
    server = start_server(docs)
    home = tmp_path / "home"
    home.mkdir()
    claude = str(npm_bin["claude"])
    url = f"{server.url}/mcp/ops"
    good = [
        "mcp",
        "add",
        "--transport",
        "http",
        "ragdown-ops",
        url,
        "--header",
        f"Authorization: Bearer {TOKEN}",
    ]
    bad = ["mcp", "add", "--transport", "http", "ragdown-bad", url, "--header", "Authorization: Bearer wrong"]
    assert run([claude, *good], home).returncode == 0
    assert run([claude, *bad], home).returncode == 0
    listed = run([claude, "mcp", "list"], home)
    assert listed.returncode == 0, listed.stderr
    lines = {
        line.split(":", 1)[0]: line for line in listed.stdout.splitlines() if line.startswith("ragdown-")
    }
    assert "Connected" in lines["ragdown-ops"], listed.stdout
    assert "Failed" in lines["ragdown-bad"], listed.stdout
