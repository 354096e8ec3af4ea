"""The behaviour spec's `http.test` and A12 route table: against the app of `ragdown serve` in-process
(`start_app`, through httpx's ASGI transport), and over real HTTP to a real `ragdown serve` process
(`start_server`) for what only the process shows: its refusal to start unprotected and uvicorn's
keep-alive."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO, isolated_env, write
from tests.http.conftest import TOKEN, StartServer, ops_folder

BAD_PATHS = [
    "../ops/x.md",
    "/etc/x.md",
    "ops/../../x.md",
    "ops/.obsidian/x.md",
    "ops/node_modules/x.md",
    "ops/x.png",
    "loose.md",
    "nofolder/x.md",
    "ops\\x.md",
    "ops/%2e%2e/x.md",
    "C:/ops/x.md",
    "ops/link/x.md",
]


def serve_once(tmp_path: Path, docs: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`ragdown serve` run to its end: for the refusals that stop it before it serves."""
    return subprocess.run(
        [sys.executable, "-m", "ragdown.cli", "serve"],
        cwd=REPO,
        env=isolated_env(tmp_path, RAGDOWN_DOCS_DIR=str(docs), **env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_refuses_to_start_without_a_token_or_secure_local_net(tmp_path: Path, docs: Path) -> None:
    done = serve_once(tmp_path, docs, PORT="0")
    assert done.returncode == 2
    assert "RAGDOWN_TOKEN" in done.stderr
    assert "SECURE_LOCAL_NET" in done.stderr


def test_a_port_another_server_holds_is_refused_before_anything_starts(tmp_path: Path, docs: Path) -> None:
    """The socket is bound first: a port in use is one clear line and exit code 2, with no index opened
    and no model loaded first (uvicorn alone binds after the app's start-up)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = serve_once(tmp_path, docs, SECURE_LOCAL_NET="true", RAGDOWN_HOST="127.0.0.1", PORT=str(port))
    assert done.returncode == 2, done.stderr
    assert f"ragdown: cannot listen on 127.0.0.1:{port} (Address already in use)" in done.stderr
    assert "set PORT to another port" in done.stderr
    assert "serving" not in done.stderr
    assert "embedder" not in done.stderr


def test_keep_alive_is_75_seconds_or_what_it_is_told(docs: Path, start_server: StartServer) -> None:
    ops_folder(docs)
    assert httpx.get(start_server(docs, wait=False).url + "/api/status").headers["keep-alive"] == "timeout=75"
    other = start_server(docs, wait=False, data=docs.parent / "data2", HTTP_KEEP_ALIVE_TIMEOUT_MS="5000")
    assert httpx.get(other.url + "/api/status").headers["keep-alive"] == "timeout=5"


def test_status_is_open_and_mcp_is_guarded(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    server = start_app(docs)
    raw = server.anonymous.get("/api/status")
    assert raw.status_code == 200
    assert TOKEN not in raw.text
    # Without the token: liveness only, nothing of the index, its folders, settings or paths.
    anyone = raw.json()
    assert anyone == {
        "name": "ragdown",
        "version": anyone["version"],
        "ready": True,
        "auth_required": True,
        "access": None,
    }
    assert anyone["version"]
    assert str(docs) not in raw.text
    status = server.api.get("/api/status").json()
    assert (status["files"], status["chunks"], status["ready"], status["auth_required"]) == (1, 2, True, True)
    assert status["index"] == "sqlite"
    assert status["settings"]["hook"] == {
        "top_k": 4,
        "min_score": 0.2,
        "min_ratio": 0,
        "max_chars": 6000,
        "unrelated_score": None,
    }
    assert server.anonymous.post("/mcp/ops").status_code == 401
    assert server.client(token="wrong").post("/mcp/ops").status_code == 401
    assert server.client(token="wrong").get("/api/folders").json() == {"error": "Unauthorized"}
    assert server.anonymous.get("/api/context").status_code == 404
    assert server.anonymous.get("/api/nope").status_code == 404


def test_lists_and_reads_documents_behind_the_token(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    write(docs, "ops/stray.png", "not markdown")
    server = start_app(docs)
    assert server.anonymous.get("/api/docs").status_code == 401
    listing = server.api.get("/api/docs", params={"folder": "ops"}).json()["docs"]
    assert [d["path"] for d in listing] == ["ops/backups.md"]
    assert listing[0]["chunks"] == 2
    assert server.api.get("/api/docs", params={"folder": "nope"}).status_code == 404
    doc = server.api.get("/api/doc", params={"path": "ops/backups.md"}).json()
    assert doc["hash"] == hashlib.sha256((docs / "ops/backups.md").read_bytes()).hexdigest()
    assert doc["text"].startswith("# Backups")
    assert "<h2" in doc["html"]
    assert server.api.get("/api/doc", params={"path": "ops/stray.png"}).status_code == 404
    assert server.api.get("/api/doc", params={"path": "../etc/passwd"}).status_code == 404
    assert server.api.get("/api/doc").status_code == 400


def test_an_upload_is_indexed_before_the_answer(docs: Path, start_app: StartServer, tmp_path: Path) -> None:
    ops_folder(docs)
    write(docs, "loose.md", "# Loose\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (docs / "ops/link").symlink_to(outside, target_is_directory=True)
    server = start_app(docs)
    api = server.api
    created = api.post("/api/doc", json={"path": "ops/new/kiwi.md", "text": "# Kiwi\n\nkiwi fruit\n"})
    assert created.status_code == 201
    assert created.json()["created"] is True
    hits = api.get("/api/search", params={"folder": "ops", "q": "kiwi fruit"}).json()["hits"]
    assert hits[0]["path"] == "ops/new/kiwi.md"
    assert api.post("/api/doc", json={"path": "ops/new/kiwi.md", "text": "x"}).status_code == 409
    over = api.post(
        "/api/doc", json={"path": "ops/new/kiwi.md", "text": "# Kiwi\n\nmango\n", "overwrite": True}
    )
    assert over.status_code == 200
    edit = api.post(
        "/api/doc",
        json={"path": "ops/new/kiwi.md", "text": "# Kiwi\n\npapaya\n", "base_hash": over.json()["hash"]},
    )
    assert edit.status_code == 200
    stale = api.post(
        "/api/doc", json={"path": "ops/new/kiwi.md", "text": "x", "base_hash": over.json()["hash"]}
    )
    assert stale.status_code == 409
    assert stale.json()["code"] == "changed"
    for bad in BAD_PATHS:
        answer = api.post("/api/doc", json={"path": bad, "text": "x"})
        assert answer.status_code == 400, (bad, answer.text)
    assert not any(outside.iterdir())
    assert api.post("/api/doc", json={"path": "ops/a.md"}).status_code == 400
    assert api.put("/api/doc", json={"path": "ops/a.md", "text": "x"}).status_code == 405
    too_big = api.post(
        "/api/doc", content=b'{"path": "ops/big.md", "text": "' + b"x" * (4 * 1024 * 1024 + 10) + b'"}'
    )
    assert too_big.status_code == 413


def test_crlf_is_kept_when_saving_over_a_crlf_file(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    write(docs, "ops/win.md", b"# Win\r\n\r\nold\r\n")
    server = start_app(docs)
    doc = server.api.get("/api/doc", params={"path": "ops/win.md"}).json()
    saved = server.api.post(
        "/api/doc", json={"path": "ops/win.md", "text": "# Win\n\nnew\n", "base_hash": doc["hash"]}
    )
    assert saved.status_code == 200
    assert (docs / "ops/win.md").read_bytes() == b"# Win\r\n\r\nnew\r\n"


def test_a_delete_drops_the_file_from_the_index(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    server = start_app(docs)
    api = server.api
    gone = api.delete("/api/doc", params={"path": "ops/backups.md"})
    assert gone.status_code == 200
    assert gone.json()["sync"]["removed"] == 1
    assert api.get("/api/docs", params={"folder": "ops"}).json()["docs"] == []
    assert api.delete("/api/doc", params={"path": "ops/backups.md"}).status_code == 404
    assert api.delete("/api/doc", params={"path": "../x.md"}).status_code == 400
    assert api.delete("/api/doc", params={"path": "ops/x.png"}).status_code == 400
    assert api.delete("/api/doc").status_code == 400


def test_read_only_refuses_writes_but_not_settings(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    write(docs, "loose.md", "# Loose\n")
    server = start_app(docs, RAGDOWN_READ_ONLY="true")
    api = server.api
    assert api.post("/api/doc", json={"path": "ops/x.md", "text": "x"}).status_code == 403
    assert api.delete("/api/doc", params={"path": "ops/backups.md"}).status_code == 403
    assert api.post("/api/folders", json={"name": "new"}).status_code == 403
    assert api.patch("/api/folders/ops", json={"name": "renamed"}).status_code == 403
    assert api.delete("/api/folders/ops", params={"confirm": "ops"}).status_code == 403
    assert api.delete("/api/loose", params={"name": "loose.md"}).status_code == 403
    assert api.patch("/api/settings", json={"text_limit": 10}).status_code == 403
    toggled = api.patch("/api/folders/ops", json={"mcp": False, "title": "Ops", "hook": {"top_k": 2}})
    assert toggled.status_code == 200
    assert toggled.json()["folder"] == {
        **toggled.json()["folder"],
        "mcp": False,
        "title": "Ops",
        "hook": {"top_k": 2},
    }
    assert (docs / "ops/backups.md").exists()


def test_the_web_ui_is_served_with_index_html_as_the_fallback(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    server = start_app(docs, wait=False)
    root = server.anonymous.get("/")
    assert root.status_code == 200
    assert "<html" in root.text.lower()
    for path in ("/folders/ops", "/a/b/c", "/%E0%A4%A", "/..%2f..%2fetc%2fpasswd"):
        again = server.anonymous.get(path)
        assert again.status_code == 200
        assert again.text == root.text
    assert server.anonymous.post("/").status_code == 404


def test_folders_are_listed_created_renamed_and_deleted(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    write(docs, "loose.md", "# Loose\n\nloose words\n")
    server = start_app(docs)
    api = server.api
    listing = api.get("/api/folders").json()
    assert listing["loose_files"] == ["loose.md"]
    assert listing["folders"] == [
        {
            "name": "ops",
            "title": "Operations",
            "mcp": True,
            "hook": {},
            "mcp_path": "/mcp/ops",
            "files": 1,
            "chunks": 2,
        }
    ]
    assert all(
        h["path"] != "loose.md" for h in api.get("/api/search", params={"q": "loose words"}).json()["hits"]
    )
    made = api.post("/api/folders", json={"name": "home", "title": "Home"})
    assert made.status_code == 201
    assert json.loads((docs / "home/.ragdown.json").read_text()) == {"title": "Home", "mcp": False}
    assert api.post("/api/folders", json={"name": "home"}).status_code == 409
    for bad in (".hidden", "-dash", "a/b", "..", "", "node_modules"):
        assert api.post("/api/folders", json={"name": bad}).status_code == 400, bad
    assert api.patch("/api/folders/nope", json={"title": "x"}).status_code == 404
    for bad_body in ({"hook": {"top_k": 1.5}}, {"hook": {"min_ratio": 2}}, {"hook": "x"}, {"mcp": "yes"}):
        assert api.patch("/api/folders/ops", json=bad_body).status_code == 400, bad_body
    assert api.patch("/api/folders/ops", json={"name": "home"}).status_code == 409
    write(docs, "ops/.ragdown.json", json.dumps({"title": "Operations", "mcp": True, "custom": 1}))
    api.patch("/api/folders/ops", json={"hook": {"top_k": 3, "min_score": 0.5}})
    api.patch("/api/folders/ops", json={"hook": {"top_k": None}})
    assert json.loads((docs / "ops/.ragdown.json").read_text()) == {
        "title": "Operations",
        "mcp": True,
        "custom": 1,
        "hook": {"min_score": 0.5},
    }
    api.patch("/api/folders/ops", json={"hook": {}})
    assert "hook" not in json.loads((docs / "ops/.ragdown.json").read_text())
    renamed = api.patch("/api/folders/ops", json={"name": "infra"})
    assert renamed.status_code == 200
    assert renamed.json()["folder"]["files"] == 1
    assert [d["path"] for d in api.get("/api/docs").json()["docs"]] == ["infra/backups.md"]
    assert api.delete("/api/folders/infra", params={"confirm": "Infra"}).status_code == 400
    assert api.delete("/api/folders/missing", params={"confirm": "missing"}).status_code == 404
    deleted = api.delete("/api/folders/infra", params={"confirm": "infra"})
    assert deleted.status_code == 200
    assert deleted.json()["sync"]["removed"] == 1
    assert not (docs / "infra").exists()


def test_a_settings_file_with_a_typo_is_never_written_over_and_a_renamed_folder_keeps_its_trash(
    docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    typo = '{"mcp": true, "title": "Odd", "mynote": "keep me",}'
    write(docs, "odd/.ragdown.json", typo)
    write(docs, "odd/a.md", "# A\n")
    server = start_app(docs)
    api = server.api
    refused = api.patch("/api/folders/odd", json={"title": "New"})
    assert refused.status_code == 409
    assert "not valid JSON" in refused.json()["error"]
    assert (docs / "odd/.ragdown.json").read_text() == typo

    assert api.delete("/api/doc", params={"path": "ops/backups.md"}).status_code == 200
    assert [t["path"] for t in api.get("/api/trash").json()["trash"]] == ["ops/backups.md"]
    assert api.patch("/api/folders/ops", json={"name": "infra"}).status_code == 200
    assert [t["path"] for t in api.get("/api/trash").json()["trash"]] == ["infra/backups.md"]
    restored = api.post("/api/restore", json={"path": "infra/backups.md", "version": 1})
    assert restored.status_code == 200, restored.text
    assert (docs / "infra/backups.md").is_file()


def test_a_folder_renamed_or_deleted_is_no_longer_its_keys_nor_a_new_one_of_its_name(
    docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    write(docs, "lab/a.md", "# A\n")
    write(docs, "tmp/b.md", "# B\n")
    server = start_app(docs)
    api = server.api
    made = api.post("/api/keys", json={"name": "lab-key", "folders": ["lab", "ops"], "role": "write"})
    assert made.status_code == 201, made.text
    secret = made.json()["secret"]
    other = api.post("/api/keys", json={"name": "tmp-key", "folders": ["tmp"], "role": "read"}).json()[
        "secret"
    ]
    assert api.patch("/api/folders/lab", json={"name": "lab2"}).status_code == 200
    assert api.post("/api/folders", json={"name": "lab"}).status_code == 201
    assert api.delete("/api/folders/tmp", params={"confirm": "tmp"}).status_code == 200
    assert api.post("/api/folders", json={"name": "tmp"}).status_code == 201
    keys = {k["name"]: k["folders"] for k in api.get("/api/keys").json()["keys"]}
    assert keys == {"lab-key": ["ops"], "tmp-key": []}
    as_key = server.client(token=secret)
    assert [f["name"] for f in as_key.get("/api/folders").json()["folders"]] == ["ops"]
    assert server.client(token=other).get("/api/folders").json()["folders"] == []


def test_server_settings_are_saved_applied_and_given_back(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    server = start_app(docs, RAGDOWN_TEXT_LIMIT="50")
    api = server.api
    assert api.get("/api/settings").status_code == 405
    before = api.get("/api/status").json()["settings"]
    # Where each value comes from: the variable set, or the default (no variable claims an unset one).
    assert (before["sources"]["text_limit"], before["env"]["text_limit"]) == ("env", 50)
    assert (before["sources"]["follow_links"], before["env"]["follow_links"]) == ("default", None)
    changed = api.patch("/api/settings", json={"text_limit": 5, "hook": {"top_k": 2}, "query_log": True})
    assert changed.status_code == 200
    settings = changed.json()["settings"]
    assert (settings["text_limit"], settings["hook"]["top_k"], settings["query_log"]) == (5, 2, True)
    assert settings["env"]["text_limit"] == 50
    assert settings["sources"]["text_limit"] == settings["sources"]["query_log"] == "saved"
    assert json.loads((docs / ".ragdown-server.json").read_text()) == {
        "text_limit": 5,
        "hook": {"top_k": 2},
        "query_log": True,
    }
    for bad in (
        {"text_limit": -1},
        {"watch": "yes"},
        {"hook": {"min_score": 3}},
        {"nope": 1},
        {"follow_links": 99},
    ):
        assert api.patch("/api/settings", json=bad).status_code == 400, bad
    back = api.patch("/api/settings", json={"text_limit": None, "hook": None, "query_log": None})
    assert back.json()["settings"]["text_limit"] == 50
    assert not (docs / ".ragdown-server.json").exists()


def test_a_loose_file_and_nothing_else_can_be_deleted(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    write(docs, "loose.md", "# Loose\n")
    server = start_app(docs)
    api = server.api
    assert api.get("/api/loose", params={"name": "loose.md"}).status_code == 405
    assert api.delete("/api/loose").status_code == 400
    assert api.delete("/api/loose", params={"name": "ops"}).status_code == 404
    assert api.delete("/api/loose", params={"name": "ops/backups.md"}).status_code == 404
    assert api.delete("/api/loose", params={"name": "loose.md"}).json() == {"name": "loose.md"}
    assert not (docs / "loose.md").exists()


def test_a_docs_dir_that_is_an_obsidian_vault_is_said_at_start_with_what_to_serve_instead(
    docs: Path, start_app: StartServer, caplog: pytest.LogCaptureFixture
) -> None:
    write(docs, ".obsidian/app.json", "{}")
    write(docs, "Home.md", "# Home\n\nSee [[Plan]].\n")
    write(docs, "Projects/Plan.md", "# Plan\n")
    server = start_app(docs)
    root = docs.resolve()
    notice = server.api.get("/api/status").json()["docs_notice"]
    assert notice == (
        f"The docs directory {root} looks like an Obsidian vault (.obsidian/ at its root): ragdown serve makes "
        "each of its top-level directories a folder of its own, so its top-level note is not indexed and links "
        "between the folders break. Serve the directory above it instead, where the vault is one folder "
        f"(RAGDOWN_DOCS_DIR={root.parent} ragdown serve, or make serve DOCS={root.parent}), or serve the vault "
        f"alone as one folder over MCP with RAGDOWN_DOCS_DIR={root} ragdown stdio."
    )
    assert [r.getMessage() for r in caplog.records if r.name == "ragdown.http.serve"] == [notice]
    # Said to the admin, who can change the docs dir; not to anyone else.
    assert "docs_notice" not in server.client(token=None).get("/api/status").json()
    made = server.api.post("/api/keys", json={"name": "k", "folders": None, "role": "write"})
    assert made.status_code == 201, made.text
    assert "docs_notice" not in server.client(token=made.json()["secret"]).get("/api/status").json()
    (docs / ".obsidian/app.json").unlink()
    (docs / ".obsidian").rmdir()  # no longer a vault: nothing to say
    assert "docs_notice" not in server.api.get("/api/status").json()


def test_search_resolve_move_backlinks_and_files(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    write(docs, "ops/index.md", "# Index\n\nSee [[backups]] and ![[diagram.png]].\n")
    write(docs, "ops/diagram.png", b"\x89PNG\r\n")
    write(docs, "home/x.md", "# X\n")
    server = start_app(docs)
    api = server.api
    assert api.get("/api/search").status_code == 400
    assert api.get("/api/search", params={"q": "x", "folder": "nope"}).status_code == 404
    hit = api.get("/api/search", params={"folder": "ops", "q": "restore twice", "top_k": 1}).json()["hits"][0]
    assert (hit["path"], hit["start_line"], hit["end_line"], hit["heading"]) == (
        "ops/backups.md",
        7,
        7,
        "Backups › Restore",
    )
    assert api.get("/api/resolve", params={"from": "ops/index.md", "link": "backups#Restore"}).json() == {
        "path": "ops/backups.md",
        "anchor": "Restore",
    }
    assert api.get("/api/resolve", params={"from": "ops/index.md", "link": "diagram.png"}).json() == {
        "path": "ops/diagram.png"
    }
    assert api.get("/api/resolve", params={"from": "ops/index.md", "link": "nothing"}).status_code == 404
    assert api.get("/api/resolve", params={"from": "ops/index.md", "link": "x"}).status_code == 404
    image = api.get("/api/file", params={"path": "ops/diagram.png"})
    assert image.content == b"\x89PNG\r\n"
    assert image.headers["content-type"] == "image/png"
    assert image.headers["x-content-type-options"] == "nosniff"
    assert image.headers["content-security-policy"] == "sandbox"
    assert image.headers["cache-control"] == "no-cache"
    for bad in ("ops/.ragdown.json", "../x", "ops/missing.png", "loose.md", "ops"):
        assert api.get("/api/file", params={"path": bad}).status_code >= 400, bad
    links = api.get("/api/backlinks", params={"path": "ops/backups.md"}).json()
    assert links == {
        "path": "ops/backups.md",
        "backlinks": [
            {
                "path": "ops/index.md",
                "title": "Index",
                "lines": [{"line": 3, "text": "See [[backups]] and ![[diagram.png]]."}],
            }
        ],
    }
    assert api.get("/api/backlinks", params={"path": "ops/none.md"}).status_code == 404
    assert api.get("/api/move").status_code == 405
    assert api.post("/api/move", json={"from": "ops/backups.md", "to": "home/backups.md"}).status_code == 400
    moved = api.post("/api/move", json={"from": "ops/backups.md", "to": "ops/db/snapshots.md"}).json()
    assert moved["updated"] == ["ops/index.md"]
    assert "[[snapshots]]" in (docs / "ops/index.md").read_text()
    assert [d["path"] for d in api.get("/api/docs", params={"folder": "ops"}).json()["docs"]] == [
        "ops/db/snapshots.md",
        "ops/index.md",
    ]
