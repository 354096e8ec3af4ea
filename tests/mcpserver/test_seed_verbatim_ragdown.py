"""mcp-ragdown's users at home (issue 21): every tool its README (seed 000) documents, called with the
arguments it documents (its Claude Code and min-agent hook inputs verbatim), through the SDK's client against
`ragdown serve`'s app in-process, at a folder's endpoint `/mcp/work` and at the root `/mcp`; and answered as
the README promises: the answer lines and shapes, the filters, the guards on writes, and every failure an
`isError` result (an unknown tool's too)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import write
from tests.http.conftest import TOKEN, Server, StartServer
from tests.http.conftest import start_app as start_app  # the fixture: `ragdown serve`'s app, in-process

pytestmark = pytest.mark.anyio

# The twelve tools of the README's table a folder's endpoint offers; /mcp adds two.
TWELVE = {
    "ragdown_backlinks",
    "ragdown_context",
    "ragdown_delete",
    "ragdown_edit",
    "ragdown_list",
    "ragdown_move",
    "ragdown_read_doc",
    "ragdown_recall",
    "ragdown_reindex",
    "ragdown_remember",
    "ragdown_stats",
    "ragdown_write",
}
# The README's "Restore" section sits on lines 7-9, as its `[work] backups.md:7-9` example does.
BACKUPS = (
    "# Backups\n\nNightly snapshots of the postgres database #ops/db, kept for a week.\n\n## Restore\n\n"
    "Stop the app before you restore.\nRun pg_restore twice: the first pass creates the schema,\n"
    "the second loads the rows.\n"
)
INDEX = (
    "# Index\n\nSee [[Backups#Restore]], [the alpha plan](projects/alpha.md) and [[Project A]].\n\n"
    "```\n[[Backups]] in code is not a link\n```\n"
)
ALPHA = "---\naliases: [Project A]\ntags: [project/alpha]\n---\n# Alpha plan\n\nLaunch the quokka service.\n"
DAY = r"\d{4}-\d{2}-\d{2}"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def notes(docs: Path) -> Path:
    """`~/notes`: the folder `work` with MCP on (the README's `.ragdown.json`), and a human-only `home`."""
    write(docs, "work/.ragdown.json", json.dumps({"title": "Work notes", "mcp": True}))
    write(docs, "work/backups.md", BACKUPS)
    write(docs, "work/index.md", INDEX)
    write(docs, "work/projects/alpha.md", ALPHA)
    write(docs, "home/diary.md", "# Diary\n\nRun pg_restore twice on the home server.\n")
    return docs


@asynccontextmanager
async def mcp(server: Server, path: str) -> AsyncIterator[Client]:
    """The client `claude mcp add --transport http ... --header "Authorization: Bearer $RAGDOWN_TOKEN"` makes."""
    async with (
        server.mcp_http({"Authorization": f"Bearer {TOKEN}"}) as http,
        Client(streamable_http_client(server.url + path, http_client=http)) as client,
    ):
        yield client


async def _call(client: Client, tool: str, args: dict[str, Any]) -> tuple[str, bool]:
    result = await client.call_tool(tool, args)
    return "".join(getattr(c, "text", "") for c in result.content), bool(result.is_error)


async def ok(client: Client, tool: str, args: dict[str, Any]) -> str:
    text, error = await _call(client, tool, args)
    assert not error, (tool, args, text)
    return text


async def refused(client: Client, tool: str, args: dict[str, Any]) -> str:
    """A failure as the README's server gives every one: an `isError` result saying why."""
    text, error = await _call(client, tool, args)
    assert error, (tool, args, text)
    assert "failed unexpectedly" not in text, text
    return text


def sha12(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


async def test_a_folders_endpoint_answers_every_documented_tool(notes: Path, start_app: StartServer) -> None:
    work = notes / "work"
    server = start_app(notes)
    async with mcp(server, "/mcp/work") as c:
        assert c.server_info is not None
        assert c.server_info.name == "ragdown-work"
        assert (c.instructions or "").startswith(
            'Search the "Work notes" folder of the user\'s Markdown documents. Call ragdown_recall before '
            "answering a question the documents might cover, then ragdown_read_doc to read around a hit"
        )
        listed = {t.name for t in (await c.list_tools()).tools}
        assert listed >= TWELVE
        assert not {"ragdown_folders", "ragdown_create_folder"} & listed

        # ragdown_recall: path, line range, breadcrumb, tags, similarity, the day it changed; top_k,
        # path_prefix, tag (nested tags too), format text|json, max_chars.
        text = await ok(c, "ragdown_recall", {"query": "pg_restore twice", "top_k": 1})
        assert re.match(
            rf"\[1\] backups\.md:7-9 — Backups › Restore \[#ops/db\] \(similarity [\d.]+, changed {DAY}\)\n"
            r"Stop the app",
            text,
        ), text
        hits = json.loads(await ok(c, "ragdown_recall", {"query": "pg_restore twice", "format": "json"}))[
            "hits"
        ]
        assert (hits[0]["path"], hits[0]["line_start"], hits[0]["line_end"]) == ("backups.md", 7, 9)
        assert {"heading", "tags", "similarity", "modified", "text"} <= set(hits[0])
        tagged = json.loads(
            await ok(c, "ragdown_recall", {"query": "launch", "tag": "project", "format": "json"})
        )
        assert {h["path"] for h in tagged["hits"]} == {"projects/alpha.md"}
        under = json.loads(
            await ok(c, "ragdown_recall", {"query": "plan", "path_prefix": "projects/", "format": "json"})
        )
        assert {h["path"] for h in under["hits"]} == {"projects/alpha.md"}
        clipped = await ok(c, "ragdown_recall", {"query": "pg_restore twice", "top_k": 1, "max_chars": 20})
        assert 'ragdown_read_doc {path: "backups.md", start_line: 7, end_line: 9}' in clipped

        # ragdown_read_doc: a file or a line range, straight from disk, under `path:start-end of total (hash …)`
        # (the first 12 characters of the SHA-256); a wikilink target, a heading narrowing it, an alias.
        whole = await ok(c, "ragdown_read_doc", {"path": "backups.md"})
        assert whole == f"backups.md:1-9 of 9 (hash {sha12(work / 'backups.md')})\n{BACKUPS}"
        lines = await ok(c, "ragdown_read_doc", {"path": "backups.md", "start_line": 7, "end_line": 9})
        assert lines.split("\n", 1) == [
            f"backups.md:7-9 of 9 (hash {sha12(work / 'backups.md')})",
            "Stop the app before you restore.\nRun pg_restore twice: the first pass creates the schema,\n"
            "the second loads the rows.\n",  # the file's last line, with its line break
        ]
        section = await ok(c, "ragdown_read_doc", {"path": "Backups#Restore"})
        assert section.startswith("backups.md:5-9 of 9")
        assert "## Restore" in section
        assert (await ok(c, "ragdown_read_doc", {"path": "Project A"})).startswith("projects/alpha.md:1-")
        assert "outside" in await refused(c, "ragdown_read_doc", {"path": "../home/diary.md"})

        # ragdown_backlinks: the documents linking to a path (wikilink, alias, relative link), with the
        # lines; a link in code is not a link.
        links = json.loads(await ok(c, "ragdown_backlinks", {"path": "backups.md"}))
        assert [(b["path"], [n["line"] for n in b["lines"]]) for b in links["backlinks"]] == [
            ("index.md", [3])
        ]
        to_alpha = json.loads(await ok(c, "ragdown_backlinks", {"path": "projects/alpha.md"}))
        assert [b["path"] for b in to_alpha["backlinks"]] == ["index.md"]

        # ragdown_list: a count, then a line per document; path_prefix, tag, sort, limit.
        listing = (await ok(c, "ragdown_list", {})).splitlines()
        assert listing[0] == "documents: 3"
        assert re.fullmatch(rf"backups\.md — Backups \[#ops/db\] \(changed {DAY}\)", listing[1]), listing
        assert (
            (await ok(c, "ragdown_list", {"tag": "project"})).splitlines()[1].startswith("projects/alpha.md")
        )
        assert (await ok(c, "ragdown_list", {"path_prefix": "projects/"})).startswith("documents: 1\n")
        assert (await ok(c, "ragdown_list", {"sort": "recent", "limit": 1})).count("\n") == 1

        # ragdown_stats: index size, embedder, role, whether a sync runs, the last sync.
        stats = json.loads(await ok(c, "ragdown_stats", {}))
        assert (stats["files"], stats["role"], stats["syncing"]) == (3, "primary", False)
        assert stats["embedder"]
        assert stats["chunks"] >= 3
        assert stats["last_sync"]

        # ragdown_context: the Claude Code hooks' inputs, verbatim (with what Claude Code puts for the
        # placeholders), and min-agent's.
        claude = {
            "prompt": "how do I restore the backups?",
            "session_id": "claude:abc",
            "format": "claude-code",
        }
        hook = json.loads(await ok(c, "ragdown_context", claude))
        assert hook["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
        assert hook["hookSpecificOutput"]["additionalContext"].startswith("<ragdown-context ")
        assert await ok(c, "ragdown_context", claude) == ""  # nothing repeated for the same session
        assert await ok(c, "ragdown_context", {"prompt": "", "session_id": "claude:abc", "reset": True}) == ""
        assert json.loads(await ok(c, "ragdown_context", claude))["hookSpecificOutput"]["additionalContext"]
        min_agent = {
            "prompt": "how do I restore the backups?",
            "session_id": "min-agent:s1",
            "max_chars": 3000,
        }
        block = await ok(c, "ragdown_context", min_agent)
        assert block.startswith("<ragdown-context ")
        assert block.rstrip().endswith("</ragdown-context>")
        for skipped in ("restore?", "/compact the backups restore"):  # under 12 characters; a slash command
            assert await ok(c, "ragdown_context", {"prompt": skipped, "session_id": "min-agent:s2"}) == ""
        one = await ok(c, "ragdown_context", {"prompt": "how do I restore the backups?", "top_k": 1})
        assert one.count("\n[") == 1, one

        # ragdown_remember: a new document with frontmatter under notes/, indexed before it answers; the
        # path it chose; `supersedes` (search then skips those) and `session_id` recorded.
        write(work, "old-plan.md", "# Old plan\n\nThe quokka launch happens in May.\n")
        await ok(c, "ragdown_reindex", {})
        saved = await ok(
            c,
            "ragdown_remember",
            {
                "title": "Quokka launch",
                "content": "The quokka launch moved to June.",
                "supersedes": ["old-plan.md"],
                "session_id": "s-1",
            },
        )
        match = re.fullmatch(r"saved (notes/\S+\.md) \(supersedes old-plan\.md\)", saved)
        assert match, saved
        note = match.group(1)
        body = (work / note).read_text()
        assert "created_by: ragdown_remember" in body
        assert "s-1" in body
        found = json.loads(
            await ok(c, "ragdown_recall", {"query": "quokka launch", "written_by": "agent", "format": "json"})
        )
        assert [h["path"] for h in found["hits"]] == [note]
        everything = json.loads(await ok(c, "ragdown_recall", {"query": "quokka launch", "format": "json"}))
        assert "old-plan.md" not in {h["path"] for h in everything["hits"]}
        assert note in await ok(c, "ragdown_list", {"session_id": "s-1", "written_by": "agent"})
        again = await ok(c, "ragdown_remember", {"title": "Quokka launch", "content": "A second note."})
        assert again != saved
        assert (work / note).read_text() == body

        # ragdown_write: create (created_by recorded), replace only with base_hash, append (under a heading).
        created = await ok(c, "ragdown_write", {"path": "plans/q3.md", "text": "# Q3\n\n## Goals\n\nShip.\n"})
        q3 = work / "plans/q3.md"
        assert created == f"created plans/q3.md (hash {sha12(q3)})"
        assert "created_by: ragdown_write" in q3.read_text()
        before = q3.read_text()
        assert "base_hash" in await refused(c, "ragdown_write", {"path": "plans/q3.md", "text": "# Q3\n"})
        stale = {"path": "plans/q3.md", "text": "# Q3\n", "base_hash": "000000000000"}
        await refused(c, "ragdown_write", stale)
        assert q3.read_text() == before
        wrote = await ok(
            c,
            "ragdown_write",
            {"path": "plans/q3.md", "text": "# Q3\n\n## Goals\n\nShip.\n", "base_hash": sha12(q3)},
        )
        assert wrote == f"wrote plans/q3.md (hash {sha12(q3)})"
        await ok(
            c, "ragdown_write", {"path": "plans/q3.md", "text": "Hire.", "append": True, "heading": "Goals"}
        )
        assert q3.read_text() == "---\ncreated_by: ragdown_write\n---\n# Q3\n\n## Goals\n\nShip.\n\nHire.\n"

        # ragdown_edit: exact passages swapped in order, all or nothing; replace_all; base_hash optional.
        edited = await ok(
            c,
            "ragdown_edit",
            {"path": "plans/q3.md", "edits": [{"old_text": "Ship.", "new_text": "Ship it."}]},
        )
        assert edited == f"edited plans/q3.md (replaced 1, hash {sha12(q3)})"
        before = q3.read_text()
        both = [{"old_text": "Ship it.", "new_text": "Ship."}, {"old_text": "Not in it", "new_text": "x"}]
        assert "nothing was written" in await refused(
            c, "ragdown_edit", {"path": "plans/q3.md", "edits": both}
        )
        assert q3.read_text() == before
        write(work, "plans/todo.md", "# Todo\n\n- tbd\n- tbd\n")
        await ok(c, "ragdown_reindex", {})
        twice = {
            "path": "plans/todo.md",
            "edits": [{"old_text": "tbd", "new_text": "done", "replace_all": True}],
        }
        assert "replaced 2" in await ok(c, "ragdown_edit", twice)

        # ragdown_move: a document (or a subfolder) from `from` to `to`, every link to it rewritten, the
        # documents whose links changed answered; never over what is at `to`.
        moved = await ok(c, "ragdown_move", {"from": "projects/alpha.md", "to": "archive/alpha.md"})
        assert "index.md" in moved
        assert "(archive/alpha.md)" in (work / "index.md").read_text()
        assert "exists" in await refused(c, "ragdown_move", {"from": "index.md", "to": "backups.md"})
        await ok(c, "ragdown_move", {"from": "plans", "to": "done/plans"})
        assert (work / "done/plans/q3.md").exists()
        assert not (work / "plans").exists()

        # ragdown_delete: a document, or a subfolder with recursive: true; base_hash guards a document.
        todo = work / "done/plans/todo.md"
        await refused(c, "ragdown_delete", {"path": "done/plans/todo.md", "base_hash": "000000000000"})
        assert todo.exists()
        await ok(c, "ragdown_delete", {"path": "done/plans/todo.md", "base_hash": sha12(todo)})
        assert not todo.exists()
        assert "recursive" in await refused(c, "ragdown_delete", {"path": "done"})
        await ok(c, "ragdown_delete", {"path": "done", "recursive": True})
        assert not (work / "done").exists()
        assert "done/" not in await ok(c, "ragdown_list", {})

        # ragdown_reindex: syncs now; full: true re-embeds everything.
        write(work, "outside.md", "# Outside\n\nwritten by another editor\n")
        assert json.loads(await ok(c, "ragdown_reindex", {}))["added"] == 1
        full = json.loads(await ok(c, "ragdown_reindex", {"full": True}))
        assert full["unchanged"] == 0
        assert full["added"] >= 5

        # Every failure is an isError result, never a transport error: an unknown tool's too.
        assert "Unknown tool" in await refused(c, "ragdown_recal", {"query": "backups"})


async def test_the_root_endpoint_answers_as_the_readme_shows(notes: Path, start_app: StartServer) -> None:
    server = start_app(notes, RAGDOWN_ROOT_MCP="true")
    async with mcp(server, "/mcp") as c:
        assert c.server_info is not None
        assert c.server_info.name == "ragdown"
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert TWELVE | {"ragdown_folders", "ragdown_create_folder"} <= set(tools)
        # Every tool of the twelve takes a `folder` (ragdown_reindex too, optional: ragdown's own extension,
        # a scoped key's reindex syncs only its folders; without one it syncs every folder, as the README's).
        for name in TWELVE:
            assert "folder" in tools[name].input_schema.get("properties", {}), name
        assert set(json.loads(await ok(c, "ragdown_reindex", {}))) >= {"added", "unchanged", "removed"}

        # ragdown_folders: one line per folder with MCP on (the human-only `home` is not there).
        assert await ok(c, "ragdown_folders", {}) == "work — Work notes (3 documents)"
        # A search over every folder names each hit's folder: `[work] backups.md:7-9`.
        text = await ok(c, "ragdown_recall", {"query": "pg_restore twice", "top_k": 2})
        assert text.startswith("[1] [work] backups.md:7-9 — Backups › Restore"), text
        assert "diary" not in text
        # `folder: "work", path: "backups.md"`
        read = await ok(c, "ragdown_read_doc", {"folder": "work", "path": "backups.md"})
        assert read.startswith("backups.md:1-9 of 9 (hash ")
        await refused(c, "ragdown_read_doc", {"path": "backups.md"})  # needs a folder
        home = await refused(c, "ragdown_read_doc", {"folder": "home", "path": "diary.md"})
        nope = await refused(c, "ragdown_read_doc", {"folder": "nope", "path": "diary.md"})
        assert home.replace("home", "X") == nope.replace("nope", "X")  # human-only: as one that is not there
        assert "[work] " in await ok(c, "ragdown_list", {})
        assert json.loads(await ok(c, "ragdown_stats", {}))["files"] == 3
        assert "<ragdown-context" in await ok(
            c, "ragdown_context", {"prompt": "how do I restore the backups?"}
        )

        # ragdown_create_folder: a name and an optional title; MCP on, made by an agent; never overwrites.
        assert (await ok(c, "ragdown_create_folder", {"name": "agents", "title": "Agent notes"})).startswith(
            "created folder agents"
        )
        assert json.loads((notes / "agents/.ragdown.json").read_text()) == {
            "title": "Agent notes",
            "mcp": True,
            "created_by": "ragdown_create_folder",
        }
        await refused(c, "ragdown_create_folder", {"name": "agents"})
        await refused(c, "ragdown_create_folder", {"name": ".hidden"})
        written = await ok(c, "ragdown_write", {"folder": "agents", "path": "first.md", "text": "# First\n"})
        assert written.startswith("created first.md")
        assert (notes / "agents/first.md").exists()
