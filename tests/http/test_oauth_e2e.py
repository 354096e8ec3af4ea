"""OAuth end to end: the MCP SDK's own OAuth client (`OAuthClientProvider`, as a hosted client such as
Claude.ai does it) against a real `ragdown serve`: discovery from the 401, dynamic registration, /authorize
with PKCE (the server owner's part, the consent page, driven here with httpx: the admin token, then the
folder and the role; the redirect to the client's redirect_uri is captured instead of served), the token,
an MCP session over streamable HTTP limited to the folder and role granted, a refresh, a restart of the
server (the grant survives it), and revocation."""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from ragdown.access.keys import KeyStore
from tests.conftest import write
from tests.http.conftest import TOKEN, StartServer, ops_folder

pytestmark = pytest.mark.anyio

REDIRECT = "http://127.0.0.1:9/oauth/callback"  # never served: the owner's browser stops at the redirect


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Memory:
    """The SDK's `TokenStorage`, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Owner:
    """The server's owner in a browser: opens the authorization URL, unlocks the consent page with the
    admin token, picks `folder` as a reader, and lands on the client's redirect_uri with the code."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.result: AuthorizationCodeResult | None = None
        self.pages: list[str] = []

    async def redirect(self, authorization_url: str) -> None:
        async with httpx.AsyncClient(timeout=30) as browser:
            sent = await browser.get(authorization_url)
            assert sent.status_code == 302, sent.text
            consent = sent.headers["location"]
            page = await browser.get(consent)
            self.pages.append(page.text)
            request_id = field(page.text, "request")
            unlocked = await browser.post(
                urljoin(consent, "/oauth/consent"),
                data={"request": request_id, "step": "token", "token": TOKEN},
            )
            assert unlocked.status_code == 200, unlocked.text
            self.pages.append(unlocked.text)
            chosen = await browser.post(
                urljoin(consent, "/oauth/consent"),
                data={
                    "request": request_id,
                    "step": "choice",
                    "ticket": field(unlocked.text, "ticket"),
                    "folder": self.folder,
                    "role": "read",
                    "decision": "allow",
                },
            )
            assert chosen.status_code == 303, chosen.text
            back = chosen.headers["location"]
            assert back.startswith(REDIRECT + "?")
            got = {k: v[0] for k, v in parse_qs(urlsplit(back).query).items()}
            self.result = AuthorizationCodeResult(code=got["code"], state=got.get("state"))

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None, "the redirect never reached the client"
        return self.result


def field(page: str, name: str) -> str:
    start = page.index(f'name="{name}" value="') + len(f'name="{name}" value="')
    return page[start : page.index('"', start)]


async def tool_names(client: Client) -> set[str]:
    return {t.name for t in (await client.list_tools()).tools}


def grant_ids(docs: Path) -> list[str]:
    return list(json.loads((docs / ".ragdown" / "oauth.json").read_text())["grants"])


async def test_the_sdk_oauth_client_gets_a_read_key_to_one_folder_refreshes_survives_a_restart_and_is_revoked(
    docs: Path, start_server: StartServer
) -> None:
    ops_folder(docs)
    write(docs, "benchwork/pipettes.md", "# Pipettes\n\nCalibrate them monthly.\n")
    write(docs, "benchwork/.ragdown.json", json.dumps({"title": "Lab", "mcp": True}))
    server = start_server(docs)
    storage = Memory()
    owner = Owner("ops")
    oauth = OAuthClientProvider(
        server_url=f"{server.url}/mcp/ops",
        client_metadata=OAuthClientMetadata(
            redirect_uris=[AnyUrl(REDIRECT)],
            client_name="SDK client",
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="client_secret_post",
        ),
        storage=storage,
        redirect_handler=owner.redirect,
        callback_handler=owner.callback,
    )
    async with (
        httpx2.AsyncClient(auth=oauth, timeout=60) as http,
        Client(streamable_http_client(f"{server.url}/mcp/ops", http_client=http)) as client,
    ):
        assert client.server_info is not None
        assert client.server_info.name == "ragdown-ops"
        names = await tool_names(client)
        assert "ragdown_recall" in names
        assert "ragdown_read_doc" in names
        assert not names & {"ragdown_remember", "ragdown_write_doc", "ragdown_delete_doc"}  # a read grant
        found = await client.call_tool("ragdown_recall", {"query": "restore twice", "top_k": 1})
        assert not found.is_error
        assert "backups.md" in "".join(getattr(c, "text", "") for c in found.content)
        refused = await client.call_tool("ragdown_remember", {"title": "x", "content": "y"})
        assert refused.is_error

        first = storage.tokens
        assert first is not None
        assert first.refresh_token is not None
        assert first.scope == "read folder:ops"
        assert "benchwork" not in owner.pages[0]  # the folders show only once the admin token was given
        assert 'value="benchwork"' in owner.pages[1]
        [record] = KeyStore(docs).list(kind="oauth")
        assert (record.client, record.role, record.folders) == ("SDK client", "read", ("ops",))

        # The grant is one folder's: another answers as a folder that is not there.
        raw = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {first.access_token}"})
        assert raw.post("/mcp/benchwork", json={}).status_code == 404

        # The hour is up (as the client sees it): it refreshes, and both old tokens stop working.
        oauth.context.token_expiry_time = time.time() - 1
        assert "ragdown_recall" in await tool_names(client)
        second = storage.tokens
        assert second is not None
        assert second.access_token != first.access_token
        assert second.refresh_token not in (None, first.refresh_token)
        assert raw.post("/mcp/ops", json={}).status_code == 401
        anonymous = httpx.Client(base_url=server.url)
        assert storage.client is not None
        creds = {"client_id": storage.client.client_id, "client_secret": storage.client.client_secret or ""}
        replayed = anonymous.post(
            "/token", data={"grant_type": "refresh_token", "refresh_token": first.refresh_token, **creds}
        )
        assert (replayed.status_code, replayed.json()["error"]) == (400, "invalid_grant")

    # A restart (another port: the issuer changes, the grant in <docs>/.ragdown/oauth.json does not).
    server.stop()
    server = start_server(docs)
    anonymous = httpx.Client(base_url=server.url)
    assert second.refresh_token is not None
    renewed = anonymous.post(
        "/token", data={"grant_type": "refresh_token", "refresh_token": second.refresh_token, **creds}
    )
    assert renewed.status_code == 200, renewed.text
    third = renewed.json()
    key = httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {third['access_token']}"})
    listed = key.post(
        "/mcp/ops",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"},
    )
    assert listed.status_code == 200, listed.text
    assert "ragdown_recall" in listed.text
    assert "ragdown_remember" not in listed.text

    # Revocation (RFC 7009): the access token ends the whole grant, refresh token included.
    assert grant_ids(docs) != []
    revoked = anonymous.post("/revoke", data={"token": third["access_token"], **creds})
    assert revoked.status_code == 200
    assert key.post("/mcp/ops", json={}).status_code == 401
    dead = anonymous.post(
        "/token", data={"grant_type": "refresh_token", "refresh_token": third["refresh_token"], **creds}
    )
    assert dead.json()["error"] == "invalid_grant"
    assert grant_ids(docs) == []
    assert KeyStore(docs).list(kind="oauth") == []
    for c in (raw, anonymous, key):
        c.close()
