"""`ragdown eval` in-process with the `hash` embedder on small temp corpora, and its agreement with `grade.py`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ragdown.cli.main import main
from tests.conftest import BENCH, write

GRADE_PY = BENCH / "grade.py"
RUNBOOKS = BENCH / "ragdown-runbooks"

DOCS = {
    "ops/backups.md": "---\ntitle: Backups\naliases: [snapshots guide]\n---\n# Backups\n\nNightly snapshots of the "
    "ledger database.\n\n## Restore\n\nRun `pg_restore --clean` twice, then verify checksums.\n\n## Retention\n\n"
    "| Tier | Days |\n|---|---|\n| hot | 7 |\n| cold | 400 |\n",
    "ops/deploys.md": "# Deploys\n\nDeploys go out on Tuesdays.\n\n## Rollback\n\nUse the rollback lever in the "
    "console; see [[backups]].\n",
    "notes/garden.md": "# Garden\n\nTomatoes need full sun and weekly watering.\n",
}
QUESTIONS: list[dict[str, Any]] = [
    {
        "id": "q1",
        "question": "pg_restore --clean",
        "type": "identifier",
        "gold_path": "ops/backups.md",
        "gold_lines": [11, 11],
        "gold_heading": "Backups > Restore",
    },
    {
        "id": "q2",
        "question": "How many days are cold backups retained?",
        "type": "table",
        "gold_path": "ops/backups.md",
        "gold_lines": [15, 18],
        "gold_heading": "Backups > Retention",
    },
    {
        "id": "q3",
        "question": "Which day do deploys go out?",
        "type": "prose",
        "gold_path": "ops/deploys.md",
        "gold_lines": [3, 3],
        "gold_heading": "Deploys",
    },
    {
        "id": "q4",
        "question": "How do I roll back a deploy with the lever?",
        "type": "prose",
        "gold_path": "nowhere.md",
        "gold_lines": [1, 1],
        "gold_heading": "Nowhere",
        "gold_alt": [{"path": "ops/deploys.md", "lines": [7, 7], "heading": "Deploys > Rollback"}],
    },
    {
        "id": "q5",
        "question": "tomatoes watering schedule",
        "type": "prose",
        "gold_path": "notes/garden.md",
        "gold_lines": [3, 3],
        "gold_heading": "Garden",
    },
    {"id": "off1", "question": "What is the capital of Mongolia?", "type": "off-topic", "gold_path": None},
]


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    for rel, text in DOCS.items():
        write(docs, rel, text)
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    return docs, questions


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))
    }


def run_eval(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["eval", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def grade_py(questions: Path, results: Path, tmp_path: Path, *extra: str) -> dict[str, Any]:
    out = tmp_path / f"grade{'-'.join(extra)}.json"
    done = subprocess.run(
        [sys.executable, str(GRADE_PY), str(questions), str(results), "--json", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    loaded: dict[str, Any] = json.loads(out.read_text())
    return loaded


def assert_same_metrics(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    assert set(ours["by_type"]) == set(theirs["by_type"])
    for name, scores in theirs["by_type"].items():
        assert ours["by_type"][name] == pytest.approx(scores), name
    assert ours["overall"] == pytest.approx(theirs["overall"])
    assert set(ours["no_gold"]) == set(theirs["no_gold"])
    for name, counts in theirs["no_gold"].items():
        assert ours["no_gold"][name] == pytest.approx(counts), name
    assert ours["missing_results"] == theirs["missing_results"]


@pytest.mark.usefixtures("env")
def test_eval_grades_a_folder_without_writing_into_it(
    corpus: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs, questions = corpus
    before = snapshot(docs)
    results = tmp_path / "out" / "results.jsonl"
    code, out, _ = run_eval(
        capsys,
        str(docs),
        "--questions",
        str(questions),
        "--embedder",
        "hash",
        "--json",
        "--results",
        str(results),
    )
    assert code == 0
    assert snapshot(docs) == before
    report = json.loads(out)
    assert report["embedder"] == "hash-384"
    assert report["n"] == len(QUESTIONS)
    assert report["index"]["files"] == 3
    metrics = report["metrics"]
    assert metrics["overall"]["n"] == 5
    assert metrics["no_gold"]["off-topic"]["n"] == 1
    assert report["ranks"]["q1"] == 1  # the quoted command's chunk, found by BM25
    assert report["ranks"]["q4"] is not None  # through gold_alt
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert [r["id"] for r in lines] == [q["id"] for q in QUESTIONS]
    first = lines[0]["hits"][0]
    assert first == {
        "path": "ops/backups.md",
        "start_line": 11,
        "end_line": 11,
        "heading": "Backups > Restore",
    }


@pytest.mark.usefixtures("env")
@pytest.mark.skipif(not GRADE_PY.is_file(), reason="the shared benchmark is not beside this checkout")
@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_metrics_equal_grade_py_on_the_same_results(
    mode: str, corpus: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs, questions = corpus
    for rule in ("lines", "heading"):
        results = tmp_path / f"{mode}-{rule}.jsonl"
        code, out, _ = run_eval(
            capsys, str(docs), "--questions", str(questions), "--embedder", "hash", "--mode", mode,
            "--rule", rule, "--json", "--results", str(results),
        )  # fmt: skip
        assert code == 0
        assert_same_metrics(
            json.loads(out)["metrics"], grade_py(questions, results, tmp_path, "--mode", rule)
        )


@pytest.mark.usefixtures("env")
@pytest.mark.skipif(not RUNBOOKS.is_dir(), reason="the shared benchmark is not beside this checkout")
def test_metrics_equal_grade_py_on_the_runbooks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    questions = RUNBOOKS / "ragdown.questions.jsonl"
    results = tmp_path / "results.jsonl"
    code, out, _ = run_eval(
        capsys, str(RUNBOOKS / "corpus"), "--questions", str(questions), "--embedder", "hash",
        "--rule", "heading", "--json", "--results", str(results), "--top-k", "8",
    )  # fmt: skip
    assert code == 0
    ours = json.loads(out)["metrics"]
    assert_same_metrics(ours, grade_py(questions, results, tmp_path, "--mode", "heading"))
    lines = grade_py(questions, results, tmp_path, "--mode", "lines")
    types = "prose-owner,table-cell"
    subset = grade_py(questions, results, tmp_path, "--mode", "lines", "--types", types)
    assert lines["overall"]["n"] == ours["overall"]["n"]
    assert set(subset["by_type"]) == set(types.split(","))


@pytest.mark.usefixtures("env")
def test_hook_sweep_reports_recall_chunks_and_no_answer_injections(
    corpus: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    docs, questions = corpus
    code, out, _ = run_eval(
        capsys, str(docs), "--questions", str(questions), "--embedder", "hash", "--json", "--hook",
        "--min-score", "0",
    )  # fmt: skip
    assert code == 0
    hook = json.loads(out)["hook"]
    assert hook["min_score"] == 0
    assert hook["top_k"] == 4
    rows = hook["rows"]
    assert [r["min_ratio"] for r in rows] == [1.0, 0.98, 0.96, 0.95, 0.9, 0.8, 0.75, 0.7, 0.0]
    for row in rows:
        assert row["n"] == 5
        assert row["wrong_per_prompt"] <= row["chunks_per_prompt"] <= 4
        assert set(row["no_gold"]) == {"off-topic"}
    assert rows[0]["chunks_per_prompt"] <= rows[-1]["chunks_per_prompt"]  # a lower ratio keeps more
    assert rows[0]["recall"] <= rows[-1]["recall"]
    assert rows[0]["chunks_per_prompt"] >= 1.0  # the best hit always survives


@pytest.mark.usefixtures("env")
def test_text_report_and_refusals(
    corpus: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs, questions = corpus
    code, out, _ = run_eval(capsys, str(docs), "--questions", str(questions), "--embedder", "hash", "--hook")
    assert code == 0
    assert "ALL answerable" in out
    assert "min_ratio" in out
    assert "off-topic" in out
    code, _, err = run_eval(capsys, str(docs), "--questions", str(questions), "--data-dir", str(docs / "idx"))
    assert code == 2
    assert "outside" in err
    assert not (docs / "idx").exists()
    code, _, err = run_eval(capsys, str(tmp_path / "nope"), "--questions", str(questions))
    assert code == 2
    code, _, err = run_eval(capsys, str(docs), "--questions", str(questions), "--embedder", "no-such-model")
    assert code == 2
    assert "unknown embedder" in err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, _, err = run_eval(capsys, str(docs), "--questions", str(empty), "--embedder", "hash")
    assert code == 2


@pytest.mark.usefixtures("env")
def test_a_kept_data_dir_is_reused(
    corpus: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs, questions = corpus
    data = tmp_path / "index"
    args = (str(docs), "--questions", str(questions), "--embedder", "hash", "--json", "--data-dir", str(data))
    code, first, _ = run_eval(capsys, *args)
    assert code == 0
    code, second, _ = run_eval(capsys, *args)
    assert code == 0
    assert (data / "index.sqlite").is_file()
    assert json.loads(first)["metrics"] == json.loads(second)["metrics"]


@pytest.mark.integration
def test_offline_the_default_gives_way_to_the_installed_model_unless_one_was_chosen(
    env: dict[str, str],
    corpus: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """As the servers do: nobody chose an embedder and the default cannot download, so the installed
    `minilm` is graded, said on stderr and in the report; one named with --embedder is never swapped."""
    docs, questions = corpus
    monkeypatch.delenv("RAGDOWN_EMBEDDER")  # the tests' own `hash`: here nobody chose one
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # the discard port: the download fails at once
    monkeypatch.setenv("RAGDOWN_MODELS", str(tmp_path / "models"))
    code, out, err = run_eval(capsys, str(docs), "--questions", str(questions), "--json")
    assert code == 0, err
    assert "The default embedder granite-small could not load" in err
    assert "the installed offline model minilm is used instead" in err
    assert json.loads(out)["embedder"] == "minilm"

    code, _, err = run_eval(capsys, str(docs), "--questions", str(questions), "--embedder", "granite-small")
    assert code == 2
    assert err.startswith("ragdown eval: could not download granite-small")
    assert "minilm is used instead" not in err


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        (
            {"id": "x", "type": "t", "gold_path": "ops/backups.md", "gold_lines": [9, 11]},
            "has no question text",
        ),
        ({"id": "x", "question": "where?", "type": "t", "gold_path": "nosuch.md"}, "no file of"),
        (
            {"id": "x", "question": "where?", "gold_path": "ops/backups.md", "gold_lines": [11, 9]},
            "gold_lines",
        ),
        (
            {"id": "x", "question": "where?", "gold_path": "ops/backups.md", "gold_lines": "9-11"},
            "gold_lines",
        ),
        ({"id": "q1", "question": "twice?", "gold_path": None}, "is taken (line 1)"),
    ],
)
@pytest.mark.usefixtures("env")
def test_a_question_file_that_cannot_be_graded_is_refused_naming_its_line(
    corpus: tuple[Path, Path], capsys: pytest.CaptureFixture[str], entry: dict[str, Any], says: str
) -> None:
    docs, questions = corpus
    questions.write_text(questions.read_text() + json.dumps(entry) + "\n")
    code, out, err = run_eval(capsys, str(docs), "--questions", str(questions), "--embedder", "hash")
    assert (code, out) == (2, "")
    assert says in err
    if "taken" not in says:
        assert f"{questions}:{len(QUESTIONS) + 1}: " in err or "no file of" in err


@pytest.mark.usefixtures("env")
def test_types_that_match_nothing_name_the_files_types(
    corpus: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    docs, questions = corpus
    code, _, err = run_eval(
        capsys, str(docs), "--questions", str(questions), "--embedder", "hash", "--types", "nosuchtype"
    )
    assert code == 2
    assert "has no question of type nosuchtype: its types are " in err
