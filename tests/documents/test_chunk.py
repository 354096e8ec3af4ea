"""Chunking (A4, A14 `documents/chunk.test`) plus line endings, setext headings and fences."""

from __future__ import annotations

from ragdown.documents import CHUNKER_VERSION, breadcrumb, chunk_markdown, parse_document
from ragdown.documents.model import Chunk


def rows(chunks: list[Chunk]) -> list[tuple[str, str, int, int]]:
    return [(c.heading, c.text, c.start_line, c.end_line) for c in chunks]


def test_chunker_version_marks_the_v3_rules() -> None:
    assert CHUNKER_VERSION == 4


def test_scopes_chunks_by_heading_with_breadcrumb_and_original_lines() -> None:
    source = "\n".join(
        [
            "# Backups",
            "",
            "We back up nightly.",
            "",
            "## Restore",
            "",
            "Run it twice.",
            "",
            "### Replication",
            "Lag under a second.",
        ]
    )
    chunks = chunk_markdown(source, "ops/backups.md")
    assert rows(chunks) == [
        ("Backups", "We back up nightly.", 3, 3),
        ("Backups › Restore", "Run it twice.", 7, 7),
        ("Backups › Restore › Replication", "Lag under a second.", 10, 10),
    ]
    assert [c.breadcrumb for c in chunks] == [
        "Backups",
        "Backups › Restore",
        "Backups › Restore › Replication",
    ]
    assert [c.index for c in chunks] == [0, 1, 2]


def test_frontmatter_title_wins_and_frontmatter_lines_count() -> None:
    source = "\n".join(["---", 'title: "Runbook"', "tags: [ops]", "---", "Intro text."])
    doc = parse_document("x.md", source)
    assert doc.meta.title == "Runbook"
    assert rows(list(doc.chunks)) == [("", "Intro text.", 5, 5)]
    assert doc.chunks[0].breadcrumb == "Runbook"


def test_file_name_is_the_fallback_title() -> None:
    doc = parse_document("notes/todo-list.md", "Just text.")
    assert doc.meta.title == "todo-list"
    assert doc.chunks[0].breadcrumb == "todo-list"


def test_hash_inside_a_fence_is_code_not_a_heading() -> None:
    source = "\n".join(["## Script", "```sh", "# not a heading", "", "echo hi", "```"])
    chunks = chunk_markdown(source, "x.md")
    assert rows(chunks) == [("Script", "```sh\n# not a heading\n\necho hi\n```", 2, 6)]


def test_tilde_fence_closes_only_on_a_long_enough_run_of_the_same_character() -> None:
    source = "\n".join(["# A", "~~~~", "# in code", "```", "~~~", "# still code", "~~~~", "## B", "text"])
    chunks = chunk_markdown(source, "x.md")
    assert rows(chunks) == [
        ("A", "~~~~\n# in code\n```\n~~~\n# still code\n~~~~", 2, 7),
        ("A › B", "text", 9, 9),
    ]


def test_headings_with_no_text_of_their_own_are_skipped() -> None:
    assert [c.heading for c in chunk_markdown("# A\n## B\nbody", "x.md")] == ["A › B"]


def test_skipped_heading_levels_leave_no_gap_in_the_path() -> None:
    chunks = chunk_markdown("# A\n### C\nbody\n## B\nmore", "x.md")
    assert rows(chunks) == [("A › C", "body", 3, 3), ("A › B", "more", 5, 5)]


def test_a_file_with_no_body_text_gets_one_chunk() -> None:
    stub = chunk_markdown("# Stub\n## Todo", "stub.md")
    assert stub == [Chunk(0, "", "Stub", "# Stub\n## Todo", 1, 2)]
    empty = chunk_markdown("", "empty.md")
    assert empty == [Chunk(0, "", "empty", "empty", 1, 1)]


def test_frontmatter_only_file_is_one_chunk_titled_from_it() -> None:
    assert chunk_markdown("---\ntitle: Only\n---\n", "x.md") == [Chunk(0, "", "Only", "Only", 4, 4)]
    assert chunk_markdown("---\ntitle: Only\n---", "x.md") == [Chunk(0, "", "Only", "Only", 3, 3)]


def test_packs_paragraphs_up_to_the_limit_and_hard_splits_oversized_ones() -> None:
    para = " ".join(["word"] * 10)
    source = "\n".join([para, "", para, "", "x" * 250])
    chunks = chunk_markdown(source, "x.md", max_chunk_chars=120)
    assert all(len(c.text) <= 120 for c in chunks)
    assert chunks[0].text == f"{para}\n\n{para}"
    assert (chunks[0].start_line, chunks[0].end_line) == (1, 3)
    assert [len(c.text) for c in chunks[1:]] == [120, 120, 10]
    assert all((c.start_line, c.end_line) == (5, 5) for c in chunks[1:])
    assert "".join(c.text for c in chunks[1:]) == "x" * 250


def test_oversized_paragraph_is_cut_at_line_boundaries() -> None:
    lines = [f"line {n:02d} " + "y" * 30 for n in range(1, 9)]  # 38 characters each
    chunks = chunk_markdown("\n".join(lines), "x.md", max_chunk_chars=100)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 2), (3, 4), (5, 6), (7, 8)]
    assert chunks[1].text == "\n".join(lines[2:4])


def test_long_line_inside_a_paragraph_is_cut_on_its_own_line() -> None:
    source = "short one\n" + "z" * 25 + "\nshort two"
    chunks = chunk_markdown(source, "x.md", max_chunk_chars=10)
    assert rows(chunks) == [
        ("", "short one", 1, 1),
        ("", "z" * 10, 2, 2),
        ("", "z" * 10, 2, 2),
        ("", "z" * 5, 2, 2),
        ("", "short two", 3, 3),
    ]


def test_fenced_block_is_never_split_even_when_oversized() -> None:
    code = "\n".join(["```", *[f"print({n})" for n in range(40)], "", "```"])
    source = f"# Code\n\nIntro.\n\n{code}\n\nOutro."
    chunks = chunk_markdown(source, "x.md", max_chunk_chars=60)
    assert [c.text for c in chunks] == ["Intro.", code, "Outro."]
    assert [(c.start_line, c.end_line) for c in chunks] == [(3, 3), (5, 47), (49, 49)]


def test_blank_lines_inside_a_fence_do_not_split_the_paragraph() -> None:
    source = "# A\n\n```\none\n\n\ntwo\n```\n"
    assert rows(chunk_markdown(source, "x.md")) == [("A", "```\none\n\n\ntwo\n```", 3, 8)]


def test_packed_text_is_the_original_lines_including_extra_blank_lines() -> None:
    source = "one\n\n\n  \ntwo"
    assert rows(chunk_markdown(source, "x.md")) == [("", "one\n\n\n  \ntwo", 1, 5)]


def test_text_before_the_first_heading_has_an_empty_heading() -> None:
    chunks = chunk_markdown("Preface.\n\n# Main\n\nBody.", "doc.md")
    assert rows(chunks) == [("", "Preface.", 1, 1), ("Main", "Body.", 5, 5)]
    assert [c.breadcrumb for c in chunks] == ["Main", "Main"]


def test_setext_headings_count_and_take_their_underline() -> None:
    source = "Title\n=====\n\nIntro.\n\nPart\n----\nBody."
    chunks = chunk_markdown(source, "x.md")
    assert rows(chunks) == [("Title", "Intro.", 4, 4), ("Title › Part", "Body.", 8, 8)]
    assert chunks[0].breadcrumb == "Title"


def test_hash_lines_in_quotes_lists_and_indented_code_are_not_sections() -> None:
    source = "# Top\n\n> # quoted\n\n- # listed\n\n    # indented code\n\ntext"
    chunks = chunk_markdown(source, "x.md")
    assert [c.heading for c in chunks] == ["Top"]
    assert chunks[0].text == "> # quoted\n\n- # listed\n\n    # indented code\n\ntext"


def test_crlf_cr_and_bom_keep_original_line_numbers() -> None:
    lf = "---\ntitle: T\n---\n# A\n\nalpha\n\n## B\nbeta\n"
    expected = [("A", "alpha", 6, 6), ("A › B", "beta", 9, 9)]
    assert rows(chunk_markdown(lf, "x.md")) == expected
    assert rows(chunk_markdown(lf.replace("\n", "\r\n"), "x.md")) == expected
    assert rows(chunk_markdown(lf.replace("\n", "\r"), "x.md")) == expected
    assert rows(chunk_markdown("\ufeff" + lf.replace("\n", "\r\n"), "x.md")) == expected
    assert chunk_markdown("\ufeff" + lf, "x.md")[0].breadcrumb == "T › A"


def test_frontmatter_can_close_with_dots() -> None:
    doc = parse_document("x.md", "---\ntitle: Dotted\n...\nBody.")
    assert doc.meta.title == "Dotted"
    assert rows(list(doc.chunks)) == [("", "Body.", 4, 4)]


def test_unclosed_frontmatter_is_text() -> None:
    doc = parse_document("x.md", "---\ntitle: Open\n\nBody.")
    assert doc.meta.title == "x"
    assert rows(list(doc.chunks)) == [("", "---\ntitle: Open\n\nBody.", 1, 4)]


def test_breadcrumb_drops_the_title_when_the_path_starts_with_it() -> None:
    assert breadcrumb("Backups", "Backups › Restore") == "Backups › Restore"
    assert breadcrumb("Runbook", "Restore") == "Runbook › Restore"
    assert breadcrumb("Backups", "Backups") == "Backups"
    assert breadcrumb("Backups", "") == "Backups"
    assert breadcrumb("Back", "Backups › Restore") == "Back › Backups › Restore"


def test_breadcrumb_leads_the_embedded_text() -> None:
    chunk = chunk_markdown("# T\n\n## H\n\nbody", "x.md")[0]
    assert chunk.embed_text == "T › H\n\nbody"


def test_an_unclosed_fence_is_code_but_may_be_split() -> None:
    source = "# A\n```\n# not a heading\n" + "\n".join(f"line {n}" for n in range(30))
    chunks = chunk_markdown(source, "x.md", max_chunk_chars=100)
    assert {c.heading for c in chunks} == {"A"}
    assert len(chunks) > 1
    assert all(len(c.text) <= 100 for c in chunks)
    assert chunks[0].text.startswith("```\n# not a heading\nline 0")
