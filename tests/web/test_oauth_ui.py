"""OAuth consent in a real browser, as the server's owner gives a Claude.ai connector its key: a client
registers (HTTP), Chromium opens its authorization URL, the owner types the admin token, picks a folder and
the role and allows it; the browser lands on the client's redirect_uri (a listener here), the client
exchanges the code (HTTP) and calls a tool over MCP with the token (the SDK's client). A page of another
origin that posts the same form is refused."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import write
from tests.http.test_oauth import pkce
from tests.web.conftest import UiServer, browser_missing, start_ui_server

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")

if browser_missing() is None:
    from playwright.sync_api import expect


class Callback:
    """The client's redirect_uri: a local HTTP listener that keeps the query of each request to it."""

    def __init__(self) -> None:
        self.queries: list[dict[str, str]] = []
        queries = self.queries

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                asked = urlsplit(self.path)
                if asked.path == "/callback":  # not the browser's /favicon.ico
                    queries.append({k: v[0] for k, v in parse_qs(asked.query).items()})
                body = b"<!doctype html><title>Connected</title><p>You may close this window.</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.url = f"{self.origin}/callback"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture(scope="module")
def oauth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    home = tmp_path_factory.mktemp("oauth-ui")
    docs = home / "docs"
    write(
        docs,
        "work/backups.md",
        "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun restic restore twice.\n",
    )
    write(docs, "work/.ragdown.json", json.dumps({"title": "Work", "mcp": True}))
    write(docs, "private/diary.md", "# Diary\n\nNot for the connector.\n")
    server = start_ui_server(home, docs)
    yield server
    server.stop()


@pytest.fixture
def callback() -> Iterator[Callback]:
    listener = Callback()
    yield listener
    listener.close()


def register(server: UiServer, redirect: str) -> dict[str, str]:
    answer = httpx.post(
        f"{server.url}/register",
        json={
            "redirect_uris": [redirect],
            "client_name": "Browser client",
            "grant_types": ["authorization_code", "refresh_token"],
        },
        timeout=30,
    )
    assert answer.status_code == 201, answer.text
    client: dict[str, str] = answer.json()
    return client


def authorization_url(server: UiServer, client: dict[str, str], redirect: str, challenge: str) -> str:
    return f"{server.url}/authorize?" + urlencode(
        {
            "response_type": "code",
            "client_id": client["client_id"],
            "redirect_uri": redirect,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "browser-state",
            "scope": "read write",
            "resource": f"{server.url}/mcp/work",
        }
    )


async def recall(url: str, token: str) -> tuple[str, set[str], str]:
    """The MCP server's name, its tools, and a search's text, with the OAuth access token."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        assert client.server_info is not None
        tools = {t.name for t in (await client.list_tools()).tools}
        found = await client.call_tool("ragdown_recall", {"query": "restic restore", "top_k": 1})
        assert not found.is_error
        text = "".join(getattr(c, "text", "") for c in found.content)
        return client.server_info.name, tools, text


def test_the_owner_authorizes_a_connector_in_the_browser_and_its_token_calls_a_tool(
    oauth_server: UiServer, callback: Callback, browser: Browser
) -> None:
    server = oauth_server
    client = register(server, callback.url)
    verifier, challenge = pkce()
    context = browser.new_context()
    context.set_default_timeout(15_000)
    try:
        page = context.new_page()
        posts: list[dict[str, str]] = []
        page.on("request", lambda r: posts.append(r.headers) if r.method == "POST" else None)
        page.goto(authorization_url(server, client, callback.url, challenge))
        expect(page.locator("h1")).to_have_text("Allow Browser client?")
        expect(page.locator("legend")).to_have_count(0)  # no folder is shown before the admin token
        page.fill("#token", server.token)
        page.get_by_role("button", name="Continue").click()
        expect(page.locator("legend").first).to_have_text("Folders it may use")
        work = page.locator('input[name="folder"][value="work"]')
        expect(work).to_be_checked()  # the folder of the MCP URL the client asked for
        expect(page.locator('input[name="folder"][value="private"]')).not_to_be_checked()
        expect(page.locator('input[name="role"][value="read"]')).to_be_checked()
        page.get_by_role("button", name="Allow").click()
        page.wait_for_url(f"{callback.url}?**")
        expect(page.locator("p")).to_have_text("You may close this window.")
        # The form was posted with the page's own origin, which the Origin check lets through.
        assert [p.get("origin") for p in posts] == [server.url, server.url]
        assert all("referer" not in p or p["referer"].startswith(server.url) for p in posts)
    finally:
        context.close()

    [back] = callback.queries
    assert back["state"] == "browser-state"
    assert "error" not in back
    exchanged = httpx.post(
        f"{server.url}/token",
        data={
            "grant_type": "authorization_code",
            "code": back["code"],
            "redirect_uri": callback.url,
            "code_verifier": verifier,
            "client_id": client["client_id"],
            "client_secret": client["client_secret"],
        },
        timeout=30,
    )
    assert exchanged.status_code == 200, exchanged.text
    token = exchanged.json()
    assert token["scope"] == "read folder:work"
    # The SDK's MCP client in a thread of its own: the sync playwright holds this thread's event loop.
    with ThreadPoolExecutor(1) as pool:
        name, tools, text = pool.submit(
            asyncio.run, recall(f"{server.url}/mcp/work", token["access_token"])
        ).result()
    assert name == "ragdown-work"
    assert "ragdown_recall" in tools
    assert "ragdown_write_doc" not in tools  # a read grant
    assert "backups.md" in text
    key = {"Authorization": f"Bearer {token['access_token']}"}
    assert httpx.post(f"{server.url}/mcp/private", json={}, headers=key, timeout=30).status_code == 404


def test_a_page_of_another_origin_cannot_post_the_consent_form(
    oauth_server: UiServer, callback: Callback, browser: Browser
) -> None:
    """The admin token and a live request posted from another origin's page (here the client's own): the
    browser sends that origin (or `null`), and the server refuses it and unlocks nothing."""
    server = oauth_server
    client = register(server, callback.url)
    _verifier, challenge = pkce()
    sent = httpx.get(authorization_url(server, client, callback.url, challenge), timeout=30)
    assert sent.status_code == 302, sent.text
    request_id = parse_qs(urlsplit(sent.headers["location"]).query)["request"][0]
    context = browser.new_context()
    context.set_default_timeout(15_000)
    try:
        page = context.new_page()
        page.goto(callback.url)
        with page.expect_response(f"{server.url}/oauth/consent") as answered:
            page.evaluate(
                """([action, request, token]) => {
                    const form = document.createElement("form");
                    form.method = "post";
                    form.action = action;
                    for (const [name, value] of [["request", request], ["step", "token"], ["token", token]]) {
                        const input = document.createElement("input");
                        input.type = "hidden";
                        input.name = name;
                        input.value = value;
                        form.append(input);
                    }
                    document.body.append(form);
                    form.submit();
                }""",
                [f"{server.url}/oauth/consent", request_id, server.token],
            )
        response = answered.value
        assert response.status == 403
        assert response.request.headers["origin"] == callback.origin
        refusal = response.text()
        assert "Cross-origin requests are not allowed" in refusal
        assert 'name="ticket"' not in refusal  # not unlocked: no choice of folders
    finally:
        context.close()
