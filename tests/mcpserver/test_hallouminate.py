"""The `hallouminate` tool set (issue 12) over MCP, through the SDK's client against a real `ragdown stdio`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.conftest import write
from tests.mcpserver.conftest import Connect
from tests.mcpserver.traces import traces

pytestmark = pytest.mark.anyio

TOOLS = [
    "add_markdown",
    "delete_markdown",
    "get_footnote",
    "ground",
    "index",
    "list_corpora",
    "list_files",
    "list_tree",
    "read_markdown",
]


@pytest.fixture
def wiki(docs: Path) -> Path:
    write(docs, "index.md", "# Wiki\n\n<!-- HALLOUMINATE:INDEX-START -->\n<!-- HALLOUMINATE:INDEX-END -->\n")
    write(
        docs,
        "guides/backups.md",
        "# Backups\n\nNightly snapshots of postgres[^1].\n\n[^1]: See [[restore]].\n",
    )
    write(docs, "guides/restore.md", "# Restore\n\nRun pg_restore twice.\n")
    write(docs, "empty-dir/notes.png", "not markdown")
    write(docs, ".gitignore", "drafts/\n")
    write(docs, "drafts/wip.md", "# WIP\n")
    return docs


async def test_the_nine_tools_read_and_search(wiki: Path, connect: Connect) -> None:
    async with connect(wiki, RAGDOWN_TOOLSET="hallouminate") as s:
        assert await s.tool_names() == TOOLS
        corpora = json.loads(await s.ok("list_corpora"))
        assert [c["name"] for c in corpora] == [f"repo:{wiki.name}:wiki"]  # as its clients name it
        assert corpora[0]["aliases"] == [f"repo:{wiki.name}:corpus", wiki.name]
        corpus = wiki.name
        files = json.loads(await s.ok("list_files"))
        assert [f["path"] for f in files] == ["guides/backups.md", "guides/restore.md", "index.md"]
        assert files[0]["absolute_path"] == str(wiki / "guides/backups.md")
        tree = json.loads(await s.ok("list_tree", corpus=corpus))
        assert [d["path"] for d in tree["subdirs"]] == ["guides"]  # empty-dir and the ignored drafts pruned
        result = await s.client.call_tool("ground", {"query": "how to restore postgres", "top_files": 2})
        assert not result.is_error
        structured = result.structured_content
        assert isinstance(structured, dict)
        assert {d["path"] for d in structured["docs"]} <= {
            "guides/backups.md",
            "guides/restore.md",
            "index.md",
        }
        assert structured["docs"][0]["chunks"][0]["breadcrumb"][0] in ("Restore", "Backups")
        text = "".join(getattr(c, "text", "") for c in result.content)
        assert text.startswith("guides/")
        assert (
            await s.ok("read_markdown", corpus=corpus, path="guides/restore.md")
        ) == "# Restore\n\nRun pg_restore twice.\n"
        note = json.loads(await s.ok("get_footnote", page="guides/backups.md", footnote_number="1"))
        assert note["text"] == "See [[restore]]."


async def test_writes_lint_and_keep_the_index_lists(wiki: Path, connect: Connect) -> None:
    async with connect(wiki, RAGDOWN_TOOLSET="hallouminate") as s:
        corpus = wiki.name
        added = json.loads(
            await s.ok(
                "add_markdown",
                corpus=corpus,
                path="guides/new-page.md",
                content="# New page\n\n### Deep\n\n[x]()\n",
            )
        )
        assert added["created"] is True
        assert any("heading level jumps from h1 to h3" in w for w in added["warnings"])
        assert any("empty destination" in w for w in added["warnings"])
        index = (wiki / "guides/index.md").read_text()  # scaffolded, with hallouminate's own markers
        assert "- [new-page.md](./new-page.md) — New page" in index
        assert "<!-- HALLOUMINATE:INDEX-START -->" in index
        assert "ragdown:index-start" not in index
        root = (wiki / "index.md").read_text()
        assert "- [guides/](./guides/index.md) — guides" in root  # hallouminate's markers kept
        assert "HALLOUMINATE:INDEX-START" in root

        with pytest.raises(MCPError) as refused:
            await s.client.call_tool(
                "add_markdown", {"corpus": corpus, "path": "guides/new-page.md", "content": "# A\n"}
            )
        assert (refused.value.code, "overwrite: true" in refused.value.message) == (-32602, True)
        again = json.loads(
            await s.ok(
                "add_markdown", corpus=corpus, path="guides/new-page.md", content="# Again\n", overwrite=True
            )
        )
        assert again["created"] is False
        gone = json.loads(await s.ok("delete_markdown", corpus=corpus, path="guides/new-page.md"))
        assert (gone["deleted"], gone["trash"]) == (True, False)  # irreversible, as hallouminate's
        assert traces(wiki, "guides/new-page.md", b"# A\n", b"# Again\n") == []
        with pytest.raises(MCPError) as missing:
            await s.client.call_tool("delete_markdown", {"corpus": corpus, "path": "guides/new-page.md"})
        assert missing.value.code == -32602
        assert "new-page.md" not in (wiki / "guides/index.md").read_text()
        assert json.loads(await s.ok("index"))["removed"] == 0


async def test_bad_input_is_a_json_rpc_error(wiki: Path, connect: Connect) -> None:
    async with connect(wiki, RAGDOWN_TOOLSET="hallouminate") as s:
        for name, args in [
            ("read_markdown", {"path": "guides/restore.md"}),  # no corpus
            ("add_markdown", {"corpus": "nope", "path": "x.md", "content": "# X"}),
            ("read_markdown", {"corpus": wiki.name, "path": "../outside.md"}),
            ("get_footnote", {"page": "guides/backups.md", "footnote_number": "9"}),
            ("list_fils", {}),  # a tool the server does not offer (issue 21): hallouminate's -32602 too
        ]:
            with pytest.raises(MCPError) as caught:
                await s.client.call_tool(name, args)
            assert caught.value.code == -32602, (name, caught.value)
        assert not (wiki / "x.md").exists()


async def test_a_union_whose_names_clash_is_refused_at_start(wiki: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import REPO, isolated_env

    run = subprocess.run(
        [sys.executable, "-m", "ragdown.cli", "stdio"],
        cwd=REPO,
        env=isolated_env(tmp_path, RAGDOWN_DOCS_DIR=str(wiki), RAGDOWN_TOOLSET="readmedb,hallouminate"),
        capture_output=True,
        text=True,
        timeout=60,
        input="",
    )
    assert run.returncode == 2
    assert "both have a tool named list_files" in run.stderr


async def test_ground_searches_as_many_sections_as_its_limit_asks(docs: Path, connect: Connect) -> None:
    for n in range(5):
        sections = "\n\n".join(f"## Quokka {i}\n\nThe quokka number {i} lives here." for i in range(30))
        write(docs, f"zoo{n}.md", f"# Zoo {n}\n\n{sections}\n")
    async with connect(docs, RAGDOWN_TOOLSET="hallouminate") as s:
        for limit in (100, 10):
            result = await s.client.call_tool(
                "ground", {"query": "quokka", "top_files": 5, "chunks_per_file": 20, "limit": limit}
            )
            structured = result.structured_content
            assert isinstance(structured, dict)
            shown = sum(len(d["chunks"]) for d in structured["docs"])
            assert shown > 50 if limit == 100 else shown == 10
