"""Which files count (issue 12): gitignore rules with pathspec's semantics, `.ragdownignore`, a folder's
include/exclude settings and `ragdown index --ignore`; an ignored document leaves the index and comes back."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.access.scope import Scope
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.storage.filter_sql import FileFilter
from ragdown.vault.ignore import IgnoreRules, ignored_reason
from tests.conftest import REPO, isolated_env, write
from tests.mcpserver.conftest import Endpoint

pytestmark = pytest.mark.anyio


def indexed(engine: Engine) -> list[str]:
    return [f.path for f in engine.require_store().list_files(FileFilter(hide_superseded=False))]


def test_nested_gitignores_and_negation(docs: Path, open_engine: Callable[..., Engine]) -> None:
    write(docs, ".gitignore", "drafts/\n*.tmp.md\nsecret*.md\n")
    write(docs, "notes/.gitignore", "!secret-ok.md\nlocal/\n")
    for rel in [
        "a.md",
        "x.tmp.md",
        "drafts/d.md",
        "secret.md",
        "notes/secret-ok.md",
        "notes/secret-no.md",
        "notes/local/l.md",
        "notes/keep.md",
    ]:
        write(docs, rel, f"# {rel}\n")
    engine = open_engine(docs)
    assert indexed(engine) == ["a.md", "notes/keep.md", "notes/secret-ok.md"]


def test_a_rule_deep_in_a_tree_without_rules_above_still_applies(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    """The walk asks nothing about entries where no rule applies; a `.gitignore` three levels down, with
    none above it, still leaves out what it names there and below."""
    write(docs, "a/b/c/.gitignore", "skip.md\nlocal/\n")
    for rel in [
        "a/x.md",
        "a/b/skip.md",
        "a/b/c/skip.md",
        "a/b/c/keep.md",
        "a/b/c/local/l.md",
        "a/b/c/d/skip.md",
    ]:
        write(docs, rel, f"# {rel}\n")
    assert indexed(open_engine(docs)) == ["a/b/c/keep.md", "a/b/skip.md", "a/x.md"]
    rules = IgnoreRules(docs, folders=False)
    assert (rules.quiet("a/b"), rules.quiet("a/b/c"), rules.quiet("a/b/c/d")) == (True, False, False)


def test_a_directory_ignored_above_cannot_be_brought_back_below(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, ".gitignore", "build/\n")
    write(docs, "build/.gitignore", "!keep.md\n")
    write(docs, "build/keep.md", "# Keep\n")
    write(docs, "ok.md", "# OK\n")
    assert indexed(open_engine(docs)) == ["ok.md"]
    assert ignored_reason(docs, "build/keep.md", folders=False) == ".gitignore"


def test_git_info_exclude_and_ragdownignore(docs: Path, open_engine: Callable[..., Engine]) -> None:
    write(docs, ".git/info/exclude", "private.md\n")
    write(docs, ".ragdownignore", "archive/\n")
    write(docs, ".gitignore", "!archive/\n")  # .ragdownignore only ever excludes
    for rel in ["private.md", "archive/old.md", "new.md"]:
        write(docs, rel, f"# {rel}\n")
    assert indexed(open_engine(docs)) == ["new.md"]
    assert ignored_reason(docs, "archive/old.md", folders=False) == ".ragdownignore"


def test_markindexignore_at_the_root_is_read(docs: Path, open_engine: Callable[..., Engine]) -> None:
    """MarkIndex's `.markindexignore` (seed 001): the same gitignore syntax, only excludes (a `!` in it cannot
    bring back what a `.gitignore` leaves out), read beside `.ragdownignore`."""
    write(docs, ".markindexignore", "drafts/\n*.tmp.md\n!kept.md\n")
    write(docs, ".gitignore", "kept.md\n")
    for rel in ["drafts/d.md", "x.tmp.md", "kept.md", "new.md", "sub/y.tmp.md"]:
        write(docs, rel, f"# {rel}\n")
    assert indexed(open_engine(docs)) == ["new.md"]
    assert ignored_reason(docs, "drafts/d.md", folders=False) == ".markindexignore"
    assert ignored_reason(docs, "sub/y.tmp.md", folders=False) == ".markindexignore"


def test_folder_include_and_exclude_settings_in_serve_mode(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(
        docs,
        "wiki/.ragdown.json",
        json.dumps({"include": ["pages/**", "index.md"], "exclude": ["pages/wip-*"]}),
    )
    write(docs, "other/.ragdown.json", json.dumps({"exclude": "scratch.md"}))
    for rel in [
        "wiki/index.md",
        "wiki/pages/a.md",
        "wiki/pages/wip-b.md",
        "wiki/stray.md",
        "other/scratch.md",
        "other/kept.md",
    ]:
        write(docs, rel, f"# {rel}\n")
    engine = open_engine(docs, "serve")
    assert indexed(engine) == ["other/kept.md", "wiki/index.md", "wiki/pages/a.md"]
    rules = IgnoreRules(docs, folders=True)
    assert rules.why("wiki/stray.md", is_dir=False) == "the folder's include setting"
    assert rules.why("wiki/pages/wip-b.md", is_dir=False) == "the folder's exclude setting"


def test_an_ignored_document_leaves_the_index_and_comes_back(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, "a.md", "# A\n")
    write(docs, "b.md", "# B\n")
    engine = open_engine(docs)
    assert indexed(engine) == ["a.md", "b.md"]
    write(docs, ".gitignore", "b.md\n")
    report = engine.sync()
    assert report["removed"] == 1
    assert indexed(engine) == ["a.md"]
    (docs / ".gitignore").unlink()
    report = engine.sync()
    assert report["added"] == 1
    assert indexed(engine) == ["a.md", "b.md"]


def test_ragdown_index_ignore_adds_exclusions(tmp_path: Path, docs: Path) -> None:
    for rel in ["a.md", "tmp/b.md", "c.draft.md"]:
        write(docs, rel, f"# {rel}\n")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragdown.cli",
            "index",
            str(docs),
            "--json",
            "--ignore",
            "tmp/",
            "--ignore",
            "*.draft.md",
        ],
        cwd=REPO,
        env=isolated_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.strip().splitlines()[-1])["added"] == 1


async def test_writes_to_ignored_paths_are_refused(docs: Path, open_engine: Callable[..., Engine]) -> None:
    write(docs, ".gitignore", "drafts/\nprivate.md\n")
    write(docs, "ok.md", "# OK\n")
    engine = open_engine(docs)
    end = Endpoint(Runtime(engine.settings, engine), Scope(root=docs, folder=""))
    for name, args in [
        ("ragdown_write", {"path": "drafts/new.md", "text": "# New"}),
        ("ragdown_write", {"path": "private.md", "text": "# P"}),
        ("ragdown_move", {"from": "ok.md", "to": "drafts/ok.md"}),
    ]:
        message = await end.error(name, **args)
        assert "is ignored (by .gitignore)" in message, message
        assert "never be indexed" in message, message
    assert not (docs / "drafts/new.md").exists()
    assert not (docs / "private.md").exists()
    assert (docs / "ok.md").exists()
    assert (await end.ok("ragdown_write", path="fine.md", text="# Fine")).startswith("created fine.md")
