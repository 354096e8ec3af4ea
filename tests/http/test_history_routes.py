"""The version history's `/api` routes (`/api/history`, `/api/version`, `/api/diff`, `/api/restore`,
`/api/trash`) against the app of `ragdown serve` in-process: their answers, their refusals (400, 403, 404,
409, 503), and that a restore through them is written through the door and recorded as `web`."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import write
from tests.http.conftest import Server, StartServer

FIRST = "# Notes\n\nThe first text.\n"
SECOND = "# Notes\n\nThe second text.\n"
THIRD = "# Notes\n\nThe third text, from the web.\n"
OUTSIDE = "# Notes\n\nChanged outside ragdown.\n"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def notes_folder(docs: Path) -> None:
    write(docs, "ops/notes.md", FIRST)
    write(docs, "ops/other.md", "# Other\n\nUntouched.\n")
    write(docs, "ops/sync.md", "# Sync\n")


def save(api: httpx.Client, path: str, text: str) -> dict[str, Any]:
    answer = api.post("/api/doc", json={"path": path, "text": text, "overwrite": True})
    assert answer.status_code in (200, 201), answer.text
    body: dict[str, Any] = answer.json()
    return body


def four_versions(server: Server) -> httpx.Client:
    """ops/notes.md changed twice through the web and once on disk (seen by the sync of another write)."""
    api = server.api
    save(api, "ops/notes.md", SECOND)
    save(api, "ops/notes.md", THIRD)
    write(server.docs, "ops/notes.md", OUTSIDE)
    save(api, "ops/sync.md", "# Sync\n\nA write that syncs the folder.\n")
    return api


def history_of(api: httpx.Client, path: str) -> dict[str, Any]:
    answer = api.get("/api/history", params={"path": path})
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_history_lists_versions_newest_first_with_who_and_when(docs: Path, start_app: StartServer) -> None:
    notes_folder(docs)
    server = start_app(docs)
    api = four_versions(server)
    body = history_of(api, "ops/notes.md")
    assert body["path"] == "ops/notes.md"
    assert body["deleted"] is False
    versions = body["versions"]
    assert [v["version"] for v in versions] == [4, 3, 2, 1]
    assert [(v["who"], v["event"]) for v in versions] == [
        ("external", "changed"),
        ("web", "changed"),
        ("web", "changed"),
        ("before", "original"),
    ]
    assert [v["hash"] for v in versions] == [sha(OUTSIDE), sha(THIRD), sha(SECOND), sha(FIRST)]
    for v in versions:
        assert v["at"].endswith("Z")
        assert "T" in v["at"]
        assert v["size"] > 0
        assert v["lines"] == 3
        assert "session" not in v


def test_a_version_is_read_whole(docs: Path, start_app: StartServer) -> None:
    notes_folder(docs)
    server = start_app(docs)
    api = four_versions(server)
    answer = api.get("/api/version", params={"path": "ops/notes.md", "version": 2})
    assert answer.status_code == 200
    body = answer.json()
    assert body["text"] == SECOND
    assert {k: body[k] for k in ("path", "version", "who", "event", "hash", "size", "lines")} == {
        "path": "ops/notes.md",
        "version": 2,
        "who": "web",
        "event": "changed",
        "hash": sha(SECOND),
        "size": len(SECOND.encode()),
        "lines": 3,
    }


def test_diff_between_two_versions_or_against_the_file_on_disk(docs: Path, start_app: StartServer) -> None:
    notes_folder(docs)
    server = start_app(docs)
    api = four_versions(server)
    two = api.get("/api/diff", params={"path": "ops/notes.md", "from": 1, "to": 2})
    assert two.status_code == 200
    body = two.json()
    assert (body["path"], body["from"], body["to"]) == ("ops/notes.md", 1, 2)
    lines = body["diff"].splitlines()
    assert lines[0].startswith("--- notes.md@v1")
    assert lines[1].startswith("+++ notes.md@v2")
    assert "-The first text." in lines
    assert "+The second text." in lines
    disk = api.get("/api/diff", params={"path": "ops/notes.md", "from": 2}).json()
    assert disk["to"] is None
    assert "+++ notes.md (on disk)" in disk["diff"]
    assert "+Changed outside ragdown." in disk["diff"].splitlines()
    tight = api.get("/api/diff", params={"path": "ops/notes.md", "from": 1, "to": 2, "context_lines": 0})
    assert " # Notes" not in tight.json()["diff"].splitlines()
    same = api.get("/api/diff", params={"path": "ops/notes.md", "from": 4}).json()
    assert same["diff"].startswith("no differences")


def test_the_read_routes_refuse_bad_requests(docs: Path, start_app: StartServer) -> None:
    notes_folder(docs)
    server = start_app(docs)
    api = four_versions(server)

    def status(route: str, **params: Any) -> tuple[int, str]:
        answer = api.get(route, params=params)
        return answer.status_code, answer.json().get("error", "")

    assert status("/api/history")[0] == 400
    assert status("/api/version", path="ops/notes.md")[0] == 400
    for bad in ("0", "-1", "one", "1.5"):
        assert status("/api/version", path="ops/notes.md", version=bad)[0] == 400
        assert status("/api/diff", path="ops/notes.md", **{"from": bad})[0] == 400
        assert status("/api/diff", path="ops/notes.md", **{"from": "1", "to": bad})[0] == 400
    assert status("/api/diff", path="ops/notes.md")[0] == 400
    assert status("/api/diff", path="ops/notes.md", context_lines="21", **{"from": "1"})[0] == 400
    assert status("/api/diff", path="ops/notes.md", context_lines="x", **{"from": "1"})[0] == 400

    code, message = status("/api/history", path="ops/other.md")
    assert code == 404
    assert "no recorded versions yet" in message
    code, message = status("/api/history", path="ops/never.md")
    assert code == 404
    assert "live or deleted" in message
    assert status("/api/history", path="nowhere/notes.md")[0] == 404
    assert status("/api/history", path="notes.md")[0] == 404
    code, message = status("/api/version", path="ops/notes.md", version="9")
    assert code == 404
    assert "versions are 1 to 4" in message
    assert status("/api/diff", path="ops/notes.md", **{"from": "1", "to": "9"})[0] == 404
    assert status("/api/diff", path="ops/other.md", **{"from": "1"})[0] == 404


def test_restore_writes_a_new_version_recorded_as_web(docs: Path, start_app: StartServer) -> None:
    notes_folder(docs)
    server = start_app(docs)
    api = four_versions(server)
    answer = api.post("/api/restore", json={"path": "ops/notes.md", "version": 2, "base_hash": sha(OUTSIDE)})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["path"], body["version"], body["new_version"]) == ("ops/notes.md", 2, 5)
    assert body["hash"] == sha(SECOND)
    assert "updated" in body["sync"]
    assert (docs / "ops/notes.md").read_text() == SECOND
    newest = history_of(api, "ops/notes.md")["versions"][0]
    assert (newest["version"], newest["who"], newest["event"], newest["hash"]) == (
        5,
        "web",
        "restored",
        sha(SECOND),
    )
    # The index follows the restore: the document reads as restored.
    assert api.get("/api/doc", params={"path": "ops/notes.md"}).json()["text"] == SECOND


def test_restore_refuses_a_stale_base_hash_and_bad_bodies(docs: Path, start_app: StartServer) -> None:
    notes_folder(docs)
    server = start_app(docs)
    api = four_versions(server)
    stale = api.post("/api/restore", json={"path": "ops/notes.md", "version": 1, "base_hash": sha(THIRD)})
    assert stale.status_code == 409
    assert stale.json()["code"] == "changed"
    assert (docs / "ops/notes.md").read_text() == OUTSIDE
    for body in (
        {"version": 1},
        {"path": 5, "version": 1},
        {"path": "ops/notes.md"},
        {"path": "ops/notes.md", "version": "1"},
        {"path": "ops/notes.md", "version": True},
        {"path": "ops/notes.md", "version": 0},
        {"path": "ops/notes.md", "version": 1.5},
        {"path": "ops/notes.md", "version": 1, "base_hash": 7},
        ["ops/notes.md", 1],
    ):
        assert api.post("/api/restore", json=body).status_code == 400, body
    assert api.post("/api/restore", content=b"{not json").status_code == 400
    assert api.post("/api/restore", json={"path": "ops/notes.md", "version": 9}).status_code == 404
    assert api.post("/api/restore", json={"path": "ops/never.md", "version": 1}).status_code == 404
    assert api.post("/api/restore", json={"path": "nowhere/notes.md", "version": 1}).status_code == 404
    assert (docs / "ops/notes.md").read_text() == OUTSIDE
    assert len(history_of(api, "ops/notes.md")["versions"]) == 4


def test_a_deleted_document_is_in_the_trash_and_restore_brings_it_back(
    docs: Path, start_app: StartServer
) -> None:
    notes_folder(docs)
    write(docs, "misc/x.md", "# X\n")
    server = start_app(docs)
    api = four_versions(server)
    assert api.get("/api/trash", params={"folder": "ops"}).json() == {"enabled": True, "trash": []}
    assert api.delete("/api/doc", params={"path": "ops/notes.md"}).status_code == 200
    assert not (docs / "ops/notes.md").exists()

    trash = api.get("/api/trash", params={"folder": "ops"}).json()
    assert trash["enabled"] is True
    [entry] = trash["trash"]
    assert entry["path"] == "ops/notes.md"
    assert entry["deleted_at"].endswith("Z")
    # The last version is the delete itself: who deleted it (the web UI), with the bytes it had.
    assert (
        entry["last"]["version"],
        entry["last"]["who"],
        entry["last"]["event"],
        entry["last"]["hash"],
    ) == (
        5,
        "web",
        "deleted",
        sha(OUTSIDE),
    )
    assert [e["path"] for e in api.get("/api/trash").json()["trash"]] == ["ops/notes.md"]
    assert api.get("/api/trash", params={"folder": "misc"}).json()["trash"] == []
    assert api.get("/api/trash", params={"folder": "nowhere"}).status_code == 404

    gone = history_of(api, "ops/notes.md")
    assert gone["deleted"] is True
    assert [v["version"] for v in gone["versions"]] == [5, 4, 3, 2, 1]
    assert api.get("/api/diff", params={"path": "ops/notes.md", "from": 1}).status_code == 404
    assert api.get("/api/diff", params={"path": "ops/notes.md", "from": 1, "to": 3}).status_code == 200

    back = api.post("/api/restore", json={"path": "ops/notes.md", "version": 3})
    assert back.status_code == 200, back.text
    assert back.json()["new_version"] == 6
    assert (docs / "ops/notes.md").read_text() == THIRD
    assert api.get("/api/trash", params={"folder": "ops"}).json()["trash"] == []
    again = history_of(api, "ops/notes.md")
    assert again["deleted"] is False
    assert (again["versions"][0]["who"], again["versions"][0]["event"]) == ("web", "restored")
    assert api.get("/api/doc", params={"path": "ops/notes.md"}).status_code == 200


def test_restore_of_a_deleted_document_refuses_to_replace_a_new_one(
    docs: Path, start_app: StartServer
) -> None:
    notes_folder(docs)
    server = start_app(docs)
    api = four_versions(server)
    assert api.delete("/api/doc", params={"path": "ops/notes.md"}).status_code == 200
    write(docs, "ops/notes.md", "# A new document at the same path\n")
    answer = api.post("/api/restore", json={"path": "ops/notes.md", "version": 1})
    assert answer.status_code == 409
    assert (docs / "ops/notes.md").read_text() == "# A new document at the same path\n"


def test_read_only_refuses_restore_but_reads_the_history(docs: Path, start_app: StartServer) -> None:
    notes_folder(docs)
    server = start_app(docs, RAGDOWN_READ_ONLY="true")
    api = server.api
    answer = api.post("/api/restore", json={"path": "ops/notes.md", "version": 1})
    assert answer.status_code == 403
    assert "read-only" in answer.json()["error"]
    assert api.post("/api/restore", content=b"{not json").status_code == 403
    assert api.get("/api/history", params={"path": "ops/notes.md"}).status_code == 404
    assert api.get("/api/trash", params={"folder": "ops"}).json() == {"enabled": True, "trash": []}
    assert (docs / "ops/notes.md").read_text() == FIRST


def test_the_routes_need_the_token(docs: Path, start_app: StartServer) -> None:
    notes_folder(docs)
    server = start_app(docs)
    anonymous = server.anonymous
    assert anonymous.get("/api/history", params={"path": "ops/notes.md"}).status_code == 401
    assert anonymous.get("/api/version", params={"path": "ops/notes.md", "version": 1}).status_code == 401
    assert anonymous.get("/api/diff", params={"path": "ops/notes.md", "from": 1}).status_code == 401
    assert anonymous.post("/api/restore", json={"path": "ops/notes.md", "version": 1}).status_code == 401
    assert anonymous.get("/api/trash").status_code == 401


def test_with_the_history_off_the_trash_is_disabled(docs: Path, start_app: StartServer) -> None:
    notes_folder(docs)
    server = start_app(docs, RAGDOWN_HISTORY="false")
    api = server.api
    save(api, "ops/notes.md", SECOND)
    assert api.get("/api/trash", params={"folder": "ops"}).json() == {"enabled": False, "trash": []}
    assert api.get("/api/history", params={"path": "ops/notes.md"}).status_code == 503
    assert api.post("/api/restore", json={"path": "ops/notes.md", "version": 1}).status_code == 503
