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
    assert set(report) == {"added", "updated", "removed", "unchanged", "chunks", "ms", "skipped"}
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
