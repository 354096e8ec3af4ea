"""The grading rules of `ragdown.evaluation.metrics` (those of the benchmark's `grade.py`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdown.evaluation.metrics import (
    aggregate,
    first_rank,
    grade,
    hit_matches,
    norm_heading,
    norm_path,
    read_results,
    write_results,
)
from ragdown.evaluation.questions import Gold, Question, ResultHit, load_questions, question_from_dict


def hit(path: str, start: int, end: int, heading: str = "") -> ResultHit:
    return ResultHit(path, start, end, heading)


def test_paths_and_headings_are_normalised_like_grade_py() -> None:
    assert norm_path("./a\\b.md") == "a/b.md"
    assert norm_path("/x/y.markdown", ignore_ext=True) == "x/y"
    assert norm_path(None) == ""
    assert (
        norm_heading("Kestrel Scheduler › Deployment ›  Staging")
        == "Kestrel Scheduler > Deployment > Staging"
    )
    assert norm_heading("A>B") == "A > B"
    assert norm_heading("") == ""


def test_a_hit_is_right_when_its_lines_intersect_the_gold() -> None:
    gold = Gold("a.md", (10, 12), "A > B")
    assert hit_matches(hit("a.md", 12, 20), gold)
    assert hit_matches(hit("a.md", 1, 10), gold)
    assert not hit_matches(hit("a.md", 13, 20), gold)
    assert not hit_matches(hit("b.md", 10, 12), gold)
    assert not hit_matches(hit("a.md", 10, 12), Gold("a.md", None, "A > B"))


def test_the_heading_rules_are_exact_or_descendant() -> None:
    gold = Gold("a.md", (10, 12), "A > B")
    assert hit_matches(hit("a.md", 1, 1, "A › B"), gold, "heading")
    assert not hit_matches(hit("a.md", 1, 1, "A › B › C"), gold, "heading")
    assert hit_matches(hit("a.md", 1, 1, "A › B › C"), gold, "heading-prefix")
    assert not hit_matches(hit("a.md", 1, 1, "A › BC"), gold, "heading-prefix")
    assert not hit_matches(hit("a.md", 1, 1, ""), gold, "heading")


def test_rank_is_the_first_right_hit_over_every_gold() -> None:
    golds = (Gold("a.md", (5, 5), None), Gold("b.md", (1, 3), None))
    assert first_rank([hit("c.md", 1, 9), hit("b.md", 2, 2), hit("a.md", 5, 5)], golds) == 2
    assert first_rank([hit("c.md", 1, 9)], golds) is None


def test_aggregate_counts_top1_recall_and_mrr_within_10() -> None:
    scores = aggregate([1, 2, 6, 9, 11, None])
    assert scores.n == 6
    assert scores.top1 == pytest.approx(1 / 6)
    assert scores.r5 == pytest.approx(2 / 6)
    assert scores.r8 == pytest.approx(3 / 6)
    assert scores.mrr == pytest.approx((1 + 1 / 2 + 1 / 6 + 1 / 9) / 6)
    assert aggregate([]).n == 0


def test_grade_reports_types_no_gold_questions_and_missing_results() -> None:
    qs = [
        question_from_dict(
            {"id": 1, "question": "q1", "type": "t", "gold_path": "a.md", "gold_lines": [1, 2]}
        ),
        question_from_dict(
            {"id": 2, "question": "q2", "type": "t", "gold_path": "a.md", "gold_lines": [8, 9]}
        ),
        question_from_dict({"id": 3, "question": "q3", "type": "off", "gold_path": None}),
        question_from_dict({"id": 4, "question": "q4", "type": "off", "gold_path": None}),
    ]
    report = grade(qs, {"1": [hit("a.md", 1, 1)], "3": [hit("a.md", 1, 1)], "4": []})
    assert report.by_type["t"].n == 2
    assert report.by_type["t"].top1 == 0.5
    assert report.ranks == {"1": 1, "2": None}
    assert report.no_gold["off"].n == 2
    assert report.no_gold["off"].with_hits == 1
    assert report.missing == ["2"]


def test_questions_and_results_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    rows = [
        {"id": "x", "question": "Q?", "type": "a", "gold_path": "p.md", "gold_lines": [1, 2], "slice": "s"},
        {
            "id": "y",
            "q": "Other?",
            "type": "b",
            "gold_path": None,
            "gold_alt": [{"path": "z.md", "lines": [3, 4]}],
        },
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    qs = load_questions(path)
    assert [q.id for q in qs] == ["x", "y"]
    assert qs[0].extra == {"slice": "s"}
    assert qs[1].question == "Other?"
    assert qs[1].golds == (Gold("z.md", (3, 4), None),)
    assert [q.id for q in load_questions(path, ["b"])] == ["y"]
    results = {"x": [hit("p.md", 1, 2, "P > H")], "y": []}
    out = tmp_path / "r.jsonl"
    write_results(out, results)
    assert read_results(out) == results
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    with pytest.raises(ValueError, match=r"bad\.jsonl:1"):
        load_questions(tmp_path / "bad.jsonl")


def test_a_question_without_gold_is_not_answerable() -> None:
    assert not Question("1", "q", "t", ()).answerable
    assert Question("1", "q", "t", (Gold("a.md", (1, 1), None),)).answerable
