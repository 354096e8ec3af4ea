"""The `readmedb` tool set (issue 10): ReadmeDB's sixteen tools, their limits, answer shapes and error codes,
its resources and its prompt, through the SDK's client against a real `ragdown stdio` with
RAGDOWN_TOOLSET=readmedb (the resources and the prompt also in-process, through the set's own specs)."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from ragdown.access.scope import Scope
from ragdown.core.errors import Refusal
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.tools.context import ToolContext
from ragdown.toolsets import select
from tests.conftest import pile, write
from tests.mcpserver.conftest import Connect, Session
from tests.mcpserver.traces import traces

pytestmark = pytest.mark.anyio

TOOLS = sorted(
    [
        "get_namespace_summary",
        "list_files",
        "read_file",
        "read_files",
        "write_file",
        "patch_file",
        "append_to_file",
        "delete_file",
        "move_file",
        "search_files",
        "fetch_docs_for_task",
        "list_modified_since",
        "get_file_history",
        "get_file_version",
        "diff_versions",
        "restore_version",
    ]
)
READ_TOOLS = sorted(
    [
        "get_namespace_summary",
        "list_files",
        "read_file",
        "read_files",
        "search_files",
        "fetch_docs_for_task",
        "list_modified_since",
        "get_file_history",
        "get_file_version",
        "diff_versions",
    ]
)
MB = 1024 * 1024


def readmedb(docs: Path, connect: Connect, **env: str) -> Any:
    return connect(docs, RAGDOWN_TOOLSET="readmedb", **env)


async def js(s: Session, name: str, /, **args: object) -> Any:
    return json.loads(await s.ok(name, **args))


async def code(s: Session, name: str, /, **args: object) -> str:
    """The ReadmeDB error code a refused call answers (`FILE_NOT_FOUND: ...`)."""
    text = await s.error(name, **args)
    found = re.match(r"^([A-Z_]+): \S", text)
    assert found, text
    return found[1]


def ms_of(year: int) -> int:
    return int(datetime(year, 1, 1, tzinfo=UTC).timestamp() * 1000)


def age_file(path: Path, year: int) -> None:
    stamp = ms_of(year) / 1000
    os.utime(path, (stamp, stamp))


# -- listing, instructions, read-only -------------------------------------------------------------


async def test_the_set_lists_its_sixteen_tools_and_readmedb_instructions(
    docs: Path, connect: Connect
) -> None:
    async with readmedb(docs, connect) as s:
        assert await s.tool_names() == TOOLS
        assert "get_namespace_summary once at session start" in (s.client.instructions or "")
        tools = {t.name: t for t in (await s.client.list_tools()).tools}
        assert set(tools["move_file"].input_schema["required"]) == {"from", "to"}
        limit = tools["list_files"].input_schema["properties"]["limit"]
        assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 500, 100)
        assert tools["read_files"].input_schema["properties"]["names"]["maxItems"] == 10
    async with readmedb(docs, connect, RAGDOWN_READ_ONLY="true") as s:
        assert await s.tool_names() == READ_TOOLS
    async with connect(docs, RAGDOWN_TOOLSET="ragdown,readmedb") as s:
        names = await s.tool_names()
        assert set(TOOLS) <= set(names)
        assert "ragdown_recall" in names


# -- get_namespace_summary ------------------------------------------------------------------------


async def test_an_empty_namespace_summary_gives_the_ceilings_as_its_limits_and_says_to_write(
    docs: Path, connect: Connect
) -> None:
    """Without a quota every limit is a number, the server's ceiling (the largest quota there can be), so a
    client computing `fileCount / maxFiles` works (issue 21)."""
    async with readmedb(docs, connect) as s:
        summary = await js(s, "get_namespace_summary")
        assert summary == {
            "fileCount": 0,
            "maxFiles": 10_000_000,
            "filesUsedPct": 0,
            "storageBytes": 0,
            "maxStorageBytes": 1 << 50,
            "storageUsedPct": 0,
            "storageMB": "0.00",
            "maxMB": "1073741824",
            "storage": "0.00/1073741824 MB",
            "files": "0/10000000",
            "plan": "ragdown",
            "recentFiles": [],
            "recommended_action": summary["recommended_action"],
        }
        assert summary["recommended_action"].startswith("Empty namespace")
        assert "write_file" in summary["recommended_action"]


async def test_summary_recommends_search_for_a_large_namespace_and_listing_for_a_small_one(
    docs: Path, connect: Connect
) -> None:
    for i in range(21):
        age_file(write(docs, f"notes/n{i:02}.md", f"# Note {i}\n\nbody {i}\n"), 2020)
    async with readmedb(docs, connect) as s:
        large = await js(s, "get_namespace_summary")
        assert large["fileCount"] == 21
        assert large["storageBytes"] == sum(p.stat().st_size for p in (docs / "notes").iterdir())
        assert large["recommended_action"].startswith("Large namespace")
        assert "search_files" in large["recommended_action"]
        assert "fetch_docs_for_task" in large["recommended_action"]

        await s.ok("delete_file", name="notes/n00.md")
        await s.ok("write_file", name="fresh.md", content="# Fresh\n")
        await s.ok("delete_file", name="notes/n01.md")
        small = await js(s, "get_namespace_summary")
        assert small["fileCount"] == 20
        assert small["recommended_action"].startswith("Small namespace")
        assert "list_files" in small["recommended_action"]
        assert "read_files" in small["recommended_action"]
        recent = small["recentFiles"]
        assert len(recent) == 5
        assert recent[0]["name"] == "fresh.md"
        assert recent[0]["age"] == "just now"
        assert recent[1]["age"].endswith("d ago")  # the files dated 2020
        assert recent[0]["updatedAt"] >= recent[1]["updatedAt"]
        assert recent[1]["updatedAt"] == ms_of(2020)


# -- write, read, list ----------------------------------------------------------------------------


async def test_write_read_and_list_in_readmedb_shapes(docs: Path, connect: Connect) -> None:
    async with readmedb(docs, connect) as s:
        written = await js(s, "write_file", name="notes/plan.md", content="# Plan\n\none\ntwo\nthree\n")
        assert written == {
            "ok": True,
            "name": "notes/plan.md",
            "sizeBytes": 22,
            "storage": "0.00/1073741824 MB",
            "files": "1/10000000",
        }
        assert (docs / "notes/plan.md").read_text() == "# Plan\n\none\ntwo\nthree\n"

        whole = await js(s, "read_file", name="notes/plan.md")
        assert set(whole) == {"content", "sizeBytes", "updatedAt", "totalLines", "partial"}
        assert (whole["content"], whole["sizeBytes"], whole["totalLines"], whole["partial"]) == (
            "# Plan\n\none\ntwo\nthree\n",
            22,
            5,
            False,
        )
        part = await js(s, "read_file", name="notes/plan.md", start_line=3, end_line=4)
        assert (part["content"], part["partial"], part["start_line"], part["end_line"]) == (
            "one\ntwo",
            True,
            3,
            4,
        )
        tail = await js(s, "read_file", name="notes/plan.md", start_line=4, end_line=99)
        assert (tail["content"], tail["end_line"]) == ("two\nthree", 5)
        assert await code(s, "read_file", name="notes/plan.md", start_line=9) == "INVALID_INPUT"

        await s.ok("write_file", name="a.md", content="# A\n")
        listing = await js(s, "list_files", preview_bytes=6)
        assert (listing["limit"], listing["offset"], listing["returned"]) == (100, 0, 2)
        first, second = listing["files"]
        assert (first["name"], second["name"]) == ("a.md", "notes/plan.md")
        assert set(second) == {"name", "sizeBytes", "createdAt", "updatedAt", "preview"}
        assert (second["sizeBytes"], second["preview"]) == (22, "# Plan")
        assert second["createdAt"] <= second["updatedAt"]
        assert second["updatedAt"] == whole["updatedAt"]
        page = await js(s, "list_files", limit=1, offset=1)
        assert [f["name"] for f in page["files"]] == ["notes/plan.md"]
        assert "preview" not in page["files"][0]
        assert (await js(s, "list_files", offset=5))["returned"] == 0
        assert await code(s, "list_files", limit=0) == "INVALID_INPUT"
        assert await code(s, "list_files", limit=501) == "INVALID_INPUT"
        assert await code(s, "list_files", preview_bytes=2001) == "INVALID_INPUT"
        assert await code(s, "list_files", offset=-1) == "INVALID_INPUT"

        # write_file overwrites (ReadmeDB), and the history keeps what it replaced
        again = await js(s, "write_file", name="notes/plan.md", content="# Plan\n\nrewritten\n")
        assert (again["sizeBytes"], again["files"]) == (18, "2/10000000")
        assert (await js(s, "read_file", name="notes/plan.md"))["content"] == "# Plan\n\nrewritten\n"
        history = await js(s, "get_file_history", name="notes/plan.md")
        assert [v["contentLength"] for v in history] == [18, 22]
        old = await js(s, "get_file_version", name="notes/plan.md", version_id=history[1]["id"])
        assert old["content"] == "# Plan\n\none\ntwo\nthree\n"
        created = (await js(s, "list_files"))["files"][1]
        assert created["createdAt"] == min(history[1]["savedAt"], created["updatedAt"])

        # if_not_exists: a no-op on an existing file, a write on a new one
        kept = await js(s, "write_file", name="notes/plan.md", content="lost\n", if_not_exists=True)
        assert (kept["ok"], kept["skipped"], kept["sizeBytes"]) == (True, True, 18)
        assert (docs / "notes/plan.md").read_text() == "# Plan\n\nrewritten\n"
        new = await js(s, "write_file", name="b.md", content="# B\n", if_not_exists=True)
        assert "skipped" not in new
        assert (docs / "b.md").read_text() == "# B\n"


async def test_names_are_markdown_paths_inside_the_namespace(docs: Path, connect: Connect) -> None:
    async with readmedb(docs, connect) as s:
        refused = await s.error("write_file", name="notes", content="x")
        assert refused.startswith("INVALID_NAME: ")
        assert ".md" in refused
        for bad in (
            "notes.png",
            "../outside.md",
            "/etc/x.md",
            ".hidden.md",
            "a\\b.md",
            "line\nbreak.md",
            "%2e.md",
        ):
            assert await code(s, "write_file", name=bad, content="x") == "INVALID_NAME", bad
        assert not (docs.parent / "outside.md").exists()
        assert sorted(p.name for p in docs.iterdir() if not p.name.startswith(".")) == []
        assert await code(s, "read_file", name="notes.png") == "INVALID_NAME"
        assert await code(s, "read_file", name="missing.md") == "FILE_NOT_FOUND"
        assert await code(s, "write_file", name="x.md") == "INVALID_INPUT"  # content is required
        for upper in ("Upper.MD", "page.markdown", "comp.mdx"):
            await s.ok("write_file", name=upper, content="# ok\n")
            assert (docs / upper).is_file()


async def test_read_files_reads_up_to_ten_and_reports_each_missing_one(docs: Path, connect: Connect) -> None:
    write(docs, "one.md", "# One\n")
    write(docs, "two.md", "# Two\n\ntext\n")
    async with readmedb(docs, connect) as s:
        got = await js(s, "read_files", names=["two.md", "missing.md", "one.md", "bad.png"])
        assert [g["name"] for g in got] == ["two.md", "missing.md", "one.md", "bad.png"]
        assert set(got[0]) == {"name", "content", "sizeBytes", "updatedAt"}
        assert (got[0]["content"], got[0]["sizeBytes"]) == ("# Two\n\ntext\n", 12)
        assert got[1] == {"name": "missing.md", "error": got[1]["error"]}
        assert got[1]["error"].startswith("FILE_NOT_FOUND: ")
        assert got[2]["content"] == "# One\n"
        assert got[3]["error"].startswith("INVALID_NAME: ")
        assert await code(s, "read_files", names=[f"f{i}.md" for i in range(11)]) == "INVALID_INPUT"
        assert await code(s, "read_files", names=[]) == "INVALID_INPUT"
        ten = await js(s, "read_files", names=["one.md"] * 10)
        assert len(ten) == 10


async def test_the_one_megabyte_limit(docs: Path, connect: Connect) -> None:
    async with readmedb(docs, connect) as s:
        exactly = "x" * (MB - 1) + "\n"
        written = await js(s, "write_file", name="big.md", content=exactly)
        assert written["sizeBytes"] == MB
        assert written["storage"] == "1.00/1073741824 MB"
        over = await s.error("write_file", name="huge.md", content="y" * (MB + 1))
        assert over.startswith("FILE_TOO_LARGE: ")
        assert "1,048,576" in over
        assert not (docs / "huge.md").exists()
        assert await code(s, "write_file", name="wide.md", content="é" * (MB // 2 + 1)) == "FILE_TOO_LARGE"
        assert await code(s, "append_to_file", name="big.md", content="more") == "FILE_TOO_LARGE"
        assert await code(s, "patch_file", name="big.md", find="\n", replace="\n\n") == "FILE_TOO_LARGE"
        assert (docs / "big.md").stat().st_size == MB


# -- quotas, in ReadmeDB's words ------------------------------------------------------------------


async def test_quota_usage_reads_as_readmedbs_strings(docs: Path, connect: Connect) -> None:
    """ReadmeDB's reference: `"storage": "0.05/5 MB"`, `"files": "13/50"`, `"maxMB": "5"` (not ragdown's
    own `13/50 files`)."""
    write(docs, ".ragdown.json", json.dumps({"max_files": 50, "max_bytes": 5 * MB}))
    async with readmedb(docs, connect) as s:
        written = await js(s, "write_file", name="notes.md", content="x" * 52_429)
        assert (written["storage"], written["files"]) == ("0.05/5 MB", "1/50")
        appended = await js(s, "append_to_file", name="log.md", content="# Log\n")
        assert (appended["storage"], appended["files"]) == ("0.05/5 MB", "2/50")
        summary = await js(s, "get_namespace_summary")
        assert (summary["fileCount"], summary["maxFiles"], summary["filesUsedPct"]) == (2, 50, 4)
        assert (summary["storageMB"], summary["maxMB"], summary["storageUsedPct"]) == ("0.05", "5", 1)
        assert (summary["storage"], summary["files"]) == ("0.05/5 MB", "2/50")
        assert summary["quotaUsage"] == {"folder": docs.name, "fileCount": 2, "storageBytes": 52_435}


async def test_a_quota_under_a_megabyte_is_said_in_mb_with_the_decimals_it_needs(
    docs: Path, connect: Connect
) -> None:
    write(docs, ".ragdown.json", json.dumps({"max_files": 50, "max_bytes": 200}))
    async with readmedb(docs, connect) as s:
        written = await js(s, "write_file", name="a.md", content="a" * 179)
        assert (written["storage"], written["files"]) == ("0.00017/0.00019 MB", "1/50")
        summary = await js(s, "get_namespace_summary")
        assert (summary["maxMB"], summary["storageMB"]) == ("0.00019", "0.00017")
        assert (summary["maxStorageBytes"], summary["storageBytes"]) == (200, 179)
        assert summary["storageUsedPct"] == 90
        assert summary["storage"] == "0.00017/0.00019 MB"
    write(docs, ".ragdown.json", json.dumps({"max_files": 50, "max_bytes": 512 * 1024}))
    async with readmedb(docs, connect) as s:
        summary = await js(s, "get_namespace_summary")
        assert (summary["maxMB"], summary["storageMB"], summary["storage"]) == ("0.5", "0.00", "0.00/0.5 MB")


def tool_of(name: str) -> Any:
    return next(t for t in select("readmedb").tools if t.name == name)


async def run_tool(ctx: ToolContext, name: str, /, **args: object) -> Any:
    spec = tool_of(name)
    return json.loads(str(await spec.handler(ctx, spec.parse(args))))


async def test_a_subfolder_summary_sets_the_folders_usage_against_the_folders_quota(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    """At `/mcp/work/notes` the namespace is the subfolder, the quota the folder's: the usage-vs-quota
    fields count the folder (as the write door does), the counts of documents the subfolder, and
    `quotaUsage` says which folder."""
    write(docs, "work/.ragdown.json", json.dumps({"max_files": 50, "max_bytes": 5 * MB}))
    for i in range(12):
        write(docs, f"work/top{i:02}.md", f"# Top {i}\n")
    write(docs, "work/notes/only.md", "# Only one here\n\n" + "x" * 8)
    engine = open_engine(docs)
    ctx = ToolContext(runtime=Runtime(engine.settings, engine), scope=Scope(engine.root, "work", "notes"))
    folder_bytes = sum(p.stat().st_size for p in (docs / "work").rglob("*.md"))
    summary = await run_tool(ctx, "get_namespace_summary")
    assert (summary["fileCount"], summary["storageBytes"]) == (1, 25)
    assert [f["name"] for f in summary["recentFiles"]] == ["only.md"]
    assert summary["quotaUsage"] == {"folder": "work", "fileCount": 13, "storageBytes": folder_bytes}
    assert (summary["maxFiles"], summary["filesUsedPct"], summary["files"]) == (50, 26, "13/50")
    assert (summary["maxMB"], summary["storage"]) == ("5", "0.00/5 MB")
    written = await run_tool(ctx, "write_file", name="second.md", content="# Second\n")
    assert (written["name"], written["files"]) == ("second.md", "14/50")
    again = await run_tool(ctx, "get_namespace_summary")
    assert (again["fileCount"], again["quotaUsage"]["fileCount"], again["filesUsedPct"]) == (2, 14, 28)


# -- patch, append --------------------------------------------------------------------------------


async def test_patch_file_replaces_literal_text_by_occurrence(docs: Path, connect: Connect) -> None:
    write(docs, "p.md", "# P\n\ncat dog cat bird cat (a.*)\n")
    async with readmedb(docs, connect) as s:
        assert (
            await s.ok("patch_file", name="p.md", find="cat", replace="CAT")
            == 'OK: replaced 1 occurrence(s) in "p.md"'
        )
        assert (docs / "p.md").read_text() == "# P\n\nCAT dog cat bird cat (a.*)\n"
        await s.ok("patch_file", name="p.md", find="cat", replace="lion", occurrence_index=1)
        assert (docs / "p.md").read_text() == "# P\n\nCAT dog cat bird lion (a.*)\n"
        assert (
            await s.ok("patch_file", name="p.md", find="(a.*)", replace="[b]")
            == 'OK: replaced 1 occurrence(s) in "p.md"'
        )
        out_of_range = await s.error("patch_file", name="p.md", find="cat", replace="x", occurrence_index=1)
        assert out_of_range.startswith("PATCH_OUT_OF_RANGE: ")
        assert "1 time(s)" in out_of_range
        assert await code(s, "patch_file", name="p.md", find="Cat", replace="x") == "PATCH_NOT_FOUND"
        assert (
            await code(s, "patch_file", name="p.md", find="dog", replace="x", occurrence_index=-1)
            == "INVALID_INPUT"
        )
        assert await code(s, "patch_file", name="nope.md", find="a", replace="b") == "FILE_NOT_FOUND"
        assert await code(s, "patch_file", name="p.md", find="", replace="b") == "INVALID_INPUT"
        assert (docs / "p.md").read_text() == "# P\n\nCAT dog cat bird lion [b]\n"
        every = await s.ok("patch_file", name="p.md", find="i", replace="1", all=True, occurrence_index=9)
        assert every == 'OK: replaced 2 occurrence(s) in "p.md"'  # all wins over occurrence_index
        assert (docs / "p.md").read_text() == "# P\n\nCAT dog cat b1rd l1on [b]\n"
        history = await js(s, "get_file_history", name="p.md")
        assert len(history) == 5  # the original and four patches


async def test_append_to_file_creates_and_starts_on_a_new_line(docs: Path, connect: Connect) -> None:
    async with readmedb(docs, connect) as s:
        made = await js(s, "append_to_file", name="log/today.md", content="- first")
        assert made == {
            "ok": True,
            "name": "log/today.md",
            "sizeBytes": 7,
            "lines": 1,
            "storage": "0.00/1073741824 MB",
            "files": "1/10000000",
        }
        more = await js(s, "append_to_file", name="log/today.md", content="- second\n")
        assert (docs / "log/today.md").read_text() == "- first\n- second\n"
        assert (more["sizeBytes"], more["lines"]) == (17, 2)
        await s.ok("append_to_file", name="log/today.md", content="- third")
        assert (docs / "log/today.md").read_text() == "- first\n- second\n- third"
        assert await code(s, "append_to_file", name="log/today.png", content="x") == "INVALID_NAME"


# -- delete, move, history, restore ---------------------------------------------------------------


async def test_delete_file_forgets_the_file_and_all_its_versions(docs: Path, connect: Connect) -> None:
    first, second = b"# Secret\n\nfirst draft\n", b"# Secret\n\nsecond draft\n"
    async with readmedb(docs, connect) as s:
        await s.ok("write_file", name="secret.md", content=first.decode())
        await s.ok("write_file", name="secret.md", content=second.decode())
        assert len(await js(s, "get_file_history", name="secret.md")) == 2
        assert await s.ok("delete_file", name="secret.md") == 'OK: file "secret.md" deleted permanently'
        assert not (docs / "secret.md").exists()
        assert await code(s, "get_file_history", name="secret.md") == "FILE_NOT_FOUND"
        assert await code(s, "read_file", name="secret.md") == "FILE_NOT_FOUND"
        assert await code(s, "delete_file", name="secret.md") == "FILE_NOT_FOUND"
        assert await js(s, "search_files", query="draft") == []
    assert traces(docs, "secret.md", first, second) == []


async def test_a_file_in_ragdowns_trash_keeps_its_versions_and_restore_version_brings_it_back(
    docs: Path, connect: Connect
) -> None:
    async with readmedb(docs, connect) as s:
        await s.ok("write_file", name="doomed.md", content="# Doomed\n\nfirst\n")
        await s.ok("write_file", name="doomed.md", content="# Doomed\n\nsecond\n")
        before = await js(s, "get_file_history", name="doomed.md")
        assert len(before) == 2
        (docs / "doomed.md").unlink()  # deleted outside delete_file: the sync puts it in the trash
        await s.ok("write_file", name="other.md", content="# Other\n")
        assert await code(s, "read_file", name="doomed.md") == "FILE_NOT_FOUND"
        assert await code(s, "delete_file", name="doomed.md") == "FILE_NOT_FOUND"
        assert (await js(s, "list_files"))["returned"] == 1

        history = await js(s, "get_file_history", name="doomed.md")
        assert history[-2:] == before  # the delete keeps every version (it may add one marking the delete)
        assert set(history[0]) == {"id", "savedAt", "contentLength"}
        newest, oldest = before
        assert newest["id"] > oldest["id"]
        assert newest["savedAt"] >= oldest["savedAt"]
        first = await js(s, "get_file_version", name="doomed.md", version_id=oldest["id"])
        assert first == {
            "versionId": oldest["id"],
            "savedAt": oldest["savedAt"],
            "sizeBytes": 16,
            "content": "# Doomed\n\nfirst\n",
        }
        diff = await js(
            s, "diff_versions", name="doomed.md", version_id_a=oldest["id"], version_id_b=newest["id"]
        )
        assert diff["file"] == "doomed.md"
        assert re.fullmatch(
            rf"version {oldest['id']} \(savedAt: \d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{{3}}Z\)", diff["a"]
        )
        assert diff["diff"].startswith("--- a\n+++ b\n@@ ")
        assert "\n-first" in diff["diff"]
        assert "\n+second" in diff["diff"]
        in_trash = await s.error("diff_versions", name="doomed.md", version_id_a=oldest["id"])
        assert in_trash.startswith("FILE_NOT_FOUND: ")
        assert "version_id_b" in in_trash

        restored = await s.ok("restore_version", name="doomed.md", version_id=oldest["id"])
        after = await js(s, "get_file_history", name="doomed.md")
        assert (
            restored
            == f'OK: restored "doomed.md" to version {oldest["id"]} (saved as new version {after[0]["id"]})'
        )
        assert after[0]["id"] > history[0]["id"]
        assert (await js(s, "read_file", name="doomed.md"))["content"] == "# Doomed\n\nfirst\n"
        assert [f["name"] for f in (await js(s, "list_files"))["files"]] == ["doomed.md", "other.md"]

        assert await code(s, "get_file_version", name="doomed.md", version_id=999_999) == "VERSION_NOT_FOUND"
        assert await code(s, "restore_version", name="doomed.md", version_id=999_999) == "VERSION_NOT_FOUND"
        other = (await js(s, "get_file_history", name="other.md"))[0]["id"]
        assert await code(s, "get_file_version", name="doomed.md", version_id=other) == "VERSION_NOT_FOUND"
        assert await code(s, "get_file_history", name="never.md") == "FILE_NOT_FOUND"


async def test_history_of_an_untouched_file_and_diff_against_the_current_file(
    docs: Path, connect: Connect
) -> None:
    write(docs, "old.md", "# Old\n\n" + "".join(f"line {i}\n" for i in range(1, 11)))
    async with readmedb(docs, connect) as s:
        assert await js(s, "get_file_history", name="old.md") == []  # on disk, never changed through ragdown
        await s.ok("patch_file", name="old.md", find="line 5\n", replace="line five\n")
        history = await js(s, "get_file_history", name="old.md")
        assert len(history) == 2  # the original, then the patch
        diff = await js(s, "diff_versions", name="old.md", version_id_a=history[1]["id"], context_lines=0)
        assert re.fullmatch(r"current \(updatedAt: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\)", diff["b"])
        assert diff["diff"] == "--- a\n+++ b\n@@ -7 +7 @@\n-line 5\n+line five"
        wide = await js(s, "diff_versions", name="old.md", version_id_a=history[1]["id"])
        assert " line 2\n" in wide["diff"]  # three lines of context by default
        assert " line 1\n" not in wide["diff"]
        same = await js(s, "diff_versions", name="old.md", version_id_a=history[0]["id"])
        assert same["diff"] == ""
        assert (
            await code(s, "diff_versions", name="old.md", version_id_a=history[0]["id"], context_lines=21)
            == "INVALID_INPUT"
        )


async def test_ten_versions_at_most_newest_first(docs: Path, connect: Connect) -> None:
    async with readmedb(docs, connect) as s:
        for i in range(12):
            await s.ok("write_file", name="busy.md", content=f"# Busy\n\n{i}\n")
        history = await js(s, "get_file_history", name="busy.md")
        assert len(history) == 10
        ids = [v["id"] for v in history]
        assert ids == sorted(ids, reverse=True)
        newest = await js(s, "get_file_version", name="busy.md", version_id=ids[0])
        assert newest["content"] == "# Busy\n\n11\n"


async def test_move_file_keeps_history_refuses_a_taken_name_and_overwrites_into_the_trash(
    docs: Path, connect: Connect
) -> None:
    write(docs, "links.md", "# Links\n\nsee [[draft]]\n")
    async with readmedb(docs, connect) as s:
        await s.ok("write_file", name="draft.md", content="# Draft\n\nv1\n")
        await s.ok("write_file", name="draft.md", content="# Draft\n\nv2\n")
        moved = await s.ok("move_file", **{"from": "draft.md", "to": "final/report.md"})
        assert moved.startswith('OK: moved "draft.md" → "final/report.md"')
        assert not (docs / "draft.md").exists()
        assert (docs / "final/report.md").read_text() == "# Draft\n\nv2\n"
        assert "draft" not in (docs / "links.md").read_text()  # the link follows the file
        assert len(await js(s, "get_file_history", name="final/report.md")) >= 2

        await s.ok("write_file", name="taken.md", content="# Taken\n")
        exists = await s.error("move_file", **{"from": "final/report.md", "to": "taken.md"})
        assert exists.startswith("FILE_EXISTS: ")
        assert (docs / "taken.md").read_text() == "# Taken\n"
        assert await code(s, "move_file", **{"from": "missing.md", "to": "x.md"}) == "FILE_NOT_FOUND"
        assert await code(s, "move_file", **{"from": "taken.md", "to": "taken.png"}) == "INVALID_NAME"

        over = await s.ok("move_file", **{"from": "final/report.md", "to": "taken.md", "overwrite": True})
        assert over.startswith('OK: moved "final/report.md" → "taken.md"')
        assert (docs / "taken.md").read_text() == "# Draft\n\nv2\n"
        assert not (docs / "final/report.md").exists()
        names = [f["name"] for f in (await js(s, "list_files"))["files"]]
        assert names == ["links.md", "taken.md"]
        # what the overwrite replaced is in the trash, with its versions
        lost = await js(s, "get_file_history", name="taken.md")
        contents = [
            (await js(s, "get_file_version", name="taken.md", version_id=v["id"]))["content"] for v in lost
        ]
        assert "# Draft\n\nv2\n" in contents


async def test_history_off_deletes_permanently_and_says_so(docs: Path, connect: Connect) -> None:
    async with readmedb(docs, connect, RAGDOWN_HISTORY="false") as s:
        await s.ok("write_file", name="x.md", content="# X\n")
        assert await s.ok("delete_file", name="x.md") == 'OK: file "x.md" deleted permanently'
        assert await code(s, "get_file_history", name="x.md") == "UNAVAILABLE"


async def test_a_write_answered_before_the_index_has_it_says_so(docs: Path, connect: Connect) -> None:
    """RAGDOWN_WRITE_WAIT=0: the write answers at once, with the note in its own shape (a `notes` key in
    JSON, a `note:` line after text); the change is made and searchable once the sync ends."""
    pending = "note: the index is still syncing"
    async with readmedb(docs, connect, RAGDOWN_WRITE_WAIT="0") as s:
        pile(docs, "pile-write")  # the write's sync has these to index first, so it runs past the answer
        written = await js(s, "write_file", name="x.md", content="# X\n\nzebra crossing\n")
        # `storage` and `files` count what the index has so far, as the note says.
        assert list(written) == ["ok", "name", "sizeBytes", "storage", "files", "notes"]
        assert (written["ok"], written["name"], written["sizeBytes"]) == (True, "x.md", 20)
        assert [f"note: {n}"[: len(pending)] for n in written["notes"]] == [pending]
        pile(docs, "pile-move")
        moved = (await s.ok("move_file", **{"from": "x.md", "to": "y.md"})).split("\n")
        assert moved[0] == 'OK: moved "x.md" → "y.md"'
        assert [line[: len(pending)] for line in moved[1:]] == [pending]
        assert (docs / "y.md").read_text() == "# X\n\nzebra crossing\n"
        deadline = time.monotonic() + 30
        while [f["name"] for f in await js(s, "search_files", query="zebra")] != ["y.md"]:
            assert time.monotonic() < deadline, "the moved document never became searchable"
            await anyio.sleep(0.1)


# -- search, fetch, modified since ----------------------------------------------------------------


def filler(word: str, n: int) -> str:
    return "".join(f"{word} sentence number {i} about nothing much.\n" for i in range(n))


async def test_search_files_finds_by_keyword_with_a_snippet(docs: Path, connect: Connect) -> None:
    write(docs, "recipes/soup.md", "# Soup\n\n" + filler("broth", 20) + "Add the saffron at the very end.\n")
    write(docs, "recipes/bread.md", "# Bread\n\nFlour, water, salt and yeast.\n")
    write(docs, "travel.md", "# Travel\n\nPack light.\n")
    async with readmedb(docs, connect) as s:
        found = await js(s, "search_files", query="saffron")
        assert [f["name"] for f in found] == ["recipes/soup.md"]
        hit = found[0]
        assert set(hit) == {"name", "sizeBytes", "updatedAt", "snippet"}
        assert hit["sizeBytes"] == (docs / "recipes/soup.md").stat().st_size
        assert "saffron" in hit["snippet"]
        assert hit["snippet"].startswith("...")
        both = {f["name"] for f in await js(s, "search_files", query="yeast saffron")}
        assert both == {"recipes/soup.md", "recipes/bread.md"}
        assert await js(s, "search_files", query="zanzibar") == []
        assert await code(s, "search_files", query="") == "INVALID_INPUT"


async def test_fetch_docs_for_task_fills_its_character_budget(docs: Path, connect: Connect) -> None:
    write(docs, "CLAUDE.md", "# Claude\n\nDeploy with the kestrel pipeline.\n" + filler("kestrel", 60))
    write(docs, "deploy.md", "# Deploy\n\nThe kestrel pipeline runs nightly.\n" + filler("kestrel", 60))
    write(docs, "other.md", "# Other\n\nNothing relevant.\n")
    sizes = {n: (docs / n).stat().st_size for n in ("CLAUDE.md", "deploy.md")}
    async with readmedb(docs, connect) as s:
        full = await js(s, "fetch_docs_for_task", query="kestrel pipeline")
        assert full["query"] == "kestrel pipeline"
        assert full["truncated"] is False
        assert {r["name"] for r in full["results"]} == {"CLAUDE.md", "deploy.md"}
        for r in full["results"]:
            assert set(r) == {"name", "sizeBytes", "content", "truncated"}
            assert r["content"] == (docs / r["name"]).read_text()
            assert (r["sizeBytes"], r["truncated"]) == (sizes[r["name"]], False)
        assert full["totalChars"] == sum(sizes.values())

        budget = sizes["CLAUDE.md"] + 500
        cut = await js(s, "fetch_docs_for_task", query="kestrel pipeline", max_chars=budget)
        assert cut["truncated"] is True
        assert cut["totalChars"] == sum(len(r["content"]) for r in cut["results"]) <= budget
        assert any(r["truncated"] for r in cut["results"])
        small = await js(s, "fetch_docs_for_task", query="kestrel", max_chars=100)
        assert small["totalChars"] == 100
        assert len(small["results"]) == 1
        assert small["results"][0]["truncated"] is True

        only = await js(s, "fetch_docs_for_task", query="kestrel pipeline", paths_glob="CLAUDE")
        assert [r["name"] for r in only["results"]] == ["CLAUDE.md"]
        globbed = await js(s, "fetch_docs_for_task", query="kestrel", paths_glob="d*.md")
        assert [r["name"] for r in globbed["results"]] == ["deploy.md"]
        assert (await js(s, "fetch_docs_for_task", query="zanzibar"))["results"] == []
        assert await code(s, "fetch_docs_for_task", query="kestrel", max_chars=99) == "INVALID_INPUT"
        assert await code(s, "fetch_docs_for_task", query="kestrel", max_chars=100_001) == "INVALID_INPUT"


async def test_list_modified_since_lists_what_changed_after_a_time(docs: Path, connect: Connect) -> None:
    age_file(write(docs, "ancient.md", "# Ancient\n"), 2019)
    age_file(write(docs, "older.md", "# Older\n"), 2021)
    async with readmedb(docs, connect) as s:
        await s.ok("write_file", name="new.md", content="# New\n")
        changed = await js(s, "list_modified_since", since_ms=ms_of(2020))
        assert [c["name"] for c in changed] == ["new.md", "older.md"]  # newest first
        assert set(changed[0]) == {"name", "updatedAt"}
        assert changed[1]["updatedAt"] == ms_of(2021)
        assert [c["name"] for c in await js(s, "list_modified_since", since_ms=ms_of(2021))] == [
            "new.md",
            "older.md",
        ]
        assert [c["name"] for c in await js(s, "list_modified_since", since_ms=ms_of(2021) + 1)] == ["new.md"]
        assert len(await js(s, "list_modified_since", since_ms=0)) == 3
        assert [c["name"] for c in await js(s, "list_modified_since", since_ms="2h")] == ["new.md"]
        assert await js(s, "list_modified_since", since_ms=changed[0]["updatedAt"] + 1) == []
        assert await code(s, "list_modified_since", since_ms="last tuesday") == "INVALID_INPUT"
        assert await code(s, "list_modified_since") == "INVALID_INPUT"


# -- resources and the prompt ---------------------------------------------------------------------


def context(engine: Engine) -> ToolContext:
    return ToolContext(runtime=Runtime(engine.settings, engine), scope=Scope(root=engine.root, folder=""))


async def test_the_policy_docs_and_prompt_read_in_process(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    ctx = context(open_engine(docs))
    chosen = select("readmedb")
    (policy,) = chosen.resources
    (docs_template,) = chosen.templates
    (prompt,) = chosen.prompts
    assert (policy.uri, docs_template.uri_template, prompt.name) == (
        "readmedb://policy/naming",
        "readmedb://docs/{tool_name}",
        "onboard_session",
    )
    text = await policy.read(ctx)
    for needle in (
        "1,048,576",
        "INVALID_NAME",
        "PATCH_NOT_FOUND",
        "PATCH_OUT_OF_RANGE",
        "FILE_EXISTS",
        "trash",
        "ceilings",
        ".md",
    ):
        assert needle in text, needle
    assert "delete_file is irreversible" in text
    for name in TOOLS:
        assert f"readmedb://docs/{name}" in text
        doc = await docs_template.read(ctx, {"tool_name": name})
        assert doc.startswith(f"# {name}\n"), name
    assert "occurrence_index" in await docs_template.read(ctx, {"tool_name": "patch_file"})
    with pytest.raises(Refusal) as err:
        await docs_template.read(ctx, {"tool_name": "drop_database"})
    assert err.value.kind == "not_found"
    steps = await prompt.render(ctx, {})
    for step in ("1. Call `get_namespace_summary`", "2. ", "3. ", "`read_files`", "4. ", "`patch_file`"):
        assert step in steps, step


async def test_the_policy_says_when_the_history_is_off(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    ctx = context(open_engine(docs, RAGDOWN_HISTORY="false"))
    text = await select("readmedb").resources[0].read(ctx)
    assert "history is off" in text
    assert "permanently" in text


async def test_resources_and_the_prompt_through_the_client(docs: Path, connect: Connect) -> None:
    async with readmedb(docs, connect) as s:
        listed = await s.client.list_resources()
        assert "readmedb://policy/naming" in [str(r.uri) for r in listed.resources]
        templates = await s.client.list_resource_templates()
        assert "readmedb://docs/{tool_name}" in [t.uri_template for t in templates.resource_templates]
        policy = await s.client.read_resource("readmedb://policy/naming")
        text = "".join(getattr(c, "text", "") for c in policy.contents)
        assert "1,048,576" in text
        assert "trash" in text
        doc = await s.client.read_resource("readmedb://docs/patch_file")
        assert "PATCH_OUT_OF_RANGE" in "".join(getattr(c, "text", "") for c in doc.contents)
        with pytest.raises(Exception, match="drop_database"):
            await s.client.read_resource("readmedb://docs/drop_database")
        prompts = await s.client.list_prompts()
        assert "onboard_session" in [p.name for p in prompts.prompts]
        got = await s.client.get_prompt("onboard_session")
        said = "".join(getattr(m.content, "text", "") for m in got.messages)
        assert "get_namespace_summary" in said
        assert "read_files" in said
