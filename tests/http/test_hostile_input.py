"""Faults found trying `/api` as an attacker and a careless user would (issue 8, faults 2 to 5): names that
are not UTF-8, a document swapped for a symlink, JSON nested too deep, a write past the document limit."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

import pytest

from ragdown.core.paths import MAX_DOCUMENT_BYTES
from tests.conftest import HOSTILE_FRONTMATTER, write
from tests.http.conftest import StartServer, ops_folder

JSON = {"content-type": "application/json"}


def escaped(body: object) -> bytes:
    """JSON as a client sends a lone surrogate: as its `\\udc80` escape (httpx's own encoder cannot)."""
    return json.dumps(body).encode()


def test_a_folder_name_that_is_not_utf8_is_refused_before_the_disk_is_touched(
    docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    api = start_app(docs).api
    before = sorted(os.listdir(os.fsencode(docs)))
    for name in ["\udc80", "bad\udcff"]:
        created = api.post("/api/folders", content=escaped({"name": name}), headers=JSON)
        assert created.status_code == 400, created.text
        assert "Unicode" in created.json()["error"]
        renamed = api.patch("/api/folders/ops", content=escaped({"name": name}), headers=JSON)
        assert renamed.status_code == 400, renamed.text
    assert sorted(os.listdir(os.fsencode(docs))) == before
    # A malformed escape in the folder segment of a route names no folder.
    assert api.patch("/api/folders/%80", json={"title": "x"}).status_code == 404
    assert api.delete("/api/folders/%ff?confirm=%ff").status_code == 404


def test_a_directory_named_in_bytes_made_outside_is_listed_nowhere(
    docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    os.mkdir(os.path.join(os.fsencode(docs), b"bad\xff"))
    os.mkdir(os.path.join(os.fsencode(docs), b"ops", b"sub\xfe"))
    with open(os.path.join(os.fsencode(docs), b"ops", b"note\xff.md"), "w") as fh:
        fh.write("# Not UTF-8")
    server = start_app(docs)
    api = server.api
    folders = api.get("/api/folders")
    assert folders.status_code == 200, folders.text
    assert [f["name"] for f in folders.json()["folders"]] == ["ops"]
    listed = api.get("/api/docs")
    assert listed.status_code == 200, listed.text
    assert [d["path"] for d in listed.json()["docs"]] == ["ops/backups.md"]
    status = api.get("/api/status").json()
    assert status["last_sync"]["skipped"] == 3  # two directories and a file


def test_a_document_replaced_by_a_symlink_is_never_served(
    tmp_path: Path, docs: Path, start_app: StartServer
) -> None:
    ops_folder(docs)
    write(docs, "ops/runbook.md", "# Runbook\n\nSee [[backups]].")
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nthe password is hunter2")
    api = start_app(docs).api
    assert api.get("/api/doc", params={"path": "ops/backups.md"}).status_code == 200
    # Swapped for a symlink after it was indexed; nothing has synced since (no watcher in tests).
    (docs / "ops/backups.md").unlink()
    (docs / "ops/backups.md").symlink_to(secret)
    (docs / "ops/runbook.md").unlink()
    (docs / "ops/runbook.md").symlink_to(secret)
    (docs / "ops/picture.png").symlink_to(secret)
    doc = api.get("/api/doc", params={"path": "ops/backups.md"})
    assert doc.status_code == 404, doc.text
    assert "hunter2" not in doc.text
    raw = api.get("/api/file", params={"path": "ops/backups.md"})
    assert raw.status_code == 404
    assert "hunter2" not in raw.text
    assert api.get("/api/file", params={"path": "ops/picture.png"}).status_code == 404
    # Backlinks read every linking document: a symlinked one is not read.
    back = api.get("/api/backlinks", params={"path": "ops/backups.md"})
    assert "hunter2" not in back.text
    assert back.status_code in (200, 404), back.text
    # Saving over the symlink never writes through it.
    saved = api.post("/api/doc", json={"path": "ops/backups.md", "text": "# Mine", "overwrite": True})
    assert saved.status_code == 400, saved.text
    assert secret.read_text() == "# Secret\n\nthe password is hunter2"


@pytest.mark.parametrize(
    ("method", "route"),
    [
        ("POST", "/api/folders"),
        ("PATCH", "/api/folders/ops"),
        ("PATCH", "/api/settings"),
        ("POST", "/api/doc"),
        ("POST", "/api/render"),
        ("POST", "/api/move"),
    ],
)
def test_json_nested_too_deep_is_a_400(docs: Path, start_app: StartServer, method: str, route: str) -> None:
    ops_folder(docs)
    api = start_app(docs).api
    answer = api.request(method, route, content=b"[" * 100_000, headers=JSON)
    assert answer.status_code == 400, answer.text
    assert "nested too deeply" in answer.json()["error"]


def test_no_write_route_makes_a_document_the_index_would_skip(docs: Path, start_app: StartServer) -> None:
    ops_folder(docs)
    api = start_app(docs).api
    # The request body limit (4 MiB, the spec's) comes before the document limit (8 MiB, the indexer's):
    # a body past it is refused whole.
    big = api.post("/api/doc", json={"path": "ops/big.md", "text": "x" * (4 * 1024 * 1024)})
    assert big.status_code == 413, big.text
    assert not (docs / "ops/big.md").exists()
    assert MAX_DOCUMENT_BYTES > 4 * 1024 * 1024


# Names that would forge lines, terminal sequences or a reversed reading in a listing (issue 6).
CONTROL_NAMES = [
    "a\nb.md",
    "a\rb.md",
    "a\tb.md",
    "a\x1b[31mb.md",
    "a\x7fb.md",
    "a\x85b.md",
    "a\u2028b.md",
    "a\u2029b.md",
    "a\u202eb.md",
    "a\u2066b.md",
    "sub\n/b.md",
]


@pytest.mark.parametrize("name", CONTROL_NAMES)
def test_a_name_with_a_control_character_is_refused_by_every_http_write(
    docs: Path, start_app: StartServer, name: str
) -> None:
    ops_folder(docs)
    api = start_app(docs).api
    before = sorted(os.listdir(docs / "ops"))
    v1 = "/api/v1/folders/ops/files"
    answers = [
        api.post(v1, json={"name": name, "content": "# X\n"}),
        api.put(f"{v1}/{quote(name, safe='')}", json={"content": "# X\n"}),
        api.post(f"{v1}/backups.md/move", json={"to": name}),
        api.post("/api/doc", json={"path": f"ops/{name}", "text": "# X\n"}),
        api.post("/api/move", json={"from": "ops/backups.md", "to": f"ops/{name}"}),
        api.post("/api/folders", json={"name": name.removesuffix(".md")}),
        api.patch("/api/folders/ops", json={"name": name.removesuffix(".md")}),
    ]
    for answer in answers:
        assert answer.status_code == 400, (answer.request.url, answer.text)
        assert "control characters" in answer.json()["error"]
    assert sorted(os.listdir(docs / "ops")) == before
    assert sorted(os.listdir(docs)) == ["ops"]


def test_a_write_with_hostile_frontmatter_is_answered_as_made_and_read_back(
    docs: Path, start_app: StartServer
) -> None:
    """Deeply nested YAML or an integer of over 4,300 digits was written and versioned, then the write's lints
    crashed: a 500 on REST and on the web API. Lints are advisory: every write answers success, the document
    is versioned and indexed, and every face reads and renders it; the indexer reads such a file from disk."""
    for name, frontmatter in HOSTILE_FRONTMATTER.items():
        write(docs, f"ops/disk/{name}.md", f"---\n{frontmatter}\n---\n# {name}\n\nbody\n")
    server = start_app(docs)
    api = server.api
    status = api.get("/api/status").json()
    assert status["last_sync"]["skipped"] == 0, status
    for name, frontmatter in HOSTILE_FRONTMATTER.items():
        text = f"---\n{frontmatter}\n---\n# {name}\n\nbody\n"
        put = api.put(f"/api/v1/folders/ops/files/rest/{name}.md", json={"content": text})
        assert put.status_code == 201, (name, put.text)
        posted = api.post("/api/doc", json={"path": f"ops/web/{name}.md", "text": text})
        assert posted.status_code == 201, (name, posted.text)
        history = api.get(f"/api/v1/folders/ops/files/rest/{name}.md/history")
        assert [v["version"] for v in history.json()["versions"]] == [1], history.text
        for where in ("disk", "rest", "web"):
            read = api.get("/api/doc", params={"path": f"ops/{where}/{name}.md"})
            assert read.status_code == 200, (name, where, read.text)
        rendered = api.post("/api/render", json={"path": f"ops/web/{name}.md", "text": text})
        assert rendered.status_code == 200, (name, rendered.text)
    listed = {d["path"] for d in api.get("/api/docs", params={"folder": "ops"}).json()["docs"]}
    for name in HOSTILE_FRONTMATTER:
        assert {f"ops/{where}/{name}.md" for where in ("disk", "rest", "web")} <= listed, name
