"""A server without a token (`SECURE_LOCAL_NET=true`, a trusted network): no header is the admin, as before
keys existed; a key presented narrows the request to it; a revoked or expired key is refused, never
taken for the open access."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import write
from tests.http.conftest import StartServer
from tests.http.keyed import make_keys


def test_on_an_open_server_a_key_narrows_and_a_dead_one_is_refused(
    docs: Path, start_app: StartServer
) -> None:
    for name in ("a", "secret"):
        write(docs, f"{name}/.ragdown.json", json.dumps({"mcp": True}))
        write(docs, f"{name}/doc.md", f"# {name}\n")
    keys = make_keys(docs)
    server = start_app(docs, token=None, SECURE_LOCAL_NET="true")
    anyone = server.client(token=None)
    assert {f["name"] for f in anyone.get("/api/folders").json()["folders"]} == {"a", "secret"}
    assert anyone.get("/api/status").json()["access"]["who"] == "open"
    assert anyone.get("/api/keys").status_code == 200  # the trusted network is the admin

    reader = server.client(token=keys.read_a)
    assert [f["name"] for f in reader.get("/api/folders").json()["folders"]] == ["a"]
    assert reader.post("/api/doc", json={"path": "a/x.md", "text": "# x\n"}).status_code == 403
    assert reader.get("/api/keys").status_code == 403
    for dead in (keys.revoked, keys.expired, keys.oauth_expired, keys.wrong):
        assert server.client(token=dead).get("/api/folders").status_code == 401
    # Any other bearer value is no key: the open access, as before (a client that always sends one).
    assert server.client(token="not-a-key").get("/api/folders").status_code == 200
