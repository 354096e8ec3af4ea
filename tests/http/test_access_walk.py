"""Every route and every tool, with each kind of caller, against a real `ragdown serve` process (one for the
module): every `/api` route of `http/app.py`'s tables, every `/api/v1` route of `rest.ROUTES`, every OAuth
route of `oauth.PATHS`, every MCP endpoint and every tool of every tool set (`toolsets.SETS`, and the root
endpoint's `ROOT_TOOLS`). The callers: the admin token, a write key for folder `a`, a read key for `a`, a
read key for every folder, a revoked key, an expired key, an expired OAuth access token, a key that was
never issued, and no key at all.

The lists come from those tables, not from here: a route added without a rule in `NEEDS`, or without a
sample request here, fails `test_every_route_*`. For a key that does not see the folder `secret`, every
route must answer exactly as for the folder `nosuch`, which does not exist (the names aside).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from ragdown import toolsets
from ragdown.access.keys import KeyStore
from ragdown.http import app as app_module
from ragdown.http.oauth import routes as oauth
from ragdown.http.rest import routes as rest
from ragdown.tools.catalog import ROOT_TOOLS
from tests.conftest import start_serve, write
from tests.http.conftest import TOKEN, Server, _server_env
from tests.http.keyed import DEAD, Keys, make_keys, mcp_client

SEEN, HIDDEN, MISSING = "a", "secret", "nosuch"
KINDS = ("admin", "write_a", "read_a", "read_all", *DEAD)
_n = itertools.count()


@dataclass
class World:
    server: Server
    keys: Keys

    clients: dict[str, httpx.Client] = field(default_factory=dict)

    def client(self, kind: str) -> httpx.Client:
        """One client per kind of caller, its connection kept alive (the server's `stop` closes them)."""
        if kind not in self.clients:
            self.clients[kind] = self.server.client(token=self.keys.kinds()[kind])
        return self.clients[kind]

    @property
    def docs(self) -> Path:
        return self.server.docs

    def sync(self) -> None:
        self.server.wait_synced()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home = tmp_path_factory.mktemp("walk")
    docs = home / "docs"
    for name, title in ((SEEN, "Seen"), (HIDDEN, "Secret")):
        write(docs, f"{name}/.ragdown.json", json.dumps({"title": title, "mcp": True}))
        write(docs, f"{name}/doc.md", f"# Doc {name}\n\nkiwi words of {name}. See [[other]].\n")
        write(docs, f"{name}/other.md", f"# Other {name}\n\nBack to [[doc]].\n")
    write(docs, "loose.md", "# Loose\n")
    keys = make_keys(docs)
    env = _server_env(docs, home / "data", TOKEN, {"RAGDOWN_ROOT_MCP": "true", "RAGDOWN_RATE_LIMIT": "0"})
    process = start_serve(home, env)
    server = Server(process.url, TOKEN, docs, home / "data", process=process)
    try:
        server.wait_synced()
        admin = server.client()
        for name in (SEEN, HIDDEN):  # a document with history, and one in the trash, in each folder
            for text in ("# Hist\n\nfirst\n", "# Hist\n\nsecond\n"):
                r = admin.post("/api/doc", json={"path": f"{name}/hist.md", "text": text, "overwrite": True})
                assert r.status_code in (200, 201), r.text
            admin.post("/api/doc", json={"path": f"{name}/gone.md", "text": "# Gone\n"})
            assert admin.delete("/api/doc", params={"path": f"{name}/gone.md"}).status_code == 200
        yield World(server, keys)
    finally:
        server.stop()


# -- one sample request per route ------------------------------------------------------------------

Request = dict[str, Any]  # httpx.Client.request's keyword arguments, with "method" and "url"
Sample = Callable[[World, str, int], Request]


def _on_disk(world: World, rel: str, text: str = "# Scratch\n") -> None:
    write(world.docs, rel, text)


def _new_key(world: World, n: int) -> str:
    _secret, record = KeyStore(world.docs).create(f"scratch-{n}", None, "read")
    return record.id


def _scratch_folder(world: World, n: int) -> str:
    name = f"scratch-{n}"
    write(world.docs, f"{name}/.ragdown.json", "{}")
    return name


def _moving(world: World, folder: str, n: int) -> Request:
    if folder in (SEEN, HIDDEN):
        _on_disk(world, f"{folder}/mv-{n}.md")
        world.sync()
    return {
        "method": "POST",
        "url": "/api/move",
        "json": {"from": f"{folder}/mv-{n}.md", "to": f"{folder}/moved-{n}.md"},
    }


def _deleting(world: World, folder: str, n: int) -> Request:
    if folder in (SEEN, HIDDEN):
        _on_disk(world, f"{folder}/del-{n}.md")
    return {"method": "DELETE", "url": "/api/doc", "params": {"path": f"{folder}/del-{n}.md"}}


def _trashed(world: World, rel: str) -> None:
    """A document in the trash at `rel`, put there by the admin."""
    admin = world.server.client()
    assert admin.post("/api/doc", json={"path": rel, "text": "# Trashed\n"}).status_code == 201
    assert admin.delete("/api/doc", params={"path": rel}).status_code == 200


def _purging(world: World, folder: str, n: int) -> Request:
    if folder in (SEEN, HIDDEN):
        _trashed(world, f"{folder}/purge-{n}.md")
    return {
        "method": "DELETE",
        "url": "/api/trash",
        "params": {"folder": folder, "path": f"{folder}/purge-{n}.md"},
    }


def _loose(world: World, n: int) -> Request:
    _on_disk(world, f"loose-{n}.md")
    return {"method": "DELETE", "url": "/api/loose", "params": {"name": f"loose-{n}.md"}}


def _delete_folder(world: World, n: int) -> Request:
    name = _scratch_folder(world, n)
    return {"method": "DELETE", "url": f"/api/folders/{name}", "params": {"confirm": name}}


SAMPLES: dict[tuple[str, str], Sample] = {
    ("/api/status", "GET"): lambda w, f, n: {"method": "GET", "url": "/api/status"},
    ("/api/openapi.json", "GET"): lambda w, f, n: {"method": "GET", "url": "/api/openapi.json"},
    ("/api/openapi", "GET"): lambda w, f, n: {"method": "GET", "url": "/api/openapi"},
    ("/api/settings", "PATCH"): lambda w, f, n: {"method": "PATCH", "url": "/api/settings", "json": {}},
    ("/api/query-log", "GET"): lambda w, f, n: {"method": "GET", "url": "/api/query-log"},
    ("/api/query-log", "DELETE"): lambda w, f, n: {"method": "DELETE", "url": "/api/query-log"},
    ("/api/folders", "GET"): lambda w, f, n: {"method": "GET", "url": "/api/folders"},
    ("/api/folders", "POST"): lambda w, f, n: {"method": "POST", "url": "/api/folders", "json": {"name": f"made-{n}"}},
    ("/api/loose", "DELETE"): lambda w, f, n: _loose(w, n),
    ("/api/docs", "GET"): lambda w, f, n: {"method": "GET", "url": "/api/docs", "params": {"folder": f}},
    ("/api/doc", "GET"): lambda w, f, n: {"method": "GET", "url": "/api/doc", "params": {"path": f"{f}/doc.md"}},
    ("/api/doc", "POST"): lambda w, f, n: {
        "method": "POST", "url": "/api/doc", "json": {"path": f"{f}/new-{n}.md", "text": "# New\n", "overwrite": True}
    },
    ("/api/doc", "DELETE"): _deleting,
    ("/api/render", "POST"): lambda w, f, n: {
        "method": "POST", "url": "/api/render", "json": {"path": f"{f}/doc.md", "text": "# x\n\n[[doc]]"}
    },
    ("/api/search", "GET"): lambda w, f, n: {"method": "GET", "url": "/api/search", "params": {"q": "kiwi", "folder": f}},
    ("/api/resolve", "GET"): lambda w, f, n: {
        "method": "GET", "url": "/api/resolve", "params": {"from": f"{f}/doc.md", "link": "other"}
    },
    ("/api/move", "POST"): _moving,
    ("/api/backlinks", "GET"): lambda w, f, n: {"method": "GET", "url": "/api/backlinks", "params": {"path": f"{f}/doc.md"}},
    ("/api/outline", "GET"): lambda w, f, n: {"method": "GET", "url": "/api/outline", "params": {"path": f"{f}/doc.md"}},
    ("/api/history", "GET"): lambda w, f, n: {"method": "GET", "url": "/api/history", "params": {"path": f"{f}/hist.md"}},
    ("/api/version", "GET"): lambda w, f, n: {
        "method": "GET", "url": "/api/version", "params": {"path": f"{f}/hist.md", "version": "1"}
    },
    ("/api/diff", "GET"): lambda w, f, n: {
        "method": "GET", "url": "/api/diff", "params": {"path": f"{f}/hist.md", "from": "1"}
    },
    ("/api/restore", "POST"): lambda w, f, n: {
        "method": "POST", "url": "/api/restore", "json": {"path": f"{f}/hist.md", "version": 1}
    },
    ("/api/trash", "GET"): lambda w, f, n: {"method": "GET", "url": "/api/trash", "params": {"folder": f}},
    ("/api/trash", "DELETE"): _purging,
    ("/api/file", "GET"): lambda w, f, n: {"method": "GET", "url": "/api/file", "params": {"path": f"{f}/doc.md"}},
    ("/api/keys", "GET"): lambda w, f, n: {"method": "GET", "url": "/api/keys"},
    ("/api/keys", "POST"): lambda w, f, n: {
        "method": "POST", "url": "/api/keys", "json": {"name": f"made-{n}", "folders": None, "role": "read"}
    },
    ("/api/folders/", "PATCH"): lambda w, f, n: {"method": "PATCH", "url": f"/api/folders/{f}", "json": {}},
    ("/api/folders/", "DELETE"): lambda w, f, n: _delete_folder(w, n),
    ("/api/keys/", "DELETE"): lambda w, f, n: {"method": "DELETE", "url": f"/api/keys/{_new_key(w, n)}"},
}  # fmt: skip


def app_routes() -> list[tuple[str, str]]:
    """Every (route, method) of `http/app.py`'s own tables."""
    out = [(path, method) for path, methods in app_module.API.items() for method in methods]
    out += [(prefix, method) for prefix, methods in app_module.ITEM_API.items() for method in methods]
    return out


def rest_routes() -> list[tuple[str, str]]:
    return [(template, method) for template, methods in rest.ROUTES.items() for method in methods]


def test_every_route_has_a_rule_and_every_rule_a_route() -> None:
    routes = set(app_routes()) | set(rest_routes())
    rules = {(path, method) for path, methods in app_module.NEEDS.items() for method in methods}
    assert routes - rules == set(), "routes without a rule in NEEDS"
    assert rules - routes == set(), "rules in NEEDS for no route"


def test_every_route_has_a_sample_here() -> None:
    assert set(app_routes()) - set(SAMPLES) == set(), "add a sample request for the new route"


def _call(world: World, kind: str, request: Request) -> httpx.Response:
    args = dict(request)
    return world.client(kind).request(args.pop("method"), args.pop("url"), **args)


def _normalised(response: httpx.Response, names: tuple[str, ...]) -> tuple[int, str]:
    text = response.text
    for name in names:
        text = re.sub(rf"\b{re.escape(name)}\b", "FOLDER", text)
    return response.status_code, re.sub(r"-\d+\b", "-N", text)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("route", "method"), sorted(SAMPLES))
def test_every_route_with_every_kind_of_caller(world: World, route: str, method: str, kind: str) -> None:
    need = app_module.NEEDS[route][method]
    sample = SAMPLES[(route, method)]
    n = next(_n)
    answer = _call(world, kind, sample(world, SEEN, n))
    if need != "open" and kind in DEAD:
        assert answer.status_code == 401, answer.text
        challenge = answer.headers["www-authenticate"]  # where to get a key: the MCP authorization spec's
        assert challenge.startswith("Bearer ")
        assert f'resource_metadata="{world.server.url}/.well-known/oauth-protected-resource/api"' in challenge
        assert ('error="invalid_token"' in challenge) == (kind != "none")
        return
    writes = need == "write" or (need == "admin")
    refused = (need == "admin" and kind != "admin") or (writes and kind in ("read_a", "read_all"))
    if refused:
        assert answer.status_code == 403, answer.text
        return
    assert answer.status_code < 300, f"{kind} {method} {route}: {answer.status_code} {answer.text}"
    if need in ("open", "admin") or kind == "admin":
        return
    # A folder the key does not see answers as one that does not exist, byte for byte but the name.
    asked = sample(world, HIDDEN, n + 10_000)
    if HIDDEN not in json.dumps(asked):
        return  # a route of no folder (its lists are checked below)
    hidden = _call(world, kind, asked)
    missing = _call(world, kind, sample(world, MISSING, n + 10_000))
    if kind == "read_all":
        assert hidden.status_code < 300, hidden.text  # it sees every folder
        return
    assert hidden.status_code >= 400, hidden.text
    assert _normalised(hidden, (HIDDEN,)) == _normalised(missing, (MISSING,))


def _fill(template: str, folder: str) -> str:
    return template.replace("{folder}", folder).replace("{path}", "doc.md").replace("{version}", "1")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("route", "method"), rest_routes())
def test_every_v1_route_keeps_the_table_and_the_folders(
    world: World, route: str, method: str, kind: str
) -> None:
    """/api/v1 (`rest.py`): who may call it is the table's, and a hidden folder answers as a missing one."""
    need = app_module.NEEDS[route][method]
    answer = world.client(kind).request(method, _fill(route, SEEN), json={})
    if need != "open" and kind in DEAD:
        assert answer.status_code == 401, answer.text
        assert answer.json()["code"] == "unauthorized"
        assert "resource_metadata=" in answer.headers["www-authenticate"]
        return
    if (need == "write" and kind in ("read_a", "read_all")) or (need == "admin" and kind != "admin"):
        assert answer.status_code == 403, answer.text
        assert answer.json()["code"] == "forbidden"
        return
    assert answer.status_code not in (401, 403), answer.text
    if answer.status_code >= 400:  # every error of /api/v1 is {error, code}
        assert set(answer.json()) == {"error", "code"}, answer.text
    if "{folder}" in route and kind in ("write_a", "read_a"):
        hidden = world.client(kind).request(method, _fill(route, HIDDEN), json={})
        missing = world.client(kind).request(method, _fill(route, MISSING), json={})
        assert _normalised(hidden, (HIDDEN,)) == _normalised(missing, (MISSING,))


# -- the OAuth routes: open, and the same answer whoever calls ----------------------------------------


@pytest.mark.parametrize("path", sorted(oauth.PATHS | {oauth.RESOURCE_METADATA + f"/mcp/{HIDDEN}"}))
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_every_oauth_route_is_open_and_answers_alike_for_every_caller(
    world: World, path: str, method: str
) -> None:
    """OAuth is how a client gets a key, so it never asks for one, and a key (or a dead one) changes
    nothing in its answers: not even the metadata of a folder the key does not see."""
    answers = {kind: world.client(kind).request(method, path) for kind in KINDS}
    anonymous = answers["none"]
    # never ragdown's own 401 (/revoke's is OAuth's client authentication, not a bearer token)
    assert "resource_metadata" not in anonymous.headers.get("www-authenticate", ""), anonymous.text
    for kind, answer in answers.items():
        assert (answer.status_code, answer.text) == (anonymous.status_code, anonymous.text), kind


# -- lists show only what the key sees ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["write_a", "read_a"])
def test_lists_hold_only_the_keys_folders(world: World, kind: str) -> None:
    client = world.client(kind)
    folders = client.get("/api/folders").json()
    assert [f["name"] for f in folders["folders"]] == [SEEN]
    assert folders["loose_files"] == []
    docs = client.get("/api/docs").json()["docs"]
    assert docs
    assert {d["folder"] for d in docs} == {SEEN}
    hits = client.get("/api/search", params={"q": "kiwi"}).json()["hits"]
    assert hits
    assert {h["path"].split("/")[0] for h in hits} == {SEEN}
    v1 = client.get("/api/v1/search", params={"query": "kiwi"}).json()["hits"]  # every folder it sees
    assert v1
    assert {(h["folder"], h["path"].split("/")[0]) for h in v1} == {(SEEN, SEEN)}
    named = {
        f: client.get("/api/v1/search", params={"query": "kiwi", "folder": f}) for f in (HIDDEN, MISSING)
    }
    assert named[HIDDEN].status_code == 404
    assert _normalised(named[HIDDEN], (HIDDEN,)) == _normalised(named[MISSING], (MISSING,))
    for folder in (SEEN, HIDDEN):  # the walk may have emptied a trash (DELETE /api/v1/…/trash)
        _trashed(world, f"{folder}/listed-{kind}.md")
    trash = client.get("/api/trash").json()["trash"]
    assert trash
    assert {t["path"].split("/")[0] for t in trash} == {SEEN}
    status = client.get("/api/status").json()
    assert status["access"]["folders"] == [SEEN]
    assert status["access"]["role"] == ("write" if kind == "write_a" else "read")


def test_the_admin_and_an_all_folders_key_see_every_folder(world: World) -> None:
    for kind in ("admin", "read_all"):
        names = [f["name"] for f in world.client(kind).get("/api/folders").json()["folders"]]
        assert {SEEN, HIDDEN} <= set(names), kind
        hits = world.client(kind).get("/api/v1/search", params={"query": "kiwi", "top_k": 10}).json()["hits"]
        assert {SEEN, HIDDEN} <= {h["folder"] for h in hits}, kind


# -- MCP: endpoints, tool sets, the root -------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _writes(tools: tuple[Any, ...]) -> set[str]:
    return {t.name for t in tools if t.writes}


@pytest.mark.anyio
@pytest.mark.parametrize("toolset", sorted(toolsets.SETS))
async def test_every_tool_of_every_tool_set_with_every_kind_of_caller(world: World, toolset: str) -> None:
    # Tools that need a model (`retrieve`) are offered only where one is configured: not in this world.
    every = {t.name for t in toolsets.SETS[toolset].tools if not t.needs_model}
    writes = _writes(toolsets.SETS[toolset].tools)  # none in markindex: it only reads
    path = f"/mcp/{SEEN}?toolset={toolset}"
    for kind, token in world.keys.kinds().items():
        if kind in DEAD:
            answer = world.client(kind).post(path, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert answer.status_code == 401, (kind, answer.text)
            continue
        async with mcp_client(world.server, path, token) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            if kind in ("read_a", "read_all"):
                assert listed == every - writes, (toolset, kind)
                for name in sorted(writes):  # refused as an unknown tool: nothing written
                    args = {"path": "x.md", "name": "x.md", "content": "x"}
                    if toolset == "hallouminate":  # as hallouminate's server refuses it: JSON-RPC -32602
                        with pytest.raises(MCPError) as refused:
                            await client.call_tool(name, {"corpus": SEEN, **args})
                        assert refused.value.code == -32602, refused.value
                        assert f"Unknown tool: {name}" in refused.value.message
                        continue
                    result = await client.call_tool(name, args)
                    assert result.is_error
                    assert "Unknown tool" in "".join(getattr(c, "text", "") for c in result.content)
            else:
                assert listed == every, (toolset, kind)


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["write_a", "read_a"])
async def test_a_hidden_folder_endpoint_is_a_missing_one(world: World, kind: str) -> None:
    client = world.client(kind)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    hidden, missing = client.post(f"/mcp/{HIDDEN}", json=body), client.post(f"/mcp/{MISSING}", json=body)
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json() == missing.json()
    sub = client.post(f"/mcp/{HIDDEN}/sub", json=body)
    assert sub.status_code == 404


@pytest.mark.anyio
@pytest.mark.parametrize("kind", KINDS)
async def test_the_root_endpoint_lists_and_searches_only_the_keys_folders(world: World, kind: str) -> None:
    token = world.keys.kinds()[kind]
    if kind in DEAD:
        answer = world.client(kind).post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert answer.status_code == 401
        return
    seen = {SEEN} if kind in ("write_a", "read_a") else {SEEN, HIDDEN}
    async with mcp_client(world.server, "/mcp", token) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        every = {t.name for t in ROOT_TOOLS}
        if kind == "admin":
            assert listed == every
        elif kind == "write_a":
            assert listed == every - {"ragdown_create_folder"}
        else:
            assert listed == every - _writes(ROOT_TOOLS)
        folders = await client.call_tool("ragdown_folders", {})
        names = {line.split(" — ")[0] for line in folders.content[0].text.splitlines()}  # type: ignore[union-attr]
        assert names == seen
        recall = await client.call_tool("ragdown_recall", {"query": "kiwi words", "format": "json"})
        hits = json.loads(recall.content[0].text)["hits"]  # type: ignore[union-attr]
        assert hits
        assert {h["folder"] for h in hits} == seen  # each JSON hit names its folder (and its path in it)
        resources = await client.list_resources()
        shown = {
            str(r.uri).split("//", 1)[1].split("/")[0]
            for r in resources.resources
            if str(r.uri).startswith("ragdown://")
        }
        assert shown == seen
        if HIDDEN not in seen:
            asked = await client.call_tool("ragdown_read_doc", {"folder": HIDDEN, "path": "doc.md"})
            absent = await client.call_tool("ragdown_read_doc", {"folder": MISSING, "path": "doc.md"})
            assert asked.is_error
            assert absent.is_error
            texts = [r.content[0].text.replace(n, "FOLDER") for r, n in ((asked, HIDDEN), (absent, MISSING))]  # type: ignore[union-attr]
            assert texts[0] == texts[1]
            with pytest.raises(Exception, match=r"not found|Resource"):
                await client.read_resource(f"ragdown://{HIDDEN}/doc.md")


# -- what a key learns of the server: its folders, never the others' counts nor the server's paths ------


def _documents(world: World, folder: str) -> int:
    """The Markdown documents of `folder` on disk now (what a sync of it walks)."""
    return sum(1 for p in (world.docs / folder).rglob("*.md") if not any(s.startswith(".") for s in p.parts))


def _no_server_path(world: World, text: str) -> None:
    for where in (str(world.docs), str(world.server.data)):
        assert where not in text, (where, text)


async def _tool_text(world: World, path: str, kind: str, tool: str, args: dict[str, Any]) -> str:
    async with mcp_client(world.server, path, world.keys.kinds()[kind]) as client:
        result = await client.call_tool(tool, args)
        text = "".join(getattr(c, "text", "") for c in result.content)
        assert not result.is_error, text
        return text


@pytest.mark.anyio
async def test_a_folder_keys_reindex_syncs_counts_and_re_embeds_only_its_folders(world: World) -> None:
    """Issue 8: a key's `ragdown_reindex` (and hallouminate's `index`) walks its folders only, says nothing
    of the others, and `full` re-embeds only them."""
    n = next(_n)
    for folder in (SEEN, HIDDEN):  # what other tests left on disk, indexed first
        await _tool_text(world, f"/mcp/{folder}", "admin", "ragdown_reindex", {})
    _on_disk(world, f"{SEEN}/outside-{n}.md", "# Made outside\n\nkiwi made outside.\n")
    _on_disk(world, f"{HIDDEN}/outside-{n}.md", "# Made outside\n\nkiwi made outside.\n")
    report = json.loads(await _tool_text(world, f"/mcp/{SEEN}", "write_a", "ragdown_reindex", {}))
    assert report["added"] == 1, report
    assert report["added"] + report["updated"] + report["unchanged"] == _documents(world, SEEN), report
    full = json.loads(await _tool_text(world, f"/mcp/{SEEN}", "write_a", "ragdown_reindex", {"full": True}))
    assert (full["added"], full["unchanged"], full["removed"]) == (_documents(world, SEEN), 0, 0), full
    # The other folder was neither synced (its new document is still unknown) nor dropped (still searched).
    hits = world.client("admin").get("/api/search", params={"folder": HIDDEN, "q": "kiwi"}).json()["hits"]
    assert {h["path"] for h in hits} >= {f"{HIDDEN}/doc.md"}
    assert f"{HIDDEN}/outside-{n}.md" not in {h["path"] for h in hits}
    hallouminate = f"/mcp/{SEEN}?toolset=hallouminate"
    indexed = json.loads(await _tool_text(world, hallouminate, "write_a", "index", {}))
    assert indexed["corpus"] == f"repo:{SEEN}:wiki"
    assert indexed["added"] + indexed["updated"] + indexed["unchanged"] == _documents(world, SEEN), indexed
    # At the root endpoint, with no folder named: the key's folders only, too.
    root = json.loads(await _tool_text(world, "/mcp", "write_a", "ragdown_reindex", {}))
    assert root["added"] + root["updated"] + root["unchanged"] == _documents(world, SEEN), root
    # The admin's reindex of the other folder finds what the key's left alone.
    other = json.loads(await _tool_text(world, f"/mcp/{HIDDEN}", "admin", "ragdown_reindex", {}))
    assert other["added"] == 1, other


PROMPT = "Quince marmalade: simmer the quinces for two hours."  # the words of the document below


@pytest.mark.anyio
async def test_stats_hook_and_hallouminate_show_a_key_folder_named_paths(world: World) -> None:
    """Issue 8: `ragdown_stats`, the hook block's `source=` and hallouminate's paths name the folder to a key,
    never the server's absolute paths; the admin (and the stdio user) see those."""
    _on_disk(world, f"{SEEN}/quince-{next(_n)}.md", f"# Quince\n\n{PROMPT}\n")
    await _tool_text(world, f"/mcp/{SEEN}", "admin", "ragdown_reindex", {})  # and what other tests left
    for kind in ("write_a", "read_a"):
        stats = await _tool_text(world, f"/mcp/{SEEN}", kind, "ragdown_stats", {"include_files": True})
        _no_server_path(world, stats)
        body = json.loads(stats)
        assert (body["docs_dir"], body["data_dir"], body["files"]) == (SEEN, None, _documents(world, SEEN))
        assert body["last_sync"] is None or set(body["last_sync"]) >= {"added", "unchanged", "at"}
        root_stats = json.loads(await _tool_text(world, "/mcp", kind, "ragdown_stats", {}))
        assert root_stats["docs_dir"] == "."
        context = await _tool_text(world, f"/mcp/{SEEN}", kind, "ragdown_context", {"prompt": PROMPT})
        assert context.startswith(f'<ragdown-context source="{SEEN}">'), context
        _no_server_path(world, context)
        hallouminate = f"/mcp/{SEEN}?toolset=hallouminate"
        corpora = json.loads(await _tool_text(world, hallouminate, kind, "list_corpora", {}))
        assert corpora[0]["paths"] == [SEEN]
        files = json.loads(await _tool_text(world, hallouminate, kind, "list_files", {}))
        assert files
        assert all(f["absolute_path"] == f"{SEEN}/{f['path']}" for f in files), files
        for tool, args in (("list_tree", {}), ("ground", {"query": "kiwi words"})):
            _no_server_path(world, await _tool_text(world, hallouminate, kind, tool, args))
    admin = json.loads(await _tool_text(world, f"/mcp/{SEEN}", "admin", "ragdown_stats", {}))
    assert admin["docs_dir"] == str(world.docs / SEEN)
    assert admin["data_dir"]
    context = await _tool_text(world, f"/mcp/{SEEN}", "admin", "ragdown_context", {"prompt": PROMPT})
    assert context.startswith(f'<ragdown-context source="{world.docs / SEEN}">'), context


def test_status_and_write_answers_count_only_the_keys_folders(world: World) -> None:
    """Issue 8: `/api/status` counts a key's folders only and shows no server path; the web API's sync
    report after a key's write counts (and syncs) the folder written only."""
    n = next(_n)
    _on_disk(world, f"{HIDDEN}/unsynced-{n}.md", "# Unsynced\n")
    client = world.client("write_a")
    written = client.post("/api/doc", json={"path": f"{SEEN}/web-{n}.md", "text": "# Web\n"})
    assert written.status_code == 201, written.text
    sync = written.json()["sync"]
    assert sync["added"] + sync["updated"] + sync["unchanged"] == _documents(world, SEEN), sync
    status = client.get("/api/status")
    _no_server_path(world, status.text)
    body = status.json()
    assert body["access"]["folders"] == [SEEN]
    assert body["files"] == _documents(world, SEEN)
    admin = world.client("admin").get("/api/status").json()
    assert admin["files"] > body["files"]
