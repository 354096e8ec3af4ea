"""hallouminate's users at home (issue 21): each of the nine tools its document (seed 003, "MCP surface")
describes, called with the arguments it names, through the SDK's client against `ragdown stdio`'s server
with `RAGDOWN_TOOLSET=hallouminate`, and answered as the document promises: the answer shapes, the default
corpus, the `repo:<NAME>:wiki` and `repo:<NAME>:corpus` names, the `index.md` upkeep between hallouminate's
markers, the advisory lints, and its error mapping (caller input is JSON-RPC `-32602`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from tests.conftest import write
from tests.mcpserver.conftest import Connect, Session
from tests.mcpserver.test_hallouminate import TOOLS as NINE

pytestmark = pytest.mark.anyio

START, END = "<!-- HALLOUMINATE:INDEX-START -->", "<!-- HALLOUMINATE:INDEX-END -->"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository's wiki as hallouminate keeps one: an index.md with its markers and prose around them, a
    page with footnotes, a marker-less index.md of its author's, a directory with no Markdown."""
    root = tmp_path / "myrepo"
    write(root, "index.md", f"# My repo\n\nWritten by hand.\n\n{START}\n{END}\n\nFooter by hand.\n")
    write(
        root,
        "guides/backups.md",
        "# Backups\n\nNightly snapshots of postgres[^1], kept a week[^note].\n\n"
        "## Restore\n\nRun pg_restore twice.\n\n[^1]: See the restore guide.\n[^note]: Seven days.\n",
    )
    write(root, "guides/index.md", f"# Guides\n\n{START}\n{END}\n")
    write(root, "handmade/index.md", "# Handmade\n\nA list its author keeps: no markers.\n")
    write(root, "handmade/one.md", "# One\n\nhand kept\n")
    write(root, "assets/diagram.txt", "not markdown")
    return root


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def _ok(s: Session, tool: str, args: dict[str, Any]) -> Any:
    """A call as a hallouminate client sends it; its answer's JSON (or text, for read_markdown)."""
    result = await s.client.call_tool(tool, args)
    assert not result.is_error, (tool, _text(result))
    text = _text(result)
    return text if tool == "read_markdown" else json.loads(text)


async def _invalid(s: Session, tool: str, args: dict[str, Any]) -> str:
    """The message of the JSON-RPC InvalidParams (-32602) error hallouminate answers caller input with."""
    with pytest.raises(MCPError) as refused:
        await s.client.call_tool(tool, args)
    assert refused.value.code == -32602, (tool, args, refused.value)
    return refused.value.message


async def test_the_nine_tools_as_hallouminate_documents_them(repo: Path, connect: Connect) -> None:
    async with connect(repo, RAGDOWN_TOOLSET="hallouminate") as s:
        assert await s.tool_names() == NINE

        # list_corpora: no params; derived repo:NAME:wiki (and repo:NAME:corpus) corpora.
        corpora = await _ok(s, "list_corpora", {})
        assert [c["name"] for c in corpora] == ["repo:myrepo:wiki"]
        assert corpora[0]["aliases"] == ["repo:myrepo:corpus", "myrepo"]
        wiki = "repo:myrepo:wiki"

        # list_files: corpus defaults to the wiki; an array of {path, absolute_path}; every name of it works.
        files = await _ok(s, "list_files", {})
        assert [f["path"] for f in files] == [
            "guides/backups.md",
            "guides/index.md",
            "handmade/index.md",
            "handmade/one.md",
            "index.md",
        ]
        assert all(set(f) == {"path", "absolute_path"} for f in files)
        assert all(Path(f["absolute_path"]) == repo / f["path"] for f in files)
        for corpus in (wiki, "repo:myrepo:corpus", "myrepo"):
            assert await _ok(s, "list_files", {"corpus": corpus}) == files

        # list_tree: the same files as {path, absolute_path, files, subdirs}; assets/ (no Markdown) pruned.
        tree = await _ok(s, "list_tree", {"corpus": wiki})
        assert set(tree) == {"path", "absolute_path", "files", "subdirs"}
        assert [d["path"] for d in tree["subdirs"]] == ["guides", "handmade"]
        assert [f["path"] for f in tree["files"]] == ["index.md"]
        flat = [f["path"] for d in tree["subdirs"] for f in d["files"]] + [f["path"] for f in tree["files"]]
        assert sorted(flat) == [f["path"] for f in files]
        assert tree == await _ok(s, "list_tree", {})

        # ground: query (required), corpus, top_files, chunks_per_file, limit, snippet_chars; a ripgrep-style
        # outline in content, the whole answer in structuredContent.docs, rolled up per file with breadcrumbs.
        args = {
            "query": "restore postgres snapshots",
            "corpus": wiki,
            "top_files": 1,
            "chunks_per_file": 2,
            "limit": 20,
            "snippet_chars": 40,
        }
        result = await s.client.call_tool("ground", args)
        assert not result.is_error
        docs = (result.structured_content or {})["docs"]
        assert [d["path"] for d in docs] == ["guides/backups.md"]
        assert Path(docs[0]["absolute_path"]) == repo / "guides/backups.md"
        assert 1 <= len(docs[0]["chunks"]) <= 2
        assert all(c["breadcrumb"][0] == "Backups" for c in docs[0]["chunks"])
        assert all(len(c["snippet"]) <= 40 for c in docs[0]["chunks"])
        outline = _text(result).splitlines()
        assert outline[0] == "guides/backups.md"
        chunk = docs[0]["chunks"][0]
        assert outline[1].startswith(f"{chunk['start_line']}-{chunk['end_line']}: Backups")
        defaulted = await s.client.call_tool("ground", {"query": "restore postgres snapshots"})
        assert (defaulted.structured_content or {})["docs"][0]["path"] == "guides/backups.md"

        # add_markdown: corpus, path, content, overwrite (default false); the wiki's index.md lists kept
        # between the markers (prose outside kept, a missing one scaffolded, a marker-less one left alone),
        # and the advisory lints answered without blocking the write.
        content = "# Disaster recovery\n\n### Too deep\n\nSee [the runbook]().\n\n```mermaid\n```\n"
        added = await _ok(
            s, "add_markdown", {"corpus": wiki, "path": "guides/disaster-recovery.md", "content": content}
        )
        assert (repo / "guides/disaster-recovery.md").read_text() == content
        warnings = " | ".join(added["warnings"])
        for lint in ("heading level jumps from h1 to h3", "empty destination", "empty mermaid"):
            assert lint in warnings, added["warnings"]
        guides = (repo / "guides/index.md").read_text()
        assert "- [disaster-recovery.md](./disaster-recovery.md) — Disaster recovery" in guides
        assert guides.startswith(f"# Guides\n\n{START}\n")
        root = (repo / "index.md").read_text()
        assert root.startswith("# My repo\n\nWritten by hand.\n\n")
        assert root.endswith("\n\nFooter by hand.\n")
        assert "- [guides/](./guides/index.md)" in root
        await _ok(
            s, "add_markdown", {"corpus": wiki, "path": "runbooks/failover.md", "content": "# Failover\n"}
        )
        scaffolded = (repo / "runbooks/index.md").read_text()
        assert f"{START}\n- [failover.md](./failover.md) — Failover\n{END}" in scaffolded
        handmade = (repo / "handmade/index.md").read_text()
        await _ok(s, "add_markdown", {"corpus": wiki, "path": "handmade/two.md", "content": "# Two\n"})
        assert (repo / "handmade/index.md").read_text() == handmade

        # Idempotent writes: an existing file is refused unless overwrite: true; read_markdown first.
        message = await _invalid(
            s, "add_markdown", {"corpus": wiki, "path": "guides/disaster-recovery.md", "content": "# X\n"}
        )
        assert "overwrite" in message
        assert (repo / "guides/disaster-recovery.md").read_text() == content

        # read_markdown: corpus, path; the verbatim UTF-8 contents (CRLF and all).
        assert (
            await _ok(s, "read_markdown", {"corpus": wiki, "path": "guides/disaster-recovery.md"}) == content
        )
        verbatim = "# Café\r\n\r\nNaïve text — “quoted”.\r\n"
        write(repo, "guides/cafe.md", verbatim.encode())
        assert await _ok(s, "read_markdown", {"corpus": wiki, "path": "guides/cafe.md"}) == verbatim
        replaced = "# Disaster recovery\n\nCall the on-call engineer.\n"
        again = await _ok(
            s,
            "add_markdown",
            {"corpus": wiki, "path": "guides/disaster-recovery.md", "content": replaced, "overwrite": True},
        )
        assert again["warnings"] == []
        assert (repo / "guides/disaster-recovery.md").read_text() == replaced

        # get_footnote: corpus (defaults), page, footnote_number ("1" for [^1], "note" for [^note]).
        one = await _ok(s, "get_footnote", {"page": "guides/backups.md", "footnote_number": "1"})
        assert one["text"] == "See the restore guide."
        note = await _ok(
            s, "get_footnote", {"corpus": wiki, "page": "guides/backups.md", "footnote_number": "note"}
        )
        assert note["text"] == "Seven days."

        # index: corpus optional; after files were touched outside, the index has them.
        write(repo, "guides/made-outside.md", "# Made outside\n\nquetzalcoatl migration notes\n")
        report = await _ok(s, "index", {"corpus": wiki})
        assert report["added"] >= 1, report
        found = await s.client.call_tool("ground", {"query": "quetzalcoatl migration", "top_files": 1})
        assert (found.structured_content or {})["docs"][0]["path"] == "guides/made-outside.md"
        assert (await _ok(s, "index", {}))["added"] == 0

        # delete_markdown: corpus, path; the file unlinked, its rows pruned, the ancestors' lists re-walked.
        await _ok(s, "delete_markdown", {"corpus": wiki, "path": "guides/made-outside.md"})
        assert not (repo / "guides/made-outside.md").exists()
        assert "made-outside.md" not in (repo / "guides/index.md").read_text()
        assert "guides/made-outside.md" not in [f["path"] for f in await _ok(s, "list_files", {})]
        gone = await s.client.call_tool("ground", {"query": "quetzalcoatl migration", "top_files": 5})
        assert "guides/made-outside.md" not in [d["path"] for d in (gone.structured_content or {})["docs"]]


async def test_caller_input_failures_are_invalid_params(repo: Path, tmp_path: Path, connect: Connect) -> None:
    """The error mapping: a bad corpus name, an unsafe path, a missing argument, and a tool the server does
    not offer are `-32602`; nothing is written."""
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, repo / "linked")
    wiki = "repo:myrepo:wiki"
    async with connect(repo, RAGDOWN_TOOLSET="hallouminate") as s:
        for tool, args in [
            ("list_files", {"corpus": "repo:other:wiki"}),
            ("ground", {"query": "backups", "corpus": "repo:myrepo:notes"}),
            ("add_markdown", {"corpus": "myrepo:wiki", "path": "x.md", "content": "# X\n"}),
            ("add_markdown", {"corpus": wiki, "path": "../escape.md", "content": "# X\n"}),
            ("add_markdown", {"corpus": wiki, "path": "linked/escape.md", "content": "# X\n"}),
            ("read_markdown", {"corpus": wiki, "path": "/etc/passwd"}),
            ("add_markdown", {"path": "x.md", "content": "# X\n"}),  # mutating tools need corpus
            ("read_markdown", {"path": "index.md"}),  # and so does read_markdown
            ("delete_markdown", {"path": "index.md"}),
            ("add_markdown", {"corpus": wiki, "path": "x.md"}),  # missing content
            ("ground", {"corpus": wiki}),  # missing query
            ("get_footnote", {"page": "guides/backups.md"}),  # missing footnote_number
            ("grounds", {"query": "backups"}),  # a tool the server does not have
        ]:
            await _invalid(s, tool, args)
        assert "Unknown tool: grounds" in await _invalid(s, "grounds", {"query": "backups"})
        assert not (repo / "x.md").exists()
        assert not (tmp_path / "escape.md").exists()
        assert list(outside.iterdir()) == []
        assert (repo / "index.md").exists()


async def test_a_write_tool_under_read_only_is_invalid_params(repo: Path, connect: Connect) -> None:
    """Read-only hides the mutating tools; calling one anyway is refused as a tool the server does not offer:
    `-32602`, as hallouminate's server answers it, and nothing is written."""
    async with connect(repo, RAGDOWN_TOOLSET="hallouminate", RAGDOWN_READ_ONLY="true") as s:
        assert await s.tool_names() == [
            n for n in NINE if n not in ("add_markdown", "delete_markdown", "index")
        ]
        message = await _invalid(
            s, "add_markdown", {"corpus": "repo:myrepo:wiki", "path": "new-page.md", "content": "# New\n"}
        )
        assert "Unknown tool: add_markdown" in message
        await _invalid(s, "delete_markdown", {"corpus": "repo:myrepo:wiki", "path": "index.md"})
        assert not (repo / "new-page.md").exists()
        assert (repo / "index.md").exists()
