"""REST API v1 (`/api/v1`) against `ragdown serve`'s app in-process: the file routes, versions, search and
outline, the errors `{error, code}`, and what each kind of key may do (`http/rest.py`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragdown.access.keys import KeyStore
from ragdown.cli.client import commands as client_commands
from ragdown.cli.client.remote import Remote, Target
from ragdown.http.openapi import document
from ragdown.http.rest import routes as rest
from tests.conftest import BOTH_BACKENDS, pile, write
from tests.http.conftest import Server, StartServer

V1 = "/api/v1/folders"
# The tests that take `index_env` run on SQLite and on PostgreSQL (`tests/conftest.py`); the others on SQLite.
INDEX_BACKENDS = BOTH_BACKENDS


def seed(docs: Path) -> None:
    write(
        docs,
        "work/a.md",
        "# Alpha\n\nNightly snapshots of the billing database.\n\n## Restore\n\nRun pg_restore.\n",
    )
    write(docs, "work/notes/b.md", "# Bee\n\nSee [[a]] for the backups.\n")
    write(docs, "lab/c.md", "# Lab\n\nThe centrifuge protocol.\n")


@pytest.fixture
def server(start_app: StartServer, docs: Path) -> Server:
    seed(docs)
    return start_app(docs)


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def refused(response: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert isinstance(body["error"], str)
    assert body["error"]
    assert isinstance(body.get("code"), str), body  # every /api/v1 error is {error, code}
    if code is not None:
        assert body["code"] == code, body
    return body


def test_list_and_read(server: Server) -> None:
    api = server.api
    body = ok(api.get(f"{V1}/work/files"))
    assert [f["name"] for f in body["files"]] == ["a.md", "notes/b.md"]
    assert body["total"] == 2
    assert body["returned"] == 2
    assert all(f["createdAt"] <= f["updatedAt"] for f in body["files"])
    page = ok(api.get(f"{V1}/work/files", params={"limit": 1, "offset": 1, "preview_bytes": 5}))
    assert [(f["name"], f["preview"]) for f in page["files"]] == [("notes/b.md", "# Bee")]
    assert page["total"] == 2
    assert page["returned"] == 1
    assert [f["name"] for f in ok(api.get(f"{V1}/work/files", params={"prefix": "notes"}))["files"]] == [
        "notes/b.md"
    ]

    whole = ok(api.get(f"{V1}/work/files/a.md"))
    assert whole["content"].startswith("# Alpha")
    assert whole["partial"] is False
    assert whole["totalLines"] == 7
    assert len(whole["hash"]) == 64
    part = ok(api.get(f"{V1}/work/files/a.md", params={"start_line": 5, "end_line": 7}))
    assert part["content"] == "## Restore\n\nRun pg_restore."
    assert (part["start_line"], part["end_line"], part["partial"]) == (5, 7, True)
    # a subfolder's document, its path's slash sent as such or percent-encoded
    assert ok(api.get(f"{V1}/work/files/notes/b.md"))["name"] == "notes/b.md"
    assert ok(api.get(f"{V1}/work/files/notes%2Fb.md"))["name"] == "notes/b.md"

    refused(api.get(f"{V1}/work/files/missing.md"), 404, "not_found")
    refused(api.get(f"{V1}/work/files/a.png"), 400, "invalid")
    refused(api.get(f"{V1}/work/files/..%2F..%2Fetc%2Fpasswd.md"), 400, "invalid")
    refused(api.get(f"{V1}/work/files/a.md", params={"start_line": 0}), 400, "invalid")
    refused(api.get(f"{V1}/work/files", params={"limit": 501}), 400, "invalid")
    refused(api.get(f"{V1}/nowhere/files"), 404, "not_found")


def test_create_put_and_conflicts(server: Server) -> None:
    api = server.api
    created = ok(
        api.post(f"{V1}/work/files", json={"name": "new/n.md", "content": "# N\n\n[[nothing]]\n"}), 201
    )
    assert created["created"] is True
    assert created["name"] == "new/n.md"
    assert created["warnings"] == ["line 3: [[nothing]] links to nothing in this folder"]
    assert (server.docs / "work/new/n.md").read_text() == "# N\n\n[[nothing]]\n"
    # POST creates only
    taken = refused(api.post(f"{V1}/work/files", json={"name": "new/n.md", "content": "x"}), 409, "conflict")
    assert taken["error"] == "new/n.md already exists"  # its folder-relative path, the directory too
    assert (server.docs / "work/new/n.md").read_text() == "# N\n\n[[nothing]]\n"

    # PUT with a stale base_hash changes nothing; with the hash it read, it replaces
    stale = refused(
        api.put(f"{V1}/work/files/new/n.md", json={"content": "# Lost\n", "base_hash": "0" * 64}),
        409,
        "changed",
    )
    assert "changed" in stale["error"]
    current = ok(api.get(f"{V1}/work/files/new/n.md"))["hash"]
    replaced = ok(api.put(f"{V1}/work/files/new/n.md", json={"content": "# N2\n", "base_hash": current}))
    assert replaced["created"] is False
    assert replaced["hash"] != current
    # PUT without base_hash overwrites (ReadmeDB's PUT); the old version stays in the history
    ok(api.put(f"{V1}/work/files/new/n.md", json={"content": "# N3\n"}))
    assert (server.docs / "work/new/n.md").read_text() == "# N3\n"
    versions = ok(api.get(f"{V1}/work/files/new/n.md/history"))["versions"]
    assert [v["version"] for v in versions] == [3, 2, 1]
    assert {(v["who"], v.get("session")) for v in versions} == {("rest", "admin")}
    # PUT of a new document creates it: 201
    assert ok(api.put(f"{V1}/work/files/p.md", json={"content": "# P\n"}), 201)["created"] is True

    # bad bodies change nothing
    refused(
        api.post(f"{V1}/work/files", content=b"{not json", headers={"content-type": "application/json"}), 400
    )
    refused(api.post(f"{V1}/work/files", json=["a"]), 400, "invalid")
    refused(api.post(f"{V1}/work/files", json={"name": "z.md"}), 400, "invalid")
    refused(api.put(f"{V1}/work/files/z.md", json={"content": 5}), 400, "invalid")
    refused(api.post(f"{V1}/work/files", json={"name": "z.png", "content": "x"}), 400, "invalid")
    lone_surrogate = b'{"name": "z.md", "content": "\\ud800"}'
    refused(api.post(f"{V1}/work/files", content=lone_surrogate), 400, "invalid")
    assert not (server.docs / "work/z.md").exists()
    assert not (server.docs / "work/z.png").exists()


def test_append_patch_edit(server: Server) -> None:
    api = server.api
    write(server.docs, "work/t.md", "# T\n\n## One\n\nfirst\n\n## Two\n\nsecond\n")
    done = ok(api.post(f"{V1}/work/files/t.md/append", json={"content": "added", "heading": "One"}))
    assert done["created"] is False
    assert (server.docs / "work/t.md").read_text() == "# T\n\n## One\n\nfirst\n\nadded\n\n## Two\n\nsecond\n"
    ok(api.post(f"{V1}/work/files/t.md/append", json={"content": "last"}))
    assert (server.docs / "work/t.md").read_text().endswith("second\n\nlast\n")
    assert ok(api.post(f"{V1}/work/files/fresh.md/append", json={"content": "# Fresh\n"}))["created"]
    assert (server.docs / "work/fresh.md").read_text() == "# Fresh\n"
    refused(api.post(f"{V1}/work/files/none.md/append", json={"content": "x", "heading": "H"}), 404)

    write(server.docs, "work/p.md", "one two one two one\n")
    assert (
        ok(
            api.post(
                f"{V1}/work/files/p.md/patch", json={"find": "one", "replace": "1", "occurrence_index": 1}
            )
        )["replaced"]
        == 1
    )
    assert (server.docs / "work/p.md").read_text() == "one two 1 two one\n"
    assert (
        ok(api.post(f"{V1}/work/files/p.md/patch", json={"find": "two", "replace": "2", "all": True}))[
            "replaced"
        ]
        == 2
    )
    refused(
        api.post(f"{V1}/work/files/p.md/patch", json={"find": "zzz", "replace": "y"}), 404, "PATCH_NOT_FOUND"
    )
    refused(
        api.post(f"{V1}/work/files/p.md/patch", json={"find": "one", "replace": "y", "occurrence_index": 9}),
        400,
        "PATCH_OUT_OF_RANGE",
    )
    edits = [{"old_text": "one 2", "new_text": "ONE 2"}, {"old_text": "1", "new_text": "uno"}]
    assert ok(api.post(f"{V1}/work/files/p.md/edit", json={"edits": edits}))["replaced"] == 2
    assert (server.docs / "work/p.md").read_text() == "ONE 2 uno 2 one\n"
    # all or nothing: the second passage is not there, so the first is not replaced either
    bad = [{"old_text": "ONE", "new_text": "x"}, {"old_text": "absent", "new_text": "y"}]
    refused(api.post(f"{V1}/work/files/p.md/edit", json={"edits": bad}), 404)
    assert (server.docs / "work/p.md").read_text() == "ONE 2 uno 2 one\n"


def test_every_change_says_when_it_answers_before_the_index_has_it(
    start_app: StartServer, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`RAGDOWN_WRITE_WAIT=0`: each change answers at once, its `notes` saying the index is still syncing,
    and the CLI client prints them; the change is made and indexed all the same."""
    seed(docs)
    server = start_app(docs, RAGDOWN_WRITE_WAIT="0")
    api = server.api
    pending = "the index is still syncing"
    answers: dict[str, Any] = {}
    # Each change's sync has a pile of new notes to index first, so it runs well past the answer.
    pile(docs, "work/pile-write")
    answers["write"] = ok(
        api.put(f"{V1}/work/files/new.md", json={"content": "# New\n\nzebra crossing\n"}), 201
    )
    pile(docs, "work/pile-move")
    answers["move"] = ok(api.post(f"{V1}/work/files/new.md/move", json={"to": "moved.md"}))
    pile(docs, "work/pile-delete")
    answers["delete"] = ok(api.delete(f"{V1}/work/files/moved.md"))
    first = ok(api.get(f"{V1}/work/files/moved.md/history"))["versions"][-1]["version"]
    pile(docs, "work/pile-restore")
    answers["restore"] = ok(api.post(f"{V1}/work/files/moved.md/restore", json={"version": first}))
    for change, answer in answers.items():
        assert [note[: len(pending)] for note in answer["notes"]] == [pending], (change, answer)
    assert (docs / "work/moved.md").read_text() == "# New\n\nzebra crossing\n"
    assert server.app is not None
    server.app.runtime.engine.sync()
    hits = ok(api.get(f"{V1}/work/search", params={"query": "zebra crossing"}))["hits"]
    assert [hit["path"] for hit in hits[:1]] == ["moved.md"]

    remote = Remote(Target(url=server.url, key=None))
    remote.http = server.api
    pile(docs, "work/pile-rm")
    capsys.readouterr()
    client_commands.rm(
        argparse.Namespace(path="work/moved.md", base_hash=None, purge=False, json=False), remote
    )
    said = capsys.readouterr()
    assert (
        said.out
        == "deleted work/moved.md (in the trash: ragdown trash lists it, ragdown restore brings it back)\n"
    )
    assert said.err.startswith(f"note: {pending}")


def test_without_the_history_the_trash_says_it_keeps_nothing(start_app: StartServer, docs: Path) -> None:
    seed(docs)
    api = start_app(docs, RAGDOWN_HISTORY="false").api
    assert ok(api.delete(f"{V1}/work/files/a.md"))["trash"] is False
    assert ok(api.get(f"{V1}/work/trash")) == {"enabled": False, "trash": []}


def test_move_delete_history_restore(server: Server) -> None:
    api = server.api
    moved = ok(api.post(f"{V1}/work/files/a.md/move", json={"to": "ops/backups.md"}))
    assert (moved["from"], moved["to"], moved["updated"]) == ("a.md", "ops/backups.md", ["notes/b.md"])
    assert "[[backups]]" in (server.docs / "work/notes/b.md").read_text()
    refused(api.post(f"{V1}/work/files/notes/b.md/move", json={"to": "ops/backups.md"}), 409, "conflict")

    ok(api.put(f"{V1}/work/files/ops/backups.md", json={"content": "# Backups v2\n"}))
    deleted = ok(api.delete(f"{V1}/work/files/ops/backups.md"))
    assert deleted == {"ok": True, "name": "ops/backups.md", "trash": True, "notes": []}
    assert not (server.docs / "work/ops/backups.md").exists()
    refused(api.delete(f"{V1}/work/files/ops/backups.md"), 404, "not_found")
    trash = ok(api.get(f"{V1}/work/trash"))
    assert trash["enabled"] is True
    assert [(e["path"], e["last"]["event"]) for e in trash["trash"]] == [("ops/backups.md", "deleted")]
    assert ok(api.get(f"{V1}/lab/trash")) == {"enabled": True, "trash": []}
    assert "ops/backups.md" not in [f["name"] for f in ok(api.get(f"{V1}/work/files"))["files"]]

    history = ok(api.get(f"{V1}/work/files/ops/backups.md/history"))
    assert history["deleted"] is True
    first = history["versions"][-1]["version"]
    old = ok(api.get(f"{V1}/work/files/ops/backups.md/versions/{first}"))
    assert old["content"].startswith("# Alpha")
    assert old["version"] == first
    refused(api.get(f"{V1}/work/files/ops/backups.md/versions/99"), 404)
    refused(api.get(f"{V1}/work/files/ops/backups.md/versions/x"), 400, "invalid")
    both = ok(api.get(f"{V1}/work/files/ops/backups.md/diff", params={"from": first, "to": first + 1}))
    assert "-# Alpha" in both["diff"]
    assert "+# Backups v2" in both["diff"]
    refused(api.get(f"{V1}/work/files/ops/backups.md/diff", params={"from": first}), 404)  # not on disk

    back = ok(api.post(f"{V1}/work/files/ops/backups.md/restore", json={"version": first}))
    assert ok(api.get(f"{V1}/work/trash"))["trash"] == []
    assert back["version"] == first
    assert back["new_version"] == history["versions"][0]["version"] + 1
    assert (server.docs / "work/ops/backups.md").read_text().startswith("# Alpha")
    current = ok(api.get(f"{V1}/work/files/ops/backups.md/diff", params={"from": first}))
    assert current["diff"].startswith("no differences")
    refused(
        api.post(f"{V1}/work/files/ops/backups.md/restore", json={"version": first, "base_hash": "f" * 64}),
        409,
        "changed",
    )


def test_search_and_outline(server: Server) -> None:
    api = server.api
    hits = ok(api.get(f"{V1}/work/search", params={"query": "pg_restore", "top_k": 3}))["hits"]
    assert hits
    assert hits[0]["path"] == "a.md"
    assert hits[0]["heading"] == "Alpha › Restore"
    assert all(not h["path"].startswith("lab") for h in hits)
    refused(api.get(f"{V1}/work/search"), 400, "invalid")
    refused(api.get(f"{V1}/work/search", params={"query": "x", "top_k": 0}), 400, "invalid")

    outline = ok(api.get(f"{V1}/work/outline"))["text"]
    assert "a.md — Alpha" in outline
    assert "notes/b.md — Bee" in outline
    sections = ok(api.get(f"{V1}/work/outline", params={"path": "a.md", "depth": 3}))["text"]
    assert "Restore" in sections
    tree = ok(api.get(f"{V1}/work/files/a.md/outline"))
    assert tree["name"] == "a.md"
    assert tree["tree"]["title"] == "Alpha"


def test_a_search_over_every_folder_ranks_their_hits_together(
    start_app: StartServer, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One search over the folders, not one per folder merged: a folder's best hit is the best of its own
    pools, and each folder's scores the same at the top whatever it holds, so a stray word in `attic/` came
    before the answer in `help/`. `/api/v1/search` ranks every folder's hits on one scale; the client uses
    it; a key searches its folders only."""
    write(docs, "attic/weather.md", "# Weather\n\nA snapshot of the sky over the harbour.\n")
    write(docs, "help/backups.md", "# Restore\n\nRestore a restic snapshot with restic restore latest.\n")
    write(docs, "help/cooking.md", "# Soup\n\nOnions, stock and time.\n")
    write(docs, "help/garden.md", "# Garden\n\nWater the tomatoes at dusk.\n")
    store = KeyStore(docs)
    attic_only, _ = store.create("attic-reader", ["attic"], "read")
    server = start_app(docs)
    api = server.api
    query: dict[str, str | int] = {"query": "restic restore snapshot", "top_k": 3}
    hits = ok(api.get("/api/v1/search", params=query))["hits"]
    assert [(h["folder"], h["path"]) for h in hits[:2]] == [
        ("help", "help/backups.md"),
        ("attic", "attic/weather.md"),
    ]
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert hits[0]["score"] > hits[1]["score"]  # one scale: the answer outranks a stray word elsewhere
    assert hits[0]["heading"] == "Restore"

    # Named folders only (repeated), each checked: a folder the key does not see is a missing one.
    only = ok(
        api.get("/api/v1/search", params=[("query", "snapshot"), ("folder", "attic"), ("folder", "attic")])
    )
    assert [h["path"] for h in only["hits"]] == ["attic/weather.md"]
    both = ok(
        api.get("/api/v1/search", params=[("query", "snapshot"), ("folder", "help"), ("folder", "attic")])
    )
    assert {h["folder"] for h in both["hits"]} == {"help", "attic"}
    refused(api.get("/api/v1/search", params={"query": "x", "folder": "nowhere"}), 404, "not_found")
    refused(api.get("/api/v1/search"), 400, "invalid")
    key = server.client(token=attic_only)
    assert {h["folder"] for h in ok(key.get("/api/v1/search", params=query))["hits"]} == {"attic"}
    hidden = refused(key.get("/api/v1/search", params={"query": "x", "folder": "help"}), 404, "not_found")
    missing = refused(key.get("/api/v1/search", params={"query": "x", "folder": "nowhere"}), 404, "not_found")
    assert hidden["error"].replace("help", "X") == missing["error"].replace("nowhere", "X")

    # `ragdown search QUERY`, the client, prints the server's one ranking.
    remote = Remote(Target(url=server.url, key=None))
    remote.http = server.api
    capsys.readouterr()
    asked = argparse.Namespace(
        dir="restic restore snapshot", top_k=3, path_prefix=None, tag=None, folder=None, json=False
    )
    client_commands.search(asked, remote)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines[:2]] == ["help/backups.md", "attic/weather.md"]
    assert " — Restore (similarity " in lines[0]


def test_an_unknown_query_parameter_or_body_field_is_refused_with_the_names(server: Server) -> None:
    """Issue 16: a name a route does not take is a 400 naming the nearest and every name it takes, as an
    MCP tool refuses it, and changes nothing (its URL's own names and the fixed ones are not taken either)."""
    api = server.api
    body = refused(api.get(f"{V1}/work/search", params={"query": "backups", "topk": 3}), 400, "invalid")
    assert body["error"].startswith("unknown query parameter 'topk' (did you mean 'top_k'?); the query ")
    assert "parameters are query, top_k, path_prefix" in body["error"]
    body = refused(api.get(f"{V1}/work/search", params={"query": "x", "format": "text"}), 400, "invalid")
    assert "unknown query parameter 'format'" in body["error"], body
    body = refused(api.put(f"{V1}/work/files/new.md", json={"content": "# N\n", "basehash": "x"}), 400)
    assert body["error"] == (
        "unknown body field 'basehash' (did you mean 'base_hash'?); the body fields are content, base_hash"
    )
    refused(api.put(f"{V1}/work/files/new.md", json={"content": "# N\n", "name": "other.md"}), 400)
    edit = {"edits": [{"old_text": "Nightly", "newtext": "Daily"}]}
    body = refused(api.post(f"{V1}/work/files/a.md/edit", json=edit), 400, "invalid")
    assert "unknown argument 'edits.0.newtext' (did you mean 'new_text'?)" in body["error"], body
    assert not (server.docs / "work/new.md").exists()
    assert not (server.docs / "work/other.md").exists()
    assert "Nightly" in (server.docs / "work/a.md").read_text()


def test_whoami_folders_and_the_dispatch(server: Server) -> None:
    api = server.api
    assert ok(api.get("/api/v1/whoami")) == {"who": "admin", "role": "admin", "folders": None, "key_id": None}
    names = [(f["name"], f["files"], f["writable"]) for f in ok(api.get("/api/v1/folders"))["folders"]]
    assert names == [("lab", 1, True), ("work", 2, True)]
    unknown = server.anonymous.get(f"{V1}/work/files")
    refused(unknown, 401, "unauthorized")
    challenge = unknown.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert challenge == (
        f'Bearer resource_metadata="{server.url}/.well-known/oauth-protected-resource/api", realm="ragdown", '
        f'authorization_server="{server.url}"'
    )
    refused(api.patch(f"{V1}/work/files/a.md", json={}), 405, "method_not_allowed")
    refused(api.get("/api/v1/nothing"), 404, "no_route")
    refused(
        server.anonymous.get("/api/v1/whoami", headers={"Host": "rebound.example.net"}), 421, "misdirected"
    )
    refused(api.get("/api/v1/whoami", headers={"Origin": "https://elsewhere.example.net"}), 403, "forbidden")
    too_big = "x" * (4 * 1024 * 1024 + 1)
    refused(api.put(f"{V1}/work/files/big.md", json={"content": too_big}), 413, "too_large")
    assert api.head(f"{V1}/work/files/a.md").status_code == 200


def test_read_only_server_refuses_writes(start_app: StartServer, docs: Path) -> None:
    seed(docs)
    server = start_app(docs, RAGDOWN_READ_ONLY="true")
    api = server.api
    refused(api.put(f"{V1}/work/files/a.md", json={"content": "x"}), 403, "forbidden")
    refused(api.delete(f"{V1}/work/files/a.md"), 403, "forbidden")
    assert (docs / "work/a.md").read_text().startswith("# Alpha")
    assert ok(api.get(f"{V1}/work/files/a.md"))["name"] == "a.md"
    assert [f["writable"] for f in ok(api.get("/api/v1/folders"))["folders"]] == [False, False]


def test_keys_see_their_folders_and_write_by_role(start_app: StartServer, docs: Path) -> None:
    seed(docs)
    store = KeyStore(docs)
    reader, _ = store.create("reader", ["work"], "read")
    writer, _ = store.create("writer", ["work"], "write")
    server = start_app(docs)
    read, write_key = server.client(token=reader), server.client(token=writer)

    who = ok(read.get("/api/v1/whoami"))
    assert (who["who"], who["role"], who["folders"]) == ("key:reader", "read", ["work"])
    assert [f["name"] for f in ok(read.get("/api/v1/folders"))["folders"]] == ["work"]
    assert ok(read.get(f"{V1}/work/files/a.md"))["name"] == "a.md"
    # another folder is, to this key, a folder that is not there: the same answer as a missing one
    hidden = refused(read.get(f"{V1}/lab/files"), 404, "not_found")
    missing = refused(read.get(f"{V1}/nowhere/files"), 404, "not_found")
    assert hidden["error"].replace("lab", "X") == missing["error"].replace("nowhere", "X")
    refused(read.get(f"{V1}/lab/files/c.md"), 404, "not_found")
    refused(read.get(f"{V1}/lab/search", params={"query": "centrifuge"}), 404)
    # a read key writes nothing
    refused(read.put(f"{V1}/work/files/a.md", json={"content": "x"}), 403, "forbidden")
    refused(read.post(f"{V1}/work/files/a.md/restore", json={"version": 1}), 403)
    assert (docs / "work/a.md").read_text().startswith("# Alpha")

    assert ok(write_key.put(f"{V1}/work/files/w.md", json={"content": "# W\n"}), 201)["created"]
    refused(write_key.put(f"{V1}/lab/files/w.md", json={"content": "# W\n"}), 404, "not_found")
    assert not (docs / "lab/w.md").exists()
    versions = ok(write_key.get(f"{V1}/work/files/w.md/history"))["versions"]
    assert versions[0]["session"] == "key:writer"
    refused(server.client(token="rdk_not-a-key").get("/api/v1/whoami"), 401)


def test_a_write_key_retires_no_document_of_another_folder(
    start_app: StartServer, docs: Path, index_env: dict[str, str]
) -> None:
    """A write key for `work` wrote work/x.md with `supersedes: ["../lab/c.md"]`: lab/c.md left lab's search
    and `/api/docs?folder=lab` showed it superseded by work's note. `..` out of the folder names nothing, on
    every write face and in the indexer, and the write's lints say so; within the folder it still retires."""
    seed(docs)
    writer, _ = KeyStore(docs).create("writer", ["work"], "write")
    server = start_app(docs, **index_env)
    key, admin = server.client(token=writer), server.api
    escaping = '---\nsupersedes: ["../lab/c.md", "../work/a.md"]\n---\n# X\n\nThe centrifuge protocol v2.\n'
    put = ok(key.put(f"{V1}/work/files/x.md", json={"content": escaping}), 201)
    assert put["warnings"] == [
        "line 2: supersedes ../lab/c.md names no document in this folder",
        "line 2: supersedes ../work/a.md names no document in this folder",
    ]
    posted = ok(key.post("/api/doc", json={"path": "work/y.md", "text": escaping}), 201)
    assert posted["warnings"] == put["warnings"]
    write(docs, "work/z.md", escaping)  # edited on disk: the indexer's own reading
    assert server.app is not None
    assert server.app.runtime.engine.sync()["added"] == 1

    lab = ok(admin.get("/api/docs", params={"folder": "lab"}))["docs"]
    assert [(d["path"], d["superseded_by"]) for d in lab] == [("lab/c.md", [])]
    hits = ok(admin.get("/api/search", params={"q": "centrifuge protocol", "folder": "lab"}))["hits"]
    assert [h["path"] for h in hits] == ["lab/c.md"]
    found = ok(admin.get(f"{V1}/lab/search", params={"query": "centrifuge protocol"}))
    assert "c.md" in json.dumps(found)
    work = {
        d["path"]: d["superseded_by"] for d in ok(admin.get("/api/docs", params={"folder": "work"}))["docs"]
    }
    assert work["work/a.md"] == []

    # within its folder, supersedes retires as it always did
    retiring = '---\nsupersedes: ["a.md"]\n---\n# A2\n'
    assert ok(key.put(f"{V1}/work/files/a2.md", json={"content": retiring}), 201)["warnings"] == []
    work = {
        d["path"]: d["superseded_by"] for d in ok(admin.get("/api/docs", params={"folder": "work"}))["docs"]
    }
    assert work["work/a.md"] == ["work/a2.md"]


def test_every_endpoint_is_in_the_document_with_its_arguments() -> None:
    doc = document()
    assert doc["openapi"].startswith("3.1")
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    for ep in rest.ENDPOINTS:
        op = doc["paths"][ep.path][ep.method.lower()]
        documented = {p["name"] for p in op["parameters"]}
        if ep.in_body:
            documented |= set(op["requestBody"]["content"]["application/json"]["schema"]["properties"])
        schema = ep.args.model_json_schema(mode="validation")
        expected = (
            (set(schema.get("properties", {})) - ep.hidden)
            | set(ep.url_fields)
            | ({"folder"} if ep.under_folder else set())
        )
        assert documented == expected, ep.operation_id
        codes = set(op["responses"])
        assert {"400", "401", "403", "429", str(ep.status)} <= codes
        if ep.writes:
            assert {"402", "409", "413", "404"} <= codes
    json.dumps(doc)  # it encodes


def test_the_document_is_served_without_a_token(server: Server) -> None:
    served = ok(server.anonymous.get("/api/openapi.json"))
    assert served == json.loads(json.dumps(document()))


def test_quotas_refuse_and_report(start_app: StartServer, docs: Path) -> None:
    seed(docs)
    write(docs, "lab/.ragdown.json", json.dumps({"max_files": 2, "max_file_bytes": 40}))
    api = start_app(docs).api
    made = ok(api.post(f"{V1}/lab/files", json={"name": "d.md", "content": "# D\n"}), 201)
    assert made["quota"]["text"].startswith("2/2 files")
    refused(api.post(f"{V1}/lab/files", json={"name": "e.md", "content": "# E\n"}), 402, "over_quota")
    refused(api.put(f"{V1}/lab/files/d.md", json={"content": "x" * 41}), 413, "too_large")
    assert not (docs / "lab/e.md").exists()
    assert (docs / "lab/d.md").read_text() == "# D\n"
    assert ok(api.put(f"{V1}/work/files/a.md", json={"content": "# A\n"}))["quota"] is None


def test_documents_take_ragdowns_size_limits_not_the_readmedb_sets(
    start_app: StartServer, docs: Path
) -> None:
    """`/api/v1` is ragdown's REST, not ReadmeDB's: a document may be 8 MiB (the body 4 MiB), as through
    every face but the readmedb tool set's 1 MB; a folder's `max_file_bytes` holds REST to 1 MB too."""
    seed(docs)
    write(docs, "lab/.ragdown.json", json.dumps({"max_file_bytes": 1024 * 1024}))
    api = start_app(docs).api
    two_mb = "x" * (2 * 1024 * 1024)
    assert ok(api.put(f"{V1}/work/files/big.md", json={"content": two_mb}), 201)["sizeBytes"] == len(two_mb)
    held = refused(api.put(f"{V1}/lab/files/big.md", json={"content": two_mb}), 413, "too_large")
    assert "max_file_bytes" in held["error"]
    assert not (docs / "lab/big.md").exists()
