"""Append layout and provenance (A11, A14 `mcp-tools.test` 9-11)."""

from __future__ import annotations

import pytest

from ragdown.documents.errors import DocumentError
from ragdown.documents.lint import lint
from ragdown.documents.writes import append_text, prepare_write, provenance, stamp_provenance, yaml_string

BACKUPS = "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice."


def test_appends_under_a_heading_whose_section_runs_to_the_end() -> None:
    under = append_text(BACKUPS, "Check the checksum first.", "Backups")
    assert under == BACKUPS + "\n\nCheck the checksum first.\n"
    at_end = append_text(under, "## Offsite\n\nS3, weekly.")
    assert at_end == (
        "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n\n"
        "Check the checksum first.\n\n## Offsite\n\nS3, weekly.\n"
    )


def test_appends_between_sections_keeping_the_next_heading() -> None:
    text = "# A\n\n## One\n\nfirst\n\n\n## Two\n\nsecond\n"
    assert append_text(text, "more", "One") == "# A\n\n## One\n\nfirst\n\nmore\n\n## Two\n\nsecond\n"


def test_appended_text_is_right_trimmed_and_the_section_includes_subsections() -> None:
    text = "# A\n## One\n### Sub\nsub text\n## Two\nx"
    assert append_text(text, "added  \n\n", "one") == "# A\n## One\n### Sub\nsub text\n\nadded\n\n## Two\nx"


def test_appends_to_an_empty_section_and_an_empty_document() -> None:
    assert append_text("## Empty\n## Next\ntext", "added", "Empty") == "## Empty\n\nadded\n\n## Next\ntext"
    assert append_text("", "first") == "first\n"
    assert append_text("\n\n", "first") == "first\n"


def test_append_ignores_headings_in_code_and_keeps_crlf_and_bom() -> None:
    text = "\ufeff# Top\r\n```\r\n# Fake\r\n```\r\n## Real\r\nbody\r\n"
    assert (
        append_text(text, "more", "Real")
        == "\ufeff# Top\r\n```\r\n# Fake\r\n```\r\n## Real\r\nbody\r\n\r\nmore\r\n"
    )
    with pytest.raises(DocumentError) as missing:
        append_text(text, "x", "Fake")
    assert (missing.value.kind, str(missing.value)) == ("not_found", 'no heading "Fake"')


def test_append_refuses_empty_text() -> None:
    with pytest.raises(DocumentError) as empty:
        append_text("x", "  \n ")
    assert empty.value.kind == "invalid"


def test_a_new_document_gets_created_by_and_session() -> None:
    assert prepare_write("# Plain\n\nText.", old_text=None, session_id="s9") == (
        '---\ncreated_by: ragdown_write\nsession: "s9"\n---\n# Plain\n\nText.'
    )
    assert prepare_write("---\ntitle: Front\n---\nText.", old_text=None) == (
        "---\ntitle: Front\ncreated_by: ragdown_write\n---\nText."
    )
    own = "---\ncreated_by: importer\n---\nText."
    assert prepare_write(own, old_text=None, session_id="s1") == own


def test_replacing_an_agent_document_keeps_its_provenance() -> None:
    first = prepare_write("# Plain\n\nText.", old_text=None, session_id="s9")
    assert prepare_write("# Plain\n\nRewritten.", old_text=first, session_id="other") == (
        '---\ncreated_by: ragdown_write\nsession: "s9"\n---\n# Plain\n\nRewritten.'
    )
    remembered = '---\ntitle: "K"\ncreated_by: ragdown_remember\n---\nx\n'
    assert prepare_write("---\ntitle: K2\n---\ny\n", old_text=remembered) == (
        "---\ntitle: K2\ncreated_by: ragdown_remember\n---\ny\n"
    )


def test_a_user_document_never_gains_provenance() -> None:
    assert prepare_write("# Backups\n\nWeekly.", old_text=BACKUPS, session_id="s1") == "# Backups\n\nWeekly."


def test_replacing_a_crlf_file_writes_crlf() -> None:
    assert prepare_write("# Backups\n\nHourly.\n", old_text="# Backups\r\n\r\nNightly.\r\n") == (
        "# Backups\r\n\r\nHourly.\r\n"
    )
    agent = "---\r\ncreated_by: ragdown_write\r\n---\r\nold\r\n"
    assert prepare_write("new\n", old_text=agent) == "---\r\ncreated_by: ragdown_write\r\n---\r\nnew\r\n"


def test_stamp_keeps_line_endings_and_closing_dots() -> None:
    assert stamp_provenance("---\r\na: 1\r\n...\r\nx", "ragdown_write") == (
        "---\r\na: 1\r\ncreated_by: ragdown_write\r\n...\r\nx"
    )
    assert stamp_provenance("---\nunclosed", "ragdown_write", "s") == (
        '---\ncreated_by: ragdown_write\nsession: "s"\n---\n---\nunclosed'
    )


def test_provenance_reads_the_frontmatter() -> None:
    assert provenance('---\ncreated_by: ragdown_write\nsession: "a b"\n---\n') == ("ragdown_write", "a b")
    assert provenance("created_by: body text") == (None, None)


def test_odd_values_are_quoted_so_the_yaml_reads_back() -> None:
    stamped = stamp_provenance("x", "tool: with colon", 'quote " and \u2028 line sep')
    assert provenance(stamped) == ("tool: with colon", 'quote " and \u2028 line sep')
    assert yaml_string("\x85é") == '"\\u0085é"'


@pytest.mark.timeout(
    120
)  # a hang guard: the old pattern tried every split of the blanks (O(n²): hours at 4 MiB)
def test_the_empty_link_lint_reads_a_long_run_of_blanks_once() -> None:
    blanks = " " * 1_000_000
    assert lint(f"# A\n\nsee [x]({blanks}here\n", "a.md") == []
    assert lint(f"# A\n\nsee [x]({blanks}<{blanks}>{blanks})\n", "a.md") == [
        f"line 3: a link with an empty destination: [x]({blanks}<{blanks}>{blanks})"
    ]
