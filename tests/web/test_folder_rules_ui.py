"""A folder's file rules, index.md upkeep and tool set on its settings page, and the advisory lints the
editor shows after a save, in a real browser against a real `ragdown serve`.

Each test makes its own folder through the API, so the tests hold in any order and on any xdist worker."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.web.conftest import OpenPage, UiServer, browser_missing

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")

if browser_missing() is None:
    from playwright.sync_api import expect


def eventually(check: Callable[[], bool], timeout: float = 10) -> None:
    """Wait until `check()` holds (for files the server writes after the UI asked)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)


def api_ok(server: UiServer, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
    answer = server.api(method, path, **kwargs)
    assert answer.status_code in (200, 201), answer.text
    body: dict[str, Any] = answer.json()
    return body


def make_folder(server: UiServer, name: str, docs: dict[str, str]) -> None:
    """A new folder with `docs` (folder-relative path: text), written and indexed through the API."""
    api_ok(server, "POST", "/api/folders", json={"name": name})
    for rel, text in docs.items():
        api_ok(server, "POST", "/api/doc", json={"path": f"{name}/{rel}", "text": text})


def settings_of(docs: Path, folder: str) -> dict[str, Any]:
    path = docs / folder / ".ragdown.json"
    loaded: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    return loaded


def folder_entry(server: UiServer, name: str) -> dict[str, Any]:
    folders = api_ok(server, "GET", "/api/folders")["folders"]
    found: dict[str, Any] = next(f for f in folders if f["name"] == name)
    return found


def listed(page: Page, path: str) -> Any:
    return page.locator(f"#pane-results .doc-item[data-path='{path}']")


def wait_saved(page: Page) -> None:
    expect(page.locator("#save-state")).to_have_text("Saved")


# --- which files count, and index.md ------------------------------------------------------------


def test_exclude_patterns_and_index_md_are_saved_and_excluded_documents_leave_the_list(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    make_folder(
        ui_server,
        "rules",
        {
            "Keep.md": "# Keep\n\nThe note that stays.\n",
            "drafts/Wip.md": "# Work in progress\n\nNot ready.\n",
            "Scratch.tmp.md": "# Scratch\n\nThrown away soon.\n",
        },
    )
    page = open_page(ui_server, "/#/f/rules/settings")
    page.locator(".tree-toggle[data-dir='drafts']").click()  # the folder tree: a subfolder opens on a click
    for path in ("rules/Keep.md", "rules/drafts/Wip.md", "rules/Scratch.tmp.md"):
        expect(listed(page, path)).to_have_count(1)
    expect(page.locator("#files-heading")).to_have_text("Which files count")
    expect(page.locator("section[aria-labelledby=files-heading]")).to_contain_text(
        ".gitignore files at any level, .git/info/exclude and a .ragdownignore at the folder root apply too"
    )

    # One pattern a line; blank lines and the spaces around a pattern go.
    page.get_by_label("Exclude").fill("drafts/\n\n  *.tmp.md  \n")
    page.get_by_role("button", name="Save file rules").click()
    eventually(lambda: settings_of(ui_server.docs, "rules").get("exclude") == ["drafts/", "*.tmp.md"])
    assert "include" not in settings_of(ui_server.docs, "rules")
    expect(page.locator("#folder-exclude")).to_have_value("drafts/\n*.tmp.md")
    expect(page.locator("#folder-include")).to_have_value("")

    page.get_by_label("Keep index.md link lists current after each write made through ragdown").check()
    eventually(lambda: settings_of(ui_server.docs, "rules").get("index_md") is True)
    expect(page.locator("#folder-index-md")).to_be_checked()
    assert settings_of(ui_server.docs, "rules")["exclude"] == ["drafts/", "*.tmp.md"]
    entry = folder_entry(ui_server, "rules")
    assert entry["exclude"] == ["drafts/", "*.tmp.md"]
    assert entry["index_md"] is True

    # A PATCH of the folder's settings does not re-sync the index (only a rename does), and the test
    # server has no watcher (which ignores .ragdown.json anyway): the rules take effect at the next
    # sync, which a document saved through the UI's editor runs. Its answer reloads the folder's list.
    page.goto("/#/e/rules/Keep.md")
    page.locator("#editor-source").fill("# Keep\n\nThe note that stays, edited.\n")
    page.click("#save-button")
    wait_saved(page)
    expect(listed(page, "rules/Keep.md")).to_have_count(1)
    expect(listed(page, "rules/drafts/Wip.md")).to_have_count(0)
    expect(listed(page, "rules/Scratch.tmp.md")).to_have_count(0)
    # Left out of the index, not deleted.
    assert (ui_server.docs / "rules/drafts/Wip.md").is_file()
    assert (ui_server.docs / "rules/Scratch.tmp.md").is_file()
    # index.md upkeep ran after that write: the folder's root index.md was made with its link list.
    index = ui_server.docs / "rules/index.md"
    eventually(index.is_file)
    assert "<!-- ragdown:index-start -->" in index.read_text()
    assert "(./Keep.md)" in index.read_text()

    # Emptying the textarea removes the key.
    page.goto("/#/f/rules/settings")
    page.get_by_label("Exclude").fill("\n  \n")
    page.get_by_role("button", name="Save file rules").click()
    eventually(lambda: "exclude" not in settings_of(ui_server.docs, "rules"))
    assert settings_of(ui_server.docs, "rules").get("index_md") is True
    page.get_by_label("Keep index.md link lists current after each write made through ragdown").uncheck()
    eventually(lambda: settings_of(ui_server.docs, "rules").get("index_md") is False)


def test_include_patterns_are_saved_one_a_line(ui_server: UiServer, open_page: OpenPage) -> None:
    make_folder(ui_server, "only", {"notes/A.md": "# A\n\nIn.\n", "B.md": "# B\n\nOut.\n"})
    page = open_page(ui_server, "/#/f/only/settings")
    page.get_by_label("Include only").fill("notes/\n*.keep.md\n")
    page.get_by_role("button", name="Save file rules").click()
    eventually(lambda: settings_of(ui_server.docs, "only").get("include") == ["notes/", "*.keep.md"])
    page.reload()
    expect(page.locator("#folder-include")).to_have_value("notes/\n*.keep.md")


# --- the tool set -------------------------------------------------------------------------------


def test_an_unknown_or_clashing_tool_set_shows_the_servers_error(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    make_folder(ui_server, "tools", {"Note.md": "# Note\n\nA note.\n"})
    page = open_page(ui_server, "/#/f/tools/settings")
    choice = page.locator("#folder-toolset-choice")
    expect(choice).to_have_value("")
    expect(page.locator("#folder-toolset")).to_be_hidden()

    choice.select_option("custom")
    page.get_by_label("Tool sets, comma-separated").fill("ragdown,nonsense")
    page.get_by_role("button", name="Save tool set").click()
    error = page.locator("#folder-toolset-error")
    expect(error).to_contain_text("unknown tool set 'nonsense'")
    expect(error).to_contain_text("the sets are ragdown, markindex, readmedb, hallouminate")
    expect(page.locator(".toast-error")).to_contain_text("unknown tool set 'nonsense'")
    expect(page.locator("#folder-toolset")).to_have_attribute("aria-invalid", "true")
    assert "toolset" not in settings_of(ui_server.docs, "tools")

    # Two sets with a tool of the same name cannot be offered together.
    page.get_by_label("Tool sets, comma-separated").fill("readmedb, hallouminate")
    expect(page.locator("#folder-toolset")).not_to_have_attribute("aria-invalid", "true")
    page.get_by_role("button", name="Save tool set").click()
    expect(error).to_contain_text("both have a tool named")
    assert "toolset" not in settings_of(ui_server.docs, "tools")

    # A union that holds is saved as the server spells it, and shown as written.
    page.get_by_label("Tool sets, comma-separated").fill("ragdown, markindex")
    page.get_by_role("button", name="Save tool set").click()
    eventually(lambda: settings_of(ui_server.docs, "tools").get("toolset") == "ragdown,markindex")
    expect(page.locator("#folder-toolset-error")).to_have_count(0)
    expect(choice).to_have_value("custom")
    expect(page.locator("#folder-toolset")).to_have_value("ragdown,markindex")
    assert folder_entry(ui_server, "tools")["toolset"] == "ragdown,markindex"

    choice.select_option("markindex")
    page.get_by_role("button", name="Save tool set").click()
    eventually(lambda: settings_of(ui_server.docs, "tools").get("toolset") == "markindex")
    expect(choice).to_have_value("markindex")

    # The default removes the key.
    choice.select_option("")
    page.get_by_role("button", name="Save tool set").click()
    eventually(lambda: "toolset" not in settings_of(ui_server.docs, "tools"))
    assert "toolset" not in folder_entry(ui_server, "tools")


# --- the editor's lint warnings -----------------------------------------------------------------

LINTED = "# Lint\n\nSome text.\n\n### Too deep\n\nSee [[missing]] for more.\n"
CLEAN = "# Lint\n\n## Fine\n\nSee [[Other]] for more.\n"


def test_saving_shows_the_lint_warnings_and_a_clean_save_none(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    make_folder(ui_server, "lint", {"Lint.md": "# Lint\n\nClean.\n", "Other.md": "# Other\n\nThere.\n"})
    page = open_page(ui_server, "/#/e/lint/Lint.md")
    notice = page.locator("#save-warnings .notice")
    expect(page.locator("#editor-source")).to_have_text("# Lint\n\nClean.\n", use_inner_text=True)
    expect(notice).to_have_count(0)

    page.locator("#editor-source").fill(LINTED)
    page.click("#save-button")
    wait_saved(page)
    expect(notice).to_contain_text("Saved, with 2 warnings:")
    expect(page.locator("#save-warnings li")).to_have_text(
        [
            "line 5: heading level jumps from h1 to h3",
            "line 7: [[missing]] links to nothing in this folder",
        ]
    )
    # Advisory only: the text is on disk as written.
    assert (ui_server.docs / "lint/Lint.md").read_text() == LINTED

    # A warning's line number puts the caret on that line of the source.
    page.locator("#save-warnings li").first.get_by_role("button", name="line 5").click()
    selected = page.evaluate("() => String(getSelection())")
    assert selected == "### Too deep"

    page.get_by_role("button", name="Dismiss the warnings").click()
    expect(notice).to_have_count(0)

    # Saved again with the same faults, then fixed: a clean save clears the notice and shows none.
    page.locator("#editor-source").fill(LINTED + "\nMore.\n")
    page.click("#save-button")
    wait_saved(page)
    expect(notice).to_contain_text("Saved, with 2 warnings:")
    page.locator("#editor-source").fill(CLEAN)
    page.click("#save-button")
    wait_saved(page)
    expect(notice).to_have_count(0)
    expect(page.locator(".toast-success")).to_contain_text("Saved.")
    assert (ui_server.docs / "lint/Lint.md").read_text() == CLEAN
