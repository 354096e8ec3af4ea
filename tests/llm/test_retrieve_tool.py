"""`retrieve` as an MCP tool of the markindex set, through the SDK's client: listed only where a model is
configured for the server, and then the evidence it answers is original lines, never the model's text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdown.core.config import Settings
from tests.conftest import isolated_env, write
from tests.llm.conftest import Call, Provider, Raw, Say
from tests.mcpserver.conftest import inprocess_session

pytestmark = pytest.mark.anyio

DOC = "# Handbook\n\n## Leaving\n\nAn employee who resigns gives four weeks of notice.\n\n## Holidays\n\nPaid out.\n"
NOTICE = 5


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def settings(tmp_path: Path, docs: Path, **env: str) -> Settings:
    return Settings.from_env(
        isolated_env(
            tmp_path,
            RAGDOWN_DOCS_DIR=str(docs),
            RAGDOWN_DATA_DIR=str(tmp_path / "data"),
            RAGDOWN_TOOLSET="markindex",
            **env,
        )
    )


async def test_retrieve_is_listed_only_with_a_model_and_answers_original_lines(
    tmp_path: Path, provider: Provider
) -> None:
    docs = tmp_path / "docs"
    write(docs, "hr/handbook.md", DOC)
    async with inprocess_session(settings(tmp_path, docs, RAGDOWN_LLM_URL=provider.url)) as session:
        assert "retrieve" not in await session.tool_names()
        assert "search_documents" in await session.tool_names()
        _text, error = await session.call("retrieve", question="notice?")
        assert error
    assert provider.requests == []  # no model configured: nothing sent

    provider.script = [
        Call((("search_documents", {"query": "resigns notice"}),), "Searching."),
        Say(f"It is TEN YEARS. [hr/handbook.md, L{NOTICE}-{NOTICE}] and [nowhere.md, L1-2]"),
    ]
    model = settings(tmp_path, docs, RAGDOWN_LLM_URL=provider.url, RAGDOWN_LLM_MODEL=f"{provider.provider}:m")
    async with inprocess_session(model) as session:
        tools = {t.name: t for t in (await session.client.list_tools()).tools}
        assert "retrieve" in tools
        assert tools["retrieve"].input_schema["required"] == ["question"]
        text = await session.ok("retrieve", question="What notice applies?", max_steps=4)
        body = json.loads(text)
        assert body["success"] is True
        data = body["data"]
        assert data["stop_reason"] == "done"
        assert data["steps"] == 2
        assert data["tool_calls"] == 1
        assert data["usage"]["requests"] == 2
        assert data["evidence"] == [
            {
                "doc_path": "hr/handbook.md",
                "start_line": NOTICE,
                "end_line": NOTICE,
                "title_path": ["Handbook"],  # a tree this small is one node
                "text": DOC.split("\n")[NOTICE - 1],
                "cite": f"[hr/handbook.md, L{NOTICE}-{NOTICE}]",
            }
        ]
        assert "TEN YEARS" not in text
        # the search ran through the set's own tool, and its answer went back to the model
        assert "four weeks of notice" in json.dumps(provider.bodies[-1])

        provider.script = [Raw(400, '{"error": "bad request"}')]
        failed = await session.error("retrieve", question="again?")
        assert json.loads(failed)["code"] == "LLM_ERROR"
