"""Links (A9, A14 `documents/links.test`) and heading ranges."""

from __future__ import annotations

import pytest

from ragdown.documents import LinkResolver, ParsedLink, Resolved, find_links, heading_range, parse_link

NOTES: dict[str, list[str]] = {
    "Home.md": [],
    "projects/alpha/Plan.md": ["Alpha plan"],
    "projects/beta/Plan.md": [],
    "archive/old/projects/alpha/Plan.md": [],
    "notes/Kafka.md": ["Streams"],
}
ATTACHMENTS = ["assets/diagram.png", "projects/alpha/diagram.png", "file with space.pdf"]


@pytest.fixture
def resolver() -> LinkResolver:
    return LinkResolver(NOTES, ATTACHMENTS)


def test_parse_link_strips_embed_mark_display_text_and_block_refs() -> None:
    assert parse_link("![[Note#Heading|shown]]") == ParsedLink("Note", "Heading")
    assert parse_link("Note#^block") == ParsedLink("Note", None)
    assert parse_link("#Only heading") == ParsedLink("", "Only heading")
    assert parse_link("./a%20b.md") == ParsedLink("a b.md", None)


def test_parse_link_normalises_the_target() -> None:
    assert parse_link("sub\\Note") == ParsedLink("sub/Note", None)
    assert parse_link("/abs/Note") == ParsedLink("abs/Note", None)
    assert parse_link("100%.md") == ParsedLink("100%.md", None)
    assert parse_link("bad%E0%A4.md") == ParsedLink("bad%E0%A4.md", None)
    assert parse_link("a/./b/../c") == ParsedLink("a/c", None)
    assert parse_link("Note\\|alias in a table") == ParsedLink("Note", None)
    assert parse_link("[[  Spaced  # H  ]]") == ParsedLink("Spaced", "H")


def test_an_exact_path_beats_a_name(resolver: LinkResolver) -> None:
    assert resolver.resolve("projects/beta/Plan") == Resolved("projects/beta/Plan.md")
    assert resolver.resolve("home.md") == Resolved("Home.md")
    assert resolver.resolve("Plan", "projects/beta/Other.md") == Resolved("projects/beta/Plan.md")


def test_exact_path_prefers_the_case_sensitive_match() -> None:
    resolver = LinkResolver({"a/Note.md": [], "a/note.md": []})
    assert resolver.resolve("a/note") == Resolved("a/note.md")
    assert resolver.resolve("a/Note") == Resolved("a/Note.md")
    assert resolver.resolve("A/NOTE") == Resolved("a/Note.md")


def test_name_ties_go_to_the_linking_folder_then_the_shortest_path(resolver: LinkResolver) -> None:
    assert resolver.resolve("plan", "projects/alpha/x.md") == Resolved("projects/alpha/Plan.md")
    assert resolver.resolve("Plan", "Home.md") == Resolved("projects/beta/Plan.md")
    assert resolver.resolve("alpha/Plan", "Home.md") == Resolved("projects/alpha/Plan.md")
    assert resolver.resolve("old/projects/alpha/Plan", "Home.md") == Resolved(
        "archive/old/projects/alpha/Plan.md"
    )


def test_equal_length_ties_are_alphabetical() -> None:
    resolver = LinkResolver({"b/x.md": [], "a/x.md": [], "c/y.md": ["Same"], "a/y.md": ["same"]})
    assert resolver.resolve("x", "top.md") == Resolved("a/x.md")
    assert resolver.resolve("SAME", "top.md") == Resolved("a/y.md")


def test_aliases_are_the_fallback_and_the_heading_is_kept(resolver: LinkResolver) -> None:
    assert resolver.resolve("streams#Retention") == Resolved("notes/Kafka.md", "Retention")
    assert resolver.resolve("Alpha plan") == Resolved("projects/alpha/Plan.md")


def test_attachments_and_same_note_headings_resolve_and_nothing_else(resolver: LinkResolver) -> None:
    assert resolver.resolve("diagram.png", "projects/alpha/Plan.md") == Resolved("projects/alpha/diagram.png")
    assert resolver.resolve("diagram.png", "Home.md") == Resolved("assets/diagram.png")
    assert resolver.resolve("file%20with%20space.pdf") == Resolved("file with space.pdf")
    assert resolver.resolve("#Top", "Home.md") == Resolved("Home.md", "Top")
    assert resolver.resolve("#Top") is None
    assert resolver.resolve("Missing") is None
    assert resolver.resolve("../outside") is None
    assert resolver.resolve("../../Home", "notes/Kafka.md") is None


def test_relative_wikilinks_resolve_from_the_linking_folder() -> None:
    resolver = LinkResolver({"a/b/c.md": [], "a/d.md": [], "top.md": []})
    assert resolver.resolve("../d", "a/b/c.md") == Resolved("a/d.md")
    assert resolver.resolve("./c", "a/b/x.md") == Resolved("a/b/c.md")


def test_find_links_outside_code_with_exact_target_offsets() -> None:
    text = "\n".join(
        [
            "See [[Plan#Goals|the plan]] and ![[diagram.png]].",
            "Also [kafka](../notes/Kafka.md#Setup), [web](https://x.test) and [top](#top).",
            "`[[Not a link]]` and",
            "```",
            "[[Nor this]]",
            "```",
        ]
    )
    links = find_links(text)
    assert [(link.kind, link.embed, link.raw, link.target, link.anchor, link.line) for link in links] == [
        ("wiki", False, "[[Plan#Goals|the plan]]", "Plan", "Goals", 1),
        ("wiki", True, "![[diagram.png]]", "diagram.png", None, 1),
        ("markdown", False, "[kafka](../notes/Kafka.md#Setup)", "../notes/Kafka.md", "Setup", 2),
    ]
    assert [(link.target_start, link.target_end) for link in links] == [(6, 10), (35, 46), (63, 80)]
    for link in links:
        assert text[link.target_start : link.target_end] == link.target


def test_find_links_skips_absolute_schemes_indented_code_and_double_backtick_spans() -> None:
    text = "\n".join(
        [
            "[a](/abs.md) [b](mailto:x@y) [c](C:/x.md) ``[[in code]]`` ![img](pics/a%20b.png)",
            "",
            "    [[indented code]]",
            "",
            "[d](<with space.md> 'title') and [e](f(1).md \"t\")",
        ]
    )
    links = find_links(text)
    assert [(link.kind, link.embed, link.target, link.line) for link in links] == [
        ("markdown", True, "pics/a%20b.png", 1),
        ("markdown", False, "with space.md", 5),
        ("markdown", False, "f(1).md", 5),
    ]
    for link in links:
        assert text[link.target_start : link.target_end] == link.target


def test_a_link_whose_target_is_code_is_not_a_link_but_code_in_its_text_is_fine() -> None:
    """Code spans bind tighter than links (CommonMark): `[[`x`]]` is code; `[[a|`b`]]` links to a."""
    text = "[[```#```]] [[`x`]] [t](<`y`>) [[a|`shown`]] [[b#`h`]]"
    links = find_links(text)
    assert [(link.target, link.anchor) for link in links] == [("a", None), ("b", "`h`")]
    for link in links:
        assert text[link.target_start : link.target_end] == link.target


def test_find_links_offsets_are_in_lf_text_and_lines_in_the_original() -> None:
    original = "\ufeff---\r\nrelated: '[[Front]]'\r\n---\r\nx\r\n[[Body]]\r\n"
    normalized = "---\nrelated: '[[Front]]'\n---\nx\n[[Body]]\n"
    links = find_links(original)
    assert [(link.target, link.line) for link in links] == [("Front", 2), ("Body", 5)]
    for link in links:
        assert normalized[link.target_start : link.target_end] == link.target


def test_a_markdown_link_resolves_only_as_a_relative_path(resolver: LinkResolver) -> None:
    [relative] = find_links("[k](../notes/Kafka.md)")
    assert resolver.resolve_link(relative, "projects/x.md") == Resolved("notes/Kafka.md")
    [by_name] = find_links("[k](Kafka.md)")
    assert resolver.resolve_link(by_name, "projects/x.md") is None
    [wiki] = find_links("[[Streams]]")
    assert resolver.resolve_link(wiki, "Home.md") == Resolved("notes/Kafka.md")
    assert resolver.resolve("../notes/Kafka.md#Setup", "projects/x.md", markdown=True) == Resolved(
        "notes/Kafka.md", "Setup"
    )
    assert resolver.resolve("file%20with%20space.pdf", "Home.md", markdown=True) == Resolved(
        "file with space.pdf"
    )
    assert resolver.resolve("../Home.md", "Home.md", markdown=True) is None
    assert resolver.resolve("notes/kafka.md", "Home.md", markdown=True) is None


LINES = "\n".join(
    [
        "---",
        "# not: a heading",
        "---",
        "# Top",
        "intro",
        "## Vacuum",
        "```",
        "## Fake",
        "```",
        "nightly",
        "### Deep",
        "more",
        "## Restore",
        "twice",
        "",
        "Setext",
        "------",
        "last",
    ]
).split("\n")


def test_heading_range_runs_to_the_next_heading_of_the_same_or_higher_level() -> None:
    assert heading_range(LINES, "vacuum") == (6, 12)
    assert heading_range(LINES, "Top#Restore") == (13, 15)
    assert heading_range(LINES, "setext") == (16, 18)
    assert heading_range(LINES, "Top") == (4, 18)
    assert heading_range(LINES, "Deep") == (11, 12)


def test_heading_range_skips_code_and_frontmatter() -> None:
    assert heading_range(LINES, "Fake") is None
    assert heading_range(LINES, "not: a heading") is None
    assert heading_range(LINES, "missing") is None
