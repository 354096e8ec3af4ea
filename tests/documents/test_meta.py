"""Metadata (A5, A14 `readDocumentMeta` / `readSupersedes`) and defensive frontmatter."""

from __future__ import annotations

import pytest

from ragdown.documents import (
    DocumentMeta,
    parse_document,
    read_document_meta,
    read_supersedes,
    split_frontmatter,
)
from ragdown.documents.meta import normalize_tag


def front(body: str) -> str:
    return f"---\ntitle: New\n{body}\n---\n\n# New\n\nText."


def test_supersedes_scalar_inline_and_block_forms() -> None:
    assert read_supersedes(front("supersedes: old.md"), "notes/new.md") == ("notes/old.md",)
    assert read_supersedes(front('supersedes: [old.md, "older.md"]'), "notes/new.md") == (
        "notes/old.md",
        "notes/older.md",
    )
    assert read_supersedes(front("supersedes:\n  - old.md\n  - older.md"), "new.md") == ("old.md", "older.md")
    assert read_supersedes(front("supersedes: a.md, b.md"), "new.md") == ("a.md", "b.md")


def test_supersedes_paths_are_relative_to_the_documents_folder() -> None:
    assert read_supersedes(front("supersedes: ../ops/old.md"), "notes/new.md") == ("ops/old.md",)
    assert read_supersedes(front("supersedes: ../../escape.md"), "notes/new.md") == ()
    assert read_supersedes(front("supersedes: /etc/passwd"), "notes/new.md") == ()
    assert read_supersedes(front("supersedes: 'C:\\secret.md'"), "notes/new.md") == ()


def test_supersedes_resolve_inside_the_folder_of_the_document() -> None:
    """A document retires only documents of its own folder: its entries resolve in the folder's coordinates
    (`folder` '' being the one-folder mode's docs dir), and `..` leaving the folder names nothing, even one
    that comes back into it."""
    assert read_supersedes(front("supersedes: ../B/secret.md"), "A/x.md", folder="A") == ()
    assert read_supersedes(front("supersedes: ../../B/secret.md"), "A/sub/x.md", folder="A") == ()
    assert read_supersedes(front("supersedes: ../A/old.md"), "A/x.md", folder="A") == ()
    assert read_supersedes(front("supersedes: [old.md, ../top.md]"), "A/sub/x.md", folder="A") == (
        "A/sub/old.md",
        "A/top.md",
    )
    assert read_supersedes(front("supersedes: old.md"), "B/x.md", folder="A") == ()  # not in its folder
    source = front('supersedes: ["../B/secret.md", "old.md"]')
    assert parse_document("A/x.md", source, folder="A").meta.supersedes == ("A/old.md",)
    assert read_document_meta(source, "A/x.md", folder="A").supersedes == ("A/old.md",)


def test_supersedes_is_empty_without_frontmatter_and_stops_at_the_next_key() -> None:
    assert read_supersedes("# New\n\nsupersedes: old.md", "new.md") == ()
    assert read_supersedes(front("tags: [a]"), "new.md") == ()
    assert read_supersedes(front("supersedes:\n  - old.md\ntags: [a]"), "new.md") == ("old.md",)


def test_reads_frontmatter_and_inline_tags_and_aliases_like_obsidian() -> None:
    source = "\n".join(
        [
            "---",
            "tags: [Ops, '#infra/db']",
            "aliases:",
            "  - Elephant",
            '  - "The DB"',
            "---",
            "# Postgres #heading-tag",
            "",
            "Vacuum nightly #maintenance and #2024 but not a#b or `#code`.",
            "",
            "```",
            "#include <stdio.h>",
            "```",
            "See https://example.com/#anchor and #nested/child/.",
        ]
    )
    meta = read_document_meta(source, "db/pg.md")
    assert meta.tags == ("heading-tag", "infra/db", "maintenance", "nested/child", "ops")
    assert meta.aliases == ("Elephant", "The DB")


def test_splits_a_tag_string_and_keeps_an_alias_string_whole() -> None:
    meta = read_document_meta("---\ntags: one, two three\naliases: Big, Old Name\n---\nx", "x.md")
    assert meta.tags == ("one", "three", "two")
    assert meta.aliases == ("Big, Old Name",)


def test_reads_created_by_and_session_and_treats_empty_as_absent() -> None:
    source = '---\ncreated_by: ragdown_remember\nsession: "min-agent:7"\n---\ncreated_by: not frontmatter'
    meta = read_document_meta(source, "x.md")
    assert (meta.created_by, meta.session) == ("ragdown_remember", "min-agent:7")
    empty = read_document_meta("---\ncreated_by:\nsession: ''\ndescription: ''\n---\nx", "x.md")
    assert (empty.created_by, empty.session, empty.description) == (None, None, None)


def test_a_plain_note_has_no_metadata_beyond_its_title() -> None:
    assert read_document_meta("# Title\n\nText.", "x.md") == DocumentMeta(title="Title")


def test_block_scalar_description_is_joined_into_one_line() -> None:
    folded = read_document_meta("---\ndescription: >\n  Zebra crossing\n  plan\n---\nx", "x.md")
    literal = read_document_meta("---\ndescription: |\n  Zebra crossing\n  plan\n---\nx", "x.md")
    assert folded.description == "Zebra crossing plan"
    assert literal.description == "Zebra crossing plan"


def test_scalars_of_other_types_become_text() -> None:
    meta = read_document_meta("---\ntitle: 2024-01-02\ndescription: 42\nsession: true\n---\nx", "x.md")
    assert (meta.title, meta.description, meta.session) == ("2024-01-02", "42", "true")


def test_tags_skip_indented_code_tabs_and_code_spans() -> None:
    source = "\n".join(
        [
            "intro #kept",
            "",
            "    #indented",
            "\t#tabbed",
            "``#double`` and `#single` but #after_code",
            "~~~",
            "#tilde",
            "~~~",
            "#Mixed/Case/ and ##not and #-dash",
        ]
    )
    assert read_document_meta(source, "x.md").tags == ("-dash", "after_code", "kept", "mixed/case")


def test_tag_validity_rules() -> None:
    assert normalize_tag("#Heading-Tag") == "heading-tag"
    assert normalize_tag("2024") is None
    assert normalize_tag("12/34/") is None
    assert normalize_tag("v2") == "v2"
    assert normalize_tag("café") == "café"
    assert normalize_tag("a.b") is None
    assert normalize_tag("##") is None


def test_aliases_are_deduplicated_and_non_scalars_skipped() -> None:
    meta = read_document_meta("---\naliases: [A, B, A, [nested], {k: v}, 7]\n---\nx", "x.md")
    assert meta.aliases == ("A", "B", "7")


def test_title_falls_back_from_frontmatter_to_h1_to_file_name() -> None:
    assert read_document_meta("---\ntitle: ''\n---\n# Heading\n", "x.md").title == "Heading"
    assert read_document_meta("## Only H2\n", "dir/name.markdown").title == "name"
    assert read_document_meta("---\ntitle: [a, b]\n---\nx", "n.md").title == "n"


def test_frontmatter_split_reports_the_body_line() -> None:
    data, body_start, warnings = split_frontmatter("---\r\na: 1\r\nb: [x]\r\n---\r\nbody")
    assert (data, body_start, warnings) == ({"a": 1, "b": ["x"]}, 5, ())
    assert split_frontmatter("no frontmatter") == ({}, 1, ())
    assert split_frontmatter("---\nnot closed") == ({}, 1, ())
    assert split_frontmatter("\ufeff---\na: 1\n---\n").data == {"a": 1}


BILLION_LAUGHS = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [
        f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]"
        for prev, name in zip("abcdefghi", "bcdefghij", strict=True)
    ]
    + ["title: *j"]
)


@pytest.mark.parametrize(
    ("frontmatter", "warning"),
    [
        (BILLION_LAUGHS, "expands to more than"),
        ("a: &a [*a]\ntitle: *a", "nests deeper than 64 levels"),
        ("a: &a [" + ", ".join(["*a"] * 5000) + "]", "expands to more than"),
        ("k: " + "[" * 600 + "]" * 600, "nests deeper than 64 levels"),
        ("k: " + "{a: " * 600 + "1" + "}" * 600, "nests deeper than 64 levels"),
        ("title: " + "x" * (1024 * 1024), "longer than"),
        ("- just\n- a list", "not a mapping"),
        ("plain scalar", "not a mapping"),
        ("title: [unclosed", "invalid YAML"),
        ("title: a: b", "invalid YAML"),
        ("\tbad: indent", "invalid YAML"),
        ("[" * 5000, "invalid YAML"),
        ("? [a, b]\n: unhashable key", "invalid YAML"),
        ("n: 1" + "0" * 10000, ""),
    ],
)
@pytest.mark.timeout(60)  # a hang guard: speed is measured in bench/, not asserted here
def test_hostile_frontmatter_leaves_the_document_parsed_with_a_warning(
    frontmatter: str, warning: str
) -> None:
    source = f"---\n{frontmatter}\n---\n# Body\n\nStill here #tag."
    doc = parse_document("hostile.md", source)
    frontmatter_lines = frontmatter.count("\n") + 3
    assert doc.meta.title == "Body"
    assert doc.meta.tags == ("tag",)
    assert [(c.text, c.start_line) for c in doc.chunks] == [("Still here #tag.", frontmatter_lines + 3)]
    if not warning:
        assert doc.warnings == ()
        return
    assert len(doc.warnings) == 1
    assert warning in doc.warnings[0]
    assert doc.warnings[0].startswith("frontmatter ignored")


def test_an_integer_too_long_to_write_in_decimal_stays_text() -> None:
    """A hexadecimal or binary literal Python reads but cannot write in decimal (over 4,300 digits) is kept
    as its text: it once made the title a ValueError, and the whole document fell back to its file name."""
    for literal in ("0x" + "f" * 4000, "0b" + "1" * 15000):
        doc = parse_document("x.md", f"---\ntitle: {literal}\ntags: [a]\n---\n# Body\n")
        assert doc.warnings == ()
        assert (doc.meta.title, doc.meta.tags) == (literal, ("a",))


def test_odd_values_do_not_cost_the_rest_of_the_frontmatter() -> None:
    source = (
        "---\ntitle: 2024-13-45\ncreated: 2024-01-02\nn: 1" + "0" * 5000 + "\ntags: !custom [a, b]\n---\nx"
    )
    doc = parse_document("x.md", source)
    assert doc.warnings == ()
    assert (doc.meta.title, doc.meta.tags) == ("2024-13-45", ("a", "b"))
    data = split_frontmatter(source).data
    assert data["created"] == "2024-01-02"
    assert data["n"] == "1" + "0" * 5000
