"""The web UI in a real browser against a real `ragdown serve`: sign-in, folders, search, the
document view, the editor with its conflict prompt, new documents, moves, folder and server
settings, usage, and read-only mode."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.web.conftest import OpenPage, UiServer, browser_missing, start_ui_server

if TYPE_CHECKING:
    from playwright.sync_api import Dialog, Page, Route

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")

if browser_missing() is None:
    from playwright.sync_api import expect


def wait_saved(page: Page) -> None:
    expect(page.locator("#save-state")).to_have_text("Saved")


def eventually(check: Callable[[], bool], timeout: float = 10) -> None:
    """Wait until `check()` holds (for files the server writes after the UI asked)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)


def folder_settings(docs: Path, folder: str) -> dict[str, object]:
    """The folder's `.ragdown.json`, or {} while it is not written yet (a test waits for it)."""
    path = docs / folder / ".ragdown.json"
    loaded: dict[str, object] = json.loads(path.read_text()) if path.exists() else {}
    return loaded


# --- the token ----------------------------------------------------------------------------------


def test_the_token_is_asked_for_once_and_kept(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, token=False)
    page.fill("#token-input", "not-the-token")
    page.click("dialog button[type=submit]")
    expect(page.locator(".dialog-error")).to_have_text("That token was not accepted.")
    page.fill("#token-input", ui_server.token)
    page.click("dialog button[type=submit]")
    expect(page.locator(".folder-card")).to_have_count(2)
    assert page.evaluate("localStorage.getItem('ragdown.token')") == ui_server.token
    page.reload()
    expect(page.locator(".folder-card")).to_have_count(2)
    expect(page.locator("#token-input")).to_have_count(0)


def test_a_rejected_stored_token_is_asked_for_again(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, token="stale-token")
    expect(page.locator("dialog .dialog-error")).to_have_text("That token was not accepted.")
    page.fill("#token-input", ui_server.token)
    page.click("dialog button[type=submit]")
    expect(page.locator(".folder-link")).to_have_count(2)


# --- folders, search, documents -----------------------------------------------------------------


def test_folder_list_shows_titles_badges_and_counts(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server)
    other = page.locator(".folder-link[data-folder=other]")
    expect(other).to_contain_text("Other things")
    expect(other).to_contain_text("MCP off")
    expect(other).to_contain_text("1 file")
    expect(page.locator(".loose-list")).to_contain_text("loose.md")


def test_open_a_folder_search_and_open_a_hit_at_its_line(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server)
    page.click(".folder-link[data-folder=work]")
    expect(page.locator(".doc-item[data-path='work/Backups.md']")).to_be_visible()
    expect(page.locator(".doc-item[data-path='work/old.md']")).to_contain_text("superseded")
    page.keyboard.press("/")
    page.keyboard.type("restore latest twice")
    first = page.locator(".hit").first
    expect(first).to_contain_text("Restore")
    expect(first.locator(".hit-lines")).to_have_text(re.compile(r"^Backups\.md:\d+-\d+$"))
    expect(first.locator(".hit-sim")).to_have_text(re.compile(r"^[01]\.\d\d$"))
    # The list says which number it shows, and that the order is not that number's.
    expect(page.locator(".pane-count")).to_contain_text("ranked by relevance")
    expect(page.locator(".pane-count")).to_contain_text("cosine similarity")
    first.click()
    expect(page).to_have_url(re.compile(r"#/d/work/Backups\.md\?line=\d+"))
    marked = page.locator("#preview .line-hit")
    expect(marked.first).to_contain_text("twice")
    expect(marked.first).to_be_in_viewport()
    # The hits stay beside the document.
    expect(page.locator(".hit.active")).to_have_count(1)


def test_document_view_follows_links_and_shows_embeds_images_and_backlinks(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    page = open_page(ui_server, "/#/d/work/Home.md")
    preview = page.locator("#preview")
    expect(preview.locator("h1")).to_have_text("Home")
    expect(preview.locator(".properties .tag")).to_have_text(["#index"])
    image = preview.locator("img.embed-image")
    expect(image).to_have_attribute("src", re.compile(r"^blob:"))
    page.wait_for_function("document.querySelector('#preview img.embed-image').naturalWidth === 40")
    expect(preview.locator(".embed-note .embed-body")).to_contain_text("twice to be sure")
    expect(preview.locator("a.wikilink.missing")).to_have_text("Nowhere")
    expect(page.locator(".backlink-list")).to_contain_text("Plan")
    preview.locator("a.wikilink", has_text="restoring").click()
    expect(page).to_have_url(re.compile(r"#/d/work/Backups\.md\?h=Restore$"))
    expect(page.locator("#preview h2.line-hit")).to_have_text("Restore")
    page.locator(".backlink-list a.backlink-title").first.click()
    expect(page).to_have_url(re.compile(r"#/d/work/Home\.md$"))


def test_a_note_that_embeds_itself_or_a_loop_of_embeds_is_shown_once(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    for path, text in (
        ("work/loops/Self.md", "# Self\n\nMe, again: ![[Self]]\n"),
        ("work/loops/LoopA.md", "# Loop A\n\nA holds ![[LoopB]]\n"),
        ("work/loops/LoopB.md", "# Loop B\n\nB holds ![[LoopA]]\n"),
    ):
        assert ui_server.api("POST", "/api/doc", json={"path": path, "text": text}).is_success
    page = open_page(ui_server, "/#/d/work/loops/Self.md")
    preview = page.locator("#preview")
    expect(preview.locator(".embed-note")).to_have_count(1)
    expect(preview.locator(".embed-note")).to_contain_text("embeds itself: not shown again")
    page = open_page(ui_server, "/#/d/work/loops/LoopA.md")
    preview = page.locator("#preview")
    expect(preview.locator(".embed-note .embed-body").first).to_contain_text("B holds")
    expect(preview.locator(".embed-note .embed-note")).to_contain_text("embeds itself: not shown again")
    expect(preview.locator(".embed-note .embed-note .embed-note")).to_have_count(0)


def test_a_block_embed_shows_the_block_and_a_heading_embed_its_section(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    for path, text in (
        (
            "work/blocks/Source.md",
            "# Source\n\nFirst paragraph. ^first\n\n- one\n- two ^second\n\n"
            "## Part\n\nIn the part.\n\n## Later\n\nAfter the part.\n",
        ),
        (
            "work/blocks/Host.md",
            "# Host\n\n![[Source#^first]]\n\n![[Source#^second]]\n\n![[Source#Part]]\n\n![[Source#^nothing]]\n",
        ),
    ):
        assert ui_server.api("POST", "/api/doc", json={"path": path, "text": text}).is_success
    page = open_page(ui_server, "/#/d/work/blocks/Host.md")
    bodies = page.locator("#preview .embed-note .embed-body")
    expect(bodies).to_have_count(4)
    expect(bodies.nth(0)).to_have_text("First paragraph.")
    expect(bodies.nth(1).locator("li")).to_have_text(["two"])
    expect(bodies.nth(2).locator("h2")).to_have_text(["Part"])
    expect(bodies.nth(2)).to_contain_text("In the part.")
    expect(bodies.nth(2)).not_to_contain_text("After the part.")
    expect(bodies.nth(3)).to_have_text("No block ^nothing in work/blocks/Source.md.")


def test_a_superseded_document_links_to_its_replacement(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, "/#/d/work/old.md")
    banner = page.locator(".notice-warn")
    expect(banner).to_contain_text("superseded by")
    banner.locator("a.superseded-link").click()
    expect(page.locator("#doc-title")).to_have_text("New embedder")


def test_document_html_never_runs(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, "/#/d/work/Hostile.md")
    preview = page.locator("#preview")
    expect(preview).to_contain_text("<script>window.__pwned = 1</script>")
    expect(preview.locator("script, img[onerror]")).to_have_count(0)
    expect(preview.locator("a", has_text="click me")).to_have_count(0)
    page.get_by_text("[click me]", exact=False).click()
    assert page.evaluate("window.__pwned") is None


def test_a_missing_wikilink_offers_to_create_the_note(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, "/#/d/work/Dangling.md")
    page.locator("#preview a.wikilink.missing").click()
    page.locator("dialog", has_text="No such document").get_by_role("button", name="Create it").click()
    expect(page.locator("#ask-title")).to_have_value("Brand new note")
    page.locator("dialog").get_by_role("button", name="Create", exact=True).click()
    expect(page).to_have_url(re.compile(r"#/e/work/Brand%20new%20note\.md$"))
    page.click("#close-editor")
    page.goto("/#/d/work/Dangling.md")
    expect(page.locator("#preview a.wikilink")).to_have_attribute("data-path", "work/Brand new note.md")


# --- the editor ---------------------------------------------------------------------------------


def test_edit_and_save_with_ctrl_s(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, "/#/d/work/Edit.md")
    page.click("#edit-button")
    source = page.locator("#editor-source")
    expect(source).to_have_text("# Edit\n\nThe first version of Edit.\n", use_inner_text=True)
    source.press("Control+End")
    page.keyboard.type("A second line, see [[Back")
    option = page.locator(".cm-tooltip-autocomplete li").first
    expect(option).to_contain_text("Backups")
    # Chosen with the mouse: CodeMirror ignores Enter in the first 75 ms after the list opens (so a key
    # pressed as it appears is typed, not taken as a choice), which a loaded machine makes this test hit.
    option.click()
    expect(page.locator("#save-state")).to_have_text("Unsaved changes")
    page.click("#tab-preview")
    expect(page.locator("#editor-preview a.wikilink")).to_have_attribute("data-path", "work/Backups.md")
    page.click("#tab-write")
    page.keyboard.press("Control+s")
    wait_saved(page)
    disk = (ui_server.docs / "work/Edit.md").read_text()
    assert disk == "# Edit\n\nThe first version of Edit.\nA second line, see [[Backups]]"
    page.click("#close-editor")
    expect(page.locator("#preview")).to_contain_text("A second line, see Backups")


def test_a_save_the_index_has_not_caught_up_with_says_so(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, "/#/e/work/Edit.md")
    source = page.locator("#editor-source")
    expect(source).not_to_have_text("", use_inner_text=True)
    pending = "the index is still syncing (indexing 12 of 900 files): the change is on disk"

    # As the server answers while a long sync runs (RAGDOWN_WRITE_WAIT passed): the save is made all the same.
    def still_syncing(route: Route) -> None:
        response = route.fetch()
        body = response.json()
        body["sync"] = {"pending": pending}
        route.fulfill(response=response, json=body)

    page.route(
        "**/api/doc",
        lambda route: still_syncing(route) if route.request.method == "POST" else route.fallback(),
    )
    source.press("Control+End")
    page.keyboard.type("Saved while indexing.")
    page.keyboard.press("Control+s")
    wait_saved(page)
    expect(page.locator(".toast")).to_contain_text(
        "Saved. The index is still syncing (indexing 12 of 900 files)"
    )
    assert (ui_server.docs / "work/Edit.md").read_text().endswith("Saved while indexing.")


def test_conflict_prompt_save_over_it(ui_server: UiServer, open_page: OpenPage) -> None:
    path = ui_server.docs / "work/ConflictOver.md"
    page = open_page(ui_server, "/#/e/work/ConflictOver.md")
    source = page.locator("#editor-source")
    expect(source).to_have_text(re.compile("first version"), use_inner_text=True)
    path.write_text("# ConflictOver\n\nTheir version.\n")
    source.fill("# ConflictOver\n\nMy version.\n")
    page.keyboard.press("Control+s")
    prompt = page.locator("dialog[role=alertdialog]")
    expect(prompt).to_contain_text("This file changed on disk since you opened it")
    prompt.get_by_role("button", name="Save over it").click()
    wait_saved(page)
    assert path.read_text() == "# ConflictOver\n\nMy version.\n"
    # The editor now holds the new hash: the next save needs no prompt.
    source.fill("# ConflictOver\n\nMy second version.\n")
    page.keyboard.press("Control+s")
    wait_saved(page)
    assert path.read_text() == "# ConflictOver\n\nMy second version.\n"
    expect(page.locator("dialog")).to_have_count(0)


def test_conflict_prompt_discard_my_edit(ui_server: UiServer, open_page: OpenPage) -> None:
    path = ui_server.docs / "work/ConflictDiscard.md"
    page = open_page(ui_server, "/#/e/work/ConflictDiscard.md")
    source = page.locator("#editor-source")
    expect(source).to_have_text(re.compile("first version"), use_inner_text=True)
    path.write_text("# ConflictDiscard\n\nTheir version.\n")
    source.fill("# ConflictDiscard\n\nMy version.\n")
    page.click("#save-button")
    prompt = page.locator("dialog[role=alertdialog]")
    expect(prompt).to_contain_text("This file changed on disk since you opened it")
    prompt.get_by_role("button", name="Discard my edit").click()
    expect(source).to_have_text("# ConflictDiscard\n\nTheir version.\n", use_inner_text=True)
    wait_saved(page)
    assert path.read_text() == "# ConflictDiscard\n\nTheir version.\n"


def test_a_file_deleted_on_disk_meanwhile_is_said_so_and_can_be_saved_again(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    path = ui_server.docs / "work/gone/Vanishing.md"
    assert ui_server.api(
        "POST", "/api/doc", json={"path": "work/gone/Vanishing.md", "text": "# V\n"}
    ).is_success
    page = open_page(ui_server, "/#/e/work/gone/Vanishing.md")
    source = page.locator("#editor-source")
    expect(source).to_have_text("# V\n", use_inner_text=True)
    path.unlink()
    source.fill("# V\n\nMine.\n")
    page.click("#save-button")
    prompt = page.locator("dialog[role=alertdialog]")
    expect(prompt).to_contain_text("This file was deleted on disk since you opened it")
    prompt.get_by_role("button", name="Save it again").click()
    wait_saved(page)
    assert path.read_text() == "# V\n\nMine.\n"


def test_leaving_with_unsaved_changes_asks_first(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, "/#/e/work/Guard.md")
    source = page.locator("#editor-source")
    expect(source).to_have_text(re.compile("first version"), use_inner_text=True)
    source.press("Control+End")
    page.keyboard.type("unsaved words")
    page.click(".folder-link[data-folder=other]")
    question = page.locator("dialog", has_text="Leave without saving?")
    question.get_by_role("button", name="Keep editing").click()
    expect(page).to_have_url(re.compile(r"#/e/work/Guard\.md$"))
    expect(source).to_have_text(re.compile("unsaved words"), use_inner_text=True)
    page.click(".folder-link[data-folder=other]")
    page.locator("dialog", has_text="Leave without saving?").get_by_role("button", name="Leave").click()
    expect(page).to_have_url(re.compile(r"#/f/other$"))
    assert "unsaved" not in (ui_server.docs / "work/Guard.md").read_text()


def test_closing_the_tab_with_unsaved_changes_asks_first(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, "/#/e/work/Guard.md")
    source = page.locator("#editor-source")
    expect(source).to_have_text(re.compile("Guard"), use_inner_text=True)
    source.press("Control+End")
    page.keyboard.type("more")
    kinds: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        kinds.append(dialog.type)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.close(run_before_unload=True)
    page.wait_for_timeout(500)
    assert kinds == ["beforeunload"]


# --- creating, moving, deleting -----------------------------------------------------------------


def test_new_document_opens_in_the_editor_and_a_taken_name_offers_the_existing_one(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    page = open_page(ui_server, "/#/f/work")
    page.click("#new-document")
    page.fill("#ask-title", "Fresh idea")
    page.fill("#ask-subfolder", "ideas")
    page.locator("dialog").get_by_role("button", name="Create", exact=True).click()
    expect(page).to_have_url(re.compile(r"#/e/work/ideas/Fresh%20idea\.md$"))
    expect(page.locator("#editor-source")).to_have_text("# Fresh idea\n", use_inner_text=True)
    assert (ui_server.docs / "work/ideas/Fresh idea.md").read_text() == "# Fresh idea\n"
    expect(page.locator(".doc-item[data-path='work/ideas/Fresh idea.md']")).to_be_visible()

    page.click("#new-document")
    page.fill("#ask-title", "Fresh idea")
    expect(page.locator("#ask-subfolder")).to_have_value("ideas")  # it starts beside the open document
    page.locator("dialog").get_by_role("button", name="Create", exact=True).click()
    taken = page.locator("dialog", has_text="That name is taken")
    taken.get_by_role("button", name="Open it").click()
    expect(page).to_have_url(re.compile(r"#/d/work/ideas/Fresh%20idea\.md$"))

    page.click("#new-document")  # a title typed as a file name names the file, without a second .md
    page.fill("#ask-title", "Report.md")
    page.locator("dialog").get_by_role("button", name="Create", exact=True).click()
    expect(page).to_have_url(re.compile(r"#/e/work/ideas/Report\.md$"))
    assert (ui_server.docs / "work/ideas/Report.md").read_text() == "# Report\n"


def test_move_rewrites_links_and_lists_them(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, "/#/d/work/MoveMe.md")
    page.get_by_role("button", name="Rename / move").click()
    page.fill("#ask-to", "archive/Moved")
    page.locator("dialog").get_by_role("button", name="Move", exact=True).click()
    moved = page.locator("dialog", has_text="Moved")
    expect(moved).to_contain_text("archive/Moved.md")
    expect(moved.locator(".updated-list")).to_contain_text("Linker.md")
    moved.get_by_role("button", name="OK").click()
    expect(page).to_have_url(re.compile(r"#/d/work/archive/Moved\.md$"))
    assert "[[Moved]]" in (ui_server.docs / "work/Linker.md").read_text()
    assert not (ui_server.docs / "work/MoveMe.md").exists()


def test_delete_a_document_after_confirming(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, "/#/d/work/DeleteMe.md")
    page.locator(".doc-actions").get_by_role("button", name="Delete").click()
    page.locator("dialog").get_by_role("button", name="Delete").click()
    expect(page).to_have_url(re.compile(r"#/f/work$"))
    expect(page.locator(".doc-item[data-path='work/DeleteMe.md']")).to_have_count(0)
    assert not (ui_server.docs / "work/DeleteMe.md").exists()


def test_upload_a_markdown_file(ui_server: UiServer, open_page: OpenPage, tmp_path: Path) -> None:
    upload = tmp_path / "Uploaded note.md"
    upload.write_text("# Uploaded note\n\nFrom disk.\n")
    page = open_page(ui_server, "/#/f/other")
    page.locator(".folder-pane input[type=file]").set_input_files(str(upload))
    expect(page.locator(".doc-item[data-path='other/Uploaded note.md']")).to_be_visible()
    assert (ui_server.docs / "other/Uploaded note.md").read_text() == "# Uploaded note\n\nFrom disk.\n"


def test_create_and_delete_a_folder(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server)
    page.click("#new-folder")
    page.fill("#ask-name", "scratch")
    page.fill("#ask-title", "Scratch pad")
    page.locator("dialog").get_by_role("button", name="Create", exact=True).click()
    expect(page).to_have_url(re.compile(r"#/f/scratch$"))
    expect(page.locator(".folder-link[data-folder=scratch]")).to_contain_text("Scratch pad")
    assert (ui_server.docs / "scratch").is_dir()
    page.click(".pane-actions a:has-text('Settings')")
    delete = page.locator("#delete-folder")
    expect(delete).to_be_disabled()
    page.fill("#delete-confirm", "scratc")
    expect(delete).to_be_disabled()
    page.fill("#delete-confirm", "scratch")
    delete.click()
    expect(page).to_have_url(re.compile(r"#/$"))
    expect(page.locator(".folder-link[data-folder=scratch]")).to_have_count(0)
    assert not (ui_server.docs / "scratch").exists()


def test_delete_a_loose_file(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server)
    page.get_by_role("button", name="Delete loose.md").click()
    page.locator("dialog").get_by_role("button", name="Delete").click()
    expect(page.locator(".loose-list")).to_have_count(0)
    assert not (ui_server.docs / "loose.md").exists()


# --- folder settings and MCP --------------------------------------------------------------------


def test_turn_mcp_on_and_copy_the_config(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, "/#/f/work/settings")
    expect(page.locator("#mcp-switch")).not_to_be_checked()
    page.click("label.switch[for=mcp-switch]")
    expect(page.locator("#mcp-switch")).to_be_checked()
    expect(page.locator(".folder-link[data-folder=work]")).to_contain_text("MCP on")
    eventually(lambda: folder_settings(ui_server.docs, "work").get("mcp") is True)

    endpoint = f"{ui_server.url}/mcp/work"
    command = f'claude mcp add --transport http ragdown-work {endpoint} --header "Authorization: Bearer {ui_server.token}"'
    page.click("[data-copy=mcp-command]")
    expect(page.locator(".copy-status").first).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == command
    assert page.locator("#mcp-command").text_content() == command

    page.click("[data-copy=mcp-json]")
    copied = json.loads(page.evaluate("navigator.clipboard.readText()"))
    assert copied == {
        "mcpServers": {
            "ragdown-work": {
                "type": "http",
                "url": endpoint,
                "headers": {"Authorization": f"Bearer {ui_server.token}"},
            }
        }
    }
    # The endpoint answers now that MCP is on.
    answer = httpx.post(
        endpoint,
        timeout=30,
        headers={
            "Authorization": f"Bearer {ui_server.token}",
            "Accept": "application/json, text/event-stream",
        },
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
    )
    assert answer.status_code == 200


def test_a_save_answered_after_leaving_the_page_does_not_draw_over_the_next_one(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    page = open_page(ui_server, "/#/f/other/settings")
    expect(page.locator("#mcp-switch")).not_to_be_checked()
    held: list[Route] = []
    page.route("**/api/folders/other", lambda route: held.append(route))
    page.click("label.switch[for=mcp-switch]")
    deadline = time.monotonic() + 10
    while not held:  # the route's handler runs while playwright is called: wait through it, not beside it
        assert time.monotonic() < deadline, "the save was never sent"
        page.wait_for_timeout(50)
    page.goto("/#/settings")
    expect(page.locator("#setting-text_limit")).to_be_visible()
    held[0].continue_()
    eventually(lambda: folder_settings(ui_server.docs, "other").get("mcp") is True)
    expect(page.locator(".toast", has_text="MCP is on for this folder.")).to_be_visible()
    expect(page.locator("#setting-text_limit")).to_be_visible()
    expect(page.locator("#mcp-switch")).to_have_count(0)


def test_folder_title_and_hook_defaults(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, "/#/f/other/settings")
    page.fill("#folder-title", "Other notes")
    page.get_by_role("button", name="Save title").click()
    expect(page.locator(".folder-link[data-folder=other]")).to_contain_text("Other notes")
    page.fill("#folder-hook-top_k", "6")
    page.fill("#folder-hook-min_score", "0.5")
    page.get_by_role("button", name="Save hook defaults").click()
    eventually(lambda: folder_settings(ui_server.docs, "other").get("hook") == {"top_k": 6, "min_score": 0.5})
    assert folder_settings(ui_server.docs, "other")["title"] == "Other notes"
    # The save's answer has come back (and the page has taken it) before the next edit: typed earlier, it
    # could go to the form the answer then redraws.
    expect(page.locator(".toast", has_text="Hook defaults saved.")).to_be_visible()
    expect(page.locator("#folder-hook-top_k")).to_have_value("6")
    page.fill("#folder-hook-min_score", "")
    expect(page.locator("#folder-hook-min_score")).to_have_value("")
    page.get_by_role("button", name="Save hook defaults").click()
    eventually(lambda: folder_settings(ui_server.docs, "other").get("hook") == {"top_k": 6})
    expect(page.locator("#folder-hook-min_score")).to_have_value("")


# --- server settings and usage ------------------------------------------------------------------


def test_server_settings_show_where_a_value_comes_from(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, "/#/settings")
    row = page.locator("[data-setting=setting-text_limit]")
    expect(row.locator(".setting-origin")).to_have_text("Default")  # RAGDOWN_TEXT_LIMIT is not set
    expect(page.locator("[data-setting=setting-watch] .setting-origin")).to_have_text("From RAGDOWN_WATCH")
    page.fill("#setting-text_limit", "1500")
    page.click("#save-settings")
    expect(row).to_contain_text("Saved here; the default is 2000")
    assert json.loads((ui_server.docs / ".ragdown-server.json").read_text())["text_limit"] == 1500
    row.get_by_role("button", name="Reset").click()
    expect(row.locator(".setting-origin")).to_have_text("Default")
    expect(page.locator("#setting-text_limit")).to_have_value("2000")


def test_a_minimum_score_at_or_under_the_unrelated_score_is_flagged(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    page = open_page(ui_server, "/#/")
    expect(page.locator(".folder-card").first).to_be_visible()

    # The `hash` embedder has no measured unrelated score: pretend the model in use has one.
    def with_unrelated_score(route: Route) -> None:
        response = route.fetch()
        body = response.json()
        body["settings"]["hook"]["unrelated_score"] = body["settings"]["hook"]["min_score"] + 0.05
        route.fulfill(response=response, json=body)

    page.route("**/api/status", with_unrelated_score)
    page.goto("/#/settings")
    warning = page.locator(".notice-warn", has_text="Minimum score too low")
    expect(warning).to_have_count(1)
    expect(warning).to_contain_text("The hook's minimum score")


def test_usage_sums_up_the_query_log(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, "/#/usage")
    page.get_by_role("button", name="Turn it on").click()
    expect(page.locator(".notice-info")).to_have_count(0)
    page.goto("/#/f/work")
    page.fill("#search-input", "restic snapshots")
    page.keyboard.press("Enter")
    expect(page.locator(".hit").first).to_be_visible()
    page.goto("/#/usage")
    searches = page.locator(".stat", has_text="Searches").locator(".stat-value")
    expect(searches).not_to_have_text("0")
    page.click("#clear-log")
    page.locator("dialog").get_by_role("button", name="Empty it").click()
    expect(searches).to_have_text("0")
    ui_server.api("PATCH", "/api/settings", json={"query_log": None})


# --- read-only ----------------------------------------------------------------------------------


def test_read_only_mode_hides_writes_but_keeps_folder_settings(tmp_path: Path, open_page: OpenPage) -> None:
    docs = tmp_path / "docs"
    (docs / "notes").mkdir(parents=True)
    (docs / "notes/a.md").write_text("# A\n\nText.\n")
    (docs / "stray.md").write_text("# Stray\n")
    server = start_ui_server(tmp_path, docs, RAGDOWN_READ_ONLY="true")
    try:
        page = open_page(server)
        expect(page.locator(".folder-card")).to_have_count(1)
        expect(page.locator("#new-folder")).to_be_hidden()
        expect(page.locator(".loose-list")).to_contain_text("stray.md")
        expect(page.get_by_role("button", name="Delete stray.md")).to_have_count(0)
        page.goto("/#/d/notes/a.md")
        expect(page.locator("#doc-title")).to_have_text("A")
        expect(page.locator("#edit-button")).to_have_count(0)
        expect(page.locator("#upload-button")).to_have_count(0)
        expect(page.locator("#new-document")).to_have_count(0)
        expect(page.locator(".doc-actions button")).to_have_count(0)
        page.goto("/#/f/notes/settings")
        expect(page.locator("#delete-folder")).to_have_count(0)
        expect(page.locator("#folder-name")).to_have_count(0)
        page.click("label.switch[for=mcp-switch]")
        expect(page.locator("#mcp-switch")).to_be_checked()
        eventually(lambda: folder_settings(docs, "notes").get("mcp") is True)
        page.goto("/#/settings")
        expect(page.locator("#setting-text_limit")).to_be_disabled()
        expect(page.locator("#save-settings")).to_have_count(0)
    finally:
        server.stop()


def test_without_a_token_nothing_asks_for_one_and_the_config_has_no_header(
    tmp_path: Path, open_page: OpenPage
) -> None:
    docs = tmp_path / "docs"
    (docs / "open").mkdir(parents=True)
    (docs / "open/a.md").write_text("# A\n")
    server = start_ui_server(tmp_path, docs, secure_local_net=True)
    try:
        page = open_page(server, "/#/f/open/settings", token=False)
        expect(page.locator("#mcp-command")).to_have_text(
            f"claude mcp add --transport http ragdown-open {server.url}/mcp/open"
        )
        config = json.loads(page.locator("#mcp-json").text_content() or "")
        assert config == {"mcpServers": {"ragdown-open": {"type": "http", "url": f"{server.url}/mcp/open"}}}
        expect(page.locator("#token-input")).to_have_count(0)
        expect(page.locator("#sign-out")).to_be_hidden()
    finally:
        server.stop()


# --- diagrams, math, code; the merge of a conflict ----------------------------------------------


def test_diagrams_math_and_code_render_with_libraries_loaded_on_first_use(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    page = open_page(ui_server, "/#/d/work/Backups.md")
    vendored: list[str] = []
    page.on("request", lambda request: vendored.append(request.url.partition("/vendor/")[2]))
    expect(page.locator("#preview h1")).to_have_text("Backups")
    assert not any(vendored)  # a page with no diagram, math or code loads none of their libraries
    page.goto("/#/d/work/Rich.md")
    preview = page.locator("#preview")
    expect(preview.locator(".mermaid-diagram svg")).to_have_count(1)
    expect(preview.locator(".mermaid-diagram")).to_contain_text("Start")
    expect(preview.locator(".math-inline .katex")).to_have_count(1)
    expect(preview.locator("div.math-display .katex-display")).to_have_count(1)
    expect(preview.locator("code.language-python.hljs .hljs-keyword").first).to_have_text("def")
    assert "codemirror.js" not in vendored  # the editor's bundle waits for the editor
    assert {"mermaid.js", "katex.js", "katex.css", "highlight.js", "highlight.css"} <= set(vendored)
    for name, kind in [
        ("mermaid.js", "text/javascript"),
        ("katex.css", "text/css"),
        ("fonts/KaTeX_Main-Regular.woff2", "font/woff2"),
    ]:
        answer = ui_server.api("GET", f"/vendor/{name}")
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith(kind)


def test_a_change_on_disk_while_editing_is_noticed_and_merged_three_ways(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    path = ui_server.docs / "work/Merge.md"
    page = open_page(ui_server, "/#/e/work/Merge.md")
    source = page.locator("#editor-source")
    expect(source).to_have_text(re.compile("First paragraph"), use_inner_text=True)
    source.fill("# Merge\n\nFirst paragraph, mine.\n\nMiddle.\n\nLast paragraph.\n")
    path.write_text("# Merge\n\nFirst paragraph.\n\nMiddle.\n\nLast paragraph, theirs.\n")
    # The notice comes while typing, before any save.
    notice = page.locator("#disk-changed")
    expect(notice).to_contain_text("This file changed on disk while you were editing it")
    notice.get_by_role("button", name="Review and merge").click()
    prompt = page.locator("dialog[role=alertdialog]")
    expect(prompt.locator("#conflict-diff .diff-add")).to_have_text("+Last paragraph, theirs.")
    expect(prompt.locator("#conflict-diff .diff-del")).to_have_text("-Last paragraph.")
    merge = prompt.get_by_role("button", name="Merge and save")
    expect(merge).to_be_focused()  # never "Save over it"
    merge.click()
    wait_saved(page)
    assert path.read_text() == "# Merge\n\nFirst paragraph, mine.\n\nMiddle.\n\nLast paragraph, theirs.\n"
    expect(notice).to_be_empty()

    # Both sides change the same line: the merge goes into the editor with the conflict marked.
    source.fill("# Merge\n\nFirst paragraph, mine.\n\nMiddle, mine.\n\nLast paragraph, theirs.\n")
    path.write_text("# Merge\n\nFirst paragraph, mine.\n\nMiddle, theirs.\n\nLast paragraph, theirs.\n")
    page.keyboard.press("Control+s")
    prompt.get_by_role("button", name="Merge, then resolve").click()
    expect(source).to_contain_text("<<<<<<< yours")
    expect(source).to_contain_text(
        "Middle, mine.||||||| when you opened itMiddle.=======Middle, theirs.>>>>>>> on disk"
    )
    source.fill("# Merge\n\nFirst paragraph, mine.\n\nMiddle, both.\n\nLast paragraph, theirs.\n")
    page.keyboard.press("Control+s")
    wait_saved(page)
    assert (
        path.read_text() == "# Merge\n\nFirst paragraph, mine.\n\nMiddle, both.\n\nLast paragraph, theirs.\n"
    )
