"""The preview renderer's Obsidian Flavored Markdown: callouts, properties, highlights, task lists and
footnotes, rendered the way Obsidian shows them and as safely as the rest (raw HTML stays escaped)."""

from __future__ import annotations

import pytest

from ragdown.render.blocks import CALLOUT_STYLES
from tests.render.test_render import Elements, classes, render

# --- callouts -----------------------------------------------------------------------------------


def test_a_callout_has_its_type_title_and_content() -> None:
    html = render("> [!tip] Try *this* first\n> The body.\n")
    parsed = Elements(html)
    callout = parsed.all("div")[0]
    assert callout == {"class": "callout callout-tip", "data-callout": "tip", "data-line": "1"}
    assert not parsed.all("blockquote")
    assert not parsed.all("details")
    assert (
        '<div class="callout-title"><span class="callout-title-inner">Try <em>this</em> first</span></div>'
        in html
    )
    assert '<div class="callout-content">\n<p data-line="2">The body.</p>\n</div>' in html
    assert "[!tip]" not in html


def test_a_callout_without_a_title_is_titled_by_its_type_in_any_case() -> None:
    html = render("> [!WARNING]\n> Careful.\n")
    parsed = Elements(html)
    assert parsed.all("div")[0]["data-callout"] == "warning"
    assert '<span class="callout-title-inner">Warning</span>' in html
    assert parsed.one("p")["data-line"] == "2"


def test_a_folded_callout_is_closed_details_and_a_plus_one_is_open() -> None:
    folded = Elements(render("> [!faq]- Why?\n> Because.\n"))
    assert folded.one("details") == {
        "class": "callout callout-question",
        "data-callout": "faq",
        "data-callout-fold": "-",
        "data-line": "1",
    }
    assert folded.one("summary") == {"class": "callout-title"}
    opened = Elements(render("> [!example]+ Shown\n> Body.\n")).one("details")
    assert opened["open"] == ""
    assert opened["data-callout-fold"] == "+"


@pytest.mark.parametrize(
    ("kind", "style"),
    [("note", "note"), ("summary", "abstract"), ("hint", "tip"), ("check", "success"), ("error", "danger")],
)
def test_callout_aliases_take_their_types_style(kind: str, style: str) -> None:
    callout = Elements(render(f"> [!{kind}] T\n> x\n")).all("div")[0]
    assert classes(callout) == {"callout", f"callout-{style}"}
    assert callout["data-callout"] == kind
    assert CALLOUT_STYLES[kind] == style


def test_an_unknown_callout_type_keeps_its_name_in_the_note_style() -> None:
    callout = Elements(render("> [!my-idea] Mine\n> x\n")).all("div")[0]
    assert classes(callout) == {"callout", "callout-note"}
    assert callout["data-callout"] == "my-idea"


def test_raw_html_in_a_callout_stays_escaped() -> None:
    html = render('> [!danger] <img src=x onerror=alert(1)>\n> <script>alert("x")</script> and <b>b</b>\n')
    parsed = Elements(html)
    assert not parsed.all("img")
    assert not parsed.all("script")
    assert not parsed.all("b")
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;script&gt;" in html


def test_links_in_a_callout_are_resolved_and_still_safe() -> None:
    parsed = Elements(render("> [!info] See [[Note]]\n> and [bad](javascript:alert(1)) and [[Nowhere]]\n"))
    links = parsed.all("a")
    assert [link.get("data-path") for link in links] == ["work/Note.md", None]
    assert "missing" in classes(links[1])


def test_callouts_nest_and_hold_any_block() -> None:
    html = render("> [!question] Outer\n> > [!todo] Inner\n> > - [ ] task\n>\n> | a |\n> |---|\n> | 1 |\n")
    parsed = Elements(html)
    callouts = [div for div in parsed.all("div") if "data-callout" in div]
    assert [(div["data-callout"], div["data-line"]) for div in callouts] == [("question", "1"), ("todo", "2")]
    assert parsed.one("input")["type"] == "checkbox"
    assert parsed.one("table")["data-line"] == "5"
    # The inner callout closes before the table, which is the outer one's.
    assert html.index("task") < html.index("</div>\n</div>\n<table")


def test_a_title_only_callout_has_an_empty_content_box() -> None:
    html = render("> [!tip] Just a title\n")
    assert '<div class="callout-content">\n</div>' in html or '<div class="callout-content"></div>' in html
    assert "<p" not in html


def test_quotes_that_are_not_callouts_stay_quotes() -> None:
    for text in ("> plain\n", "> text\n> [!tip] later\n", "> [!tip]glued\n", "> [!<b>] x\n", "> [!] x\n"):
        parsed = Elements(render(text))
        assert parsed.one("blockquote"), text
        assert not [div for div in parsed.all("div") if "callout" in classes(div)], text


def test_callout_lines_follow_the_frontmatter() -> None:
    parsed = Elements(render("---\na: 1\n---\n> [!note] T\n> body\n"))
    callouts = [div for div in parsed.all("div") if "callout" in classes(div)]
    assert callouts[0]["data-line"] == "4"
    assert parsed.one("p")["data-line"] == "5"


# --- frontmatter as properties ------------------------------------------------------------------


def test_properties_are_a_table_with_lists_as_chips_and_tags_as_tags() -> None:
    html = render(
        "---\ntitle: Home\ntags: [Index, project/alpha]\naliases:\n  - One\n  - Two\n"
        "done: true\nopen: false\ncount: 3\nempty:\nnone: []\n---\n# Body\n"
    )
    parsed = Elements(html)
    assert parsed.all("div")[0] == {"class": "properties", "data-line": "1"}
    assert [row.get("scope") for row in parsed.all("th")] == ["row"] * 8
    keys = ["title", "tags", "aliases", "done", "open", "count", "empty", "none"]
    assert [text for text in parsed.text if text in keys] == keys
    assert [span for span in parsed.all("span") if "tag" in classes(span)] == [
        {"class": "tag", "data-tag": "index"},
        {"class": "tag", "data-tag": "project/alpha"},
    ]
    chips = [li for li in parsed.all("li") if "property-chip" in classes(li)]
    assert len(chips) == 4
    assert "One" in parsed.text
    assert "Two" in parsed.text
    done, not_done = parsed.all("input")
    assert done == {
        "type": "checkbox",
        "class": "property-checkbox",
        "disabled": "",
        "checked": "",
        "aria-label": "true",
    }
    assert "checked" not in not_done
    assert '<span class="property-number">3</span>' in html
    assert html.count('class="property-empty"') == 2
    assert "title: Home" not in html
    assert not parsed.all("pre")
    assert parsed.one("h1")["data-line"] == "13"


def test_a_tags_string_is_split_like_obsidian_does() -> None:
    parsed = Elements(render("---\ntags: one, two three\n---\n"))
    assert [span["data-tag"] for span in parsed.all("span") if "tag" in classes(span)] == [
        "one",
        "two",
        "three",
    ]


def test_property_values_are_escaped_and_a_wikilink_value_is_a_link() -> None:
    html = render('---\nnote: "<script>x</script>"\nup: "[[Note]]"\n"<b>": v\n---\n')
    parsed = Elements(html)
    assert not parsed.all("script")
    assert not parsed.all("b")
    assert "&lt;script&gt;x&lt;/script&gt;" in html
    assert "&lt;b&gt;" in html
    link = parsed.one("a")
    assert link["data-path"] == "work/Note.md"
    assert classes(link) == {"wikilink"}


def test_a_nested_mapping_is_a_nested_table() -> None:
    parsed = Elements(render("---\nauthor:\n  name: Ann\n  links: [a, b]\n---\n"))
    tables = parsed.all("table")
    assert [classes(table) for table in tables] == [
        {"properties-table"},
        {"properties-table", "properties-nested"},
    ]
    assert [text for text in parsed.text if text in ("author", "name", "links", "Ann")] == [
        "author",
        "name",
        "Ann",
        "links",
    ]


@pytest.mark.parametrize("yaml", [": bad: [", "- just\n- a list", "just text"])
def test_invalid_frontmatter_is_shown_as_code_with_a_warning(yaml: str) -> None:
    html = render(f"---\n{yaml}\n---\n# After\n")
    parsed = Elements(html)
    assert parsed.all("div")[0] == {"class": "properties properties-invalid", "data-line": "1"}
    warning = parsed.one("p")
    assert warning == {"class": "properties-warning"}
    assert parsed.one("pre") == {"class": "frontmatter"}
    assert parsed.one("code") == {"class": "language-yaml"}
    assert any(text.startswith("frontmatter ignored") for text in parsed.text)
    assert not parsed.all("table")
    assert parsed.one("h1")["data-line"] == str(yaml.count("\n") + 4)


def test_invalid_frontmatter_is_escaped() -> None:
    html = render("---\n<script>: [\n---\n")
    assert not Elements(html).all("script")
    assert "&lt;script&gt;: [" in html


def test_empty_frontmatter_shows_nothing_but_keeps_the_line_numbers() -> None:
    parsed = Elements(render("---\n---\n# Title\n"))
    assert not parsed.all("div")
    assert not parsed.all("hr")
    assert parsed.one("h1")["data-line"] == "3"


# --- highlights ---------------------------------------------------------------------------------


def test_highlights_are_marks() -> None:
    html = render("A ==bright== word and **==both==** and ==two words==.\n")
    assert html.count("<mark>") == 3
    assert "<mark>bright</mark>" in html
    assert "<strong><mark>both</mark></strong>" in html
    assert "<mark>two words</mark>" in html


def test_equals_signs_that_are_not_highlights_stay_text() -> None:
    html = render("a == b and ==open only and `==code==`\n\n    ==indented==\n\nand= =x= ==\n")
    assert "<mark>" not in html
    assert "a == b" in html
    assert "<code>==code==</code>" in html


# --- task lists ---------------------------------------------------------------------------------


def test_task_lists_are_disabled_checkboxes_and_done_items_are_marked() -> None:
    parsed = Elements(render("- [x] done\n- [ ] todo\n  - [X] nested done\n- plain\n"))
    items = parsed.all("li")
    assert [classes(item) for item in items] == [
        {"task-list-item", "is-checked"},
        {"task-list-item"},
        {"task-list-item", "is-checked"},
        set(),
    ]
    assert [item.get("data-task") for item in items] == ["x", None, "x", None]
    boxes = parsed.all("input")
    assert [("checked" in box) for box in boxes] == [True, False, True]
    assert all(box.get("disabled") == "" and box.get("type") == "checkbox" for box in boxes)
    assert all(classes(ul) == {"contains-task-list"} for ul in parsed.all("ul"))


# --- footnotes ----------------------------------------------------------------------------------


def test_footnotes_are_referenced_and_listed_at_the_end() -> None:
    html = render(
        "Text[^1] and again[^1] and a named one[^note].\n\n[^1]: The first.\n[^note]: The *named* one.\n\nAfter.\n"
    )
    parsed = Elements(html)
    sups = parsed.all("sup")
    assert [sup["data-footnote-ref"] for sup in sups] == ["1", "1:1", "2"]
    refs = [a for a in parsed.all("a") if "footnote-link" in classes(a)]
    assert [(a["href"], a["data-footnote"]) for a in refs] == [("#", "1"), ("#", "1"), ("#", "2")]
    assert "[1]" in parsed.text
    section = parsed.one("section")
    assert section == {"class": "footnotes", "aria-label": "Footnotes"}
    notes = [li for li in parsed.all("li") if "footnote-item" in classes(li)]
    assert [li["data-footnote-id"] for li in notes] == ["1", "2"]
    backs = [a["data-footnote-back"] for a in parsed.all("a") if "footnote-backref" in classes(a)]
    assert backs == ["1", "1:1", "2"]
    assert html.index("After.") < html.index("<section")
    assert "<em>named</em>" in html
    # The definitions keep the lines they were written on.
    assert [p["data-line"] for p in parsed.all("p")] == ["1", "6", "3", "4"]


def test_footnotes_have_no_element_ids_or_fragment_links() -> None:
    html = render("A[^1] and ^[an inline note].\n\n[^1]: Note.\n")
    parsed = Elements(html)
    assert all("id" not in attrs for _, attrs in parsed.tags)
    assert all(a["href"] == "#" for a in parsed.all("a"))
    assert "an inline note" in html
    assert len([li for li in parsed.all("li") if "footnote-item" in classes(li)]) == 2


def test_links_in_footnotes_resolve_and_html_stays_escaped() -> None:
    html = render("A[^1] and ^[see [[Note]]].\n\n[^1]: <script>x</script> [[Nowhere]]\n")
    parsed = Elements(html)
    assert not parsed.all("script")
    assert "&lt;script&gt;x&lt;/script&gt;" in html
    wikilinks = [a for a in parsed.all("a") if "wikilink" in classes(a)]
    assert [(a.get("data-path"), "missing" in classes(a)) for a in wikilinks] == [
        (None, True),
        ("work/Note.md", False),
    ]


def test_an_undefined_footnote_stays_text() -> None:
    html = render("A [^nothing] here.\n")
    assert "[^nothing]" in html
    assert "<sup" not in html
    assert "<section" not in html


# --- math: `$…$` and `$$…$$`, typeset by KaTeX in the browser -----------------------------------


def test_inline_and_display_math_are_kept_as_escaped_tex_for_katex() -> None:
    html = render(
        "Area $\\pi r^2 < [[x]]$ here.\n\n$$\n\\int_0^1 <b>x</b>\\,dx\n$$\n\nThen $$e=mc^2$$ inline.\n"
    )
    assert '<p data-line="1">Area <span class="math math-inline">\\pi r^2 &lt; [[x]]</span> here.</p>' in html
    assert '<div class="math math-display" data-line="3">\\int_0^1 &lt;b&gt;x&lt;/b&gt;\\,dx</div>' in html
    # `$$…$$` inside a paragraph is display math, in a span so the paragraph stays valid HTML.
    assert '<p data-line="7">Then <span class="math math-display">e=mc^2</span> inline.</p>' in html
    assert "wikilink" not in html
    assert "<b>" not in html


@pytest.mark.parametrize(
    "text",
    ["It costs $5 and $10.", "A $ sign alone.", "Spaced $ x $ is not math.", "Escaped \\$x\\$ too."],
)
def test_dollars_that_obsidian_does_not_read_as_math_stay_text(text: str) -> None:
    assert 'class="math' not in render(text)


def test_a_mermaid_block_stays_a_code_block_with_its_language() -> None:
    html = render("```mermaid\ngraph TD; A-->B\n```\n")
    assert '<pre><code data-line="1" class="language-mermaid">graph TD; A--&gt;B\n</code></pre>' in html
