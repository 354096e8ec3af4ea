"""MarkIndex's command line with `ragdown` in its place (seed 001, issue 21), in-process: `tree`, `--db`,
`--no-setext` / `--setext` stored in the index, setext warnings, `search --folder --limit --json`,
`eval --mode bm25 --out`, and `mcp DIR --reindex-on-start` (the registry's launch line) over the SDK's client."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from ragdown.cli.main import main
from ragdown.documents import blocks
from tests.conftest import REPO, isolated_env, write

CONVERTED = (
    "# Annual report\n\n"
    "Revenue grew in every region this year, led by the northern\n"
    "markets, where the new distribution centres opened in spring and\n"
    "carried most of the growth through the second half.\n"
    "---\n\n"
    "Costs rose less than revenue.\n"
)


@pytest.fixture
def env(env: dict[str, str]) -> Iterator[dict[str, str]]:
    """The shared `env` (tests/conftest.py), and setext read again afterwards: one choice per process, so
    the next test parses as every other does."""
    yield env
    blocks.read_setext(True)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_no_setext_is_stored_in_the_index_and_kept_until_setext(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    write(docs, "report.md", CONVERTED)
    db = tmp_path / "index-here"
    code, out, _ = run(capsys, "index", str(docs), "--db", str(db))
    assert code == 0
    (warning, summary) = out.splitlines()
    assert warning.startswith("warning report.md: line 3: a setext heading of 3 lines")
    assert "--no-setext" in warning
    assert summary.startswith("1 added")
    assert (db / "index.sqlite").is_file()

    code, out, _ = run(capsys, "index", str(docs), "--db", str(db), "--no-setext", "--json")
    report = json.loads(out)
    assert (report["added"], report["warnings"]) == (1, [])  # rebuilt: no heading, no warning
    code, out, _ = run(capsys, "index", str(docs), "--db", str(db), "--json")  # no flag: kept
    assert (json.loads(out)["unchanged"], json.loads(out)["updated"]) == (1, 0)
    code, out, _ = run(capsys, "tree", str(docs), "report.md", "--depth", "3", "--db", str(db), "--json")
    assert code == 0
    tree = json.loads(out)["tree"]
    assert [c["title"] for c in tree.get("children", [])] == []  # the page break is no section
    code, out, _ = run(capsys, "index", str(docs), "--db", str(db), "--setext", "--json")
    again = json.loads(out)
    assert again["added"] == 1  # rebuilt again
    assert again["warnings"][0].startswith("report.md: line 3: a setext heading")


def test_tree_search_with_folder_and_limit_and_a_db_file_refused(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    write(
        docs, "policies/iso.md", "# ISO-27001 audit\n\nThe audit runs yearly.\n\n## Scope\n\nEvery office.\n"
    )
    write(docs, "other/iso.md", "# ISO-27001 audit notes\n\nNotes on the audit.\n")
    code, out, _ = run(capsys, "tree", str(docs), "policies/iso.md", "--depth", "3")
    assert code == 0
    assert "Scope" in out
    code, out, _ = run(
        capsys, "search", str(docs), "ISO-27001 audit", "--folder", "policies", "--limit", "5", "--json"
    )
    assert code == 0
    hits = json.loads(out)
    found = hits["hits"]  # ragdown_recall's JSON
    assert found
    assert {h["path"] for h in found} == {"policies/iso.md"}
    old = tmp_path / "index.db"
    old.write_text("MarkIndex's SQLite file")
    code, _, err = run(capsys, "index", str(docs), "--db", str(old))
    assert code == 2
    assert "is a file" in err


def test_eval_bm25_writes_its_report_and_agent_needs_a_model(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    write(docs, "ops/backups.md", "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n")
    questions = tmp_path / "q.jsonl"
    q = {"id": "q1", "question": "pg_restore", "type": "identifier", "gold_path": "ops/backups.md",
         "gold_lines": [7, 7], "gold_heading": "Backups > Restore"}  # fmt: skip
    questions.write_text(json.dumps(q) + "\n")
    out_file = tmp_path / "report.json"
    code, _, _ = run(
        capsys, "eval", str(docs), "--questions", str(questions), "--mode", "bm25", "--out", str(out_file)
    )
    assert code == 0
    report = json.loads(out_file.read_text())
    assert report["mode"] == "lexical"
    assert report["ranks"] == {"q1": 1}
    code, _, err = run(capsys, "eval", str(docs), "--questions", str(questions), "--mode", "agent")
    assert code == 2
    assert "--mode agent needs a model" in err


@pytest.mark.anyio
async def test_the_registry_launch_line_serves_markindex_tools(tmp_path: Path) -> None:
    """`markindex mcp <docs_dir> --reindex-on-start` with `ragdown` in its place: a real process on stdio,
    MarkIndex's five read-only tools, an index built on start, `--no-setext` and `--ignore` honoured."""
    docs = tmp_path / "docs"
    write(docs, "guides/setup.md", "# Setup\n\nInstall the package.\n")
    write(docs, "drafts/wip.md", "# WIP\n\nNot yet.\n")
    write(docs, "report.md", CONVERTED)
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "ragdown.cli",
            "mcp",
            str(docs),
            "--reindex-on-start",
            "--no-setext",
            "--ignore",
            "drafts/",
        ],
        env=isolated_env(tmp_path),
        cwd=str(REPO),
    )
    async with stdio_client(params) as (read, write_stream), ClientSession(read, write_stream) as session:
        init = await session.initialize()
        assert "[doc_path, L<start>-<end>]" in (init.instructions or "")
        tools = (await session.list_tools()).tools
        assert sorted(t.name for t in tools) == [
            "browse_documents",
            "get_document",
            "get_document_structure",
            "get_node_content",
            "search_documents",
        ]
        assert all(t.annotations and t.annotations.read_only_hint for t in tools)
        result = await session.call_tool("browse_documents", {})
        body = json.loads("".join(getattr(c, "text", "") for c in result.content))
        assert [d["doc_path"] for d in body["data"]["documents"]] == ["guides/setup.md", "report.md"]
        result = await session.call_tool("get_document_structure", {"doc_path": "report.md"})
        structure = json.loads("".join(getattr(c, "text", "") for c in result.content))
        assert all("Revenue" not in n["title"] for n in structure["data"]["nodes"])
