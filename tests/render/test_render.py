"""The preview renderer: escaping, link safety, Obsidian syntax, line anchors."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from ragdown.documents import LinkResolver
from ragdown.render.context import doc_href
from ragdown.render.document import render_document, render_markdown

WIKI = {
    "Note": "work/Note.md",
    "Note#Setup": "work/Note.md",
    "Note#^p1": "work/Note.md",
    "Alias name": "work/sub/Aliased.md",
    "diagram.png": "work/assets/diagram.png",
    "report.pdf": "work/report.pdf",
    "clip.mp3": "work/clip.mp3",
}
RELATIVE = {
    "other.md": "work/other.md",
    "other.md#Part": "work/other.md",
    "img/a.png": "work/img/a.png",
    "my%20file.md": "work/my file.md",
}


def file_url(path: str) -> str:
    return f"/api/file?path={path}"


def render(text: str) -> str:
    return render_markdown(text, resolve_link=WIKI.get, resolve_relative=RELATIVE.get, file_url=file_url)


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text, of an HTML fragment."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]

    def one(self, tag: str) -> dict[str, str | None]:
        found = self.all(tag)
        assert len(found) == 1, f"expected one <{tag}>, got {found}"
        return found[0]


def classes(attrs: dict[str, str | None]) -> set[str]:
    return set((attrs.get("class") or "").split())


# --- safety -------------------------------------------------------------------------------------


def test_raw_html_is_escaped_not_passed_through() -> None:
    html = render('<script>alert("x")</script>\n\nText <img src=x onerror=alert(1)> and <b>bold</b>\n')
    parsed = Elements(html)
    assert not parsed.all("script")
    assert not parsed.all("b")
    assert [tag for tag, _ in parsed.tags] == ["p", "p"]
    assert "&lt;script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JAVASCRIPT:alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html;base64,PHNjcmlwdD4=",
    ],
)
def test_dangerous_link_schemes_are_not_links(url: str) -> None:
    parsed = Elements(render(f"[click]({url}) and ![img]({url})\n"))
    assert not parsed.all("a")
    assert not parsed.all("img")


def test_wikilink_text_and_attributes_are_escaped() -> None:
    html = render('[[<img src=x onerror=alert(1)>]] and [[a"b|"><script>]]\n')
    parsed = Elements(html)
    assert not parsed.all("img")
    assert not parsed.all("script")
    anchors = parsed.all("a")
    assert [a["data-target"] for a in anchors] == ["<img src=x onerror=alert(1)>", 'a"b']
    assert "&quot;&gt;&lt;script&gt;" in html


def test_absolute_links_open_in_a_new_tab_without_an_opener() -> None:
    link = Elements(render("[site](https://example.com/a?b=1)\n")).one("a")
    assert link["href"] == "https://example.com/a?b=1"
    assert link["target"] == "_blank"
    assert link["rel"] == "noopener"


def test_mailto_links_are_kept_as_they_are() -> None:
    link = Elements(render("[mail](mailto:a@example.com)\n")).one("a")
    assert link["href"] == "mailto:a@example.com"
    assert "target" not in link


# --- wikilinks and embeds -----------------------------------------------------------------------


def test_wikilinks_resolve_to_the_document_route() -> None:
    parsed = Elements(render("See [[Note]], [[Note#Setup|the setup]] and [[Alias name]].\n"))
    plain, anchored, alias = parsed.all("a")
    assert plain["href"] == "#/d/work/Note.md"
    assert plain["data-path"] == "work/Note.md"
    assert plain["data-target"] == "Note"
    assert classes(plain) == {"wikilink"}
    assert anchored["href"] == "#/d/work/Note.md?h=Setup"
    assert anchored["data-anchor"] == "Setup"
    assert alias["data-path"] == "work/sub/Aliased.md"
    assert "the setup" in parsed.text
    assert "Alias name" in parsed.text


def test_a_wikilink_without_shown_text_shows_the_heading() -> None:
    parsed = Elements(render("[[Note#Setup]]\n"))
    assert "Note > Setup" in parsed.text


def test_unresolved_wikilinks_are_marked_missing() -> None:
    link = Elements(render("A [[Nowhere#Part|gone]] link.\n")).one("a")
    assert classes(link) == {"wikilink", "missing"}
    assert link["data-target"] == "Nowhere#Part"
    assert "data-path" not in link


def test_a_wikilink_to_an_attachment_points_at_the_file() -> None:
    link = Elements(render("[[report.pdf]]\n")).one("a")
    assert link["href"] == "/api/file?path=work/report.pdf"
    assert link["data-file"] == "work/report.pdf"


def test_image_embeds_load_through_file_url() -> None:
    image = Elements(render("![[diagram.png]]\n")).one("img")
    assert image["src"] == "/api/file?path=work/assets/diagram.png"
    assert image["data-file"] == "work/assets/diagram.png"
    assert image["alt"] == "diagram.png"
    assert "embed-image" in classes(image)


def test_image_embed_size_and_alt_text() -> None:
    sized = Elements(render("![[diagram.png|320x200]]\n")).one("img")
    assert (sized["width"], sized["height"]) == ("320", "200")
    described = Elements(render("![[diagram.png|A diagram]]\n")).one("img")
    assert described["alt"] == "A diagram"
    assert "width" not in described


def test_note_embeds_are_blocks_the_ui_expands() -> None:
    parsed = Elements(render("![[Note#Setup]]\n"))
    span = parsed.one("span")
    assert classes(span) == {"embed", "embed-note"}
    assert span["data-path"] == "work/Note.md"
    assert span["data-anchor"] == "Setup"
    assert parsed.one("a")["href"] == "#/d/work/Note.md?h=Setup"


def test_block_ids_name_their_block_and_a_block_embed_says_which() -> None:
    html = render(
        "Para one ^p1\n\n- item a ^ia\n- item b\n\n> quote\n> more ^q\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n^tbl\n\n```\ncode\n```\n\n^code\n\n![[Note#^p1]]\n"
    )
    parsed = Elements(html)
    named = [(tag, attrs["data-block"]) for tag, attrs in parsed.tags if "data-block" in attrs]
    assert named == [
        ("p", "p1"),
        ("li", "ia"),
        ("blockquote", "q"),
        ("table", "tbl"),
        ("code", "code"),
        ("span", "p1"),  # the embed
    ]
    assert "^" not in "".join(parsed.text)  # no id is shown, nor the paragraphs of a lone one
    assert len(parsed.all("p")) == 3  # "Para one", the quote's, the embed's: none for ^tbl or ^code
    embed = parsed.all("span")[0]
    assert classes(embed) == {"embed", "embed-note"}
    assert (embed["data-path"], embed["data-block"], embed.get("data-anchor")) == ("work/Note.md", "p1", None)


def test_other_embeds() -> None:
    audio = Elements(render("![[clip.mp3]]\n")).one("audio")
    assert audio["src"] == "/api/file?path=work/clip.mp3"
    missing = Elements(render("![[nothing.png]]\n")).one("span")
    assert classes(missing) == {"embed", "missing"}
    assert missing["data-target"] == "nothing.png"


def test_wikilinks_in_code_are_left_as_code() -> None:
    html = render("Inline `[[Note]]` here.\n\n```\n![[diagram.png]]\n```\n\n    [[Note]]\n")
    parsed = Elements(html)
    assert not parsed.all("a")
    assert not parsed.all("img")
    assert "<code>[[Note]]</code>" in html
    assert "![[diagram.png]]\n</code>" in html


def test_brackets_that_are_not_wikilinks_stay_text() -> None:
    html = render("[[]] and [[ ]] and [[a\nb]] and \\[[Note]]\n")
    assert not Elements(html).all("a")


def test_a_table_cell_can_hold_an_aliased_wikilink() -> None:
    parsed = Elements(render("| a | b |\n|---|---|\n| [[Note\\|shown]] | ~~old~~ |\n"))
    assert parsed.one("table")
    assert parsed.one("a")["data-path"] == "work/Note.md"
    assert "shown" in parsed.text
    assert parsed.one("s") == {}


# --- Markdown links and images ------------------------------------------------------------------


def test_relative_markdown_links_resolve_relative_to_the_document() -> None:
    parsed = Elements(render("[other](other.md#Part) and [spaced](<my file.md>) and [gone](nope.md)\n"))
    other, spaced, gone = parsed.all("a")
    assert other["href"] == "#/d/work/other.md?h=Part"
    assert other["data-anchor"] == "Part"
    assert spaced["href"] == "#/d/work/my%20file.md"
    assert "missing" in classes(gone)
    assert gone["data-target"] == "nope.md"


def test_relative_images_go_through_file_url_and_missing_ones_load_nothing() -> None:
    found, missing = Elements(render("![a](img/a.png) ![b](img/none.png)\n")).all("img")
    assert found["src"] == "/api/file?path=work/img/a.png"
    assert found["alt"] == "a"
    assert "src" not in missing
    assert missing["data-target"] == "img/none.png"


def test_fragment_links_become_in_page_anchors() -> None:
    link = Elements(render("[up](#intro-part)\n")).one("a")
    assert link["data-anchor"] == "intro-part"
    assert link["href"] == "#"


# --- structure ----------------------------------------------------------------------------------


def test_frontmatter_is_shown_apart_and_lines_keep_their_numbers() -> None:
    html = render("---\ntitle: T\ntags: [a]\n---\n# Heading\n\ntext\n")
    parsed = Elements(html)
    assert parsed.one("div") == {"class": "properties", "data-line": "1"}
    assert [row.get("scope") for row in parsed.all("th")] == ["row", "row"]
    assert "title" in parsed.text
    assert "T" in parsed.text
    assert not parsed.all("pre")
    assert "title: T" not in html
    assert parsed.one("h1")["data-line"] == "5"
    assert parsed.one("p")["data-line"] == "7"
    assert not parsed.all("hr")


def test_an_unclosed_frontmatter_is_ordinary_text() -> None:
    parsed = Elements(render("---\ntitle: T\n"))
    assert not parsed.all("pre")
    assert parsed.one("hr")


def test_crlf_text_renders_like_lf() -> None:
    assert render("# A\r\n\r\ntext [[Note]]\r\n") == render("# A\n\ntext [[Note]]\n")


def test_tables_strikethrough_and_task_lists() -> None:
    html = render("| k | v |\n|:--|--:|\n| a | 1 |\n\n~~gone~~\n\n- [x] done\n- [ ] todo\n")
    parsed = Elements(html)
    assert parsed.one("table")["data-line"] == "1"
    assert len(parsed.all("td")) == 2
    assert parsed.one("s") == {}
    boxes = parsed.all("input")
    assert [("checked" in box) for box in boxes] == [True, False]
    assert all("disabled" in box for box in boxes)


def test_inline_tags_are_marked_but_not_in_code_or_headings_markers() -> None:
    parsed = Elements(render("# Title\n\nA #project/alpha note, C# and #2024 and `#code`.\n"))
    spans = parsed.all("span")
    assert spans == [{"class": "tag", "data-tag": "project/alpha"}]


def test_doc_href_encodes_path_and_anchor() -> None:
    assert doc_href("work/a b.md") == "#/d/work/a%20b.md"
    assert doc_href("work/a.md", "Set up & go") == "#/d/work/a.md?h=Set%20up%20%26%20go"


def test_render_document_resolves_within_the_folder() -> None:
    resolver = LinkResolver(
        {"Home.md": [], "notes/Plan.md": ["The plan"], "notes/Other.md": []}, ["notes/pic.png"]
    )
    html = render_document(
        "[[Plan]] [[The plan]] [rel](Other.md) [up](../Home.md) ![[pic.png]] ![](pic.png) [name](Plan)\n",
        path="work/notes/Other.md",
        resolver=resolver,
        file_url=file_url,
    )
    parsed = Elements(html)
    plan, alias, rel, up, name = parsed.all("a")
    assert plan["data-path"] == alias["data-path"] == "work/notes/Plan.md"
    assert rel["data-path"] == "work/notes/Other.md"
    assert up["data-path"] == "work/Home.md"
    # A Markdown link resolves only as a relative path, never by name.
    assert "missing" in classes(name)
    assert [img["src"] for img in parsed.all("img")] == ["/api/file?path=work/notes/pic.png"] * 2


def test_obsidian_block_ids_are_not_shown() -> None:
    html = render_markdown(
        "A paragraph. ^b15695\n\n- item ^item-1\n\n`code ^kept`\n\nprice 2^10\n",
        resolve_link=lambda _: None,
        file_url=lambda p: p,
    )
    assert "^b15695" not in html
    assert "^item-1" not in html
    assert "A paragraph.</p>" in html
    assert "code ^kept" in html
    assert "2^10" in html
