"""A folder's quotas (`max_files`, `max_bytes`, `max_file_bytes` in `.ragdown.json`) on every write path:
ragdown's tools (write, append, edit, remember, restore), `/api` (the web UI's save and restore), REST
`/api/v1` (create, append, put, restore: 413 for a file too large, 402 over a quota), the readmedb set (write, append, patch, restore) and the hallouminate set (add_markdown), against a real
`ragdown serve` (one for the module). Each refuses before writing, says the limit and the usage, and the
write answers report usage; a move is never refused."""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from tests.conftest import start_serve, write
from tests.http.conftest import TOKEN, Server, _server_env
from tests.http.keyed import mcp_client

pytestmark = pytest.mark.anyio
_n = itertools.count()
V1 = "/api/v1/folders"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("quota")
    docs = home / "docs"
    write(docs, "seed/.ragdown.json", json.dumps({"mcp": True}))
    write(docs, "seed/a.md", "# A\n")
    env = _server_env(docs, home / "data", TOKEN, {"RAGDOWN_RATE_LIMIT": "0"})
    process = start_serve(home, env)
    served = Server(process.url, TOKEN, docs, home / "data", process=process)
    try:
        served.wait_synced()
        yield served
    finally:
        served.stop()


def new_folder(server: Server, **settings: Any) -> str:
    name = f"q{next(_n)}"
    write(server.docs, f"{name}/.ragdown.json", json.dumps({"mcp": True, "index_md": False, **settings}))
    return name


def set_limits(server: Server, folder: str, **limits: Any) -> None:
    path = server.docs / folder / ".ragdown.json"
    data = json.loads(path.read_text())
    data.update(limits)
    path.write_text(json.dumps(data))


def files_in(server: Server, folder: str) -> list[str]:
    return sorted(p.name for p in (server.docs / folder).rglob("*.md"))


# -- the write paths, each as `create` (a new document) and `grow` (a document made larger) ---------


@dataclass
class Said:
    ok: bool
    text: str
    status: int | None = None  # the HTTP status, for /api


Write = Callable[[Server, str, str, str], Awaitable[Said]]


async def _tool(server: Server, folder: str, toolset: str, tool: str, args: dict[str, Any]) -> Said:
    async with mcp_client(server, f"/mcp/{folder}?toolset={toolset}", TOKEN) as client:
        try:
            result = await client.call_tool(tool, args)
        except MCPError as err:  # hallouminate says failures as JSON-RPC errors
            return Said(False, str(err))
    text = "".join(getattr(c, "text", "") for c in result.content)
    return Said(not result.is_error, text)


async def _api(server: Server, method: str, url: str, body: dict[str, Any]) -> Said:
    answer = server.api.request(method, url, json=body)
    return Said(answer.status_code < 300, answer.text, answer.status_code)


WRITERS: dict[str, tuple[Write, Write]] = {
    "ragdown_write": (
        lambda s, f, name, text: _tool(s, f, "ragdown", "ragdown_write", {"path": name, "text": text}),
        lambda s, f, name, text: _tool(s, f, "ragdown", "ragdown_write", {"path": name, "text": text, "append": True}),
    ),
    "ragdown_remember/edit": (
        lambda s, f, name, text: _tool(
            s, f, "ragdown", "ragdown_remember", {"title": "T", "content": text, "name": name.removesuffix(".md")}
        ),
        lambda s, f, name, text: _tool(
            s, f, "ragdown", "ragdown_edit", {"path": f"notes/{name}", "edits": [{"old_text": "T", "new_text": text}]}
        ),
    ),
    "api": (
        lambda s, f, name, text: _api(s, "POST", "/api/doc", {"path": f"{f}/{name}", "text": text}),
        lambda s, f, name, text: _api(s, "POST", "/api/doc", {"path": f"{f}/{name}", "text": text * 2, "overwrite": True}),
    ),
    "rest": (  # /api/v1: create, then append
        lambda s, f, name, text: _api(s, "POST", f"{V1}/{f}/files", {"name": name, "content": text}),
        lambda s, f, name, text: _api(s, "POST", f"{V1}/{f}/files/{name}/append", {"content": text}),
    ),
    "rest_put": (  # /api/v1: write, then replace
        lambda s, f, name, text: _api(s, "PUT", f"{V1}/{f}/files/{name}", {"content": text}),
        lambda s, f, name, text: _api(s, "PUT", f"{V1}/{f}/files/{name}", {"content": text * 2}),
    ),
    "readmedb": (
        lambda s, f, name, text: _tool(s, f, "readmedb", "write_file", {"name": name, "content": text}),
        lambda s, f, name, text: _tool(s, f, "readmedb", "append_to_file", {"name": name, "content": text}),
    ),
    "readmedb_patch": (
        lambda s, f, name, text: _tool(s, f, "readmedb", "append_to_file", {"name": name, "content": text}),
        lambda s, f, name, text: _tool(s, f, "readmedb", "patch_file", {"name": name, "find": "x", "replace": text}),
    ),
    "hallouminate": (
        lambda s, f, name, text: _tool(s, f, "hallouminate", "add_markdown", {"corpus": f, "path": name, "content": text}),
        lambda s, f, name, text: _tool(
            s, f, "hallouminate", "add_markdown", {"corpus": f, "path": name, "content": text * 2, "overwrite": True}
        ),
    ),
}  # fmt: skip


def refused_for(said: Said, words: str, status: int) -> None:
    assert not said.ok, said.text
    assert words in said.text, said.text
    if said.status is not None:
        assert said.status == status, said.text


@pytest.mark.parametrize("path", sorted(WRITERS))
async def test_max_files_refuses_one_more_document(server: Server, path: str) -> None:
    create, _ = WRITERS[path]
    folder = new_folder(server, max_files=2)
    assert (await create(server, folder, "one.md", "x first\n")).ok
    second = await create(server, folder, "two.md", "x second\n")
    assert second.ok, second.text
    assert "2/2" in second.text  # the answer reports the usage (ReadmeDB's "2/2", ragdown's "2/2 files")
    third = await create(server, folder, "three.md", "x third\n")
    refused_for(third, "max_files", 402)
    assert "2/2" in third.text
    assert "three.md" not in files_in(server, folder)


@pytest.mark.parametrize("path", sorted(WRITERS))
async def test_max_bytes_refuses_a_write_past_the_folders_size(server: Server, path: str) -> None:
    create, grow = WRITERS[path]
    folder = new_folder(server, max_bytes=120)
    assert (await create(server, folder, "one.md", "x" * 50)).ok
    before = sorted((p.name, p.read_bytes()) for p in (server.docs / folder).rglob("*.md"))
    grown = await grow(server, folder, "one.md", "y" * 90)
    refused_for(grown, "max_bytes", 402)
    assert "(max_bytes; now 1 file, " in grown.text  # says the usage
    assert "/120 bytes)" in grown.text
    assert sorted((p.name, p.read_bytes()) for p in (server.docs / folder).rglob("*.md")) == before


@pytest.mark.parametrize("path", sorted(WRITERS))
async def test_max_file_bytes_refuses_a_document_too_large(server: Server, path: str) -> None:
    create, _ = WRITERS[path]
    folder = new_folder(server, max_file_bytes=100)
    big = await create(server, folder, "big.md", "x" * 150)
    refused_for(big, "max_file_bytes", 413)
    assert "100 bytes" in big.text
    assert files_in(server, folder) == []
    assert (await create(server, folder, "small.md", "x" * 20)).ok


async def test_an_edit_that_shrinks_is_allowed_over_a_quota_and_a_move_always(server: Server) -> None:
    folder = new_folder(server)
    for name in ("a.md", "b.md", "c.md"):
        assert (await _api(server, "POST", "/api/doc", {"path": f"{folder}/{name}", "text": "x" * 80})).ok
    linking = {"path": f"{folder}/c.md", "text": "See [[a]].\n", "overwrite": True}
    assert (await _api(server, "POST", "/api/doc", linking)).ok
    set_limits(server, folder, max_files=2, max_bytes=100, max_file_bytes=50)  # now over all three
    shrink = await _api(
        server, "POST", "/api/doc", {"path": f"{folder}/a.md", "text": "x" * 10, "overwrite": True}
    )
    assert shrink.ok, shrink.text
    body = json.loads(shrink.text)
    assert body["quota"]["text"] == "3/2 files, 101/100 bytes"
    assert (body["quota"]["files"], body["quota"]["max_files"]) == (3, 2)
    moved = await _tool(server, folder, "ragdown", "ragdown_move", {"from": "a.md", "to": "sub/a-moved.md"})
    assert moved.ok, moved.text
    assert "quota: 3/2 files" in moved.text


# -- restores: the same door -----------------------------------------------------------------------


async def _readmedb_restore(server: Server, folder: str, name: str, version: int) -> Said:
    """restore_version takes the history's global id: the file's `version`-th, oldest first."""
    history = await _tool(server, folder, "readmedb", "get_file_history", {"name": name})
    ids = [v["id"] for v in json.loads(history.text)][::-1]
    return await _tool(
        server, folder, "readmedb", "restore_version", {"name": name, "version_id": ids[version - 1]}
    )


RESTORERS: dict[str, Callable[[Server, str, str, int], Awaitable[Said]]] = {
    "ragdown_restore": lambda s, f, name, v: _tool(s, f, "ragdown", "ragdown_restore", {"path": name, "version": v}),
    "api": lambda s, f, name, v: _api(s, "POST", "/api/restore", {"path": f"{f}/{name}", "version": v}),
    "rest": lambda s, f, name, v: _api(s, "POST", f"{V1}/{f}/files/{name}/restore", {"version": v}),
    "readmedb": _readmedb_restore,
}  # fmt: skip


@pytest.mark.parametrize("path", sorted(RESTORERS))
async def test_restoring_a_larger_version_is_checked(server: Server, path: str) -> None:
    folder = new_folder(server)
    for text in ("x" * 150, "x" * 10):
        assert (
            await _api(
                server, "POST", "/api/doc", {"path": f"{folder}/a.md", "text": text, "overwrite": True}
            )
        ).ok
    set_limits(server, folder, max_file_bytes=100)
    refused_for(await RESTORERS[path](server, folder, "a.md", 1), "max_file_bytes", 413)
    set_limits(server, folder, max_file_bytes=None, max_bytes=100)
    refused_for(await RESTORERS[path](server, folder, "a.md", 1), "max_bytes", 402)
    assert (server.docs / folder / "a.md").read_text() == "x" * 10


@pytest.mark.parametrize("path", sorted(RESTORERS))
async def test_restoring_a_deleted_document_into_a_full_folder_leaves_it_in_the_trash(
    server: Server, path: str
) -> None:
    folder = new_folder(server)
    assert (await _api(server, "POST", "/api/doc", {"path": f"{folder}/gone.md", "text": "# Gone\n"})).ok
    assert server.api.delete("/api/doc", params={"path": f"{folder}/gone.md"}).status_code == 200
    assert (await _api(server, "POST", "/api/doc", {"path": f"{folder}/here.md", "text": "# Here\n"})).ok
    set_limits(server, folder, max_files=1)
    refused_for(await RESTORERS[path](server, folder, "gone.md", 1), "max_files", 402)
    assert not (server.docs / folder / "gone.md").exists()
    trash = server.api.get("/api/trash", params={"folder": folder}).json()["trash"]
    assert [t["path"] for t in trash] == [f"{folder}/gone.md"]


# -- settings and reports --------------------------------------------------------------------------


def test_the_admin_sets_quotas_on_a_folder_and_bad_values_change_nothing(server: Server) -> None:
    folder = new_folder(server)
    api = server.api
    answer = api.patch(f"/api/folders/{folder}", json={"max_files": 50, "max_bytes": 5 * 1024 * 1024})
    assert answer.status_code == 200, answer.text
    shown = answer.json()["folder"]
    assert (shown["max_files"], shown["max_bytes"]) == (50, 5 * 1024 * 1024)
    assert shown["quota"]["text"] == "0/50 files, 0.00/5 MB"
    for bad in ({"max_files": 0}, {"max_bytes": "5MB"}, {"max_file_bytes": 1.5}, {"max_files": True}):
        refused = api.patch(f"/api/folders/{folder}", json=bad)
        assert refused.status_code == 400, bad
        assert next(iter(bad)) in refused.json()["error"]
    saved = json.loads((server.docs / folder / ".ragdown.json").read_text())
    assert (saved["max_files"], saved["max_bytes"]) == (50, 5 * 1024 * 1024)
    assert (
        api.patch(f"/api/folders/{folder}", json={"max_files": None}).json()["folder"].get("max_files")
        is None
    )


async def test_readmedb_reports_usage_against_the_quota(server: Server) -> None:
    folder = new_folder(server, max_files=50, max_bytes=5 * 1024 * 1024)
    written = await _tool(
        server, folder, "readmedb", "write_file", {"name": "notes.md", "content": "x" * 52_429}
    )
    assert written.ok, written.text
    body = json.loads(written.text)
    assert (body["files"], body["storage"]) == ("1/50", "0.05/5 MB")
    server.wait_synced()
    summary = json.loads((await _tool(server, folder, "readmedb", "get_namespace_summary", {})).text)
    assert summary["maxFiles"] == 50
    assert summary["filesUsedPct"] == 2
    assert summary["maxStorageBytes"] == 5 * 1024 * 1024
    assert summary["storageUsedPct"] == 1
    assert summary["maxMB"] == "5"
    assert (summary["files"], summary["storage"]) == ("1/50", "0.05/5 MB")
    plain = new_folder(server)
    summary = json.loads((await _tool(server, plain, "readmedb", "get_namespace_summary", {})).text)
    # no quota: the server's ceilings, numbers all the same (a client divides by them)
    assert (summary["maxFiles"], summary["filesUsedPct"], summary["maxMB"]) == (10_000_000, 0, "1073741824")
    assert (summary["files"], summary["maxStorageBytes"]) == ("0/10000000", 1 << 50)
    assert "quotaUsage" not in summary


def test_a_folder_without_quota_answers_without_one(server: Server) -> None:
    folder = new_folder(server)
    answer = server.api.post("/api/doc", json={"path": f"{folder}/a.md", "text": "# A\n"})
    assert answer.status_code == 201
    assert "quota" not in answer.json()
    shown = next(f for f in server.api.get("/api/folders").json()["folders"] if f["name"] == folder)
    assert "quota" not in shown


def test_quota_values_in_the_file_that_are_not_valid_are_not_applied(server: Server) -> None:
    folder = new_folder(server, max_files="two", max_file_bytes=-5)
    answer = server.api.post("/api/doc", json={"path": f"{folder}/a.md", "text": "x" * 500})
    assert answer.status_code == 201, answer.text
    assert "quota is not applied" in server.log.read_text()
