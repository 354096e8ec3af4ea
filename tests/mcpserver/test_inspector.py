"""`ragdown stdio` driven end to end by a third-party client: the MCP Inspector's CLI, from npm through npx.

The Inspector launches `<python> -m ragdown.cli stdio` itself, with the environment given by `-e`, exactly
as an MCP client configured with that command would. It skips, saying so, only where `npx` is missing;
where `npx` is present the package is fetched on first use (into npm's own cache), which can take a while,
and its command then run directly.
The major version is pinned (the CLI's flags changed between 1 and 2).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_ENV, write
from tests.npm_clients import FIRST_RUN_TIMEOUT_S, INSPECTOR, NPX, npm_command, npx_env

RUN_TIMEOUT_S = 180
pytestmark = [
    pytest.mark.skipif(NPX is None, reason="npx (Node.js) is not installed: the MCP Inspector cannot run"),
    # Above pytest's default: the first test's setup may be the download.
    pytest.mark.timeout(FIRST_RUN_TIMEOUT_S + 2 * RUN_TIMEOUT_S),
]
BACKUPS = "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice."


@pytest.fixture(scope="module")
def inspector() -> Path:
    return npm_command(INSPECTOR)


def inspect(
    inspector: Path, tmp_path: Path, docs: Path, *method: str, **env: str
) -> tuple[dict[str, Any], int]:
    """One Inspector CLI run against a fresh `ragdown stdio`: its JSON answer and exit status."""
    assert NPX is not None
    server_env = {
        **TEST_ENV,
        "RAGDOWN_DOCS_DIR": str(docs),
        "RAGDOWN_DATA_DIR": str(tmp_path / "data"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        **env,
    }
    flags = [arg for key, value in server_env.items() for arg in ("-e", f"{key}={value}")]
    command = [str(inspector), "--cli", *flags, sys.executable, "-m", "ragdown.cli", "stdio", *method]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        env=npx_env(),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )
    try:
        answer: dict[str, Any] = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise AssertionError(
            f"the Inspector answered no JSON (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        ) from None
    return answer, done.returncode


@pytest.fixture
def docs(docs: Path) -> Path:
    write(docs, "ops/backups.md", BACKUPS)
    return docs


def test_the_inspector_lists_the_tools(inspector: Path, tmp_path: Path, docs: Path) -> None:
    listed, status = inspect(inspector, tmp_path, docs, "--method", "tools/list")
    assert status == 0
    tools = {t["name"]: t for t in listed["tools"]}
    assert sorted(tools) == sorted(
        [
            "ragdown_backlinks",
            "ragdown_context",
            "ragdown_delete",
            "ragdown_diff",
            "ragdown_edit",
            "ragdown_history",
            "ragdown_list",
            "ragdown_move",
            "ragdown_outline",
            "ragdown_read_doc",
            "ragdown_recall",
            "ragdown_reindex",
            "ragdown_remember",
            "ragdown_restore",
            "ragdown_stats",
            "ragdown_write",
        ]
    )
    recall = tools["ragdown_recall"]
    assert recall["inputSchema"]["required"] == ["query"]
    assert recall["annotations"]["readOnlyHint"] is True
    assert tools["ragdown_delete"]["annotations"]["destructiveHint"] is True


def test_the_inspector_calls_recall_and_gets_refusals_as_tool_errors(
    inspector: Path, tmp_path: Path, docs: Path
) -> None:
    called, status = inspect(
        inspector,
        tmp_path,
        docs,
        "--method",
        "tools/call",
        "--tool-name",
        "ragdown_recall",
        "--tool-arg",
        "query=how do I restore the backups",
        "--tool-arg",
        "top_k=1",
    )
    assert status == 0
    assert called["isError"] is False
    text = called["content"][0]["text"]
    assert text.startswith("[1] ops/backups.md:7-7 — Backups › Restore (similarity ")
    assert text.endswith("\nRun pg_restore twice.")
    # A refusal as the Inspector sees it (an isError result, never a protocol error) is checked below, with
    # MarkIndex's envelope (each Inspector run starts a server of its own, so the runs here are few).


def test_the_inspector_drives_the_markindex_tool_set(inspector: Path, tmp_path: Path, docs: Path) -> None:
    """A MarkIndex client's calls, unchanged: list the five tools, walk to a node, read it, search."""
    write(docs, "guides/setup.md", BACKUPS)
    listed, status = inspect(inspector, tmp_path, docs, "--method", "tools/list", RAGDOWN_TOOLSET="markindex")
    assert status == 0
    assert sorted(t["name"] for t in listed["tools"]) == [
        "browse_documents",
        "get_document",
        "get_document_structure",
        "get_node_content",
        "search_documents",
    ]
    assert all(t["annotations"]["readOnlyHint"] is True for t in listed["tools"])

    def call(tool: str, **arguments: str) -> dict[str, Any]:
        args = [arg for key, value in arguments.items() for arg in ("--tool-arg", f"{key}={value}")]
        answer, code = inspect(
            inspector,
            tmp_path,
            docs,
            "--method",
            "tools/call",
            "--tool-name",
            tool,
            *args,
            RAGDOWN_TOOLSET="markindex",
        )
        body: dict[str, Any] = json.loads(answer["content"][0]["text"])
        # A failure is still an envelope for MarkIndex's clients, and an isError result for every client
        # (the Inspector exits non-zero on one).
        assert (code == 0, answer.get("isError", False)) == (body["success"], not body["success"]), answer
        return body

    # One call that succeeds and one that fails: each an Inspector run with a server of its own (browse and
    # structure answer the same envelope, in-process in tests/mcpserver/test_outline.py).
    found = call("search_documents", query="pg_restore", folder="guides")
    assert [r["doc_path"] for r in found["data"]["results"]] == ["guides/setup.md"], found
    missing = call("get_document", doc_path="guides/setpu.md")
    assert (missing["success"], missing["code"]) == (False, "DOCUMENT_NOT_FOUND")
    assert missing["details"]["suggestions"][0] == "guides/setup.md"
