"""The `ragdown index` and `ragdown search` commands, run as real processes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BENCH, REPO, isolated_env, write

VAULT = BENCH / "obsidian-help" / "vault"


def ragdown(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragdown.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.skipif(not VAULT.is_dir(), reason="the shared Obsidian vault is not beside this checkout")
def test_indexes_the_obsidian_vault_and_a_second_run_is_a_no_op(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(VAULT, vault)
    env = isolated_env(tmp_path)
    first = ragdown(env, "index", str(vault), "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout.strip().splitlines()[-1])
    assert set(report) == {"added", "updated", "removed", "unchanged", "chunks", "ms", "skipped", "warnings"}
    assert (report["added"], report["updated"], report["removed"], report["unchanged"]) == (173, 0, 0, 0)
    assert report["chunks"] > 173

    second = ragdown(env, "index", str(vault), "--json")
    again = json.loads(second.stdout.strip().splitlines()[-1])
    assert (again["added"], again["updated"], again["removed"], again["unchanged"], again["chunks"]) == (
        0,
        0,
        0,
        173,
        0,
    )


def test_search_prints_one_line_per_hit_and_recall_json(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    write(docs, "ops/backups.md", "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.")
    env = isolated_env(tmp_path)
    plain = ragdown(env, "search", str(docs), "restore twice", "--top-k", "1")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.splitlines() == [plain.stdout.splitlines()[0]]
    line = plain.stdout.strip()
    assert line.startswith("ops/backups.md:7-7 — Backups › Restore (similarity 0.")
    as_json = ragdown(env, "search", str(docs), "restore twice", "--json", "--path-prefix", "./ops/")
    hit = json.loads(as_json.stdout)["hits"][0]
    assert list(hit) == [
        "path",
        "title",
        "heading",
        "line_start",
        "line_end",
        "similarity",
        "score",
        "sources",
        "tags",
        "modified",
        "text",
        "node_id",
    ]
    assert (hit["path"], hit["heading"], hit["text"]) == (
        "ops/backups.md",
        "Backups › Restore",
        "Run pg_restore twice.",
    )
    nothing = ragdown(env, "search", str(docs), "restore", "--path-prefix", "elsewhere")
    assert nothing.stdout.strip() == "No matching documents."


def test_bad_arguments_are_clear_errors(tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    missing = ragdown(env, "index", str(tmp_path / "nope"))
    assert missing.returncode == 2
    assert "not a directory" in missing.stderr
    assert "Traceback" not in missing.stderr
    docs = tmp_path / "docs"
    docs.mkdir()
    outside = ragdown(env, "search", str(docs), "x", "--path-prefix", "../etc")
    assert outside.returncode == 2
    assert "outside the docs folder" in outside.stderr


def recall_refusal(**arguments: object) -> str:
    """What `ragdown_recall` (over MCP and REST) answers to these arguments: its refusal's message."""
    from ragdown.core.errors import Refusal
    from ragdown.tools.read import RECALL

    with pytest.raises(Refusal) as refused:
        RECALL.parse(dict(arguments))
    return refused.value.message


def test_search_refuses_what_ragdown_recall_refuses_with_its_message(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty query, or a `top_k` outside 1-50, is refused by the tool's own argument model: the same
    message as MCP's, exit 2, nothing on stdout (it used to print every chunk, or clamp `top_k`). The
    command runs in this process (`main`): what a real process prints and exits with is the other tests'."""
    from ragdown.cli.main import main

    def search(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(["search", str(docs), *args])
        out, err = capsys.readouterr()
        return code, out, err

    docs = tmp_path / "docs"
    for n in range(60):
        write(docs, f"n{n}.md", f"# Note {n}\n\nrestore step {n}\n")
    for query, top_k in (
        ("", 8),
        ("   ", 8),
        ("restore", 0),
        ("restore", -5),
        ("restore", 500),
        ("restore", 51),
    ):
        code, out, err = search(query, "--top-k", str(top_k))
        assert (code, out) == (2, ""), (query, top_k, out[:200])
        assert err == f"ragdown: {recall_refusal(query=query, top_k=top_k)}\n"
        assert "Traceback" not in err
    assert "query" in search("")[2]
    for top_k in (1, 50):
        code, out, err = search("restore", "--top-k", str(top_k), "--json")
        assert code == 0, err
        assert len(json.loads(out)["hits"]) == top_k


def test_a_primary_declines_a_search_ragdown_recall_refuses(tmp_path: Path) -> None:
    """A primary asked over its socket checks the same way, and declines with the tool's message (the CLI
    then refuses it alone), instead of answering with a clamped `top_k`."""
    from ragdown.core.config import Settings, settings_environment
    from ragdown.engine.engine import Engine
    from ragdown.tools.cli_answers import answer

    docs = tmp_path / "docs"
    write(docs, "a.md", "# A\n\nrestore it\n")
    env = isolated_env(tmp_path, RAGDOWN_DATA_DIR=str(tmp_path / "data"))
    engine = Engine(Settings.from_env(env).with_docs_dir(docs), "stdio", docs_dir=docs)
    engine.start(background=False, initial_sync=False, watch=False)
    try:
        asked = {"op": "search", "root": str(docs.resolve()), "env": settings_environment(env), "tag": None}
        for query, top_k in (("", 8), ("restore", 0), ("restore", 500)):
            assert answer(engine, {**asked, "query": query, "top_k": top_k}) == {
                "ok": False,
                "error": recall_refusal(query=query, top_k=top_k),
            }
        found = answer(engine, {**asked, "query": "restore", "top_k": 1})
        assert found["ok"], found
        assert found["output"].startswith("a.md:")
    finally:
        engine.close()


def test_the_clis_quick_check_agrees_with_ragdown_recalls_model() -> None:
    """`check_search` loads the tool's model only for arguments it may refuse; what it lets through without
    the model, the model takes too, and what it refuses is the model's refusal."""
    from ragdown.core.errors import Refusal
    from ragdown.tools.cli_answers import SearchRequest, check_search
    from ragdown.tools.read import RECALL

    for query in ("", " ", "x", "restore twice"):
        for top_k in (-5, 0, 1, 8, 50, 51, 500):
            try:
                RECALL.parse({"query": query, "top_k": top_k})
                expected = None
            except Refusal as err:
                expected = err.message
            try:
                check_search(SearchRequest(query, top_k))
                got = None
            except Refusal as err:
                got = err.message
            assert got == expected, (query, top_k)
