"""`RAGDOWN_RATE_LIMIT`: a bucket per key (per client address without one); over it a 429 with
`Retry-After`, for `/mcp` with a JSON-RPC error naming RATE_LIMIT_EXCEEDED; the web UI's files are free.
The client's address is the connection's, unless it is one of `RAGDOWN_TRUSTED_PROXIES`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from ragdown.access.keys import KeyStore
from ragdown.core.config import ConfigError, Settings
from ragdown.http.ratelimit import RateLimiter
from ragdown.http.serve import uvicorn_config
from tests.conftest import write
from tests.http.conftest import PortalTransport, Server, StartServer
from tests.http.keyed import Keys, make_keys, mcp_client, shared_app

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_holds_a_minutes_worth_and_refills_at_the_limit() -> None:
    clock = Clock()
    limiter = RateLimiter(3, clock)
    assert [limiter.take("k") for _ in range(3)] == [None, None, None]
    assert limiter.take("k") == 20  # one request every 20 s at 3 a minute
    assert limiter.take("other") is None  # each caller its own bucket
    clock.now += 19
    assert limiter.take("k") == 1
    clock.now += 1
    assert limiter.take("k") is None
    clock.now += 3600  # a long pause refills it to a minute's worth, no more
    assert [limiter.take("k") for _ in range(4)] == [None, None, None, 20]


def test_zero_is_off() -> None:
    limiter = RateLimiter(0)
    assert not limiter.enabled
    assert all(limiter.take("k") is None for _ in range(1000))


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[object, Keys]]:
    home = tmp_path_factory.mktemp("limited")
    docs = home / "docs"
    write(docs, "a/.ragdown.json", json.dumps({"title": "A", "mcp": True}))
    write(docs, "a/doc.md", "# Doc\n\nwords\n")
    keys = make_keys(docs)
    with shared_app(home, docs, RAGDOWN_RATE_LIMIT="3") as server:
        yield server, keys


def test_over_the_limit_api_answers_429_with_retry_after(limited: tuple[object, Keys]) -> None:
    server, keys = limited
    client = server.client(token=keys.write_a)  # type: ignore[attr-defined]
    assert [client.get("/api/folders").status_code for _ in range(3)] == [200, 200, 200]
    over = client.get("/api/folders")
    assert over.status_code == 429
    assert int(over.headers["retry-after"]) >= 1
    assert over.json()["code"] == "RATE_LIMIT_EXCEEDED"
    assert over.json()["error"].startswith("RATE_LIMIT_EXCEEDED")
    v1 = client.get("/api/v1/whoami")  # REST v1 answers alike
    assert v1.status_code == 429
    assert v1.json()["code"] == "RATE_LIMIT_EXCEEDED"
    assert int(v1.headers["retry-after"]) >= 1
    other = server.client(token=keys.read_a)  # type: ignore[attr-defined]
    assert other.get("/api/folders").status_code == 200  # another key, another bucket


def test_the_web_uis_files_are_never_limited(limited: tuple[object, Keys]) -> None:
    server, _ = limited
    browser = server.client(token=None)  # type: ignore[attr-defined]
    for _ in range(10):
        assert browser.get("/").status_code == 200
        assert browser.get("/app.js").status_code == 200


async def test_over_the_limit_mcp_answers_429_and_a_json_rpc_error(limited: tuple[object, Keys]) -> None:
    server, keys = limited
    raw = server.client(token=keys.read_all)  # type: ignore[attr-defined]
    headers = {"accept": "application/json, text/event-stream"}
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
    for _ in range(3):
        assert raw.post("/mcp/a", json=body, headers=headers).status_code != 429
    over = raw.post("/mcp/a", json=body, headers=headers)
    assert over.status_code == 429
    assert int(over.headers["retry-after"]) >= 1
    answer = over.json()
    assert answer["id"] == 7
    assert answer["error"]["message"].startswith("RATE_LIMIT_EXCEEDED")
    assert answer["error"]["data"]["retry_after"] == int(over.headers["retry-after"])


async def test_an_mcp_client_is_told_rate_limit_exceeded(limited: tuple[object, Keys]) -> None:
    server, _ = limited
    secret, _ = KeyStore(server.docs).create("mcp-client", None, "read")  # type: ignore[attr-defined]
    told: list[str] = []
    try:
        async with mcp_client(server, "/mcp/a", secret) as client:  # type: ignore[arg-type]
            for _ in range(4):
                try:
                    await client.list_tools()
                except MCPError as err:
                    told.append(str(err))
                    break
    except BaseExceptionGroup:
        pass  # closing the session is over the limit as well
    assert told
    assert told[0].startswith("RATE_LIMIT_EXCEEDED")


def test_without_a_key_each_client_address_has_its_own_bucket(limited: tuple[object, Keys]) -> None:
    server, _ = limited
    anonymous = server.client(token=None)  # type: ignore[attr-defined]
    answers = [
        anonymous.get("/api/status") for _ in range(4)
    ]  # 3 a minute: the 4th is over, whatever came before
    over = answers[-1]
    assert over.status_code == 429  # the open route counts against the address (the ASGI client's)
    assert int(over.headers["retry-after"]) >= 1


# -- the client's address: the connection's, or the one a trusted proxy names -------------------------


def through_uvicorn(server: Server) -> httpx.Client:
    """A client of the app as `ragdown serve` has uvicorn run it (`serve.uvicorn_config`, its middleware
    included), connecting from 127.0.0.1 as the ASGI transport does."""
    assert server.app is not None
    assert isinstance(server.transport, PortalTransport)
    config = uvicorn_config(server.app, server.app.runtime.settings, 0)
    config.load()
    transport = PortalTransport(server.transport.portal, config.loaded_app)
    client = httpx.Client(base_url=server.url, transport=transport, timeout=60)
    server.clients.append(client)
    return client


def issuer(client: httpx.Client, headers: dict[str, str]) -> str:
    """The OAuth issuer, built from the request's scheme and Host (no RAGDOWN_PUBLIC_URL)."""
    answer = client.get("/.well-known/oauth-authorization-server", headers=headers)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["issuer"])


def test_x_forwarded_headers_are_no_clients_word_by_default(docs: Path, start_app: StartServer) -> None:
    write(docs, "a/doc.md", "# Doc\n\nwords\n")
    client = through_uvicorn(start_app(docs, wait=False, RAGDOWN_RATE_LIMIT="3"))
    assert issuer(client, {"X-Forwarded-Proto": "https"}).startswith("http://")
    forged = [
        client.get("/api/status", headers={"X-Forwarded-For": f"203.0.113.{i}"}).status_code for i in range(3)
    ]
    assert forged == [200, 200, 429]  # one bucket, the connection's, whatever address each one claims


def test_a_trusted_proxy_names_the_client_and_its_scheme(docs: Path, start_app: StartServer) -> None:
    write(docs, "a/doc.md", "# Doc\n\nwords\n")
    server = start_app(
        docs, wait=False, RAGDOWN_RATE_LIMIT="3", RAGDOWN_TRUSTED_PROXIES="127.0.0.1, 10.0.0.0/8"
    )
    client = through_uvicorn(server)

    def status(chain: str) -> int:
        return client.get("/api/status", headers={"X-Forwarded-For": chain}).status_code

    assert [status("203.0.113.1") for _ in range(4)] == [200, 200, 200, 429]
    assert status("203.0.113.2") == 200  # another client behind the proxy: its own bucket
    # What a client sent itself is left of what the proxy appended: the proxy's entry counts.
    assert [status(f"198.51.100.{i}, 203.0.113.3") for i in range(4)] == [200, 200, 200, 429]
    # Through two trusted proxies (10.1.2.3 appended by the second): the nearest untrusted address.
    assert [status("203.0.113.4, 10.1.2.3") for _ in range(4)] == [200, 200, 200, 429]
    headers = {"X-Forwarded-For": "203.0.113.5", "X-Forwarded-Proto": "https"}
    assert issuer(client, headers).startswith("https://")
    assert issuer(server.anonymous, headers).startswith("https://")  # the app's own reading, without uvicorn


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("127.0.0.1", ("127.0.0.1/32",)),
        (" 10.1.2.3/8 , ::1 ", ("10.0.0.0/8", "::1/128")),
        ("", ()),
    ],
)
def test_trusted_proxies_are_addresses_or_networks(raw: str, kept: tuple[str, ...]) -> None:
    assert Settings.from_env({"RAGDOWN_TRUSTED_PROXIES": raw}).trusted_proxies == kept


@pytest.mark.parametrize("raw", ["*", "proxy.internal", "10.0.0.0/33"])
def test_a_trusted_proxy_that_is_no_address_is_refused(raw: str) -> None:
    with pytest.raises(ConfigError, match="RAGDOWN_TRUSTED_PROXIES"):
        Settings.from_env({"RAGDOWN_TRUSTED_PROXIES": f"127.0.0.1,{raw}"})
