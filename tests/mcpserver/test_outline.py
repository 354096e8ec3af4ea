"""Structure-first navigation over MCP (issue 9): `ragdown_outline`, `ragdown_read_doc` with `node_id` and
`line_numbers`, recall's `node_id`, and the `markindex` tool set, through the SDK's client against a real
`ragdown stdio`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write
from tests.mcpserver.conftest import Connect, Session

pytestmark = pytest.mark.anyio

MARKINDEX_TOOLS = [
    "browse_documents",
    "get_document",
    "get_document_structure",
    "get_node_content",
    "search_documents",
]


def prose(n: int, word: str) -> str:
    return " ".join(f"{word}{i % 7}" for i in range(n))


GUIDE = (
    "---\ndescription: How to install and run the service\n---\n"
    f"# Guide\n\n{prose(300, 'intro')}\n\n"
    f"## Install\n\n{prose(300, 'setup')}\n\n"
    f"### Linux\n\n{prose(300, 'apt')} kestrel-ingest\n\n"
    f"### macOS\n\n{prose(300, 'brew')}\n\n"
    f"## Run\n\n{prose(300, 'start')}\n"
)


@pytest.fixture
def library(docs: Path) -> Path:
    write(docs, "guides/guide.md", GUIDE)
    write(docs, "guides/short.md", "# Short\n\nOne line about tea.\n")
    write(docs, "notes/todo.md", "# Todo\n\n- [ ] water the plants\n")
    return docs


def node_ids(outline: str) -> dict[str, str]:
    """Title → node id of each node line `- Title [id] L1-9, …`."""
    return {m[1]: m[2] for m in re.finditer(r"^\s*- (.+?)(?: \(\w+\))? \[([0-9a-f]+)\] L", outline, re.M)}


async def test_outline_walks_folder_document_and_section(library: Path, connect: Connect) -> None:
    async with connect(library) as s:
        tree = await s.ok("ragdown_outline")
        assert tree.startswith(f"{library.name}: 3 documents, ")
        assert "guides/ — 2 documents" in tree
        assert "guides/guide.md — Guide (" in tree
        assert "How to install and run the service" in tree
        only = await s.ok("ragdown_outline", path_prefix="notes")
        assert "notes/todo.md — Todo" in only
        assert "guide.md" not in only

        outline = await s.ok("ragdown_outline", path="guides/guide.md", depth=2)
        assert outline.startswith("guides/guide.md — Guide: ")
        ids = node_ids(outline)
        assert {"Guide", "Install", "Run"} <= set(ids)
        assert "Linux" not in ids  # below the cut at depth 2
        assert re.search(r"- Install \[[0-9a-f]+\] L\d+-\d+, [\d,]+ tokens, 2 below", outline)
        deeper = await s.ok("ragdown_outline", path="Guide", depth=3)  # a wikilink target works too
        assert "Linux" in node_ids(deeper)
        opened = await s.ok("ragdown_outline", path="guides/guide.md", node_id=ids["Install"])
        assert {"Linux", "macOS"} <= set(node_ids(opened))
        assert "Run" not in node_ids(opened)

        stale = await s.error("ragdown_outline", path="guides/guide.md", node_id="0123456789")
        assert "re-read the outline" in stale
        assert "depth" in await s.error("ragdown_outline", path="guides/guide.md", depth=11)


async def test_read_doc_reads_a_node_with_line_numbers_and_recall_names_the_node(
    library: Path, connect: Connect
) -> None:
    async with connect(library) as s:
        ids = node_ids(await s.ok("ragdown_outline", path="guides/guide.md", depth=3))
        text = await s.ok("ragdown_read_doc", path="guides/guide.md", node_id=ids["Linux"], line_numbers=True)
        header, *lines = text.split("\n")
        found = re.match(r"guides/guide\.md:(\d+)-(\d+) of \d+ \(hash [0-9a-f]{12}\)", header)
        assert found, header
        first, last = int(found[1]), int(found[2])
        assert lines[0] == f"{first}│ ### Linux"
        assert all(re.match(r"^\s*\d+│ ", line) for line in lines)
        assert len(lines) == last - first + 1
        file_lines = (library / "guides/guide.md").read_text().split("\n")
        assert lines[2].split("│ ", 1)[1] == file_lines[first + 1]
        plain = await s.ok("ragdown_read_doc", path="guides/guide.md", node_id=ids["Install"])
        assert "### macOS" in plain
        assert "## Run" not in plain
        assert "not both" in await s.error(
            "ragdown_read_doc", path="guides/guide.md", node_id=ids["Linux"], start_line=1
        )
        hits = json.loads(await s.ok("ragdown_recall", query="kestrel-ingest", format="json"))["hits"]
        assert hits[0]["path"] == "guides/guide.md"
        assert hits[0]["node_id"] == ids["Linux"]


async def test_a_long_outline_comes_in_parts(docs: Path, connect: Connect) -> None:
    count = 3000  # about 60 characters of outline each: well over one part's 95,000
    sections = "\n\n".join(f"## Section {i}\n\n{prose(150, f's{i}x')}" for i in range(count))
    write(docs, "big.md", f"# Big\n\n{sections}\n")
    async with connect(docs, RAGDOWN_TOOLSET="ragdown,markindex") as s:
        await s.ok("ragdown_reindex")  # a first sync this large may take longer than a call waits for it
        first = await s.ok("ragdown_outline", path="big.md")
        assert len(first) <= 95_000
        head = first.split("\n", 1)[0]
        match = re.match(r"part 1 of (\d+); the next: ragdown_outline path='big.md' depth=2 part=2", head)
        assert match, head
        parts = int(match.group(1))
        assert parts >= 2
        seen = set(node_ids(first))
        for part in range(2, parts + 1):
            text = await s.ok("ragdown_outline", path="big.md", part=part)
            assert len(text) <= 95_000
            seen |= set(node_ids(text))
        assert {f"Section {i}" for i in range(count)} <= seen
        assert "past the end" in await s.error("ragdown_outline", path="big.md", part=parts + 1)

        # MarkIndex's structure pages too, though its one top node (the H1) holds every section: each part
        # nests on its own (the H1 repeated, marked continued), and its next step is a call that works.
        titles: list[str] = []
        structure = await every_part(s, "get_document_structure", {"doc_path": "big.md"})
        for data in structure:
            (big,) = data["nodes"]
            assert big["title"] == "Big"
            assert big.get("continued", False) is (data["part"] > 1)
            titles += [n["title"] for n in big["children"]]
        total = structure[-1]["total_parts"]
        assert total >= 2
        assert titles == [f"Section {i}" for i in range(count)]


def envelope(text: str) -> dict[str, object]:
    body: dict[str, object] = json.loads(text)
    assert set(body) >= {"success", "next_steps"}
    return body


async def every_part(s: Session, tool: str, arguments: dict[str, object]) -> list[dict[str, Any]]:
    """Each part's `data` of a paged MarkIndex answer, calling the next step it names until none: every
    part stays under the budget, and each next step is a call that works as given."""
    parts: list[dict[str, Any]] = []
    while True:
        text = await s.ok(tool, **arguments)
        assert len(text) <= 95_000
        body = envelope(text)
        data = body["data"]
        assert isinstance(data, dict)
        parts.append(data)
        steps = body["next_steps"]
        assert isinstance(steps, list)
        more = [step for step in steps if step["tool"] == tool]
        if not more:
            return parts
        arguments = more[0]["arguments"]


async def test_the_markindex_set_answers_in_its_own_envelopes(library: Path, connect: Connect) -> None:
    async with connect(library, RAGDOWN_TOOLSET="markindex") as s:
        assert await s.tool_names() == MARKINDEX_TOOLS
        assert "[doc_path, L<start>-<end>]" in (s.client.instructions or "")

        browsed = envelope(await s.ok("browse_documents"))
        assert browsed["success"] is True
        data = browsed["data"]
        assert isinstance(data, dict)
        assert {d["doc_path"] for d in data["documents"]} == {
            "guides/guide.md",
            "guides/short.md",
            "notes/todo.md",
        }
        assert {f["folder"] for f in data["folders"]} == {"guides", "notes"}

        doc = envelope(await s.ok("get_document", doc_path="guides/guide.md"))["data"]
        assert isinstance(doc, dict)
        assert doc["title"] == "Guide"
        assert doc["line_count"] > 10

        structure = envelope(await s.ok("get_document_structure", doc_path="guides/guide.md", depth=1))[
            "data"
        ]
        assert isinstance(structure, dict)
        (guide,) = structure["nodes"]
        assert guide["title"] == "Guide"
        assert guide["children_truncated"] == 4
        deep = envelope(await s.ok("get_document_structure", doc_path="guides/guide.md", depth=3))["data"]
        assert isinstance(deep, dict)
        install = next(n for n in deep["nodes"][0]["children"] if n["title"] == "Install")
        linux = next(n for n in install["children"] if n["title"] == "Linux")

        content = envelope(
            await s.ok("get_node_content", doc_path="guides/guide.md", node_ids=[linux["node_id"]])
        )["data"]
        assert isinstance(content, dict)
        (node,) = content["nodes"]
        assert node["content"].split("\n")[0] == f"{linux['start_line']}│ ### Linux"

        found = envelope(await s.ok("search_documents", query="kestrel-ingest"))["data"]
        assert isinstance(found, dict)
        assert found["results"][0]["doc_path"] == "guides/guide.md"
        assert found["results"][0]["node_id"] == linux["node_id"]
        within = envelope(await s.ok("search_documents", query="tea", doc_path="guides/guide.md"))["data"]
        assert isinstance(within, dict)
        assert within["results"] == []


async def test_markindex_searches_one_document_or_folder_whatever_ranks_above_it(
    docs: Path, connect: Connect
) -> None:
    for i in range(60):
        write(docs, f"many/file-{i}.md", f"# File {i}\n\nThe file, the file, this file and that file.\n")
    write(docs, "deep/table.md", "# Table view\n\nOne row for each file.\n")
    async with connect(docs, RAGDOWN_TOOLSET="markindex") as s:
        within = envelope(await s.ok("search_documents", query="file", doc_path="deep/table.md"))["data"]
        assert isinstance(within, dict)
        assert [r["doc_path"] for r in within["results"]] == ["deep/table.md"]
        in_folder = envelope(await s.ok("search_documents", query="file", folder="deep"))["data"]
        assert isinstance(in_folder, dict)
        assert [r["doc_path"] for r in in_folder["results"]] == ["deep/table.md"]
        nowhere = envelope(await s.error("search_documents", query="file", folder="nowhere"))
        assert nowhere["code"] == "FOLDER_NOT_FOUND"


async def test_markindex_search_weighs_a_nodes_title_over_its_body(docs: Path, connect: Connect) -> None:
    """MarkIndex weighs titles 10x, merged headings 5x, body 1x: the node titled with the word beats a body
    that repeats it five times (and a long body that says it once ranks last)."""
    write(
        docs,
        "guide.md",
        "# Guide\n\n## Snapshots\n\nTaken nightly to the vault.\n\n"
        "## Storage\n\nsnapshots snapshots snapshots snapshots snapshots are kept on disk.\n",
    )
    async with connect(docs, RAGDOWN_TOOLSET="markindex") as s:
        found = envelope(await s.ok("search_documents", query="snapshots"))["data"]
        assert isinstance(found, dict)
        assert [r["title_path"][-1] for r in found["results"]][:2] == ["Snapshots", "Storage"]


async def test_a_long_markindex_listing_comes_in_parts(docs: Path, connect: Connect) -> None:
    blurb = "A description long enough to fill the listing quickly. " * 6
    for i in range(300):
        write(docs, f"n{i:03}.md", f"---\ndescription: {blurb}\n---\n# Note {i}\n\nText {i}.\n")
    async with connect(docs, RAGDOWN_TOOLSET="markindex") as s:
        await s.ok("browse_documents")  # waits for the index
        parts = await every_part(s, "browse_documents", {})
        listed = [d["doc_path"] for data in parts for d in data["documents"]]
        for data in parts:
            assert data["document_count"] == 300
            assert data["truncated"] is (data["part"] < data["total_parts"])
        data = parts[-1]
        assert data["total_parts"] >= 2
        assert listed == [f"n{i:03}.md" for i in range(300)]


async def test_markindex_failures_are_envelopes_with_their_codes(library: Path, connect: Connect) -> None:
    async with connect(library, RAGDOWN_TOOLSET="markindex") as s:
        unknown = envelope(await s.error("search_documents", query="tea", bogus=1))
        assert unknown["code"] == "INVALID_INPUT"
        assert "bogus" in str(unknown["error"])
        missing = envelope(await s.error("get_document", doc_path="guides/guid.md"))
        assert (missing["success"], missing["code"]) == (False, "DOCUMENT_NOT_FOUND")
        details = missing["details"]
        assert isinstance(details, dict)
        assert "guides/guide.md" in details["suggestions"]
        stale = envelope(
            await s.error("get_node_content", doc_path="guides/guide.md", node_ids=["0123456789"])
        )
        assert stale["code"] == "NODE_NOT_FOUND"
        assert "re-fetch the structure" in str(stale["error"])
        too_long = envelope(await s.error("search_documents", query="x" * 1025))
        assert too_long["code"] == "INVALID_INPUT"
        bad_depth = envelope(await s.error("get_document_structure", doc_path="guides/guide.md", depth=0))
        assert bad_depth["code"] == "INVALID_INPUT"


async def test_the_union_of_two_sets_and_an_unknown_set(
    library: Path, tmp_path: Path, connect: Connect
) -> None:
    async with connect(library, RAGDOWN_TOOLSET="ragdown,markindex") as s:
        names = await s.tool_names()
        assert set(MARKINDEX_TOOLS) <= set(names)
        assert "ragdown_recall" in names
    async with connect(library, RAGDOWN_TOOLSET="markindex", RAGDOWN_READ_ONLY="true") as s:
        assert await s.tool_names() == MARKINDEX_TOOLS  # all read-only: nothing hidden


async def test_the_outline_of_a_skipped_document_says_why_it_was_skipped(
    docs: Path, connect: Connect
) -> None:
    write(docs, "ok.md", "# Ok\n")
    (docs / "nul.md").write_bytes(b"# N\n\x00x\n")
    async with connect(docs, RAGDOWN_TOOLSET="ragdown,markindex") as s:
        refused = await s.error("ragdown_outline", path="nul.md")
        assert refused == "nul.md is not indexed: binary content (NUL bytes), not Markdown text"
        structure = envelope(await s.error("get_document_structure", doc_path="nul.md"))
        assert structure["code"] == "DOCUMENT_NOT_FOUND"  # MarkIndex's library holds only what it indexed
