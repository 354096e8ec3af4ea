"""`ragdown retrieve` against a stand-in provider of each wire format: the model follows a planned walk of
MarkIndex's five tools, and what comes back is evidence re-read from the documents, never the model's text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragdown.cli.main import main
from tests.conftest import write
from tests.llm.conftest import Call, Provider, Say

FILLER = "".join(
    f"Paragraph {i} of routine text about the office, its rooms and its rules.\n" for i in range(40)
)
POLICY = (
    "# Staff handbook\n\n"
    f"Welcome.\n\n{FILLER}\n"
    "## Leaving\n\n"
    "### Notice period\n\n"
    "An employee who resigns gives four weeks of notice.\n"
    "The notice is given in writing.\n\n"
    f"{FILLER}\n"
    "### Holidays\n\n"
    f"Untaken holiday is paid out.\n\n{FILLER}"
)
NOTICE = POLICY.split("\n").index("An employee who resigns gives four weeks of notice.") + 1


def test_retrieve_returns_only_lines_read_from_the_documents(
    tmp_path: Path,
    env: dict[str, str],
    provider: Provider,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    docs = tmp_path / "docs"
    write(docs, "hr/handbook.md", POLICY)
    write(docs, "other.md", "# Other\n\nNothing here.\n")
    assert main(["index", str(docs)]) == 0
    assert main(["tree", str(docs), "hr/handbook.md", "--json", "--depth", "5"]) == 0
    tree = json.loads(capsys.readouterr().out.splitlines()[-1])["tree"]
    notice = next(n for n in _walk(tree) if n["title"] == "Notice period")
    provider.script = [
        Call((("browse_documents", {}),), "I will browse first."),
        Call(
            (
                ("search_documents", {"query": "resign notice"}),
                ("get_document_structure", {"doc_path": "hr/handbook.md", "depth": 3}),
            )
        ),
        Call((("get_node_content", {"doc_path": "hr/handbook.md", "node_ids": [notice["id"]]}),)),
        Say(
            f"The notice period is SIX MONTHS, paid in gold. [hr/handbook.md, L{NOTICE}-{NOTICE + 1}] and also "
            "[missing.md, L1-3] and [hr/handbook.md, L400-410]"
        ),
    ]
    monkeypatch.setenv("RAGDOWN_LLM_URL", provider.url)
    code = main(
        [
            "retrieve",
            str(docs),
            "What notice applies when an employee resigns?",
            "--model",
            f"{provider.provider}:m",
            "--json",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    result = json.loads(out)
    assert result["stop_reason"] == "done"
    assert result["steps"] == 4
    assert result["tool_calls"] == 4
    assert result["usage"] == {
        "requests": 4,
        "input_tokens": 101 + 102 + 103 + 104,
        "output_tokens": 40,
        "total_tokens": 450,
    }
    lines = POLICY.split("\n")
    assert result["evidence"] == [
        {
            "doc_path": "hr/handbook.md",
            "start_line": NOTICE,
            "end_line": NOTICE + 1,
            "title_path": ["Staff handbook", "Leaving", "Notice period"],
            "text": "\n".join(lines[NOTICE - 1 : NOTICE + 1]),
        }
    ]
    assert "SIX MONTHS" not in out
    assert "gold" not in out
    # the tools' answers went back to the model: the last request carries the node's numbered lines
    last = json.dumps(provider.bodies[-1])
    assert "four weeks of notice" in last
    assert "browse_documents" in json.dumps(provider.bodies[0]["tools"])

    provider.script = [
        Call((("get_node_content", {"doc_path": "hr/handbook.md", "node_ids": [notice["id"]]}),)),
        Say("It is four weeks."),  # no citation: the nodes it read are the evidence
    ]
    assert main(["retrieve", str(docs), "notice?", "--model", f"{provider.provider}:m"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(
        f"[hr/handbook.md, L{notice['lines'][0]}-{notice['lines'][1]}] Staff handbook > Leaving > Notice period\n"
    )
    assert "four weeks of notice" in text
    assert "It is four weeks." not in text


def test_retrieve_stops_at_max_steps_and_says_so(
    tmp_path: Path,
    env: dict[str, str],
    provider: Provider,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    docs = tmp_path / "docs"
    write(docs, "a.md", "# A\n\nalpha\n")
    provider.default = Call((("get_document", {"doc_path": "nope.md"}),), "looking")
    monkeypatch.setenv("RAGDOWN_LLM_URL", provider.url)
    monkeypatch.setenv("RAGDOWN_LLM_MODEL", f"{provider.provider}:m")
    assert main(["retrieve", str(docs), "q", "--max-steps", "3", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["stop_reason"] == "max_steps"
    assert result["steps"] == 3
    assert result["evidence"] == []
    # the failure envelope (with similar names) went back to the model as the tool's answer
    assert "DOCUMENT_NOT_FOUND" in json.dumps(provider.bodies[-1])
    assert main(["retrieve", str(docs), "q", "--max-input-tokens", "150", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["stop_reason"] == "max_input_tokens"
    assert result["steps"] == 2


def test_without_a_model_nothing_is_sent(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = Provider("openai")
    try:
        monkeypatch.setenv("RAGDOWN_LLM_URL", server.url)
        docs = tmp_path / "docs"
        write(docs, "a.md", "# A\n\nalpha\n")
        assert main(["retrieve", str(docs), "q"]) == 2
        assert "needs a model" in capsys.readouterr().err
        assert main(["index", str(docs)]) == 0
        assert server.requests == []
    finally:
        server.close()


def _walk(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("children", []):
        yield from _walk(child)
