"""OAuth for hosted clients, in-process (`start_app`): discovery from a 401, the metadata, the consent page,
and every refusal (plain PKCE, a wrong verifier, a code used twice, a wrong redirect_uri, a wrong admin
token, an expired access token, an unknown client, a revoked grant). The whole flow through the SDK's OAuth
client against a real `ragdown serve` is `test_oauth_e2e.py`."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from ragdown.access.keys import KeyStore
from ragdown.http.oauth.grants import narrowed, scopes_of
from tests.conftest import write
from tests.http.conftest import APP_URL, TOKEN, Server, StartServer, ops_folder

REDIRECT = "http://127.0.0.1:9/callback"
OTHER_REDIRECT = "http://localhost:9/elsewhere"
CONSENT = "/oauth/consent"


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def folders(docs: Path) -> None:
    ops_folder(docs)
    write(docs, "labnotes/pipettes.md", "# Pipettes\n\nCalibrate them monthly.\n")
    write(docs, "labnotes/.ragdown.json", json.dumps({"title": "Lab", "mcp": True}))


def field(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found is not None, f"no {name} in the page: {page}"
    return found.group(1)


def query(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


@dataclass
class Flow:
    """One client of the in-process app, walking the OAuth flow by hand."""

    http: httpx.Client
    client: dict[str, str]

    @classmethod
    def register(
        cls, server: Server, redirects: tuple[str, ...] = (REDIRECT,), auth_method: str | None = None
    ) -> Flow:
        """`auth_method`: `none` for a public client (no secret), `client_secret_basic`; else the SDK's
        default, `client_secret_post`."""
        http = server.anonymous
        method = {"token_endpoint_auth_method": auth_method} if auth_method else {}
        answer = http.post(
            "/register",
            json={
                "redirect_uris": list(redirects),
                "client_name": "Test client",
                "grant_types": ["authorization_code", "refresh_token"],
                **method,
            },
        )
        assert answer.status_code == 201, answer.text
        return cls(http, answer.json())

    @property
    def creds(self) -> dict[str, str]:
        """The form fields that authenticate it: a public client has no secret, and sends none."""
        secret = {"client_secret": self.client["client_secret"]} if self.client.get("client_secret") else {}
        return {"client_id": self.client["client_id"], **secret}

    def authorize(self, challenge: str, **params: str) -> httpx.Response:
        asked = {
            "response_type": "code",
            "client_id": self.client["client_id"],
            "redirect_uri": REDIRECT,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "the-state",
            "scope": "read write",
            "resource": f"{APP_URL}/mcp/ops",
        }
        return self.http.get("/authorize", params={**asked, **params})

    def unlock(self, location: str, token: str = TOKEN) -> tuple[str, httpx.Response]:
        """The consent page's first step: the request id, and the answer to the admin token."""
        page = self.http.get(location)
        assert page.status_code == 200, page.text
        request_id = field(page.text, "request")
        answer = self.http.post(CONSENT, data={"request": request_id, "step": "token", "token": token})
        return request_id, answer

    def consent(self, challenge: str, picked: tuple[str, ...] = ("ops",), role: str = "read") -> str:
        """Authorize, give the admin token, pick; the code the redirect carries."""
        location = self.authorize(challenge).headers["location"]
        request_id, unlocked = self.unlock(location)
        assert unlocked.status_code == 200, unlocked.text
        chosen = self.http.post(
            CONSENT,
            data={
                "request": request_id,
                "step": "choice",
                "ticket": field(unlocked.text, "ticket"),
                "folder": list(picked),
                "role": role,
                "decision": "allow",
            },
        )
        assert chosen.status_code == 303, chosen.text
        back = chosen.headers["location"]
        assert back.startswith(REDIRECT + "?")
        got = query(back)
        assert got["state"] == "the-state"
        return got["code"]

    def token(self, code: str, verifier: str, redirect: str = REDIRECT) -> httpx.Response:
        return self.http.post(
            "/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect,
                "code_verifier": verifier,
                **self.creds,
            },
        )

    def tokens(self, picked: tuple[str, ...] = ("ops",), role: str = "read") -> dict[str, Any]:
        verifier, challenge = pkce()
        answer = self.token(self.consent(challenge, picked, role), verifier)
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    def refresh(self, refresh_token: str) -> httpx.Response:
        return self.http.post(
            "/token", data={"grant_type": "refresh_token", "refresh_token": refresh_token, **self.creds}
        )


def bearer(server: Server, token: str) -> httpx.Client:
    return server.client(token=token)


def test_a_401_says_where_to_authenticate_and_the_metadata_answers(
    docs: Path, start_app: StartServer
) -> None:
    folders(docs)
    server = start_app(docs)
    anonymous = server.anonymous
    missing = anonymous.post("/mcp/ops", json={})
    assert missing.status_code == 401
    prm_url = f"{APP_URL}/.well-known/oauth-protected-resource/mcp/ops"
    assert missing.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{prm_url}", realm="ragdown", authorization_server="{APP_URL}"'
    )
    wrong = server.client(token="rdk_not-a-key").post("/mcp/ops/sub", json={})
    assert wrong.status_code == 401
    challenge = wrong.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="invalid_token"')
    assert f'resource_metadata="{APP_URL}/.well-known/oauth-protected-resource/mcp/ops/sub"' in challenge
    api = anonymous.get("/api/docs")
    assert api.status_code == 401
    assert api.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{APP_URL}/.well-known/oauth-protected-resource/api", realm="ragdown", '
        f'authorization_server="{APP_URL}"'
    )

    prm = anonymous.get(prm_url)
    assert prm.status_code == 200
    assert prm.json() == {
        "resource": f"{APP_URL}/mcp/ops",
        "authorization_servers": [APP_URL],
        "scopes_supported": ["read", "write"],
        "bearer_methods_supported": ["header"],
        "resource_name": "ragdown",
    }
    assert anonymous.get("/.well-known/oauth-protected-resource").json()["resource"] == APP_URL
    assert anonymous.get("/.well-known/oauth-protected-resource/elsewhere").status_code == 404
    assert anonymous.get("/.well-known/openid-configuration").status_code == 404  # not the web UI's page

    meta = anonymous.get("/.well-known/oauth-authorization-server").json()
    assert meta["issuer"] == APP_URL
    assert meta["authorization_endpoint"] == f"{APP_URL}/authorize"
    assert meta["token_endpoint"] == f"{APP_URL}/token"
    assert meta["registration_endpoint"] == f"{APP_URL}/register"
    assert meta["revocation_endpoint"] == f"{APP_URL}/revoke"
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert meta["grant_types_supported"] == ["authorization_code", "refresh_token"]


def test_the_public_url_names_every_address(docs: Path, start_app: StartServer) -> None:
    folders(docs)
    server = start_app(docs, RAGDOWN_PUBLIC_URL="https://notes.example.com/")
    anonymous = server.anonymous
    challenge = anonymous.post("/mcp/ops", json={}).headers["www-authenticate"]
    assert challenge == (
        'Bearer resource_metadata="https://notes.example.com/.well-known/oauth-protected-resource/mcp/ops", '
        'realm="ragdown", authorization_server="https://notes.example.com"'
    )
    prm = anonymous.get("/.well-known/oauth-protected-resource/mcp/ops").json()
    assert prm["resource"] == "https://notes.example.com/mcp/ops"
    assert prm["authorization_servers"] == ["https://notes.example.com"]
    meta = anonymous.get("/.well-known/oauth-authorization-server").json()
    assert meta["issuer"] == "https://notes.example.com"
    assert meta["token_endpoint"] == "https://notes.example.com/token"
    # Claude.ai (and a browser through the proxy) reach it by that name: its Host and Origin are the server's.
    public = {"Host": "notes.example.com", "Origin": "https://notes.example.com"}
    assert anonymous.get("/.well-known/oauth-authorization-server", headers=public).status_code == 200
    assert server.api.get("/api/folders", headers=public).status_code == 200
    assert anonymous.get("/api/folders", headers={"Host": "other.example.com"}).status_code == 421
    foreign = {**public, "Origin": "https://other.example.com"}
    assert server.api.get("/api/folders", headers=foreign).status_code == 403


def test_a_grant_is_a_scoped_key_with_an_expiry(docs: Path, start_app: StartServer) -> None:
    folders(docs)
    server = start_app(docs)
    flow = Flow.register(server)
    before = time.time()
    tokens = flow.tokens(("ops",), "read")
    assert tokens["token_type"] == "Bearer"
    assert tokens["expires_in"] == 3600
    assert tokens["scope"] == "read folder:ops"
    assert tokens["refresh_token"].startswith("rdr_")

    [record] = KeyStore(docs).list(kind="oauth")
    assert (record.role, record.folders, record.client) == ("read", ("ops",), "Test client")
    assert record.name.startswith("oauth-")
    assert record.expires_at is not None
    assert before + 3600 <= record.expires_at <= time.time() + 3600

    key = bearer(server, tokens["access_token"])
    assert [f["name"] for f in key.get("/api/folders").json()["folders"]] == ["ops"]
    assert key.get("/api/docs", params={"folder": "labnotes"}).status_code == 404
    assert key.post("/mcp/labnotes", json={}).status_code == 404
    refused = key.post("/api/doc", json={"path": "ops/x.md", "text": "# X\n"})
    assert refused.status_code == 403

    stored = json.loads((docs / ".ragdown" / "oauth.json").read_text())
    assert (docs / ".ragdown" / "oauth.json").stat().st_mode & 0o777 == 0o600
    [grant] = stored["grants"].values()
    assert grant["key_id"] == record.id
    assert tokens["refresh_token"] not in json.dumps(stored)
    assert grant["refresh_hash"] == hashlib.sha256(tokens["refresh_token"].encode()).hexdigest()


def test_a_write_grant_over_every_folder(docs: Path, start_app: StartServer) -> None:
    folders(docs)
    server = start_app(docs)
    flow = Flow.register(server)
    verifier, challenge = pkce()
    location = flow.authorize(challenge).headers["location"]
    request_id, unlocked = flow.unlock(location)
    chosen = flow.http.post(
        CONSENT,
        data={
            "request": request_id,
            "step": "choice",
            "ticket": field(unlocked.text, "ticket"),
            "every": "on",
            "role": "write",
            "decision": "allow",
        },
    )
    tokens = flow.token(query(chosen.headers["location"])["code"], verifier).json()
    assert tokens["scope"] == "read write folder:*"
    key = bearer(server, tokens["access_token"])
    assert {f["name"] for f in key.get("/api/folders").json()["folders"]} == {"ops", "labnotes"}
    made = key.post("/api/doc", json={"path": "labnotes/x.md", "text": "# X\n"})
    assert made.status_code in (200, 201), made.text


def test_plain_pkce_is_refused(docs: Path, start_app: StartServer) -> None:
    folders(docs)
    server = start_app(docs)
    flow = Flow.register(server)
    verifier = secrets.token_urlsafe(48)
    answer = flow.authorize(verifier, code_challenge_method="plain")
    assert answer.status_code == 302
    back = answer.headers["location"]
    assert back.startswith(REDIRECT + "?")
    assert query(back)["error"] == "invalid_request"
    assert "code" not in query(back)


@pytest.mark.parametrize("challenge", ["", " ", "x" * 42, "x" * 44, "a+b/" * 10 + "abc", "é" * 43])
def test_a_challenge_no_verifier_can_meet_is_refused(
    docs: Path, start_app: StartServer, challenge: str
) -> None:
    """Only an S256 challenge (43 base64url characters) starts a consent: a grant bound to any other could
    never be exchanged."""
    folders(docs)
    server = start_app(docs, wait=False)
    flow = Flow.register(server)
    answer = flow.authorize(challenge)
    assert answer.status_code == 302
    back = query(answer.headers["location"])
    assert answer.headers["location"].startswith(REDIRECT + "?")
    assert back["error"] == "invalid_request"
    assert "code_challenge" in back["error_description"]
    assert back["state"] == "the-state"
    assert server.app is not None
    assert server.app.oauth is not None
    assert server.app.oauth.provider.pending == {}  # no consent page to go to


def test_a_wrong_verifier_spends_the_code_and_a_code_used_twice_revokes_its_grant(
    docs: Path, start_app: StartServer
) -> None:
    folders(docs)
    server = start_app(docs)
    flow = Flow.register(server)
    verifier, challenge = pkce()
    code = flow.consent(challenge)
    wrong = flow.token(code, pkce()[0])
    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_grant")
    assert flow.token(code, verifier).json()["error"] == "invalid_grant"  # spent by the wrong try

    verifier, challenge = pkce()
    code = flow.consent(challenge)
    first = flow.token(code, verifier)
    assert first.status_code == 200
    key = bearer(server, first.json()["access_token"])
    assert key.get("/api/folders").status_code == 200
    again = flow.token(code, verifier)
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")
    assert key.get("/api/folders").status_code == 401
    assert flow.refresh(first.json()["refresh_token"]).json()["error"] == "invalid_grant"
    assert KeyStore(docs).list(kind="oauth") == []


def test_a_wrong_redirect_uri_is_refused(docs: Path, start_app: StartServer) -> None:
    folders(docs)
    server = start_app(docs)
    flow = Flow.register(server, (REDIRECT, OTHER_REDIRECT))
    verifier, challenge = pkce()
    unknown = flow.authorize(challenge, redirect_uri="https://evil.example/callback")
    assert unknown.status_code == 400  # said to the browser, never sent to an unregistered address
    assert unknown.json()["error"] == "invalid_request"
    assert "location" not in unknown.headers
    code = flow.consent(challenge)
    swapped = flow.token(code, verifier, redirect=OTHER_REDIRECT)
    assert (swapped.status_code, swapped.json()["error"]) == (400, "invalid_request")

    refused = server.anonymous.post("/register", json={"redirect_uris": ["http://evil.example/cb"]})
    assert (refused.status_code, refused.json()["error"]) == (400, "invalid_redirect_uri")
    refused = server.anonymous.post("/register", json={"redirect_uris": ["javascript:alert(1)"]})
    assert refused.status_code == 400


def test_a_wrong_admin_token_grants_nothing_and_shows_no_folder(docs: Path, start_app: StartServer) -> None:
    folders(docs)
    write(docs, "secretfolder/x.md", "# X\n")
    server = start_app(docs)
    flow = Flow.register(server)
    _, challenge = pkce()
    location = flow.authorize(challenge).headers["location"]
    page = flow.http.get(location)
    assert "secretfolder" not in page.text
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    request_id, wrong = flow.unlock(location, token="not-the-token")
    assert wrong.status_code == 403
    assert "That is not this server's admin token" in html.unescape(wrong.text)
    assert 'name="ticket"' not in wrong.text
    assert "secretfolder" not in wrong.text
    forged = flow.http.post(
        CONSENT,
        data={"request": request_id, "step": "choice", "ticket": "guess", "folder": "ops", "role": "write"},
    )
    assert forged.status_code == 403
    assert "location" not in forged.headers
    for _ in range(3):
        flow.unlock(location, token="still-wrong")
    dropped = flow.http.post(CONSENT, data={"request": request_id, "step": "token", "token": "wrong again"})
    assert dropped.status_code == 403
    assert "dropped" in dropped.text
    assert flow.http.get(location).status_code == 404  # even the right token is too late now
    assert KeyStore(docs).list(kind="oauth") == []


def test_the_consent_form_posts_with_its_own_origin_and_no_other(docs: Path, start_app: StartServer) -> None:
    """A browser posts a form with `Origin: null` under `Referrer-Policy: no-referrer` (Chromium did, and the
    consent was refused): the page sends `same-origin`, so its own origin is sent. Any other, `null` included,
    is still refused before the token is even looked at. (The browser's side: tests/web/test_oauth_ui.py.)"""
    folders(docs)
    server = start_app(docs)
    flow = Flow.register(server)
    _, challenge = pkce()
    location = flow.authorize(challenge).headers["location"]
    page = flow.http.get(location)
    assert page.headers["referrer-policy"] == "same-origin"
    request_id = field(page.text, "request")
    unlock = {"request": request_id, "step": "token", "token": TOKEN}
    for foreign in ("null", "http://evil.example", "http://127.0.0.1:9"):
        refused = flow.http.post(CONSENT, data=unlock, headers={"Origin": foreign})
        assert refused.status_code == 403, foreign
        assert "Cross-origin requests are not allowed" in refused.text
    unlocked = flow.http.post(CONSENT, data=unlock, headers={"Origin": APP_URL})
    assert unlocked.status_code == 200, unlocked.text
    assert unlocked.headers["referrer-policy"] == "same-origin"
    assert field(unlocked.text, "ticket")


def test_a_choice_needs_a_folder_and_a_deny_says_so_to_the_client(docs: Path, start_app: StartServer) -> None:
    folders(docs)
    server = start_app(docs)
    flow = Flow.register(server)
    _, challenge = pkce()
    location = flow.authorize(challenge).headers["location"]
    request_id, unlocked = flow.unlock(location)
    assert 'value="ops" checked' in unlocked.text  # the folder of the endpoint asked for
    ticket = field(unlocked.text, "ticket")
    empty = flow.http.post(
        CONSENT, data={"request": request_id, "step": "choice", "ticket": ticket, "role": "read"}
    )
    assert empty.status_code == 400
    assert "pick at least one folder" in empty.text
    nowhere = flow.http.post(
        CONSENT,
        data={"request": request_id, "step": "choice", "ticket": ticket, "folder": "nope", "role": "read"},
    )
    assert nowhere.status_code == 400
    assert "no such folder: nope" in nowhere.text
    denied = flow.http.post(CONSENT, data={"request": request_id, "decision": "deny"})
    assert denied.status_code == 303
    assert query(denied.headers["location"])["error"] == "access_denied"
    assert flow.http.get(location).status_code == 404


def test_an_expired_access_token_is_refused_and_its_grant_refreshes(
    docs: Path, start_app: StartServer
) -> None:
    folders(docs)
    server = start_app(docs)
    flow = Flow.register(server)
    tokens = flow.tokens()
    store = KeyStore(docs)
    [record] = store.list(kind="oauth")
    # Its hour is over (the file is the key store's truth; it is re-read when it changes).
    keys_file = docs / ".ragdown" / "keys.json"
    data = json.loads(keys_file.read_text())
    data["keys"][0]["expires_at"] = time.time() - 1
    keys_file.write_text(json.dumps(data))
    expired = bearer(server, tokens["access_token"]).post("/mcp/ops", json={})
    assert expired.status_code == 401
    assert expired.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
    store.create("another", None, "read")  # a key made meanwhile clears expired keys, but not this one

    renewed = flow.refresh(tokens["refresh_token"])
    assert renewed.status_code == 200, renewed.text
    fresh = renewed.json()
    assert fresh["refresh_token"] != tokens["refresh_token"]
    assert bearer(server, fresh["access_token"]).get("/api/folders").status_code == 200
    assert [r.id for r in store.list(kind="oauth")] != [record.id]
    assert flow.refresh(tokens["refresh_token"]).json()["error"] == "invalid_grant"  # rotated


def test_an_unknown_client_is_refused(docs: Path, start_app: StartServer) -> None:
    folders(docs)
    server = start_app(docs)
    anonymous = server.anonymous
    _, challenge = pkce()
    asked = anonymous.get(
        "/authorize",
        params={
            "response_type": "code",
            "client_id": "nobody",
            "redirect_uri": REDIRECT,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        },
    )
    assert asked.status_code == 400
    assert "location" not in asked.headers
    assert "not found" in asked.json()["error_description"]
    token = anonymous.post(
        "/token",
        data={
            "grant_type": "authorization_code",
            "code": "x",
            "code_verifier": "y" * 43,
            "client_id": "nobody",
        },
    )
    assert (token.status_code, token.json()["error"]) == (401, "invalid_client")
    flow = Flow.register(server)
    stolen = anonymous.post(
        "/token",
        data={"grant_type": "refresh_token", "refresh_token": "rdr_x", "client_id": flow.client["client_id"]},
    )
    assert stolen.status_code == 401  # its secret is required


def test_revoking_either_token_or_the_key_ends_the_grant(docs: Path, start_app: StartServer) -> None:
    folders(docs)
    server = start_app(docs)
    flow = Flow.register(server)

    tokens = flow.tokens()
    revoked = flow.http.post("/revoke", data={"token": tokens["access_token"], **flow.creds})
    assert revoked.status_code == 200
    assert bearer(server, tokens["access_token"]).get("/api/folders").status_code == 401
    assert flow.refresh(tokens["refresh_token"]).json()["error"] == "invalid_grant"

    tokens = flow.tokens()
    flow.http.post(
        "/revoke", data={"token": tokens["refresh_token"], "token_type_hint": "refresh_token", **flow.creds}
    )
    assert bearer(server, tokens["access_token"]).get("/api/folders").status_code == 401

    tokens = flow.tokens()
    [record] = KeyStore(docs).list(kind="oauth")
    admin = server.api
    assert record.id in {k["id"] for k in admin.get("/api/keys").json()["keys"]}
    assert admin.delete(f"/api/keys/{record.id}").status_code == 200
    assert bearer(server, tokens["access_token"]).get("/api/folders").status_code == 401
    assert flow.refresh(tokens["refresh_token"]).json()["error"] == "invalid_grant"
    assert json.loads((docs / ".ragdown" / "oauth.json").read_text())["grants"] == {}


def test_a_public_client_revokes_its_tokens_without_a_secret(docs: Path, start_app: StartServer) -> None:
    """RFC 7009 and OAuth 2.1: a public client (`token_endpoint_auth_method: none`) has no secret to send;
    its client_id says who it is, and it may end only its own grants."""
    folders(docs)
    server = start_app(docs)
    flow = Flow.register(server, auth_method="none")
    assert "client_secret" not in flow.client
    assert flow.creds == {"client_id": flow.client["client_id"]}

    tokens = flow.tokens()
    assert bearer(server, tokens["access_token"]).get("/api/folders").status_code == 200
    revoked = flow.http.post("/revoke", data={"token": tokens["refresh_token"], **flow.creds})
    assert revoked.status_code == 200, revoked.text
    assert revoked.headers["cache-control"] == "no-store"
    assert flow.refresh(tokens["refresh_token"]).json()["error"] == "invalid_grant"
    assert bearer(server, tokens["access_token"]).get("/api/folders").status_code == 401
    assert KeyStore(docs).list(kind="oauth") == []

    tokens = flow.tokens()
    revoked = flow.http.post(
        "/revoke", data={"token": tokens["access_token"], "token_type_hint": "access_token", **flow.creds}
    )
    assert revoked.status_code == 200, revoked.text
    assert bearer(server, tokens["access_token"]).get("/api/folders").status_code == 401
    assert flow.refresh(tokens["refresh_token"]).json()["error"] == "invalid_grant"

    # Another public client's client_id ends nothing of this one's (200 all the same, as RFC 7009 says).
    tokens = flow.tokens()
    other = Flow.register(server, auth_method="none")
    for token in (tokens["refresh_token"], tokens["access_token"]):
        assert other.http.post("/revoke", data={"token": token, **other.creds}).status_code == 200
    assert bearer(server, tokens["access_token"]).get("/api/folders").status_code == 200
    unknown = flow.http.post("/revoke", data={"token": tokens["refresh_token"], "client_id": "nobody"})
    assert (unknown.status_code, unknown.json()["error"]) == (401, "unauthorized_client")
    missing = flow.http.post("/revoke", data={"client_id": flow.client["client_id"]})
    assert (missing.status_code, missing.json()["error"]) == (400, "invalid_request")
    assert "token" in missing.json()["error_description"]
    assert flow.refresh(tokens["refresh_token"]).status_code == 200


def test_a_confidential_client_revokes_only_with_its_secret(docs: Path, start_app: StartServer) -> None:
    folders(docs)
    server = start_app(docs)
    flow = Flow.register(server)
    tokens = flow.tokens()
    client_id = flow.client["client_id"]
    for creds in ({"client_id": client_id}, {"client_id": client_id, "client_secret": ""}):
        answer = flow.http.post("/revoke", data={"token": tokens["refresh_token"], **creds})
        assert (answer.status_code, answer.json()["error"]) == (401, "unauthorized_client")
        assert answer.json()["error_description"] == "Client secret is required"
    wrong = flow.http.post(
        "/revoke",
        data={"token": tokens["refresh_token"], "client_id": client_id, "client_secret": "not-the-secret"},
    )
    assert (wrong.status_code, wrong.json()["error"]) == (401, "unauthorized_client")
    assert wrong.json()["error_description"] == "Invalid client_secret"
    assert bearer(server, tokens["access_token"]).get("/api/folders").status_code == 200  # nothing ended
    assert flow.http.post("/revoke", data={"token": tokens["refresh_token"], **flow.creds}).status_code == 200
    assert bearer(server, tokens["access_token"]).get("/api/folders").status_code == 401

    # A client_secret_basic client authenticates in its Authorization header, with no secret in the form.
    basic = Flow.register(server, auth_method="client_secret_basic")
    secret = basic.client["client_secret"]
    verifier, challenge = pkce()
    exchanged = basic.http.post(
        "/token",
        data={
            "grant_type": "authorization_code",
            "code": basic.consent(challenge),
            "redirect_uri": REDIRECT,
            "code_verifier": verifier,
            "client_id": basic.client["client_id"],
        },
        auth=(basic.client["client_id"], secret),
    )
    assert exchanged.status_code == 200, exchanged.text
    tokens = exchanged.json()
    form = {"token": tokens["refresh_token"], "client_id": basic.client["client_id"]}
    assert basic.http.post("/revoke", data=form, auth=(basic.client["client_id"], "wrong")).status_code == 401
    assert basic.http.post("/revoke", data=form).status_code == 401
    assert bearer(server, tokens["access_token"]).get("/api/folders").status_code == 200
    revoked = basic.http.post("/revoke", data=form, auth=(basic.client["client_id"], secret))
    assert revoked.status_code == 200, revoked.text
    assert bearer(server, tokens["access_token"]).get("/api/folders").status_code == 401


def test_without_a_token_the_consent_asks_only_for_the_choice(docs: Path, start_app: StartServer) -> None:
    folders(docs)
    server = start_app(docs, token=None, SECURE_LOCAL_NET="true")
    flow = Flow.register(server)
    verifier, challenge = pkce()
    page = flow.http.get(flow.authorize(challenge).headers["location"])
    assert page.status_code == 200
    assert 'name="token"' not in page.text
    assert "no admin token" in page.text
    chosen = flow.http.post(
        CONSENT,
        data={
            "request": field(page.text, "request"),
            "step": "choice",
            "ticket": field(page.text, "ticket"),
            "folder": "labnotes",
            "role": "read",
            "decision": "allow",
        },
    )
    tokens = flow.token(query(chosen.headers["location"])["code"], verifier).json()
    key = bearer(server, tokens["access_token"])  # on an open server, a key still narrows its caller
    assert [f["name"] for f in key.get("/api/folders").json()["folders"]] == ["labnotes"]


@pytest.mark.parametrize("path", ["/authorize", "/token", "/register", "/revoke", CONSENT])
def test_the_oauth_routes_keep_the_host_check(docs: Path, start_app: StartServer, path: str) -> None:
    server = start_app(docs)
    answer = server.anonymous.get(path, headers={"host": "evil.example"})
    assert answer.status_code == 421


@pytest.mark.parametrize("picked", [("ops",), ("*", "my notes", 'say "hi"', "über"), None])
def test_scopes_name_any_folder_and_a_refresh_may_ask_for_fewer(picked: tuple[str, ...] | None) -> None:
    scopes = scopes_of("write", picked)
    assert all(re.fullmatch(r"[\x21\x23-\x5b\x5d-\x7e]+", s) for s in scopes)  # RFC 6749's scope-token
    assert narrowed("write", picked, scopes) == ("write", picked)
    assert narrowed("write", picked, ["read"]) == ("read", picked)
    assert narrowed("read", picked, scopes) == ("read", picked)  # never more than the grant
    one = scopes_of("read", ("my notes",))
    assert narrowed("write", picked, one) == ("read", ("my notes",))
