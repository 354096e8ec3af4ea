"""The behaviour spec's `mcp-tools.test`, against a real `ragdown stdio` process over the MCP SDK client."""

from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ragdown.toolsets import ragdown_instructions, root_instructions
from tests.conftest import BOTH_BACKENDS, write
from tests.http.conftest import (
    TOKEN,
    StartServer,
    ops_folder,
    start_app,  # noqa: F401 (the fixture: `ragdown serve`'s app, in-process)
)
from tests.mcpserver.conftest import Connect

pytestmark = pytest.mark.anyio
# Each tool test runs on SQLite and on PostgreSQL (`tests/conftest.py`).
INDEX_BACKENDS = BOTH_BACKENDS

BACKUPS = "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice."
READ_TOOLS = [
    "ragdown_backlinks",
    "ragdown_context",
    "ragdown_diff",
    "ragdown_history",
    "ragdown_list",
    "ragdown_outline",
    "ragdown_read_doc",
    "ragdown_recall",
    "ragdown_stats",
]
WRITE_TOOLS = [
    "ragdown_delete",
    "ragdown_edit",
    "ragdown_move",
    "ragdown_reindex",
    "ragdown_remember",
    "ragdown_restore",
    "ragdown_write",
]


def today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def docs(docs: Path) -> Path:
    write(docs, "ops/backups.md", BACKUPS)
    return docs


async def test_lists_write_tools_only_when_writable(docs: Path, connect: Connect) -> None:
    async with connect(docs) as s:
        assert await s.tool_names() == sorted(READ_TOOLS + WRITE_TOOLS)
        tools = {t.name: t for t in (await s.client.list_tools()).tools}
        assert tools["ragdown_recall"].annotations is not None
        assert tools["ragdown_recall"].annotations.read_only_hint is True
        assert tools["ragdown_recall"].annotations.open_world_hint is False
        assert tools["ragdown_write"].annotations is not None
        assert tools["ragdown_write"].annotations.destructive_hint is True
        assert tools["ragdown_remember"].annotations is not None
        assert tools["ragdown_remember"].annotations.destructive_hint is False
        assert tools["ragdown_delete"].annotations is not None
        assert tools["ragdown_delete"].annotations.idempotent_hint is False
        assert sum(len(t.description or "") for t in tools.values()) <= 9000
    async with connect(docs, RAGDOWN_READ_ONLY="true") as s:
        assert await s.tool_names() == READ_TOOLS
        # A hidden tool is refused exactly as an unknown one.
        hidden = await s.error("ragdown_write", path="x.md", text="x")
        unknown = await s.error("ragdown_nope")
        assert hidden.replace("ragdown_write", "X") == unknown.replace("ragdown_nope", "X")


async def test_leaves_out_the_tools_it_is_told_to(docs: Path, connect: Connect) -> None:
    disabled = " ragdown_context , ragdown_stats,ragdown_reindex"
    async with connect(docs, RAGDOWN_READ_ONLY="true", RAGDOWN_DISABLED_TOOLS=disabled) as s:
        assert await s.tool_names() == [
            "ragdown_backlinks",
            "ragdown_diff",
            "ragdown_history",
            "ragdown_list",
            "ragdown_outline",
            "ragdown_read_doc",
            "ragdown_recall",
        ]
        await s.error("ragdown_stats")


async def test_recall_in_text_and_json_with_clipping(docs: Path, connect: Connect) -> None:
    async with connect(docs) as s:
        text = await s.ok("ragdown_recall", query="restore twice", top_k=1)
        header, body = text.split("\n", 1)
        assert re.fullmatch(
            rf"\[1\] ops/backups\.md:7-7 — Backups › Restore \(similarity \d\.\d\d, changed {today()}\)",
            header,
        ), header
        assert body == "Run pg_restore twice."
        clipped = await s.ok("ragdown_recall", query="restore twice", top_k=1, max_chars=5)
        assert clipped.split("\n", 1)[1] == (
            "Run p… [clipped: 5 of 21 characters — ragdown_read_doc "
            '{path: "ops/backups.md", start_line: 7, end_line: 7}]'
        )
        hits = json.loads(await s.ok("ragdown_recall", query="restore twice", top_k=1, format="json"))["hits"]
        assert hits[0]["path"] == "ops/backups.md"
        assert hits[0]["heading"] == "Backups › Restore"
        assert hits[0]["modified"].startswith(today())
        assert "created_by" not in hits[0]
        assert (
            await s.ok("ragdown_recall", query="restore", path_prefix="elsewhere") == "No matching documents."
        )
        assert "outside" in await s.error("ragdown_recall", query="restore", path_prefix="../x")


async def test_hook_context_once_per_session(docs: Path, connect: Connect) -> None:
    async with connect(docs) as s:
        first = await s.ok("ragdown_context", prompt="how do I restore the backups?", session_id="a")
        assert first.startswith("<ragdown-context ")
        assert "ops/backups.md:7-7" in first
        assert first.endswith("</ragdown-context>")
        assert await s.ok("ragdown_context", prompt="how do I restore the backups?", session_id="a") == ""
        assert await s.ok("ragdown_context", prompt="ok") == ""
        assert await s.ok("ragdown_context", prompt="/compact the session now") == ""
        assert await s.ok("ragdown_context", prompt="how do I restore the backups?", min_score=1) == ""
        other = await s.ok("ragdown_context", prompt="how do I restore the backups?", session_id="b", top_k=1)
        assert other.count("(similarity ") == 1


async def test_claude_code_format(docs: Path, connect: Connect) -> None:
    async with connect(docs) as s:
        raw = await s.ok(
            "ragdown_context", prompt="how do I restore the backups?", session_id="cc", format="claude-code"
        )
        payload = json.loads(raw)
        assert payload["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
        assert payload["hookSpecificOutput"]["additionalContext"].startswith("<ragdown-context ")
        again = await s.ok(
            "ragdown_context", prompt="how do I restore the backups?", session_id="cc", format="claude-code"
        )
        assert again == ""


async def test_a_section_comes_back_after_reset(docs: Path, connect: Connect) -> None:
    async with connect(docs) as s:
        prompt = "how do I restore the backups?"
        assert await s.ok("ragdown_context", prompt=prompt, session_id="r")
        assert await s.ok("ragdown_context", prompt=prompt, session_id="other")
        assert await s.ok("ragdown_context", prompt=prompt, session_id="r") == ""
        assert await s.ok("ragdown_context", prompt="", session_id="r", reset=True) == ""
        assert (await s.ok("ragdown_context", prompt=prompt, session_id="r")).startswith("<ragdown-context ")
        assert await s.ok("ragdown_context", prompt=prompt, session_id="other") == ""


async def test_reads_by_line_range_and_refuses_paths_outside(docs: Path, connect: Connect) -> None:
    async with connect(docs) as s:
        text = await s.ok("ragdown_read_doc", path="ops/backups.md", start_line=5, end_line=7)
        short = sha(docs / "ops/backups.md")[:12]
        assert text == f"ops/backups.md:5-7 of 7 (hash {short})\n## Restore\n\nRun pg_restore twice."
        whole = await s.ok("ragdown_read_doc", path="ops/backups.md")
        assert whole == f"ops/backups.md:1-7 of 7 (hash {short})\n{BACKUPS}"
        clamped = await s.ok("ragdown_read_doc", path="ops/backups.md", start_line=6, end_line=99)
        assert clamped.startswith("ops/backups.md:6-7 of 7")
        by_link = await s.ok("ragdown_read_doc", path="backups#Restore")
        assert by_link.startswith(f'ops/backups.md:5-7 of 7 (hash {short}, resolved from "backups#Restore")')
        assert "outside the docs folder" in await s.error("ragdown_read_doc", path="../secret.md")
        assert "no such document" in await s.error("ragdown_read_doc", path="ops/missing.md")


async def test_remember_never_overwrites_and_indexes_before_returning(docs: Path, connect: Connect) -> None:
    async with connect(docs) as s:
        first = await s.ok(
            "ragdown_remember",
            title="Kafka",
            content="Brokers live on port 9092.\n\n",
            name="kafka",
            tags=["infra", "kafka"],
            session_id="s1",
        )
        assert first == "saved notes/kafka.md"
        assert (
            await s.ok("ragdown_remember", title="Kafka", content="Again.", name="kafka")
            == "saved notes/kafka-2.md"
        )
        assert (docs / "notes/kafka.md").read_text() == (
            f'---\ntitle: "Kafka"\ndate: {today()}\ntags: ["infra", "kafka"]\ncreated_by: ragdown_remember\n'
            'session: "s1"\n---\nBrokers live on port 9092.\n'
        )
        hits = await s.ok("ragdown_recall", query="brokers port 9092", top_k=1)
        assert hits.startswith("[1] notes/kafka.md:")
        assert "written by an agent with ragdown_remember" in hits.split("\n")[0]
        dated = await s.ok("ragdown_remember", title="Disk Usage: Alerts!", content="Alert at 90%.")
        assert dated == f"saved notes/{today()}-disk-usage-alerts.md"
        assert await s.error("ragdown_remember", title="x", content="y", name="../../outside")
        assert not (docs.parent / "outside.md").exists()


async def test_write_goes_only_over_the_version_it_read(docs: Path, connect: Connect) -> None:
    path = docs / "ops/backups.md"
    async with connect(docs) as s:
        assert "base_hash" in await s.error("ragdown_write", path="ops/backups.md", text="# Gone\n")
        assert "changed on disk" in await s.error(
            "ragdown_write", path="ops/backups.md", text="# Gone\n", base_hash="0" * 12
        )
        short = sha(path)[:6]
        assert await s.error("ragdown_write", path="ops/backups.md", text="# Gone\n", base_hash=short)
        full = sha(path)
        answer = await s.ok(
            "ragdown_write", path="ops/backups.md", text="# Backups\n\nWeekly now.\n", base_hash=full
        )
        assert answer == f"wrote ops/backups.md (hash {sha(path)[:12]})"
        appended = await s.ok("ragdown_write", path="ops/backups.md", text="More lines.\n\n\n", append=True)
        assert appended == f"wrote ops/backups.md (hash {sha(path)[:12]})"
        assert path.read_text() == "# Backups\n\nWeekly now.\n\nMore lines.\n"
        created = await s.ok("ragdown_write", path="ops/new.md", text="# New\n\nFresh.\n")
        assert created == f"created ops/new.md (hash {sha(docs / 'ops/new.md')[:12]})"
        assert await s.error("ragdown_write", path=".obsidian/x.md", text="x")
        assert not (docs / ".obsidian").exists()
        hits = await s.ok("ragdown_recall", query="weekly", top_k=1)
        assert hits.startswith("[1] ops/backups.md:")


async def test_write_records_and_keeps_provenance(docs: Path, connect: Connect) -> None:
    async with connect(docs) as s:
        await s.ok("ragdown_write", path="agent.md", text="# Agent\n\nbody\n", session_id="s9")
        assert (docs / "agent.md").read_text() == (
            '---\ncreated_by: ragdown_write\nsession: "s9"\n---\n# Agent\n\nbody\n'
        )
        await s.ok("ragdown_write", path="fm.md", text="---\ntitle: T\n---\n# T\n")
        assert (docs / "fm.md").read_text() == "---\ntitle: T\ncreated_by: ragdown_write\n---\n# T\n"
        await s.ok(
            "ragdown_write", path="agent.md", text="# Agent\n\nnew body\n", base_hash=sha(docs / "agent.md")
        )
        assert (docs / "agent.md").read_text() == (
            '---\ncreated_by: ragdown_write\nsession: "s9"\n---\n# Agent\n\nnew body\n'
        )
        path = docs / "ops/backups.md"
        await s.ok("ragdown_write", path="ops/backups.md", text="# Backups\n\nmine\n", base_hash=sha(path))
        assert path.read_text() == "# Backups\n\nmine\n"


async def test_appending_between_sections_keeps_the_next_heading(docs: Path, connect: Connect) -> None:
    write(docs, "a.md", "# A\n\n## One\n\nfirst\n\n\n## Two\n\nsecond\n")
    async with connect(docs) as s:
        await s.ok("ragdown_write", path="a.md", text="more", append=True, heading="One")
        assert (docs / "a.md").read_text() == "# A\n\n## One\n\nfirst\n\nmore\n\n## Two\n\nsecond\n"
        assert 'no heading "Nope"' in await s.error(
            "ragdown_write", path="a.md", text="x", append=True, heading="Nope"
        )
        assert await s.error("ragdown_write", path="missing.md", text="x", append=True)


async def test_edits_passages_all_or_none(docs: Path, connect: Connect) -> None:
    path = docs / "ops/backups.md"
    async with connect(docs) as s:
        answer = await s.ok(
            "ragdown_edit",
            path="ops/backups.md",
            edits=[{"old_text": "Nightly", "new_text": "Hourly"}, {"old_text": "twice", "new_text": "once"}],
        )
        short = sha(path)[:12]
        assert answer == f"edited ops/backups.md (replaced 2, hash {short})"
        read = await s.ok("ragdown_read_doc", path="ops/backups.md")
        assert f"(hash {short})" in read.split("\n")[0]
        before = path.read_bytes()
        failed = await s.error(
            "ragdown_edit",
            path="ops/backups.md",
            edits=[{"old_text": "Hourly", "new_text": "Daily"}, {"old_text": "not there", "new_text": "x"}],
        )
        assert failed.startswith("edit 2 of 2: old_text is not in the document")
        assert path.read_bytes() == before
        near = await s.error(
            "ragdown_edit", path="ops/backups.md", edits=[{"old_text": "Hourly  snapshots", "new_text": "x"}]
        )
        assert "(lines 3-3)" in near
        # A typo is answered with the passage the document has, ready to copy back as old_text.
        typo = await s.error(
            "ragdown_edit", path="ops/backups.md", edits=[{"old_text": "pg_restore onec", "new_text": "x"}]
        )
        quoted = typo.split("copy old_text from it exactly:\n", 1)[1]
        assert quoted == "pg_restore once."
        await s.ok(
            "ragdown_edit", path="ops/backups.md", edits=[{"old_text": quoted, "new_text": "pg_restore."}]
        )
        assert await s.error(
            "ragdown_edit",
            path="ops/backups.md",
            edits=[{"old_text": "Hourly", "new_text": "x"}],
            base_hash="1" * 12,
        )
        assert await s.error("ragdown_edit", path="ops/none.md", edits=[{"old_text": "a", "new_text": "b"}])


async def test_edits_a_crlf_document_keeping_its_line_endings(docs: Path, connect: Connect) -> None:
    write(docs, "win.md", b"# Win\r\n\r\nline one\r\nline two\r\n")
    async with connect(docs) as s:
        await s.ok(
            "ragdown_edit",
            path="win.md",
            edits=[{"old_text": "line one\nline two", "new_text": "both\nlines"}],
        )
        assert (docs / "win.md").read_bytes() == b"# Win\r\n\r\nboth\r\nlines\r\n"


async def test_moves_a_document_and_a_subfolder_keeping_links(docs: Path, connect: Connect) -> None:
    write(docs, "index.md", "# Index\n\nSee [[backups]] and [restore](ops/backups.md#restore).\n")
    write(docs, "ops/img.png", b"\x89PNG")
    async with connect(docs) as s:
        moved = await s.ok("ragdown_move", **{"from": "ops/backups.md", "to": "ops/snapshots.md"})
        assert (
            moved.split("\n", 1)[0] == "moved ops/backups.md to ops/snapshots.md; links updated in index.md"
        )
        assert (docs / "index.md").read_text() == (
            "# Index\n\nSee [[snapshots]] and [restore](ops/snapshots.md#restore).\n"
        )
        folder = await s.ok("ragdown_move", **{"from": "ops", "to": "infra/db"})
        assert folder.split("\n", 1)[0] == "moved ops to infra/db; links updated in index.md"
        assert (docs / "infra/db/img.png").exists()
        assert "infra/db/snapshots.md" in (docs / "index.md").read_text()
        write(docs, "taken.md", "# Taken\n")
        assert "already exists" in await s.error("ragdown_move", **{"from": "index.md", "to": "taken.md"})
        assert await s.error("ragdown_move", **{"from": "index.md", "to": "../index.md"})
        assert (await s.ok("ragdown_recall", query="restore twice", top_k=1)).startswith(
            "[1] infra/db/snapshots.md:"
        )


async def test_deletes_documents_and_subfolders_only_when_told(docs: Path, connect: Connect) -> None:
    write(docs, "ops/img.png", b"\x89PNG")
    write(docs, "empty/.keep.md", "")
    (docs / "empty/.keep.md").unlink()
    async with connect(docs) as s:
        assert "changed since" in await s.error("ragdown_delete", path="ops/backups.md", base_hash="2" * 12)
        assert "subfolder" in await s.error("ragdown_delete", path="ops", base_hash="2" * 12)
        assert "no such" in await s.error("ragdown_delete", path="ops/nope.md")
        assert "recursive" in await s.error("ragdown_delete", path="ops")
        assert await s.error("ragdown_delete", path="ops/img.png")
        assert await s.error("ragdown_delete", path=".")
        assert await s.error("ragdown_delete", path="..")
        assert await s.ok("ragdown_delete", path="empty") == "deleted empty"
        assert await s.ok("ragdown_delete", path="ops", recursive=True) == "deleted ops"
        assert not (docs / "ops").exists()
        assert await s.ok("ragdown_list") == "No documents."


async def test_lists_documents_by_folder_and_tag_most_recent_first(docs: Path, connect: Connect) -> None:
    a = write(docs, "notes/a.md", "---\ntags: [project/alpha]\n---\n# Alpha\n")
    b = write(docs, "notes/b.md", "# Beta\n")
    os.utime(a, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    os.utime(b, ns=(1_100_000_000_000_000_000, 1_100_000_000_000_000_000))
    async with connect(docs) as s:
        listing = await s.ok("ragdown_list")
        assert listing.split("\n")[0] == "documents: 3"
        day_a = datetime.fromtimestamp(1_000_000_000, UTC).strftime("%Y-%m-%d")
        assert (
            await s.ok("ragdown_list", tag="#project")
            == f"documents: 1\nnotes/a.md — Alpha [#project/alpha] (changed {day_a})"
        )
        limited = await s.ok("ragdown_list", path_prefix="notes", limit=1)
        assert limited.split("\n")[0] == "documents: 1 of 2"
        recent = (await s.ok("ragdown_list", path_prefix="notes", sort="recent")).split("\n")[1:]
        assert [line.split(" ")[0] for line in recent] == ["notes/b.md", "notes/a.md"]
        # Touching a file does not make it recent; changing its content does.
        os.utime(a, None)
        await s.ok("ragdown_reindex")
        recent = (await s.ok("ragdown_list", path_prefix="notes", sort="recent")).split("\n")[1:]
        assert [line.split(" ")[0] for line in recent] == ["notes/b.md", "notes/a.md"]
        write(docs, "notes/a.md", "---\ntags: [project/alpha]\n---\n# Alpha\n\nchanged\n")
        await s.ok("ragdown_reindex")
        recent = (await s.ok("ragdown_list", path_prefix="notes", sort="recent")).split("\n")[1:]
        assert [line.split(" ")[0] for line in recent] == ["notes/a.md", "notes/b.md"]


async def test_tells_an_agents_documents_from_the_users(docs: Path, connect: Connect) -> None:
    async with connect(docs) as s:
        await s.ok(
            "ragdown_remember",
            title="Restore notes",
            content="Restore takes an hour.",
            name="restore",
            session_id="s1",
        )
        agent = await s.ok("ragdown_recall", query="restore", written_by="agent")
        assert agent.startswith("[1] notes/restore.md:")
        assert "ops/backups.md" not in agent
        assert "written by an agent with ragdown_remember)" in agent.split("\n")[0]
        user = await s.ok("ragdown_recall", query="restore", written_by="user")
        assert "notes/restore.md" not in user
        assert "ops/backups.md" in user
        hits = json.loads(await s.ok("ragdown_recall", query="restore", format="json"))["hits"]
        by_path = {h["path"]: h for h in hits}
        assert by_path["notes/restore.md"]["created_by"] == "ragdown_remember"
        assert "created_by" not in by_path["ops/backups.md"]
        listing = await s.ok("ragdown_list", session_id="s1")
        assert listing == (
            f"documents: 1\nnotes/restore.md — Restore notes (changed {today()}, written by an agent with "
            "ragdown_remember, session s1)"
        )
        assert await s.ok("ragdown_list", written_by="agent") == listing
        context = await s.ok("ragdown_context", prompt="how long does a restore take?", session_id="c")
        assert "written by an agent with ragdown_remember" in context


async def test_lists_a_description_which_is_not_searched(docs: Path, connect: Connect) -> None:
    write(docs, "ops/dr.md", "---\ndescription: Zebra crossing plan\n---\n# DR\n\nFailover steps.\n")
    async with connect(docs) as s:
        listing = await s.ok("ragdown_list", path_prefix="ops")
        assert f"ops/dr.md — DR (changed {today()}): Zebra crossing plan" in listing.split("\n")
        found = await s.ok("ragdown_recall", query="zebra crossing")
        assert "Zebra" not in found


async def test_lists_backlinks_by_wikilink_alias_and_relative_link(docs: Path, connect: Connect) -> None:
    write(docs, "ops/dr.md", "---\naliases: [Disaster Recovery]\n---\n# DR\n\nSteps.\n")
    write(docs, "a.md", "# A\n\nSee [[dr]] first.\n\n```\n[[dr]] in code\n```\n")
    write(docs, "b.md", "# B\n\nThen [[Disaster Recovery|the plan]] and `[[dr]]` inline.\n")
    write(docs, "c.md", "# C\n\nRead [it](ops/dr.md).\n")
    write(docs, "ops/dr-self.md", "# Self\n\nnothing here\n")
    async with connect(docs) as s:
        result = json.loads(await s.ok("ragdown_backlinks", path="ops/dr.md"))
        assert result == {
            "path": "ops/dr.md",
            "backlinks": [
                {"path": "a.md", "title": "A", "lines": [{"line": 3, "text": "See [[dr]] first."}]},
                {
                    "path": "b.md",
                    "title": "B",
                    "lines": [
                        {"line": 3, "text": "Then [[Disaster Recovery|the plan]] and `[[dr]]` inline."}
                    ],
                },
                {"path": "c.md", "title": "C", "lines": [{"line": 3, "text": "Read [it](ops/dr.md)."}]},
            ],
        }
        assert await s.error("ragdown_backlinks", path="ops/nothing.md")


async def test_says_which_document_replaces_a_superseded_one(docs: Path, connect: Connect) -> None:
    write(docs, "old.md", "# Old\n\nembedder is bge\n")
    write(docs, "new.md", '---\nsupersedes: ["old.md"]\n---\n# New\n\nembedder is granite\n')
    async with connect(docs) as s:
        header = (await s.ok("ragdown_read_doc", path="old.md")).split("\n")[0]
        assert header.endswith(", superseded by new.md)")
        assert f"old.md — Old (changed {today()}, superseded by new.md)" in (
            await s.ok("ragdown_list")
        ).split("\n")
        assert "old.md" not in await s.ok("ragdown_recall", query="embedder")


async def test_a_blank_query_is_refused_not_answered_with_any_hits(docs: Path, connect: Connect) -> None:
    async with connect(docs) as s:
        for query in ("", "   ", "\n\t"):
            refused = await s.error("ragdown_recall", query=query)
            assert refused.startswith("ragdown_recall: invalid arguments (query: "), refused


async def test_reports_stats(docs: Path, connect: Connect) -> None:
    async with connect(docs) as s:
        stats = json.loads(await s.ok("ragdown_stats", include_files=True))
        assert stats["role"] == "primary"
        assert stats["embedder"] == "hash-384"
        assert (stats["files"], stats["chunks"]) == (1, 2)
        # A sync the watcher starts for the file written just before the server (a loaded machine delivers
        # its event late) may still be running: the flag says so, and changes nothing above.
        assert isinstance(stats["syncing"], bool)
        assert stats["file_list"] == [{"path": "ops/backups.md", "chunks": 2}]
        assert stats["read_only"] is False
        assert stats["last_sync"]["added"] == 1
        report = json.loads(await s.ok("ragdown_reindex", full=True))
        assert (report["added"], report["chunks"]) == (1, 2)


# -- the root endpoint's instructions -----------------------------------------------------------------


async def test_the_root_endpoint_has_instructions_of_its_own_and_each_folder_keeps_its_title(
    docs: Path,
    start_app: StartServer,  # noqa: F811 (the fixture, imported below)
) -> None:
    """`/mcp` (`RAGDOWN_ROOT_MCP`) spans every folder the caller sees: its instructions say so, and name
    no folder (its title was once put where a folder's goes: `Search the "every" folder ...`)."""
    ops_folder(docs)
    write(docs, "every/plan.md", "# Plan\n\nthe plan\n")  # a folder really titled "every" keeps its title
    write(docs, "every/.ragdown.json", json.dumps({"mcp": True}))
    server = start_app(docs, RAGDOWN_ROOT_MCP="true")

    async def instructions(path: str) -> str:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            server.mcp_http(headers) as http,
            Client(streamable_http_client(server.url + path, http_client=http)) as client,
        ):
            return client.instructions or ""

    root = await instructions("/mcp")
    assert root == root_instructions()
    assert root.startswith("Search the user's Markdown documents, in every folder this server offers")
    assert "ragdown_folders" in root
    assert '"every"' not in root
    assert "folder of the user's" not in root
    assert await instructions("/mcp/ops") == ragdown_instructions("Operations")
    assert (await instructions("/mcp/ops")).startswith(
        'Search the "Operations" folder of the user\'s Markdown documents. Call ragdown_recall before '
    )
    assert (await instructions("/mcp/every")).startswith('Search the "every" folder of the user\'s')


# -- ragdown_remember's tags ----------------------------------------------------------------------


async def test_remember_refuses_a_tag_the_index_would_not_hold_and_writes_nothing(
    docs: Path, connect: Connect
) -> None:
    """Each tag is checked as the indexer reads tags (`normalize_tag`): one it would drop (a space, a comma,
    only digits) or a blank one is refused before anything is written, so a saved note is found by every tag
    it was given."""
    async with connect(docs) as s:
        spaced = await s.error("ragdown_remember", title="T", content="c", name="t", tags=["ok", "has space"])
        assert "'has space'" in spaced
        assert "letters, digits, _, - and /" in spaced
        assert "blank" in await s.error("ragdown_remember", title="T", content="c", name="t", tags=[" "])
        assert "blank" in await s.error("ragdown_remember", title="T", content="c", name="t", tags=[""])
        for bad in (["has space", " "], ["a,b"], ["2024"], ["#"], ["x\ny"]):
            said = await s.error("ragdown_remember", title="T", content="c", name="t", tags=bad)
            assert said.startswith("tag "), said
        assert not (docs / "notes").exists()
        assert await s.ok("ragdown_list", path_prefix="notes") == "No documents."


async def test_remember_writes_a_tag_as_the_indexer_reads_it(docs: Path, connect: Connect) -> None:
    """A leading `#`, a trailing `/` and surrounding spaces are dropped (what an agent meant), a repeat is
    written once, and the note is listed under each tag it was given."""
    async with connect(docs) as s:
        saved = await s.ok(
            "ragdown_remember",
            title="T",
            content="c",
            name="t",
            tags=[" #Project/Alpha/ ", "project/alpha", "ops", "#ops"],
        )
        assert saved == "saved notes/t.md"
        assert '\ntags: ["Project/Alpha", "ops"]\n' in (docs / "notes/t.md").read_text()
        for tag in ("project", "project/alpha", "ops"):
            listed = await s.ok("ragdown_list", tag=tag)
            assert "notes/t.md — T" in listed, (tag, listed)
