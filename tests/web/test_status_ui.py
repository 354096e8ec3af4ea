"""What the server says about itself, in a real browser: the settings pages built from the server's
schema (its labels and bounds), the banner for an embedder that stands in or cannot load and for a
failed sync, the indexing progress in the top bar, and hits found by their words alone."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import TEST_ENV, write
from tests.web.conftest import OpenPage, UiServer, browser_missing, start_ui_server

if TYPE_CHECKING:
    from playwright.sync_api import Page, Route

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")

if browser_missing() is None:
    from playwright.sync_api import expect

UNREACHABLE_HUB = "http://127.0.0.1:9"  # nothing listens: a model download fails at once
LEXICAL_TITLE = "Found by its words alone: no embedder scored the query"


def server_settings(docs: Path) -> dict[str, Any]:
    path = docs / ".ragdown-server.json"
    loaded: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    return loaded


def folder_hook(docs: Path, folder: str) -> object:
    path = docs / folder / ".ragdown.json"
    return json.loads(path.read_text()).get("hook") if path.exists() else None


def save_refused(page: Page, control: str, message: str, *, toasted: bool = True) -> None:
    """The field is marked with the message under it; the first field refused is in a toast too."""
    expect(page.locator(f"{control}-error")).to_have_text(message)
    expect(page.locator(control)).to_have_attribute("aria-invalid", "true")
    expect(page.locator(".toast-error", has_text=message)).to_have_count(1 if toasted else 0)


def patch_status(page: Page, change: Callable[[dict[str, Any]], None]) -> None:
    """Every /api/status the page fetches from now on, changed by `change`."""

    def handle(route: Route) -> None:
        response = route.fetch()
        body: dict[str, Any] = response.json()
        change(body)
        route.fulfill(response=response, json=body)

    page.route("**/api/status", handle)


@pytest.fixture
def hubless(tmp_path: Path) -> Iterator[Callable[[], UiServer]]:
    """`start()`: `ragdown serve` over one small folder with no model hub to download from and an
    empty model cache, so only the installed offline model can load. The test sets RAGDOWN_EMBEDDER
    (or leaves it out) in the test environment first."""
    servers: list[UiServer] = []

    def start() -> UiServer:
        docs = tmp_path / "docs"
        write(docs, "notes/Backups.md", "# Backups\n\nBackups run nightly with restic.\n")
        models = tmp_path / "models"
        models.mkdir()
        server = start_ui_server(tmp_path, docs, HF_ENDPOINT=UNREACHABLE_HUB, RAGDOWN_MODELS=str(models))
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


# --- the settings pages follow the server's schema ----------------------------------------------


def test_server_settings_show_and_check_the_servers_bounds(ui_server: UiServer, open_page: OpenPage) -> None:
    schema: list[dict[str, Any]] = ui_server.api("GET", "/api/status").json()["settings"]["schema"]
    page = open_page(ui_server, "/#/settings")
    for entry in schema:
        key = str(entry["key"])
        row = page.locator(f"[data-setting='setting-{key.replace('.', '-')}']")
        expect(row.locator(".setting-label")).to_have_text(entry["label"])
        expect(row.locator(".field-help")).to_have_text(entry["help"])
    expect(page.locator("#setting-embedder")).to_have_attribute("list", "setting-embedder-options")
    expect(page.locator("#setting-embedder-options option[value=minilm]")).to_have_count(1)
    expect(page.locator("#setting-text_limit")).to_have_attribute("min", "0")
    expect(page.locator("#setting-follow_links")).to_have_attribute("max", "50")
    expect(page.locator("#setting-hook-top_k")).to_have_attribute("max", "50")
    expect(page.locator("#setting-hook-min_score")).to_have_attribute("step", "0.01")
    expect(page.locator("#setting-hook-max_chars")).to_have_attribute("step", "1")
    top_k = page.input_value("#setting-hook-top_k")

    try:
        page.fill("#setting-text_limit", "0")
        page.fill("#setting-follow_links", "51")
        page.fill("#setting-hook-top_k", "51")
        page.click("#save-settings")
        save_refused(page, "#setting-follow_links", "Follow links: give a whole number between 0 and 50.")
        save_refused(
            page,
            "#setting-hook-top_k",
            "Sections per prompt: give a whole number between 1 and 50.",
            toasted=False,
        )
        expect(page.locator("#setting-follow_links")).to_be_focused()
        assert "follow_links" not in server_settings(ui_server.docs)

        page.fill("#setting-follow_links", "50")
        expect(page.locator("#setting-follow_links")).not_to_have_attribute("aria-invalid", "true")
        page.fill("#setting-hook-top_k", top_k)
        page.click("#save-settings")
        expect(page.locator("[data-setting=setting-follow_links]")).to_contain_text("Saved here")
        expect(page.locator("[data-setting=setting-text_limit]")).to_contain_text("Saved here")
        saved = server_settings(ui_server.docs)
        assert (saved.get("text_limit"), saved.get("follow_links"), saved.get("hook")) == (0, 50, None)
        expect(page.locator("#setting-text_limit")).to_have_value("0")
        expect(page.locator(".field-error")).to_have_count(0)
    finally:
        ui_server.api("PATCH", "/api/settings", json={"text_limit": None, "follow_links": None})


def test_a_folders_hook_defaults_are_checked_against_the_servers_bounds(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    page = open_page(ui_server, "/#/f/work/settings")
    top_k = page.locator("#folder-hook-top_k")
    expect(top_k).to_have_attribute("max", "50")
    expect(page.locator("#folder-hook-min_ratio")).to_have_attribute("step", "0.01")
    before = folder_hook(ui_server.docs, "work")
    top_k.fill("51")
    page.get_by_role("button", name="Save hook defaults").click()
    save_refused(page, "#folder-hook-top_k", "Sections per prompt: give a whole number between 1 and 50.")
    assert folder_hook(ui_server.docs, "work") == before


# --- the banner and the top bar -----------------------------------------------------------------


def test_progress_and_a_failed_sync_show_until_the_next_poll_clears_them(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    page = open_page(ui_server)
    expect(page.locator(".folder-card").first).to_be_visible()
    expect(page.locator("#banner")).to_be_hidden()
    injected: dict[str, Any] = {
        "syncing": True,
        "progress": {"files_done": 120, "files_total": 1730, "chunks": 300},
        "sync_error": "database or disk is full",
    }
    patch_status(page, lambda body: body.update(injected))
    page.reload()
    total = page.evaluate("new Intl.NumberFormat().format(1730)")
    expect(page.locator("#server-state .badge-busy")).to_have_text(f"indexing 120 of {total} files…")
    failed = page.locator("#banner .notice-error")
    expect(failed).to_have_text("The last sync failed: database or disk is full")

    # Once the files are in, the step it is at (PostgreSQL building its HNSW graph).
    injected["progress"] = {
        "files_done": 1730,
        "files_total": 1730,
        "chunks": 300,
        "step": "building the vector index",
    }
    page.reload()
    expect(page.locator("#server-state .badge-busy")).to_have_text("building the vector index…")

    # Before the first file is counted it only says it is indexing.
    injected["progress"] = {"files_done": 0, "files_total": 0, "chunks": 0}
    page.reload()
    expect(page.locator("#server-state .badge-busy")).to_have_text("indexing…")

    # The real status, on the next poll: no sync, no error.
    page.unroute("**/api/status")
    expect(page.locator("#server-state .badge-busy")).to_have_count(0)
    expect(page.locator("#banner")).to_be_hidden()
    expect(failed).to_have_count(0)


def test_the_offline_model_stands_in_for_the_default_one_and_says_so(
    hubless: Callable[[], UiServer], open_page: OpenPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(TEST_ENV, "RAGDOWN_EMBEDDER")  # none chosen: the default, granite-small
    server = hubless()
    status = server.process.status()
    assert status["embedder"] == "minilm"
    assert "embedder_error" not in status
    assert "the installed offline model minilm is used instead" in str(status["embedder_notice"])
    assert "could not download granite-small" in str(status["embedder_notice_reason"])

    page = open_page(server, "/#/f/notes")
    banner = page.locator("#banner .notice-warn")
    # One plain sentence, the error that kept the default out left to the log and Settings.
    expect(banner.locator(".banner-text")).to_have_text(
        "The default embedder granite-small could not load, so the installed offline model minilm is used "
        "instead. Choose the embedder in Settings"
    )
    expect(page.locator("#banner .notice-error")).to_have_count(0)
    page.fill("#search-input", "restic backups")
    page.keyboard.press("Enter")
    expect(page.locator(".hit .hit-sim").first).to_have_text(re.compile(r"^[01]\.\d\d$"))
    # Every page has it.
    banner.get_by_role("link", name="Choose the embedder in Settings").click()
    expect(page.locator("h1")).to_have_text("Server settings")
    expect(banner).to_be_visible()
    # Settings says where the embedder in use comes from: not RAGDOWN_EMBEDDER, which is not set.
    expect(page.locator("#setting-embedder")).to_have_value("minilm")
    origin = page.locator("[data-setting=setting-embedder] .setting-origin")
    expect(origin).to_have_text("Installed offline model: the default granite-small could not load")
    expect(origin).to_have_attribute("title", re.compile("could not download granite-small"))
    expect(page.locator("[data-setting=setting-text_limit] .setting-origin")).to_have_text("Default")
    # Dismissed, it stays away for the session (a reload), and the page starts under the top bar.
    banner.get_by_role("button", name="Dismiss this notice").click()
    expect(page.locator("#banner")).to_be_hidden()
    page.reload()
    expect(page.locator("h1")).to_have_text("Server settings")
    expect(page.locator("#banner")).to_be_hidden()


def test_an_embedder_that_cannot_load_is_an_error_and_hits_are_lexical(
    hubless: Callable[[], UiServer], open_page: OpenPage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(TEST_ENV, "RAGDOWN_EMBEDDER", "granite-small")  # chosen: never swapped
    server = hubless()
    status = server.process.status()
    assert status["embedder"] is None
    assert "embedder_notice" not in status
    hits = server.api("GET", "/api/search", params={"q": "restic", "folder": "notes"}).json()["hits"]
    assert [hit["similarity"] for hit in hits] == [None]

    page = open_page(server, "/#/f/notes")
    error = page.locator("#banner .notice-error")
    expect(error).to_contain_text("The embedder cannot load: could not download granite-small")
    expect(error).to_contain_text("RAGDOWN_EMBEDDER=minilm")
    expect(page.locator("#banner .notice-warn")).to_have_count(0)
    page.fill("#search-input", "restic")
    page.keyboard.press("Enter")
    similarity = page.locator(".hit .hit-sim").first
    expect(similarity).to_have_text("lexical")
    expect(similarity).to_have_attribute("title", LEXICAL_TITLE)


def test_a_docs_dir_that_is_a_vault_is_said_in_a_banner_that_can_be_dismissed(
    ui_server: UiServer, open_page: OpenPage
) -> None:
    marker = ui_server.docs / ".obsidian"
    marker.mkdir()
    try:
        page = open_page(ui_server, "/#/f/work")
        banner = page.locator("#banner .notice-warn")
        expect(banner).to_contain_text("looks like an Obsidian vault (.obsidian/ at its root)")
        expect(banner).to_contain_text(f"RAGDOWN_DOCS_DIR={ui_server.docs.resolve()} ragdown stdio")
        banner.get_by_role("button", name="Dismiss this notice").click()
        expect(page.locator("#banner")).to_be_hidden()
        page.reload()
        expect(page.locator(".doc-item").first).to_be_visible()
        expect(page.locator("#banner")).to_be_hidden()
    finally:
        marker.rmdir()
