"""Kept summaries in the markindex set: node summaries searched (2x) by `search_documents`, a generated
description shown for a document without its own in `browse_documents` / `get_document` (and in
`ragdown_outline`, with each node's summary); only while the
document is the one summarised, and nothing changes where no summaries were made."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ragdown.cli.main import main
from ragdown.core.config import Settings
from tests.conftest import isolated_env, write
from tests.llm.conftest import Provider, Say
from tests.mcpserver.conftest import Session, inprocess_session

pytestmark = pytest.mark.anyio

SECTION = "".join(f"Line {i} says something plain about the topic at hand.\n" for i in range(40))
DOC = f"# Handbook\n\n## Alpha\n\n{SECTION}\n## Beta\n\n{SECTION}"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = isolated_env(tmp_path, RAGDOWN_TOOLSET="markindex")
    for key in list(os.environ):
        if key.startswith("RAGDOWN_"):
            monkeypatch.delenv(key)
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    return values


async def _state(docs: Path) -> tuple[list[str], str | None, str | None]:
    settings = Settings.from_env({**os.environ, "RAGDOWN_DOCS_DIR": str(docs)})
    async with inprocess_session(settings) as session:
        return await _read(session)


async def _read(session: Session) -> tuple[list[str], str | None, str | None]:
    found = json.loads(await session.ok("search_documents", query="zebra"))["data"]["results"]
    listed = json.loads(await session.ok("browse_documents"))["data"]["documents"]
    doc = json.loads(await session.ok("get_document", doc_path="a.md"))["data"]
    return [r["title_path"][-1] for r in found], listed[0]["description"], doc["description"]


async def test_summaries_are_searched_and_describe_documents(
    tmp_path: Path, env: dict[str, str], provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    write(docs, "a.md", DOC)
    write(docs, "b.md", "---\ndescription: Its own words.\n---\n# B\n\nbee\n")
    assert main(["index", str(docs)]) == 0
    assert await _state(docs) == ([], None, None)  # no summaries: nothing changes

    monkeypatch.setenv("RAGDOWN_LLM_URL", provider.url)
    provider.script = [
        Say("The handbook's rules."),
        Say("Covers the zebra crossing."),  # Alpha's
        Say("About holidays."),
        Say("A handbook of staff rules."),  # a.md's description
        Say("A note about bees."),  # b.md's, which keeps its own
    ]
    assert main(["index", str(docs), "--summary-model", f"{provider.provider}:m"]) == 0
    assert len(provider.requests) == 5
    found, listed, described = await _state(docs)
    assert found == ["Alpha"]  # found by its summary alone: "zebra" is in no document
    assert listed == described == "A handbook of staff rules."
    settings = Settings.from_env({**os.environ, "RAGDOWN_DOCS_DIR": str(docs)})
    async with inprocess_session(settings) as session:
        b = json.loads(await session.ok("get_document", doc_path="b.md"))["data"]
        assert b["description"] == "Its own words."
    # ragdown's own outline shows them too (issue 27): each summarised node's summary, and the made description
    # of a document without its own in the folder's list.
    own = Settings.from_env({**os.environ, "RAGDOWN_DOCS_DIR": str(docs), "RAGDOWN_TOOLSET": "ragdown"})
    async with inprocess_session(own) as session:
        outline = await session.ok("ragdown_outline", path="a.md")
        assert "  summary: Covers the zebra crossing." in outline
        assert "  summary: About holidays." in outline
        folder = await session.ok("ragdown_outline")
        assert "a.md — Handbook (" in folder
        assert "): A handbook of staff rules." in folder
        assert "): Its own words." in folder

    write(docs, "a.md", DOC.replace("Line 3 says", "Line three says"))  # changed: its summaries no longer fit
    assert await _state(docs) == ([], None, None)
