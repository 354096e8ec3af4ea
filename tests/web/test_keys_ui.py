"""Settings → Keys in a real browser: a key made for one folder, its secret shown once with a copy
button, the key working against the server, listed, and revoked."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import write
from tests.web.conftest import OpenPage, UiServer, browser_missing, start_ui_server

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")

if browser_missing() is None:
    from playwright.sync_api import expect


@pytest.fixture(scope="module")
def keys_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    home = tmp_path_factory.mktemp("keys-ui")
    docs = home / "docs"
    write(docs, "work/a.md", "# A\n")
    write(docs, "home/b.md", "# B\n")
    write(docs, "home/.ragdown.json", json.dumps({"title": "Home"}))
    server = start_ui_server(home, docs)
    yield server
    server.stop()


def test_make_copy_and_revoke_a_key(keys_server: UiServer, open_page: OpenPage) -> None:
    page = open_page(keys_server, "/#/settings")
    page.locator("#keys-link").click()
    expect(page.locator("h1")).to_have_text("Keys")
    expect(page.locator(".empty")).to_have_text("No keys yet.")
    page.fill("#key-name", "laptop agent")
    page.select_option("#key-role", "write")
    page.locator('#key-folders input[data-folder="work"]').check()
    page.locator("#create-key").click()
    secret = page.locator("#key-secret").inner_text().strip()
    assert secret.startswith("rdk_")
    page.locator("#copy-secret").click()
    expect(page.locator("#new-key .copy-status")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == secret

    key = {"Authorization": f"Bearer {secret}"}
    folders = httpx.get(f"{keys_server.url}/api/folders", headers=key, timeout=10).json()["folders"]
    assert [f["name"] for f in folders] == ["work"]

    page.get_by_role("button", name="Done: show the list").click()
    row = page.locator("#keys-table tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator("td").nth(0)).to_have_text("laptop agent")
    expect(row.locator("td").nth(2)).to_have_text("work")
    assert secret not in page.content()  # shown once: never again
    row.get_by_role("button", name="Revoke").click()
    page.get_by_role("button", name="Revoke", exact=True).last.click()
    expect(page.locator(".empty")).to_have_text("No keys yet.")
    assert httpx.get(f"{keys_server.url}/api/folders", headers=key, timeout=10).status_code == 401

    page.fill("#key-name", "nothing picked")
    page.locator("#create-key").click()
    expect(page.locator("#key-form .field-error")).to_have_text("Pick at least one folder, or every folder.")


def test_a_key_sees_the_admins_controls_shown_not_offered(keys_server: UiServer, open_page: OpenPage) -> None:
    made = keys_server.api("POST", "/api/keys", json={"name": "writer", "folders": ["work"], "role": "write"})
    assert made.status_code == 201, made.text
    secret = made.json()["secret"]
    page = open_page(keys_server, "/#/f/work/settings", token=secret)
    expect(
        page.locator(".notice", has_text="Only the admin (RAGDOWN_TOKEN) changes a folder")
    ).to_be_visible()
    expect(page.locator(".settings-page input:not([disabled])")).to_have_count(0)
    expect(page.get_by_role("button", name="Rename")).to_have_count(0)
    expect(page.locator("#new-folder")).to_be_hidden()
    page.goto("/#/settings")
    expect(
        page.locator(".notice", has_text="Only the admin (RAGDOWN_TOKEN) changes server settings")
    ).to_be_visible()
    expect(page.locator("#save-settings")).to_have_count(0)
    page.goto("/#/")
    expect(page.locator(".folder-card")).to_have_count(1)
    expect(page.get_by_role("button", name="New folder")).to_have_count(0)
    page.goto("/#/d/work/a.md")  # a write key is offered the document's changes
    expect(page.locator("#edit-button")).to_be_enabled()
    expect(page.locator("#server-state .badge", has_text="read key")).to_have_count(0)
    admin = open_page(keys_server, "/#/f/work/settings")  # the admin's page offers them
    expect(admin.locator(".notice", has_text="Only the admin")).to_have_count(0)
    expect(admin.locator("#new-folder")).to_be_visible()
    admin.goto("/#/")
    expect(admin.get_by_role("button", name="New folder")).to_have_count(2)  # the sidebar's + too


def test_a_read_key_sees_the_writes_shown_not_offered(keys_server: UiServer, open_page: OpenPage) -> None:
    assert keys_server.api("POST", "/api/doc", json={"path": "work/gone.md", "text": "# Gone\n"}).is_success
    assert keys_server.api("DELETE", "/api/doc", params={"path": "work/gone.md"}).is_success  # in the trash
    made = keys_server.api("POST", "/api/keys", json={"name": "reader", "folders": ["work"], "role": "read"})
    assert made.status_code == 201, made.text
    page = open_page(keys_server, "/#/d/work/a.md", token=made.json()["secret"])
    expect(page.locator("#doc-title")).to_have_text("A")
    hint = re.compile(r"^Your key only reads: editing, uploading, renaming, deleting and restoring")
    for control in ("#edit-button", "#move-button", "#delete-button", "#upload-button", "#new-document"):
        expect(page.locator(control)).to_be_disabled()
        expect(page.locator(control)).to_have_attribute("title", hint)
    expect(page.locator("#edit-button")).not_to_have_attribute("accesskey", "e")  # no shortcut to the editor
    expect(page.locator("#server-state .badge", has_text="read key")).to_have_attribute("title", hint)
    page.goto("/#/e/work/a.md")  # the editor typed in the address: nothing to type into and lose
    expect(page.locator("h1")).to_have_text("Read-only")
    expect(page.locator(".notice")).to_have_text(hint)
    expect(page.locator("#editor-source")).to_have_count(0)
    page.goto("/#/f/work")
    expect(page.locator(".page").get_by_role("button", name="New document")).to_be_disabled()
    page.goto("/#/f/work/trash")
    expect(page.locator(".trash-restore")).to_be_disabled()
    page.goto("/#/d/work/gone.md")
    expect(page.locator("#restore-deleted")).to_be_disabled()
    page.goto("/#/")
    expect(page.get_by_role("button", name="New folder")).to_have_count(0)
