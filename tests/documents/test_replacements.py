"""Passage replacements (A11, A14 `documents/replacements.test`)."""

from __future__ import annotations

import re

import pytest

from ragdown.documents.errors import DocumentError, EditError
from ragdown.documents.replacements import Edit, apply_replacements

TEXT = "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.\n"


def refusal(edits: list[Edit], text: str = TEXT) -> EditError:
    with pytest.raises(EditError) as caught:
        apply_replacements(text, edits)
    return caught.value


def test_swaps_one_passage_and_leaves_the_rest() -> None:
    assert apply_replacements(TEXT, [Edit("twice", "once")]) == (
        "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore once.\n",
        1,
    )


def test_applies_replacements_in_order() -> None:
    edits = [
        Edit("Nightly", "Hourly"),
        Edit("Hourly snapshots.", "Hourly snapshots, kept a week."),
        Edit("\n## Restore\n\nRun pg_restore twice.\n", ""),
    ]
    assert apply_replacements(TEXT, edits) == ("# Backups\n\nHourly snapshots, kept a week.\n", 3)


def test_refuses_a_missing_an_ambiguous_and_a_no_op_passage() -> None:
    missing = refusal([Edit("thrice", "once")])
    assert missing.kind == "not_found"
    assert str(missing).startswith("edit 1 of 1: old_text is not in the document, so nothing was written.")
    assert refusal([Edit("Nightly  snapshots", "x")]).kind == "not_found"
    ambiguous = refusal([Edit("twice", "once"), Edit("s", "z")])
    assert ambiguous.kind == "conflict"
    assert re.match(r"^edit 2 of 2: .* 6 times", str(ambiguous))
    same = refusal([Edit("twice", "twice")])
    assert same.kind == "invalid"
    assert str(same) == "edit 1 of 1: old_text and new_text are the same, so nothing was written"
    assert refusal([Edit("", "x")]).kind == "invalid"
    assert isinstance(same, DocumentError)


def test_shows_the_nearest_passage_that_differs_in_whitespace() -> None:
    error = refusal([Edit("Nightly  snapshots.\n\n\n## Restore", "x")])
    assert str(error).endswith(
        "The nearest passage (lines 3-5) follows; copy old_text from it exactly:\nNightly snapshots.\n\n## Restore"
    )


def test_shows_the_lines_from_the_first_line_when_the_rest_is_stale() -> None:
    error = refusal([Edit("## Restore\n\nRun pg_restore (once).", "x")])
    assert str(error).endswith(
        "The nearest passage (lines 5-7) follows; copy old_text from it exactly:\n## Restore\n\nRun pg_restore twice."
    )


def test_names_no_lines_after_an_earlier_edit_moved_them() -> None:
    error = refusal([Edit("# Backups\n\n", ""), Edit("Nightly  snapshots.", "x")])
    assert str(error).startswith("edit 2 of 2: ")
    assert str(error).endswith(
        "The nearest passage follows; copy old_text from it exactly:\nNightly snapshots."
    )


def test_shows_the_closest_passage_for_a_typo_in_whole_words() -> None:
    error = refusal([Edit("pg_restore twcie", "x")])
    assert str(error).endswith(
        "The nearest passage (lines 7-7) follows; copy old_text from it exactly:\npg_restore twice."
    )
    lines = refusal([Edit("Nigthly snapshots.\n\n## Restroe", "x")])
    assert str(lines).endswith(
        "(lines 3-5) follows; copy old_text from it exactly:\nNightly snapshots.\n\n## Restore"
    )


def test_finds_the_closest_passage_in_a_large_document() -> None:
    filler = [f"Line {n}: the nightly job copied {n * 7} files to the cold store." for n in range(16_000)]
    text = "\n".join(
        [*filler[:9_000], "Restore with pg_restore --clean twice, then check the counts.", *filler[9_000:]]
    )
    assert len(text) > 1_000_000
    error = refusal([Edit("Restore with pg_restore --claen twice", "x")], text)
    assert str(error).endswith(
        "(lines 9001-9001) follows; copy old_text from it exactly:\nRestore with pg_restore --clean twice,"
    )


def test_says_to_read_again_when_nothing_is_near() -> None:
    error = refusal([Edit("thrice", "x")])
    assert str(error) == (
        "edit 1 of 1: old_text is not in the document, so nothing was written. It must match character for "
        "character, whitespace included: read the document again and copy the passage from it"
    )


def test_replace_all_takes_the_new_text_literally() -> None:
    assert apply_replacements("a.b a.b", [Edit("a.b", "$& $1 \\1", replace_all=True)]) == (
        "$& $1 \\1 $& $1 \\1",
        2,
    )


def test_matches_across_crlf_and_keeps_crlf() -> None:
    assert apply_replacements("One\r\nTwo\r\nThree\r\n", [Edit("One\nTwo", "1\n2")]) == (
        "1\r\n2\r\nThree\r\n",
        1,
    )
    assert apply_replacements("One\r\nTwo\r\n", [Edit("One\r\nTwo", "1")]) == ("1\r\n", 1)


def test_a_failed_batch_changes_nothing() -> None:
    text = "keep\n"
    with pytest.raises(EditError):
        apply_replacements(text, [Edit("keep", "gone"), Edit("absent", "x")])
    assert text == "keep\n"
