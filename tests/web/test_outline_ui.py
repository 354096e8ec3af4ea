"""The document view in a real browser: the outline beside the document (click to jump, the section
being read marked, a collapsed box on a narrow page), Obsidian callouts (a folded one opens on click),
footnotes, and search-hit snippets as plain text."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import write
from tests.web.conftest import OpenPage, UiServer, browser_missing, start_ui_server

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")

if browser_missing() is None:
    from playwright.sync_api import expect


def section_text(topic: str, paragraphs: int = 3) -> str:
    """About a thousand tokens on `topic`: enough that the section tree keeps it a section of its own."""
    sentence = " ".join(
        f"The {topic} step {index} explains how the {topic} part works, with enough words to be long."
        for index in range(14)
    )
    return "\n\n".join([sentence] * paragraphs)


def guide() -> str:
    """A long document with three heading levels, big sections and one small one merged into its parent."""
    parts = ["# Guide\n\nWhat this guide covers.\n"]
    for section, subsections in (
        ("Install", ["Linux", "macOS", "Windows"]),
        ("Configure", ["Files", "Environment"]),
        ("Troubleshooting", ["Logs", "Crashes"]),
    ):
        parts.append(f"## {section}\n\nAbout {section.lower()}.\n")
        parts.extend(f"### {name}\n\n{section_text(name)}\n" for name in subsections)
    parts.append("## Odds and ends\n\nA little more.\n\n### Tiny corner\n\nA small merged section.\n")
    return "\n".join(parts)


CALLOUTS = """---
title: Callouts
tags: [ofm, demo]
---
# Callouts

> [!tip] Try this first
> A tip with **bold** text and <b>raw html</b>.

> [!warning]- Hidden until asked
> The folded body of the warning.

A claim that needs a source.[^src]

[^src]: The source of the claim.
"""

LINKED = "# Linked\n\nThe zebra quartz lives in [[Target|the target note]] and **bold** words.\n"


@pytest.fixture(scope="module")
def ofm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    reason = browser_missing()
    if reason:
        pytest.skip(reason)
    home = tmp_path_factory.mktemp("ofm")
    docs = home / "docs"
    write(docs, "work/Guide.md", guide())
    write(docs, "work/Callouts.md", CALLOUTS)
    write(docs, "work/Linked.md", LINKED)
    write(docs, "work/Target.md", "# Target\n\nWhere the link goes.\n")
    server = start_ui_server(home, docs)
    yield server
    server.stop()


def outline_of(server: UiServer, path: str) -> dict[str, Any]:
    response = server.api("GET", "/api/outline", params={"path": path})
    assert response.status_code == 200, response.text
    tree: dict[str, Any] = response.json()["tree"]
    return tree


def titles(node: dict[str, Any]) -> list[str]:
    return [node["title"], *(title for child in node.get("children", []) for title in titles(child))]


def test_the_guide_is_deep_enough_for_the_outline(ofm_server: UiServer) -> None:
    """The fixture itself: its sections stay sections, and the small one is merged into key items."""
    tree = outline_of(ofm_server, "work/Guide.md")
    assert {"Install", "Linux", "Troubleshooting", "Crashes"} <= set(titles(tree))
    assert "Tiny corner" not in titles(tree)


def test_the_outline_lists_the_sections_and_a_click_scrolls_to_one(
    ofm_server: UiServer, open_page: OpenPage
) -> None:
    page = open_page(ofm_server, "/#/d/work/Guide.md")
    outline = page.get_by_role("navigation", name="Outline")
    expect(outline).to_be_visible()
    expect(outline.locator(".outline-link", has_text="Install")).to_be_visible()
    # A merged section's headings show under it, muted.
    expect(outline.locator(".outline-key")).to_have_text(["Tiny corner"])

    target = page.locator("#preview h3", has_text="Crashes")
    expect(target).not_to_be_in_viewport()
    entry = outline.get_by_role("link", name="Crashes", exact=True)
    entry.click()
    expect(target).to_be_in_viewport()
    expect(entry).to_have_attribute("aria-current", "location")
    # The link is a real one: its address opens the document at the section's line.
    assert "#/d/work/Guide.md?line=" in (entry.get_attribute("href") or "")


def test_the_outline_works_from_the_keyboard_and_follows_the_scroll(
    ofm_server: UiServer, open_page: OpenPage
) -> None:
    page = open_page(ofm_server, "/#/d/work/Guide.md")
    outline = page.get_by_role("navigation", name="Outline")
    entry = outline.get_by_role("link", name="Environment", exact=True)
    entry.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#preview h3", has_text="Environment")).to_be_in_viewport()
    expect(entry).to_have_attribute("aria-current", "location")

    page.locator("#preview h3", has_text="Linux").evaluate("el => el.scrollIntoView({block: 'start'})")
    expect(outline.get_by_role("link", name="Linux", exact=True)).to_have_attribute(
        "aria-current", "location"
    )
    expect(entry).not_to_have_attribute("aria-current", "location")


def test_on_a_narrow_page_the_outline_is_a_collapsed_box(ofm_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ofm_server, "/#/d/work/Guide.md")
    page.set_viewport_size({"width": 700, "height": 900})
    outline = page.get_by_role("navigation", name="Outline")
    toggle = outline.get_by_role("button", name="Outline")
    expect(toggle).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(outline.locator(".outline-tree")).to_be_hidden()
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    entry = outline.get_by_role("link", name="Logs", exact=True)
    expect(entry).to_be_visible()
    entry.click()
    expect(page.locator("#preview h3", has_text="Logs")).to_be_in_viewport()


def test_a_document_without_sections_shows_no_outline(ofm_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ofm_server, "/#/d/work/Target.md")
    expect(page.locator("#preview h1")).to_have_text("Target")
    expect(page.locator("#doc-outline")).to_be_hidden()


def test_callouts_render_and_a_folded_one_opens_on_click(ofm_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ofm_server, "/#/d/work/Callouts.md")
    preview = page.locator("#preview")
    tip = preview.locator(".callout[data-callout=tip]")
    expect(tip.locator(".callout-title")).to_have_text("Try this first")
    expect(tip.locator(".callout-content")).to_contain_text("A tip with bold text and <b>raw html</b>.")
    expect(tip.locator("b")).to_have_count(0)

    folded = preview.locator("details.callout[data-callout=warning]")
    body = folded.locator(".callout-content")
    expect(body).to_be_hidden()
    folded.locator("summary").click()
    expect(body).to_be_visible()
    expect(body).to_have_text("The folded body of the warning.")

    # The frontmatter is a table of properties, never raw YAML.
    properties = preview.locator(".properties")
    expect(properties.locator("th")).to_have_text(["title", "tags"])
    expect(properties.locator(".tag")).to_have_text(["#ofm", "#demo"])
    expect(preview).not_to_contain_text("tags: [")


def test_a_footnote_reference_scrolls_to_its_note_and_back(ofm_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ofm_server, "/#/d/work/Callouts.md")
    preview = page.locator("#preview")
    note = preview.locator(".footnote-item")
    expect(note).to_contain_text("The source of the claim.")
    preview.locator(".footnote-ref a").click()
    expect(note).to_be_in_viewport()
    expect(page).to_have_url(re.compile(r"#/d/work/Callouts\.md$"))
    note.locator(".footnote-backref").click()
    expect(preview.locator(".footnote-ref")).to_be_in_viewport()


def test_search_hit_snippets_are_plain_text(ofm_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ofm_server, "/#/f/work")
    page.fill("#search-input", "zebra quartz")
    hit = page.locator(".hit", has=page.locator(".hit-lines", has_text="Linked.md"))
    snippet = hit.locator(".hit-text")
    expect(snippet).to_contain_text("lives in the target note and bold words")
    expect(snippet).not_to_contain_text("[[")
    expect(snippet).not_to_contain_text("**")


PLAIN_TEXT_CASES = [
    ("## Restore\n\nSee [[Backups#Restore|restoring]].", "Restore See restoring."),
    ("[[notes/Plan]] and [[Note#Setup]] and ![[diagram.png]]", "notes/Plan and Note > Setup and diagram.png"),
    ("[a link](https://example.com/a_(b)) and ![alt](img.png)", "a link and alt"),
    (
        "**bold**, *it*, _under_, snake_case, `code`, ==mark==, ~~gone~~",
        "bold, it, under, snake_case, code, mark, gone",
    ),
    ("> [!tip]- Title\n> body", "Title body"),
    ("- [ ] todo\n- [x] done\n1. one", "todo done one"),
    ("| a | b |\n|---|:-:|\n| [[X\\|shown]] | 2 |", "a b shown 2"),
    ("Text[^1] here. ^block-1\n\n[^1]: The note.", "Text here. The note."),
    ("\\*not emphasis\\* and 2 * 3 and \\[[Note]]", "*not emphasis* and 2 * 3 and [[Note]]"),
]


def test_plain_text_of_markdown(ofm_server: UiServer, open_page: OpenPage) -> None:
    page: Page = open_page(ofm_server, "/#/")
    got = page.evaluate(
        "async (cases) => { const { plainText } = await import('/dom.js');"
        " return cases.map((text) => plainText(text)); }",
        [text for text, _ in PLAIN_TEXT_CASES],
    )
    assert got == [expected for _, expected in PLAIN_TEXT_CASES], json.dumps(got, indent=1)
