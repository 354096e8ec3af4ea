"""The web UI's navigation in a real browser: the folder tree (lazy, with counts, the open document
revealed), one search over every folder with facets and marked snippets, the files the index skipped,
a key's expiry, a folder's quotas, the phone layout, and the page changes: dialogs and toasts closed,
Back after "Keep editing", the banner while the server cannot be reached.

Set RAGDOWN_UI_SHOTS to a folder to keep screenshots of the desktop and phone layouts there."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import write
from tests.web.conftest import OpenPage, UiServer, browser_missing, start_ui_server

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")

if browser_missing() is None:
    from playwright.sync_api import expect

FLAT = 205  # more than a tree level shows at first (doc-tree.js's PAGE, 200)


def shot(page: Page, name: str) -> None:
    folder = os.environ.get("RAGDOWN_UI_SHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=False)


@pytest.fixture(scope="module")
def nav_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    home = tmp_path_factory.mktemp("nav-ui")
    docs = home / "docs"
    write(
        docs,
        "work/Backups.md",
        "# Backups\n\nBackups run nightly with restic.\n\n## Restore\n\n"
        + "".join(f"Filler paragraph {n} about nothing in particular.\n\n" for n in range(60))
        + "## Deep\n\nRun restic restore latest twice to be sure.\n",
    )
    write(
        docs,
        "work/Home.md",
        "# Home\n\nThe restic <b>setup</b> is drawn here:\n\n![[diagram.png]]\n\nSee [[Backups]].\n",
    )
    write(docs, "work/projects/alpha/Plan.md", "# Plan\n\nThe alpha plan.\n")
    write(docs, "work/projects/Beta.md", "# Beta\n\nThe beta project.\n")
    write(docs, "work/Guard.md", "# Guard\n\nGuarded text.\n")
    write(docs, "work/blob.md", b"# Blob\n\x00\x01\x02 binary\n")
    write(docs, "other/Restic.md", "# Restic elsewhere\n\nAnother restic note, in another folder.\n")
    write(docs, "other/.ragdown.json", json.dumps({"title": "Other things"}))
    for n in range(FLAT):
        write(docs, f"big/n{n:03}.md", f"# Note {n}\n")
    write(docs, "big/sub/inner.md", "# Inner\n")
    server = start_ui_server(home, docs)
    yield server
    server.stop()


def test_the_folder_tree_opens_lazily_counts_and_reveals_the_open_document(
    nav_server: UiServer, open_page: OpenPage
) -> None:
    page = open_page(nav_server, "/#/f/work")
    projects = page.locator(".tree-toggle[data-dir='projects']")
    expect(projects).to_contain_text("projects")
    expect(projects.locator(".tree-count")).to_have_text("2")
    expect(page.locator(".doc-item[data-path='work/projects/Beta.md']")).to_have_count(0)  # closed: not drawn
    projects.click()
    expect(projects).to_have_attribute("aria-expanded", "true")
    expect(page.locator(".doc-item[data-path='work/projects/Beta.md']")).to_be_visible()
    expect(page.locator(".tree-toggle[data-dir='projects/alpha'] .tree-count")).to_have_text("1")
    projects.click()
    expect(page.locator(".doc-item[data-path='work/projects/Beta.md']")).to_have_count(0)
    shot(page, "tree-desktop")

    # A document opened from elsewhere is shown in the tree, its subfolders opened.
    page.goto("/#/d/work/projects/alpha/Plan.md")
    plan = page.locator(".doc-item[data-path='work/projects/alpha/Plan.md']")
    expect(plan).to_be_visible()
    expect(plan).to_have_class(re.compile(r"\bactive\b"))

    # A long level shows its first 200 entries; the rest on demand, and an open one at once.
    page.goto("/#/f/big")
    expect(page.locator(".pane-count")).to_have_text(f"{FLAT + 1} documents")
    expect(page.locator(".tree-toggle[data-dir='sub'] .tree-count")).to_have_text("1")
    expect(page.locator("#pane-results .doc-item")).to_have_count(199)  # the subfolder is the 200th
    more = page.locator(".tree-more button")
    expect(more).to_contain_text("6 left")
    more.click()
    expect(page.locator("#pane-results .doc-item")).to_have_count(FLAT)
    page.goto("/#/d/big/n204.md")
    page.reload()
    expect(page.locator(".doc-item[data-path='big/n204.md']")).to_be_visible()


def test_one_search_over_every_folder_with_facets_and_marked_snippets(
    nav_server: UiServer, open_page: OpenPage
) -> None:
    page = open_page(nav_server, "/#/f/work")
    page.fill("#global-search", "restic")
    page.press("#global-search", "Enter")
    expect(page).to_have_url(re.compile(r"#/search\?q=restic$"))
    facets = page.locator("#search-facets .facet")
    expect(facets.first).to_contain_text("Every folder")
    expect(facets.filter(has_text="Other things").locator(".facet-count")).to_have_text("1")
    expect(facets.filter(has_text="work")).to_have_count(1)
    expect(page.locator("#search-results .hit-lines", has_text="other/Restic.md")).to_have_count(1)
    expect(page.locator("#search-results .hit-lines", has_text="work/")).not_to_have_count(0)
    # The query's words are marked; the text is never read as HTML; an embed shows as a chip.
    home = page.locator(".hit", has=page.locator(".hit-lines", has_text="work/Home.md"))
    expect(home.locator("mark").first).to_have_text(re.compile("restic", re.I))
    expect(home.locator(".hit-text")).to_contain_text("<b>setup</b>")
    expect(home.locator(".hit-embed")).to_have_text("↳ diagram.png")
    assert page.locator(".hit-text b").count() == 0
    shot(page, "search-desktop")

    page.locator("#search-facets .facet[data-folder='other']").click()
    expect(page).to_have_url(re.compile(r"folder=other"))
    expect(page.locator("#search-results .hit")).to_have_count(1)
    expect(page.locator("#search-facets .facet.active")).to_contain_text("Other things")
    page.go_back()
    expect(page.locator("#search-facets .facet.active")).to_contain_text("Every folder")

    # A hit far down its document opens with its line in view.
    page.fill("#global-search", "restore latest twice")
    page.press("#global-search", "Enter")
    deep = page.locator(".hit", has=page.locator(".hit-lines", has_text="work/Backups.md")).first
    deep.click()
    marked = page.locator("#preview .line-hit")
    expect(marked.first).to_contain_text("twice")
    expect(marked.first).to_be_in_viewport()


def test_skipped_files_are_listed_with_their_reason(nav_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(nav_server, "/#/f/work")
    skipped = page.locator("#skipped-files")
    expect(skipped.locator("summary")).to_have_text("1 file not indexed")
    skipped.locator("summary").click()
    row = skipped.locator("li[data-path='work/blob.md']")
    expect(row).to_contain_text("blob.md")
    expect(row.locator(".skip-reason")).to_contain_text("binary content")


def test_a_key_made_with_an_expiry_and_folder_quotas_saved(nav_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(nav_server, "/#/keys")
    page.fill("#key-name", "week key")
    page.fill("#key-expires", "7")
    page.locator("#key-all").check()
    page.locator("#create-key").click()
    expect(page.locator("#key-secret")).to_be_visible()
    keys = nav_server.api("GET", "/api/keys").json()["keys"]
    made = next(key for key in keys if key["name"] == "week key")
    assert abs(made["expires_at"] - (time.time() + 7 * 86400)) < 3600

    page.goto("/#/f/work/settings")
    page.fill("#folder-quota-max_files", "0")
    page.locator("#save-quotas").click()
    expect(page.locator("#folder-quota-max_files-error")).to_contain_text("between 1 and")
    settings = nav_server.docs / "work/.ragdown.json"
    assert not settings.exists() or "max_files" not in settings.read_text()
    page.fill("#folder-quota-max_files", "500")
    page.fill("#folder-quota-max_file_bytes", "100000")
    page.locator("#save-quotas").click()
    expect(page.locator("#quota-usage")).to_contain_text("/500")
    saved = json.loads((nav_server.docs / "work/.ragdown.json").read_text())
    assert saved["max_files"] == 500
    assert saved["max_file_bytes"] == 100000
    expect(page.locator("#folder-quota-max_files")).to_have_value("500")


def test_phone_layout_puts_the_opened_note_first(nav_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(nav_server, "/#/usage")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/#/d/work/Home.md")
    expect(page.locator("#preview h1")).to_have_text("Home")
    main = page.locator("#main").bounding_box()
    pane = page.locator("#folder-pane").bounding_box()
    sidebar = page.locator(".sidebar").bounding_box()
    assert main is not None
    assert pane is not None
    assert sidebar is not None
    assert main["y"] < pane["y"]
    assert main["y"] < sidebar["y"]
    expect(page.locator("#preview h1")).to_be_in_viewport()
    shot(page, "doc-phone")
    page.goto("/#/f/work")
    expect(page.locator(".tree-toggle[data-dir='projects']")).to_be_in_viewport()
    shot(page, "folder-phone")


def test_page_changes_close_dialogs_and_toasts_and_back_keeps_its_entry(
    nav_server: UiServer, open_page: OpenPage
) -> None:
    page = open_page(nav_server, "/#/d/work/Home.md")
    expect(page.locator("#preview h1")).to_have_text("Home")
    page.locator("#new-document").click()
    expect(page.locator("dialog")).to_be_visible()
    page.evaluate("import('/dialogs.js').then((m) => m.toast('A note from the last page'))")
    expect(page.locator(".toast")).to_be_visible()
    page.evaluate("window.location.hash = '#/f/other'")  # as a link would
    expect(page.locator("dialog")).to_have_count(0)
    page.goto("/#/d/work/Home.md")
    expect(page.locator(".toast")).to_have_count(0)

    page.goto("/#/e/work/Guard.md")
    source = page.locator("#editor-source")
    expect(source).to_contain_text("Guarded", use_inner_text=True)
    source.press("Control+End")
    page.keyboard.type(" unsaved")
    page.go_back()
    leave = page.locator("dialog", has_text="Leave without saving?")
    leave.get_by_role("button", name="Keep editing").click()
    expect(page).to_have_url(re.compile(r"#/e/work/Guard\.md$"))
    expect(source).to_contain_text("unsaved", use_inner_text=True)
    page.go_back()
    page.locator("dialog", has_text="Leave without saving?").get_by_role("button", name="Leave").click()
    expect(page).to_have_url(re.compile(r"#/d/work/Home\.md$"))
    expect(page.locator("#preview h1")).to_have_text("Home")


def test_a_banner_while_the_server_cannot_be_reached(nav_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(nav_server, "/#/f/work")
    expect(page.locator(".tree-toggle[data-dir='projects']")).to_be_visible()
    page.route("**/api/**", lambda route: route.abort())
    page.locator(".folder-link[data-folder=other]").click()
    banner = page.locator("#banner")
    expect(banner).to_contain_text("The server cannot be reached")
    page.unroute("**/api/**")
    expect(banner).not_to_contain_text("The server cannot be reached")
