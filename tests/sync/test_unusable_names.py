"""Files and directories whose names are not UTF-8: skipped with a reason, counted, never fatal (issue 8,
faults 1 and 2). Linux lets any bytes but `/` and NUL name a file; no database or JSON encoder takes them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.access.scope import Scope
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.storage.filter_sql import FileFilter
from ragdown.vault.folders import list_folders
from tests.conftest import REPO, isolated_env, write
from tests.mcpserver.conftest import Endpoint

pytestmark = pytest.mark.anyio


def bad_name(directory: Path, raw: bytes, text: str = "# Bad\n\nnever indexed") -> None:
    """A file named by bytes that are not UTF-8 (`raw`, e.g. b"bad\\xff.md"), made beside `directory`."""
    with open(os.path.join(os.fsencode(directory), raw), "w") as fh:
        fh.write(text)


def bad_dir(directory: Path, raw: bytes) -> bytes:
    path = os.path.join(os.fsencode(directory), raw)
    os.mkdir(path)
    return path


def test_ragdown_index_skips_a_file_named_in_bytes_and_indexes_the_rest(tmp_path: Path, docs: Path) -> None:
    write(docs, "f/ok.md", "# OK\n\nfound by its words")
    bad_name(docs / "f", b"bad\xff.md")
    run = subprocess.run(
        [sys.executable, "-m", "ragdown.cli", "index", str(docs), "--json"],
        cwd=REPO,
        env=isolated_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert (report["added"], report["skipped"]) == (1, 1)
    assert "bad\\udcff.md" in run.stderr
    assert "not valid UTF-8" in run.stderr


async def test_stats_count_the_skipped_file_and_recall_finds_the_rest(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, "ok.md", "# OK\n\nfound by its words")
    bad_name(docs, b"bad\xff.md")
    write(docs, "sub/inner.md", "# Inner\n\nalso found")
    bad_dir(docs, b"dir\xfe")
    bad_name(docs / os.fsdecode(b"dir\xfe"), b"hidden.md")
    engine = open_engine(docs)
    report = engine.sync()
    assert (report["added"], report["unchanged"], report["skipped"]) == (0, 2, 2)
    assert engine.require_store().counts(FileFilter()) == (2, 2)
    end = Endpoint(Runtime(engine.settings, engine), Scope(root=docs, folder=""))
    stats = json.loads(await end.ok("ragdown_stats", include_files=True))
    assert stats["files"] == 2
    assert stats["skipped"] == 2
    reasons = {item["path"]: item["reason"] for item in stats["skipped_files"]}
    assert set(reasons) == {"bad\\udcff.md", "dir\\udcfe/"}
    assert all("not valid UTF-8" in r for r in reasons.values())
    assert "ok.md:3-3" in await end.ok("ragdown_recall", query="found by its words")

    # Renamed to UTF-8, the file is indexed and leaves the skipped list.
    os.rename(os.path.join(os.fsencode(docs), b"bad\xff.md"), docs / "fixed.md")
    report = engine.sync()
    assert (report["added"], report["skipped"]) == (1, 1)
    assert json.loads(await end.ok("ragdown_stats"))["skipped"] == 1


def test_a_folder_named_in_bytes_is_listed_nowhere(docs: Path) -> None:
    write(docs, "work/a.md", "# A")
    bad_dir(docs, b"\x80")
    assert list_folders(docs) == ["work"]


def test_the_watcher_keeps_watching_beside_a_directory_named_in_bytes(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, "work/a.md", "# A\n\nfirst")
    bad_dir(docs, b"bad\xff")
    engine = open_engine(docs, "serve", RAGDOWN_WATCH="true")
    engine.set_watch(True)
    watcher = engine.watcher
    assert watcher is not None
    write(docs, "work/b.md", "# B\n\nsecond")
    deadline = time.monotonic() + 30
    while engine.require_store().get_file("work/b.md") is None:
        assert time.monotonic() < deadline, f"the watcher never synced work/b.md (mode {watcher.mode})"
        time.sleep(0.1)
    assert watcher.mode.startswith("watching")
    # A file named in bytes inside a watched directory is an event the watcher cannot read: it goes on.
    bad_name(docs / "work", b"c\xff.md")
    write(docs, "work/d.md", "# D\n\nthird")
    deadline = time.monotonic() + 30
    while engine.require_store().get_file("work/d.md") is None:
        assert time.monotonic() < deadline, f"the watcher never synced work/d.md (mode {watcher.mode})"
        time.sleep(0.1)
    assert watcher.mode.startswith("watching")


async def test_a_file_named_with_a_control_character_is_skipped_with_its_reason(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    """Issue 6 on disk: a name with a line break, an escape, a line separator or a bidirectional override,
    made outside ragdown, is skipped and counted with why (it would forge lines in every listing), and
    the walk goes on past it."""
    write(docs, "ok.md", "# OK\n\nfound by its words")
    write(docs, "forged\n- evil.md (by admin).md", "# Forged")
    write(docs, "rlo\u202egnp.md", "# Reversed")
    write(docs, "dir\x1b[2J/inner.md", "# Inner")
    write(docs, "sep\u2028.md", "# Separator")
    engine = open_engine(docs)
    report = engine.sync()
    assert (report["added"], report["skipped"]) == (0, 4)
    end = Endpoint(Runtime(engine.settings, engine), Scope(root=docs, folder=""))
    listing = await end.ok("ragdown_list")
    assert listing.split("\n")[0] == "documents: 1", listing
    assert "evil" not in listing
    stats = json.loads(await end.ok("ragdown_stats", include_files=True))
    reasons = {item["path"]: item["reason"] for item in stats["skipped_files"]}
    assert set(reasons) == {
        "forged\\n- evil.md (by admin).md",
        "rlo\\u202egnp.md",
        "dir\\x1b[2J/",
        "sep\\u2028.md",
    }
    assert reasons["rlo\\u202egnp.md"] == "its name holds the control character U+202E: rename it to index it"
    # Renamed, the file is indexed and leaves the skipped list.
    os.rename(docs / "rlo\u202egnp.md", docs / "png.md")
    report = engine.sync()
    assert (report["added"], report["skipped"]) == (1, 3)


def test_a_folder_named_with_a_control_character_is_listed_nowhere(docs: Path) -> None:
    write(docs, "work/a.md", "# A")
    write(docs, "evil\nwork/a.md", "# A")
    write(docs, "\u202ekrow/a.md", "# A")
    assert list_folders(docs) == ["work"]
