"""The version history in a real browser against a real `ragdown serve`: a document's History panel (who
made each version and when, diffs between two versions or against the current text, Restore after a
confirmation), a deleted document's page, the folder's Trash with Restore, and read-only mode."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from anyio.from_thread import start_blocking_portal

from ragdown.core.config import Settings
from ragdown.http.serve import build_app
from tests.conftest import isolated_env, write
from tests.http.conftest import APP_URL, TOKEN, PortalTransport
from tests.web.conftest import OpenPage, UiServer, browser_missing, start_ui_server

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")

if browser_missing() is None:
    from playwright.sync_api import expect

FIRST = "# Journal\n\nThe first entry.\n"
SECOND = '# Journal\n\nThe second entry, <img src="x" onerror="window.__pwned = 1">.\n'
OUTSIDE = "# Journal\n\nRewritten in another editor, outside ragdown.\n"


def api_ok(server: UiServer, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
    answer = server.api(method, path, **kwargs)
    assert answer.status_code in (200, 201), answer.text
    body: dict[str, Any] = answer.json()
    return body


def save(server: UiServer, path: str, text: str) -> dict[str, Any]:
    return api_ok(server, "POST", "/api/doc", json={"path": path, "text": text, "overwrite": True})


def edit_outside(server: UiServer, path: str, text: str) -> None:
    """Change a file on disk, then write another one through the API, whose sync records the change
    (the test server has no watcher)."""
    write(server.docs, path, text)
    save(server, "work/history-sync.md", f"# Sync\n\nAfter {path}: {len(text)}.\n")


@contextmanager
def app_client(home: Path, docs: Path) -> Iterator[httpx.Client]:
    """The app `ragdown serve` runs on `docs`, in this process (its event loop in a thread of its own: the
    browser's holds this one), through a client that sends its token; its engine stopped at the end."""
    environ = isolated_env(
        home,
        RAGDOWN_HOST="127.0.0.1",
        RAGDOWN_DOCS_DIR=str(docs),
        RAGDOWN_DATA_DIR=str(home / "data"),
        RAGDOWN_TOKEN=TOKEN,
    )
    app = build_app(Settings.from_env(environ))
    with (
        start_blocking_portal("asyncio", name="ragdown-app") as portal,
        portal.wrap_async_context_manager(app.lifespan(app)),
    ):
        engine = app.runtime.engine
        deadline = time.monotonic() + 90
        while not (engine.wait_ready(0) and engine.last_sync and not engine.syncing):
            assert engine.error is None, f"the engine could not start: {engine.error}"
            assert time.monotonic() < deadline, "the app never finished its first sync"
            time.sleep(0.02)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        transport = PortalTransport(portal, app)
        with httpx.Client(base_url=APP_URL, headers=headers, timeout=30, transport=transport) as client:
            yield client


def row(page: Page, version: int) -> Locator:
    return page.locator(f"#history-panel .version-row[data-version='{version}']")


def open_history(page: Page) -> None:
    page.click("#history-button")
    expect(page.locator("#history-button")).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#history-panel")).to_be_visible()


def test_history_lists_versions_diffs_them_and_restores_one(ui_server: UiServer, open_page: OpenPage) -> None:
    path = "work/Journal.md"
    save(ui_server, path, FIRST)
    # The second version through the UI's editor, the third on disk.
    page = open_page(ui_server, f"/#/e/{path}")
    page.locator("#editor-source").fill(SECOND)
    page.click("#save-button")
    expect(page.locator("#save-state")).to_have_text("Saved")
    edit_outside(ui_server, path, OUTSIDE)

    page.goto(f"/#/d/{path}")
    expect(page.locator("#preview")).to_contain_text("Rewritten in another editor")
    open_history(page)
    expect(page).to_have_url(re.compile(r"#/d/work/Journal\.md\?history=1$"))
    expect(page.locator("#history-panel .version-row")).to_have_count(3)
    expect(page.locator("#history-panel .version-no")).to_have_text(["v3", "v2", "v1"])
    expect(row(page, 3).locator(".version-who")).to_have_text("an edit outside ragdown")
    expect(row(page, 2).locator(".version-who")).to_have_text("you (web)")
    expect(row(page, 1).locator(".version-who")).to_have_text("you (web)")
    expect(row(page, 1)).to_contain_text("created")
    expect(row(page, 3)).to_contain_text("current text")
    expect(row(page, 3).locator("time")).to_contain_text("just now")
    expect(row(page, 3).locator("time")).to_have_attribute("datetime", re.compile(r"^\d{4}-\d\d-\d\dT.*Z$"))
    # The current text is not offered for restore; the others are.
    expect(row(page, 3).locator(".version-restore")).to_have_count(0)
    expect(row(page, 2).locator(".version-restore")).to_have_count(1)

    # Two versions: the older is `from`.
    compare = page.locator("#history-compare")
    expect(compare).to_be_disabled()
    row(page, 2).locator(".version-check").check()
    expect(compare).to_have_text("Compare v2 with the current text")
    row(page, 1).locator(".version-check").check()
    expect(compare).to_have_text("Compare v1 with v2")
    compare.click()
    diff = page.locator("#history-diff")
    expect(diff.locator("h3")).to_have_text("Changes: v1 → v2")
    expect(diff.locator(".diff-del")).to_have_text(["-The first entry."])
    expect(diff.locator(".diff-add")).to_have_text(
        ['+The second entry, <img src="x" onerror="window.__pwned = 1">.']
    )
    expect(diff.locator(".diff-stat")).to_have_text("+1 −1")
    assert diff.locator("img").count() == 0
    assert page.evaluate("window.__pwned") is None

    # One version: against the text on disk.
    row(page, 2).locator(".version-check").uncheck()
    expect(compare).to_have_text("Compare v1 with the current text")
    compare.click()
    expect(diff.locator("h3")).to_have_text("Changes: v1 → the current text")
    expect(diff.locator(".diff-file").nth(1)).to_contain_text("(on disk)")
    expect(diff.locator(".diff-add")).to_have_text(["+Rewritten in another editor, outside ragdown."])

    # A version's own changes, from the one before it.
    row(page, 3).get_by_role("button", name="Changes in v3").click()
    expect(diff.locator("h3")).to_have_text("Changes: v2 → v3")
    expect(diff.locator(".diff-del")).to_contain_text(["-The second entry"])

    # Restore asks first; cancelling changes nothing.
    row(page, 1).get_by_role("button", name="Restore this version (v1)").click()
    dialog = page.locator("dialog")
    expect(dialog).to_contain_text("Restore version 1?")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    assert (ui_server.docs / path).read_text() == OUTSIDE

    row(page, 1).get_by_role("button", name="Restore this version (v1)").click()
    page.locator("dialog").get_by_role("button", name="Restore").click()
    expect(page.locator("#toasts")).to_contain_text("Restored version 1 (saved as version 4).")
    expect(page.locator("#preview")).to_contain_text("The first entry.")
    expect(page.locator("#preview")).not_to_contain_text("Rewritten in another editor")
    assert (ui_server.docs / path).read_text() == FIRST
    # The view reloaded with its History still open, the restore on top, recorded as the web's.
    expect(page.locator("#history-panel .version-row")).to_have_count(4)
    expect(row(page, 4)).to_contain_text("restored")
    expect(row(page, 4).locator(".version-who")).to_have_text("you (web)")
    expect(row(page, 4)).to_contain_text("current text")
    history = api_ok(ui_server, "GET", "/api/history", params={"path": path})
    assert (history["versions"][0]["who"], history["versions"][0]["event"]) == ("web", "restored")

    # Closing the panel takes `history` out of the address and gives the focus back.
    page.click("#history-close")
    expect(page.locator("#history-panel")).to_have_count(0)
    expect(page.locator("#history-button")).to_be_focused()
    expect(page).to_have_url(re.compile(r"#/d/work/Journal\.md$"))


def test_a_restore_over_a_newer_change_asks_again(ui_server: UiServer, open_page: OpenPage) -> None:
    path = "work/Raced.md"
    save(ui_server, path, "# Raced\n\nOne.\n")
    save(ui_server, path, "# Raced\n\nTwo.\n")
    page = open_page(ui_server, f"/#/d/{path}?history=1")
    expect(page.locator("#history-panel .version-row")).to_have_count(2)
    save(ui_server, path, "# Raced\n\nThree, saved after the page opened.\n")
    row(page, 1).get_by_role("button", name="Restore this version (v1)").click()
    page.locator("dialog").get_by_role("button", name="Restore").click()
    dialog = page.locator("dialog")
    expect(dialog).to_contain_text("The document changed meanwhile")
    dialog.get_by_role("button", name="Restore anyway").click()
    expect(page.locator("#toasts")).to_contain_text("Restored version 1")
    expect(page.locator("#preview")).to_contain_text("One.")
    assert (ui_server.docs / path).read_text() == "# Raced\n\nOne.\n"


def test_a_document_never_changed_has_no_earlier_versions(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server, "/#/d/work/Backups.md")
    open_history(page)
    expect(page.locator("#history-empty")).to_have_text(
        "No earlier versions yet: a version is kept from the first change on."
    )


def test_who_made_a_version_in_words(ui_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(ui_server)
    expect(page.locator(".folder-card")).to_have_count(2)
    words = page.evaluate(
        """async () => {
          const { whoText } = await import("/history.js");
          return [
            whoText({ who: "ragdown_write", session: "s1" }),
            whoText({ who: "ragdown_edit" }),
            whoText({ who: "web" }),
            whoText({ who: "external" }),
            whoText({ who: "before" }),
          ];
        }"""
    )
    assert words == [
        "an agent (ragdown_write, session s1)",
        "an agent (ragdown_edit)",
        "you (web)",
        "an edit outside ragdown",
        "the text before ragdown's first change",
    ]


def test_a_deleted_document_is_restored_from_the_folders_trash(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    path = "work/Trashed.md"
    save(ui_server, path, "# Trashed\n\nSoon deleted.\n")
    page = open_page(ui_server, f"/#/d/{path}")
    page.locator(".doc-actions").get_by_role("button", name="Delete").click()
    dialog = page.locator("dialog")
    expect(dialog).to_contain_text("moves to the folder's Trash")
    dialog.get_by_role("button", name="Delete").click()
    expect(page).to_have_url(re.compile(r"#/f/work$"))
    assert not (ui_server.docs / path).exists()

    page.click("#trash-link")
    expect(page).to_have_url(re.compile(r"#/f/work/trash$"))
    expect(page.locator("h1")).to_have_text("Trash of work")
    item = page.locator(".trash-item[data-path='work/Trashed.md']")
    expect(item).to_contain_text("Trashed.md")
    expect(item).to_contain_text("Deleted just now")
    expect(item.locator(".trash-who")).to_have_text("you (web)")
    item.get_by_role("button", name="Restore Trashed.md").click()
    dialog = page.locator("dialog")
    expect(dialog).to_contain_text("Restore Trashed.md?")
    dialog.get_by_role("button", name="Restore").click()
    expect(page).to_have_url(re.compile(r"#/d/work/Trashed\.md$"))
    expect(page.locator("#doc-title")).to_have_text("Trashed")
    expect(page.locator("#toasts")).to_contain_text("Trashed.md is back.")
    assert (ui_server.docs / path).read_text() == "# Trashed\n\nSoon deleted.\n"
    expect(page.locator(".doc-item[data-path='work/Trashed.md']")).to_have_count(1)

    page.goto("/#/f/work")
    page.click("#folder-trash")
    expect(page).to_have_url(re.compile(r"#/f/work/trash$"))
    expect(page.locator(".trash-item[data-path='work/Trashed.md']")).to_have_count(0)


def test_the_trash_deletes_one_document_forever_or_empties_after_asking(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    for name in ("P1", "P2", "P3"):
        save(ui_server, f"other/{name}.md", f"# {name}\n")
        api_ok(ui_server, "DELETE", "/api/doc", params={"path": f"other/{name}.md"})
    page = open_page(ui_server, "/#/f/other/trash")
    expect(page.locator(".trash-item")).to_have_count(3)
    page.get_by_role("button", name="Delete P1.md forever").click()
    dialog = page.locator("dialog")
    expect(dialog).to_contain_text("cannot be undone")
    dialog.get_by_role("button", name="Cancel").click()
    expect(page.locator(".trash-item")).to_have_count(3)
    page.get_by_role("button", name="Delete P1.md forever").click()
    page.locator("dialog").get_by_role("button", name="Delete forever").click()
    expect(page.locator("#toasts")).to_contain_text("P1.md is deleted forever.")
    expect(page.locator(".trash-item")).to_have_count(2)
    assert ui_server.api("GET", "/api/history", params={"path": "other/P1.md"}).status_code == 404

    page.locator(".trash-empty").click()
    dialog = page.locator("dialog")
    expect(dialog).to_contain_text("Every document in this folder's trash is deleted for good")
    dialog.get_by_role("button", name="Empty trash").click()
    expect(page.locator("#trash-empty")).to_be_visible()
    expect(page.locator(".trash-empty")).to_be_hidden()
    assert api_ok(ui_server, "GET", "/api/trash", params={"folder": "other"})["trash"] == []


def test_a_deleted_documents_page_shows_its_versions_and_restores_it(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    path = "work/Gone.md"
    save(ui_server, path, "# Gone\n\nVersion one.\n")
    save(ui_server, path, "# Gone\n\nVersion two.\n")
    api_ok(ui_server, "DELETE", "/api/doc", params={"path": path})
    page = open_page(ui_server, f"/#/d/{path}")
    expect(page.locator("#doc-title")).to_have_text("Deleted: Gone.md")
    expect(page.locator(".deleted-page .notice")).to_contain_text("it is in the folder's Trash")
    expect(page.locator("#history-panel .version-row")).to_have_count(3)  # two saves, then the delete
    # No current text to compare with: one version alone is not enough.
    row(page, 1).locator(".version-check").check()
    expect(page.locator("#history-compare")).to_be_disabled()
    row(page, 2).locator(".version-check").check()
    page.click("#history-compare")
    expect(page.locator("#history-diff .diff-add")).to_have_text(["+Version two."])
    page.click("#restore-deleted")
    page.locator("dialog").get_by_role("button", name="Restore").click()
    expect(page.locator("#doc-title")).to_have_text("Gone")
    expect(page.locator("#preview")).to_contain_text("Version two.")
    assert (ui_server.docs / path).read_text() == "# Gone\n\nVersion two.\n"


def test_read_only_shows_the_history_and_trash_without_restore(tmp_path: Path, open_page: OpenPage) -> None:
    docs = tmp_path / "docs"
    (docs / "notes").mkdir(parents=True)
    (docs / "notes/a.md").write_text("# A\n\nFirst.\n")
    (docs / "notes/b.md").write_text("# B\n\nDeleted later.\n")
    # Versions made by a writable server first (its app in this process, stopped before the read-only
    # one starts); the history lives beside the documents.
    (tmp_path / "writer").mkdir()
    (tmp_path / "reader").mkdir()
    with app_client(tmp_path / "writer", docs) as writer:
        saved = writer.post(
            "/api/doc", json={"path": "notes/a.md", "text": "# A\n\nSecond.\n", "overwrite": True}
        )
        assert saved.status_code in (200, 201), saved.text
        deleted = writer.delete("/api/doc", params={"path": "notes/b.md"})
        assert deleted.status_code in (200, 201), deleted.text
    server = start_ui_server(tmp_path / "reader", docs, RAGDOWN_READ_ONLY="true")
    try:
        page = open_page(server, "/#/d/notes/a.md")
        open_history(page)
        expect(page.locator("#history-panel .version-row")).to_have_count(2)
        expect(page.locator("#history-panel .version-restore")).to_have_count(0)
        row(page, 1).locator(".version-check").check()
        page.click("#history-compare")
        expect(page.locator("#history-diff .diff-del")).to_have_text(["-First."])
        page.click("#trash-link")
        expect(page.locator(".trash-item[data-path='notes/b.md']")).to_be_visible()
        expect(page.locator(".trash-restore")).to_have_count(0)
        expect(page.locator(".trash-page .notice")).to_contain_text("read-only")
        page.goto("/#/d/notes/b.md")
        expect(page.locator("#doc-title")).to_have_text("Deleted: b.md")
        expect(page.locator("#restore-deleted")).to_have_count(0)
        expect(page.locator("#history-panel .version-restore")).to_have_count(0)
    finally:
        server.stop()


def test_recent_changes_lists_who_and_sections_with_a_diff_a_click_away(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    path = "work/changes/Plan.md"
    save(ui_server, path, "# Plan\n\n## Goals\n\nShip it.\n\n## Risks\n\nNone yet.\n")
    save(ui_server, path, "# Plan\n\n## Goals\n\nShip it.\n\n## Risks\n\nThe database may fill up.\n")
    page = open_page(ui_server, "/#/f/work")
    page.click("#folder-changes")
    expect(page).to_have_url(re.compile(r"#/f/work/changes$"))
    mine = page.locator("#changes-list .change[data-path='changes/Plan.md']")
    expect(mine).to_have_count(2)
    newest = mine.first
    expect(newest.locator(".change-event")).to_have_text("changed")
    expect(newest.locator(".change-meta")).to_contain_text("by you (web)")
    expect(newest.locator(".change-meta")).to_contain_text("v2 · ")
    expect(newest.locator(".change-sections")).to_have_text("Sections: Risks")
    expect(mine.last.locator(".change-event")).to_have_text("created")
    expect(mine.last.locator(".change-diff")).to_have_count(0)
    newest.locator(".change-diff").click()
    expect(newest.locator(".diff-add")).to_contain_text("+The database may fill up.")
    expect(newest.locator(".diff-del")).to_contain_text("-None yet.")
    page.screenshot(path=str(ui_server.docs.parent / "changes.png"))
    newest.locator(".change-diff").click()
    expect(newest.locator(".diff-add")).to_have_count(0)
