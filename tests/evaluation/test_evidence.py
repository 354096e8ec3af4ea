"""`ragdown eval` in MarkIndex's terms: gold as a title path, every metric per language, the evidence an
answer cites (lines, precision) and `--max-evidence-lines`. Real files, the `hash` embedder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragdown.cli.main import main
from ragdown.evaluation.gold import GoldError, outline_of, resolve_questions
from ragdown.evaluation.metrics import evidence_of, first_rank, grade, read_results
from ragdown.evaluation.questions import (
    Gold,
    ResultHit,
    detect_language,
    load_questions,
    question_from_dict,
    title_path_of,
)
from tests.conftest import write
from tests.evaluation.test_eval_cli import GRADE_PY, RUNBOOKS, assert_same_metrics, grade_py

SETUP = (
    "---\ntitle: Setup Guide\n---\n"  # 1-3
    "# Setup Guide\n\nIntro line.\n\n"  # 4-7
    "## Install\n\nRun the installer.\nThen reboot.\n\n"  # 8-12
    "### On Linux\n\nUse apt.\n\n"  # 13-16
    "```sh\n# not a heading\n```\n\n"  # 17-20
    "## Configure\n\nEdit the config file.\n\n"  # 21-24
    "## Notes\n\nFirst note.\n\n## Notes\n\nSecond note.\n"  # 25-31
)
OTHER = "---\ntitle: Ops Notes\n---\n# Runbook\n\n## Pager\n\nPage the owner.\n\n## Empty\n\n## Install\n\nUse the image.\n"
PLAIN = "Just a paragraph.\n\nAnd another.\n\n"
RETENTION = "# Policy\n\nKept by the records team.\n\n## Retention\n\n" + "".join(
    f"Retention rule {n} keeps archives for {10 * n} days.\n" for n in range(1, 13)
)  # the rules are lines 7-18, one paragraph, one chunk


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    write(docs, "guide/setup.md", SETUP)
    write(docs, "ops/other.md", OTHER)
    write(docs, "plain.md", PLAIN)
    return docs


def questions_file(tmp_path: Path, rows: list[dict[str, Any]], name: str = "q.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def resolved(docs: Path, *rows: dict[str, Any]) -> list[tuple[Gold, ...]]:
    return [q.golds for q in resolve_questions([question_from_dict(r) for r in rows], docs)]


def run_eval(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["eval", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- gold as a title path ------------------------------------------------------------------------


def test_title_paths_parse_from_a_list_or_a_string() -> None:
    assert title_path_of(["Setup Guide", " Install ", "On  Linux"]) == ("Setup Guide", "Install", "On Linux")
    assert title_path_of("Setup Guide > Install > On Linux") == ("Setup Guide", "Install", "On Linux")
    assert title_path_of("Setup Guide › Install") == ("Setup Guide", "Install")
    assert title_path_of(None) == ()
    with pytest.raises(ValueError, match="question q9"):
        title_path_of(["A", 3], "q9")
    with pytest.raises(ValueError, match="empty title"):
        title_path_of("A >  > B", "q9")
    q = question_from_dict({"id": "x", "question": "?", "titlePath": ["A", "B"]})
    assert q.answerable
    assert q.golds == (Gold("", None, None, ("A", "B")),)
    alt = question_from_dict({"id": "y", "gold_path": None, "gold_alt": [{"title_path": "A > C"}]})
    assert alt.golds == (Gold("", None, None, ("A", "C")),)


def test_a_title_path_resolves_to_its_section_text(corpus: Path) -> None:
    (install,), (linux,), (headings_only,), (crumb,), (given,), (whole,), notes, (empty,) = resolved(
        corpus,
        {"id": "1", "gold_path": "guide/setup.md", "gold_title_path": ["Setup Guide", "Install"]},
        {"id": "2", "gold_title_path": "setup guide > install > on linux"},  # no gold_path, any case
        {"id": "3", "gold_title_path": ["Runbook", "Pager"]},  # the headings as written
        {"id": "4", "gold_title_path": "Ops Notes › Runbook › Pager"},  # the chunk breadcrumb's form
        {
            "id": "5",
            "gold_title_path": "Setup Guide > Configure",
            "gold_lines": [23, 23],
            "gold_heading": "H",
        },
        {"id": "6", "gold_title_path": ["plain"]},  # the document title alone: the whole document
        {"id": "7", "gold_path": "./guide/setup.md", "gold_title_path": "Setup Guide > Notes"},
        {"id": "8", "gold_title_path": "Ops Notes > Runbook > Empty"},
    )
    # The section's text, its subsection and the fenced block included, without heading and blank lines.
    assert install == Gold("guide/setup.md", (10, 19), "Setup Guide > Install", ("Setup Guide", "Install"))
    assert (linux.path, linux.lines, linux.heading) == (
        "guide/setup.md",
        (15, 19),
        "Setup Guide > Install > On Linux",
    )
    assert headings_only == replace_title(crumb, ("Runbook", "Pager"))
    assert (crumb.path, crumb.lines, crumb.heading) == ("ops/other.md", (8, 8), "Ops Notes > Runbook > Pager")
    assert (given.path, given.lines, given.heading) == ("guide/setup.md", (23, 23), "H")  # its own lines stay
    assert (whole.path, whole.lines, whole.heading) == ("plain.md", (1, 3), "plain")
    assert [(g.path, g.lines) for g in notes] == [
        ("./guide/setup.md", (27, 27)),
        ("./guide/setup.md", (31, 31)),
    ]
    assert empty.lines == (10, 10)  # a section without text is its heading line


def replace_title(gold: Gold, title_path: tuple[str, ...]) -> Gold:
    return Gold(gold.path, gold.lines, gold.heading, title_path)


def test_unresolvable_title_paths_are_errors_naming_the_question(corpus: Path) -> None:
    with pytest.raises(
        GoldError, match=r"question q-missing: .*names no section of guide/setup\.md.*closest"
    ):
        resolved(
            corpus,
            {"id": "q-missing", "gold_path": "guide/setup.md", "gold_title_path": "Setup Guide > Instal"},
        )
    # A `#` in a fenced block is no heading.
    with pytest.raises(GoldError, match=r"question q-code: .*names no section"):
        resolved(
            corpus,
            {"id": "q-code", "gold_path": "guide/setup.md", "gold_title_path": "Setup Guide > not a heading"},
        )
    with pytest.raises(GoldError, match=r"question q-file: gold_path 'nope\.md' is no Markdown file"):
        resolved(corpus, {"id": "q-file", "gold_path": "nope.md", "gold_title_path": ["Nope"]})
    with pytest.raises(GoldError, match=r"question q-none: .*names no section of any file"):
        resolved(corpus, {"id": "q-none", "gold_title_path": ["Nowhere", "At all"]})
    twins = corpus.parent / "twins"
    for rel in ("a/same.md", "b/same.md"):
        write(twins, rel, "# Same\n\n## Part\n\nText.\n")
    with pytest.raises(
        GoldError, match=r"question q-two: .*in 2 files \(a/same\.md, b/same\.md\): give gold_path"
    ):
        resolved(twins, {"id": "q-two", "gold_title_path": "Same > Part"})
    assert resolved(twins, {"id": "q-one", "gold_path": "b/same.md", "gold_title_path": "Same > Part"}) == [
        (Gold("b/same.md", (5, 5), "Same > Part", ("Same", "Part")),)
    ]


@pytest.mark.skipif(not RUNBOOKS.is_dir(), reason="the shared benchmark is not beside this checkout")
def test_title_paths_give_the_runbooks_gold_lines() -> None:
    """Every `gold_heading` of the runbooks, read as a title path, resolves to exactly its `gold_lines`."""
    questions = [
        q for q in load_questions(RUNBOOKS / "ragdown.questions.jsonl") if q.golds and q.golds[0].heading
    ]
    as_title_paths = [
        question_from_dict({"id": q.id, "gold_path": q.golds[0].path, "gold_title_path": q.golds[0].heading})
        for q in questions
    ]
    got = resolve_questions(as_title_paths, RUNBOOKS / "corpus")
    want = {q.id: q.golds[0].lines for q in questions}
    assert len(got) == len(want) > 300
    assert {q.id: q.golds[0].lines for q in got} == want
    assert all(len(q.golds) == 1 for q in got)
    # Without gold_path, the corpus is searched: the document title in the path makes each one unique.
    searched = resolve_questions(
        [question_from_dict({"id": q.id, "gold_title_path": q.golds[0].heading}) for q in questions],
        RUNBOOKS / "corpus",
    )
    assert {q.id: (q.golds[0].path, q.golds[0].lines) for q in searched} == {
        q.id: (q.golds[0].path, q.golds[0].lines) for q in questions
    }


def test_outline_uses_the_chunk_breadcrumb_title() -> None:
    outline = outline_of("# Kestrel\n\n## Deployment\n\n### Staging\n\nShip it.\n", "svc/kestrel.md")
    assert outline.title == "Kestrel"
    assert [s.heading for s in outline.sections] == [
        "Kestrel",
        "Kestrel > Deployment",
        "Kestrel > Deployment > Staging",
    ]
    assert [s.lines for s in outline.sections] == [(3, 7), (5, 7), (7, 7)]


# -- per language --------------------------------------------------------------------------------


def test_language_is_given_or_detected() -> None:
    assert detect_language("How do I restore a backup?") == "en"
    assert detect_language("Où sont les sauvegardes ?") == "en"  # Latin script: no detection past CJK
    assert detect_language("怎么更改附件的默认保存位置？") == "zh"
    assert detect_language("添付ファイルの保存場所を変更するには？") == "ja"  # kanji with kana
    assert detect_language("カメラ") == "ja"
    assert detect_language("첨부 파일 위치") == "ko"
    assert question_from_dict({"id": 1, "question": "附件", "lang": "ZH-cn"}).lang == "zh-cn"
    assert question_from_dict({"id": 1, "question": "附件", "language": "ja"}).lang == "ja"
    assert question_from_dict({"id": 1, "question": "附件"}).lang == "zh"


LANG_DOCS = {
    "en/backups.md": "# Backups\n\nNightly snapshots of the ledger database.\n\n## Restore\n\nRun `pg_restore --clean` twice.\n",
    "zh/附件.md": "# 附件\n\n附件默认保存在库的根目录。\n\n## 更改默认附件储存位置\n\n打开设置，选择文件与链接，修改新附件的默认位置。\n",
    "ja/添付ファイル.md": "# 添付ファイル\n\n添付ファイルは保管庫のルートに保存されます。\n\n## 保存場所の変更\n\n"
    "設定を開き、ファイルとリンクで新しい添付ファイルの場所を変更します。\n",
}
LANG_QUESTIONS: list[dict[str, Any]] = [
    {"id": "en1", "question": "pg_restore --clean", "type": "t", "gold_title_path": ["Backups", "Restore"]},
    {
        "id": "zh1",
        "question": "怎么更改附件的默认保存位置？",
        "type": "t",
        "gold_path": "zh/附件.md",
        "gold_title_path": "附件 > 更改默认附件储存位置",
    },
    {
        "id": "ja1",
        "question": "添付ファイルの保存場所を変更するには？",
        "type": "t",
        "gold_title_path": "添付ファイル › 保存場所の変更",
    },
    {
        "id": "fr1",
        "question": "Où sont les snapshots du ledger ?",
        "type": "t",
        "lang": "fr",
        "gold_path": "en/backups.md",
        "gold_lines": [3, 3],
    },
    {
        "id": "en2",
        "question": "tomatoes in the garden",
        "type": "t",
        "language": "EN",
        "gold_path": "en/backups.md",
        "gold_lines": [7, 7],
    },
    {"id": "zh-off", "question": "蒙古的首都是哪里？", "type": "off", "gold_path": None},
]


@pytest.mark.usefixtures("env")
def test_eval_reports_every_metric_per_language(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs"
    for rel, text in LANG_DOCS.items():
        write(docs, rel, text)
    questions = questions_file(tmp_path, LANG_QUESTIONS)
    base = (str(docs), "--questions", str(questions), "--embedder", "hash", "--mode", "lexical")
    code, out, err = run_eval(capsys, *base, "--json")
    assert code == 0, err
    report = json.loads(out)
    per = report["per_question"]
    assert {qid: row["lang"] for qid, row in per.items()} == {
        "en1": "en", "zh1": "zh", "ja1": "ja", "fr1": "fr", "en2": "en", "zh-off": "zh",
    }  # fmt: skip
    # The title paths resolved to the right lines: BM25 (CJK bigrams) finds each at rank 1.
    assert {qid: per[qid]["rank"] for qid in ("en1", "zh1", "ja1", "fr1")} == dict.fromkeys(
        ("en1", "zh1", "ja1", "fr1"), 1
    )
    assert per["en2"]["rank"] is None  # nothing about tomatoes
    by_lang = report["metrics"]["by_lang"]
    assert set(by_lang) == {"en", "fr", "ja", "zh"}
    assert by_lang["en"]["n"] == 2
    assert by_lang["en"]["top1"] == 0.5
    assert by_lang["en"]["mrr"] == 0.5
    assert by_lang["zh"]["n"] == 1
    assert by_lang["zh"]["no_gold"]["n"] == 1
    assert by_lang["ja"]["top1"] == 1.0
    for lang, group in by_lang.items():
        mine = [row for row in per.values() if row["lang"] == lang and row["answerable"]]
        assert group["n"] == len(mine)
        assert group["evidence"]["lines"] == pytest.approx(
            sum(r["cited_lines"] for r in mine) / len(mine) if mine else 0.0
        )
    code, text, _ = run_eval(capsys, *base)
    assert code == 0
    rows = {line.split()[0]: line.split() for line in text.splitlines() if line.strip()}
    assert {"language", "en", "fr", "ja", "zh"} <= set(rows)
    assert rows["ja"][1:3] == ["1", "100.0%"]
    assert rows["en"][1:3] == ["2", "50.0%"]


# -- evidence ------------------------------------------------------------------------------------


def hit(path: str, start: int, end: int, heading: str = "") -> ResultHit:
    return ResultHit(path, start, end, heading)


def test_evidence_lines_and_precision_by_hand() -> None:
    golds = (Gold("a.md", (10, 12), None), Gold("b.md", (1, 2), None))
    hits = [hit("a.md", 11, 14), hit("./a.md", 13, 15), hit("b.md", 2, 2), hit("c.md", 1, 3)]
    every = evidence_of(hits, golds)
    assert (every.cited, every.inside, every.gold) == (9, 3, 5)  # a 11-15, b 2, c 1-3; inside: a 11-12, b 2
    assert every.precision == pytest.approx(3 / 9)
    first_two = evidence_of(hits, golds, 2)
    assert (first_two.cited, first_two.inside) == (5, 2)
    assert first_two.precision == pytest.approx(2 / 5)
    assert evidence_of([], golds).precision == 0.0  # citing nothing is no precision
    assert evidence_of(hits, (Gold("a.md", None, "A"),)).precision is None  # no gold line range

    qs = [
        question_from_dict({"id": "q1", "type": "t", "gold_path": "a.md", "gold_lines": [10, 12],
                            "gold_alt": [{"path": "b.md", "lines": [1, 2]}]}),
        question_from_dict({"id": "q2", "type": "t", "gold_path": "a.md", "gold_lines": [5, 5]}),
        question_from_dict({"id": "q3", "type": "u", "gold_path": "a.md", "gold_heading": "A"}),
        question_from_dict({"id": "q4", "type": "off", "gold_path": None}),
    ]  # fmt: skip
    results = {"q1": hits, "q2": [], "q3": [hit("a.md", 1, 4)], "q4": [hit("c.md", 1, 6)]}
    report = grade(qs, results, evidence_k=3)
    assert report.evidence["q1"].cited == 6  # the first 3 hits: a 11-15, b 2
    assert report.evidence["q1"].precision == pytest.approx(3 / 6)
    ev = report.evidence_overall
    assert ev.n == 3
    assert ev.lines == pytest.approx((6 + 0 + 4) / 3)
    assert ev.n_precision == 2  # q3 has no gold lines
    assert ev.precision == pytest.approx((3 / 6 + 0.0) / 2)
    assert ev.pooled_precision == pytest.approx(3 / 6)
    assert report.evidence_by_type["u"].n_precision == 0
    assert report.no_gold_lines == 6.0
    assert report.as_dict()["evidence"]["k"] == 3


EVIDENCE_DOCS = {
    "ops/backups.md": "---\ntitle: Backups\n---\n# Backups\n\nNightly snapshots of the ledger database.\n\n"
    "## Restore\n\nRun `pg_restore --clean` twice, then verify the snapshot checksums.\n\n## Retention\n\n"
    "| Tier | Days |\n|---|---|\n| hot | 7 |\n| cold | 400 |\n",
    "ops/deploys.md": "# Deploys\n\nDeploys go out on Tuesdays after the snapshot.\n\n## Rollback\n\n"
    "Use the rollback lever in the console.\n",
    "records/policy.md": RETENTION,
}
EVIDENCE_QUESTIONS: list[dict[str, Any]] = [
    {
        "id": "e1",
        "question": "snapshot checksums",
        "type": "a",
        "gold_path": "ops/backups.md",
        "gold_lines": [10, 10],
    },
    {"id": "e2", "question": "which day do deploys go out", "type": "a", "gold_title_path": "Deploys"},
    {"id": "e3", "question": "archives", "type": "b", "gold_path": "records/policy.md", "gold_lines": [9, 9]},
    {"id": "e4", "question": "cold tier days", "type": "b", "gold_title_path": ["Backups", "Retention"]},
    {"id": "e5", "question": "capital of Mongolia", "type": "off", "gold_path": None},
]


@pytest.fixture
def evidence_corpus(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    for rel, text in EVIDENCE_DOCS.items():
        write(docs, rel, text)
    return docs, questions_file(tmp_path, EVIDENCE_QUESTIONS)


@pytest.mark.usefixtures("env")
@pytest.mark.parametrize(("mode", "top_k"), [("hybrid", 10), ("lexical", 10), ("hybrid", 2)])
def test_eval_evidence_is_the_lines_its_results_cite(
    mode: str,
    top_k: int,
    evidence_corpus: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The report's evidence, recomputed here line by line from the hits it wrote."""
    docs, questions = evidence_corpus
    results = tmp_path / "results.jsonl"
    code, out, err = run_eval(
        capsys, str(docs), "--questions", str(questions), "--embedder", "hash", "--mode", mode,
        "--top-k", str(top_k), "--json", "--results", str(results),
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    assert report["evidence_k"] == top_k
    gold = {  # e2: all of "Deploys" (its text, 3-7), e4: the table (14-17): resolved from the title paths
        "e1": {("ops/backups.md", 10)},
        "e2": {("ops/deploys.md", n) for n in range(3, 8)},
        "e3": {("records/policy.md", 9)},
        "e4": {("ops/backups.md", n) for n in range(14, 18)},
        "e5": set(),
    }
    hits = read_results(results)
    precisions = []
    for qid, want in gold.items():
        cited = {(h.path, n) for h in hits[qid] for n in range(h.start_line, h.end_line + 1)}
        row = report["per_question"][qid]
        assert row["cited_lines"] == len(cited), qid
        assert row["inside_gold"] == len(cited & want), qid
        assert row["gold_lines"] == len(want), qid
        if want:
            precisions.append(len(cited & want) / len(cited) if cited else 0.0)
    ev = report["metrics"]["evidence"]["overall"]
    assert ev["n"] == ev["n_precision"] == 4
    assert ev["precision"] == pytest.approx(sum(precisions) / 4)
    assert ev["lines"] == pytest.approx(
        sum(report["per_question"][q]["cited_lines"] for q in gold if gold[q]) / 4
    )


@pytest.mark.usefixtures("env")
def test_the_evidence_of_one_long_hit_by_hand(
    evidence_corpus: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    docs, questions = evidence_corpus
    code, out, _ = run_eval(
        capsys, str(docs), "--questions", str(questions), "--embedder", "hash", "--mode", "lexical", "--json"
    )
    assert code == 0
    row = json.loads(out)["per_question"]["e3"]
    # "archives" is only in the rules paragraph (lines 7-18): one hit of 12 lines, 1 of them gold.
    assert row == {
        "type": "b", "lang": "en", "answerable": True, "rank": 1,
        "cited_lines": 12, "inside_gold": 1, "gold_lines": 1, "precision": pytest.approx(1 / 12),
    }  # fmt: skip


# -- --max-evidence-lines ------------------------------------------------------------------------


def test_a_hit_over_max_lines_is_no_hit() -> None:
    golds = (Gold("a.md", (5, 5), "A > B"),)
    hits = [hit("a.md", 1, 9, "A > B"), hit("a.md", 5, 6, "A > B")]
    assert first_rank(hits, golds) == 1
    assert first_rank(hits, golds, max_lines=9) == 1
    assert first_rank(hits, golds, max_lines=8) == 2
    assert first_rank(hits, golds, "heading", max_lines=8) == 2  # as grade.py: in every rule
    assert first_rank(hits, golds, max_lines=1) is None
    q = question_from_dict({"id": "q", "type": "t", "gold_path": "a.md", "gold_lines": [5, 5]})
    report = grade([q], {"q": hits}, max_lines=1)
    assert report.ranks == {"q": None}
    assert report.evidence["q"].cited == 9  # the evidence still counts every hit


@pytest.mark.usefixtures("env")
def test_max_evidence_lines_turns_a_long_hit_into_a_miss(
    evidence_corpus: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs, questions = evidence_corpus
    base = (str(docs), "--questions", str(questions), "--embedder", "hash", "--mode", "lexical")
    code, out, _ = run_eval(capsys, *base, "--json")
    assert code == 0
    before = json.loads(out)
    assert before["ranks"]["e3"] == 1
    assert before["max_evidence_lines"] is None
    code, out, _ = run_eval(capsys, *base, "--json", "--max-evidence-lines", "11")
    assert code == 0
    after = json.loads(out)
    assert after["ranks"]["e3"] is None  # its only hit is 12 lines long
    assert after["ranks"]["e1"] == before["ranks"]["e1"] == 1
    assert after["max_evidence_lines"] == after["metrics"]["max_evidence_lines"] == 11
    assert after["per_question"]["e3"]["cited_lines"] == 12
    assert after["metrics"]["evidence"] == before["metrics"]["evidence"]
    assert after["metrics"]["by_type"]["b"]["top1"] < before["metrics"]["by_type"]["b"]["top1"]
    code, text, _ = run_eval(capsys, *base, "--max-evidence-lines", "11")
    assert code == 0
    assert "--max-evidence-lines 11: a hit over 11 lines does not count as a hit" in text
    assert "evidence: the lines cited by the first 10 hits" in text
    code, _, err = run_eval(capsys, *base, "--max-evidence-lines", "0")
    assert code == 2
    assert "at least 1" in err


@pytest.mark.usefixtures("env")
@pytest.mark.skipif(not GRADE_PY.is_file(), reason="the shared benchmark is not beside this checkout")
@pytest.mark.parametrize("rule", ["lines", "heading"])
def test_max_evidence_lines_equals_grade_py_max_span(
    rule: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Questions without title paths (grade.py does not read them), over the same results."""
    docs = tmp_path / "docs"
    for rel, text in EVIDENCE_DOCS.items():
        write(docs, rel, text)
    rows = [
        {**q, "gold_heading": "Policy > Retention"} if q["id"] == "e3" else q
        for q in EVIDENCE_QUESTIONS
        if "gold_title_path" not in q
    ]
    rows.append({"id": "e6", "question": "rollback lever", "type": "a", "gold_path": "ops/deploys.md",
                 "gold_lines": [7, 7], "gold_heading": "Deploys > Rollback"})  # fmt: skip
    questions = questions_file(tmp_path, rows)
    for span in ("1", "11", "12"):
        results = tmp_path / f"results-{rule}-{span}.jsonl"
        code, out, _ = run_eval(
            capsys, str(docs), "--questions", str(questions), "--embedder", "hash", "--rule", rule,
            "--max-evidence-lines", span, "--json", "--results", str(results),
        )  # fmt: skip
        assert code == 0
        theirs = grade_py(questions, results, tmp_path, "--mode", rule, "--max-span", span)
        assert_same_metrics(json.loads(out)["metrics"], theirs)
        if span == "11":
            assert theirs["by_type"]["b"]["top1"] == 0.0  # the long hit is out for grade.py as well


# -- title paths through `ragdown eval` ----------------------------------------------------------


@pytest.mark.usefixtures("env")
def test_eval_refuses_an_unresolvable_title_path(
    evidence_corpus: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs, _ = evidence_corpus
    questions = questions_file(
        tmp_path, [*EVIDENCE_QUESTIONS, {"id": "bad-7", "question": "?", "gold_title_path": "Deploys > Nope"}]
    )
    code, out, err = run_eval(capsys, str(docs), "--questions", str(questions), "--embedder", "hash")
    assert code == 2
    assert out == ""
    assert "question bad-7" in err
    assert "Deploys > Nope" in err
