"""`ragdown eval --mode agent --model P:M` against a stand-in provider of each wire format: each question is a
`retrieve` run whose evidence is graded, with MarkIndex's agent fields (hit rate, steps, tokens, evidence
size and precision) overall and per language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdown.cli.main import main
from tests.conftest import write
from tests.llm.conftest import Call, Provider, Say

DOCS = {
    "ops/backups.md": "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n",
    "law/labour.md": "# 劳动法\n\n## 离职\n\n员工离职须提前三十日书面通知。\n",
}
QUESTIONS = [
    {"id": "en1", "question": "How do I restore?", "gold_path": "ops/backups.md", "gold_lines": [7, 7]},
    {"id": "zh1", "question": "离职要提前多久通知？", "gold_path": "law/labour.md", "gold_lines": [5, 5]},
    {"id": "en2", "question": "What about holidays?", "gold_path": "ops/backups.md", "gold_lines": [3, 3]},
]


@pytest.mark.usefixtures("env")
def test_agent_mode_grades_the_evidence_with_steps_and_tokens_per_language(
    tmp_path: Path, provider: Provider, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    for rel, text in DOCS.items():
        write(docs, rel, text)
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUESTIONS))
    monkeypatch.setenv("RAGDOWN_LLM_URL", provider.url)
    provider.script = [
        # en1: a search, then a citation of the gold line and a line beside it (precision 1/2)
        Call((("search_documents", {"query": "restore"}),), "searching"),
        Say("Run it THREE times. [ops/backups.md, L6-7]"),
        # zh1: straight to the gold
        Say("[law/labour.md, L5-5]"),
        # en2: a miss, after two tool calls in one step
        Call((("browse_documents", {}), ("get_document", {"doc_path": "ops/backups.md"}))),
        Say("[ops/backups.md, L7-7]"),
    ]
    out_file = tmp_path / "report.json"
    code = main(
        [
            "eval",
            str(docs),
            "--questions",
            str(questions),
            "--mode",
            "agent",
            "--model",
            f"{provider.provider}:m",
            "--embedder",
            "hash",
            "--rpm",
            "100",
            "--out",
            str(out_file),
        ]
    )
    text = capsys.readouterr().out
    assert code == 0, text
    assert len(provider.requests) == 5
    report = json.loads(out_file.read_text())
    assert report["mode"] == "agent"
    assert report["evidence_k"] is None
    agent = report["agent"]
    assert agent["model"] == f"{provider.provider}:m"
    overall = agent["overall"]
    assert overall["n"] == 3
    assert overall["hits"] == 2
    assert overall["hit_rate"] == pytest.approx(2 / 3)
    assert overall["steps"] == pytest.approx(5 / 3)
    assert overall["tool_calls"] == pytest.approx(1.0)
    # the stand-in's usage: 100 + the request's number in, 10 out
    assert overall["total_input_tokens"] == sum(100 + n for n in range(1, 6))
    assert overall["output_tokens"] == pytest.approx(50 / 3)
    assert overall["stop_reasons"] == {"done": 3}
    assert agent["by_lang"]["en"]["hit_rate"] == pytest.approx(0.5)
    assert agent["by_lang"]["en"]["steps"] == pytest.approx(2.0)
    assert agent["by_lang"]["zh"]["hit_rate"] == 1.0
    assert agent["by_lang"]["zh"]["steps"] == 1.0
    per = report["per_question"]
    assert per["en1"]["cited_lines"] == 2
    assert per["en1"]["precision"] == pytest.approx(0.5)
    assert per["en1"]["agent"]["evidence"] == ["[ops/backups.md, L6-7]"]
    assert per["en2"]["agent"]["tool_calls"] == 2
    assert per["zh1"]["precision"] == 1.0
    metrics = report["metrics"]
    assert metrics["overall"]["top1"] == pytest.approx(2 / 3)
    assert metrics["evidence"]["overall"]["lines"] == pytest.approx(4 / 3)
    assert metrics["by_lang"]["zh"]["evidence"]["precision"] == 1.0
    assert "THREE" not in json.dumps(report)
    assert "agent (" in text
    assert "hit rate" in text


@pytest.mark.usefixtures("env")
def test_agent_mode_without_a_model_sends_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = Provider("openai")
    try:
        monkeypatch.setenv("RAGDOWN_LLM_URL", server.url)
        docs = tmp_path / "docs"
        write(docs, "ops/backups.md", DOCS["ops/backups.md"])
        questions = tmp_path / "q.jsonl"
        questions.write_text(json.dumps(QUESTIONS[0]) + "\n")
        base = ["eval", str(docs), "--questions", str(questions), "--embedder", "hash"]
        assert main([*base, "--mode", "agent"]) == 2
        assert "needs a model" in capsys.readouterr().err
        assert main([*base, "--mode", "agent", "--model", "llama3"]) == 2
        assert "<provider>:<model>" in capsys.readouterr().err
        assert main([*base, "--model", "openai:m"]) == 2  # a model with a mode that uses none
        assert "go with --mode agent" in capsys.readouterr().err
        assert main([*base, "--mode", "bm25"]) == 0
        assert server.requests == []
    finally:
        server.close()
