"""Deleting for good over HTTP (issue 21): REST's `purge` and empty trash, the web API's trash routes, and
the right they need (a write key's; a read key is refused and nothing changes)."""

from __future__ import annotations

from pathlib import Path

from ragdown.access.keys import KeyStore
from ragdown.http.openapi import document
from tests.conftest import write
from tests.http.conftest import StartServer
from tests.http.test_rest import V1, ok, refused, seed
from tests.mcpserver.traces import traces


def test_rest_delete_purge_and_empty_trash(start_app: StartServer, docs: Path) -> None:
    seed(docs)
    store = KeyStore(docs)
    reader, _ = store.create("reader", ["work"], "read")
    writer, _ = store.create("writer", ["work"], "write")
    server = start_app(docs)
    read, api = server.client(token=reader), server.client(token=writer)
    ok(api.put(f"{V1}/work/files/a.md", json={"content": "# Alpha\n\nthe vault combination\n"}))

    refused(read.delete(f"{V1}/work/files/a.md", params={"purge": "true"}), 403, "forbidden")
    refused(read.delete(f"{V1}/work/trash"), 403, "forbidden")
    assert (docs / "work/a.md").exists()

    gone = ok(api.delete(f"{V1}/work/files/a.md", params={"purge": "true"}))
    assert gone == {"ok": True, "name": "a.md", "trash": False, "notes": []}
    assert not (docs / "work/a.md").exists()
    refused(api.get(f"{V1}/work/files/a.md/history"), 404, "not_found")
    assert ok(api.get(f"{V1}/work/trash"))["trash"] == []
    hits = ok(api.get(f"{V1}/work/search", params={"query": "vault combination"}))["hits"]
    assert "a.md" not in [h["path"] for h in hits]
    assert traces(docs, "work/a.md", b"# Alpha\n\nthe vault combination\n") == []

    # A document in the trash, deleted for good by its name; then the trash emptied.
    ok(api.put(f"{V1}/work/files/old.md", json={"content": "# Old\n"}), 201)
    ok(api.delete(f"{V1}/work/files/old.md"))
    ok(api.put(f"{V1}/work/files/older.md", json={"content": "# Older\n"}), 201)
    ok(api.delete(f"{V1}/work/files/older.md"))
    assert ok(api.delete(f"{V1}/work/files/old.md", params={"purge": "true"}))["trash"] is False
    assert [e["path"] for e in ok(api.get(f"{V1}/work/trash"))["trash"]] == ["older.md"]
    refused(api.delete(f"{V1}/work/files/old.md", params={"purge": "true"}), 404, "not_found")
    assert ok(api.delete(f"{V1}/work/trash")) == {"ok": True, "forgotten": ["older.md"]}
    assert ok(api.get(f"{V1}/work/trash"))["trash"] == []
    assert traces(docs, "work/old", b"# Old\n", b"# Older\n") == []

    routes = document()["paths"]
    purge = next(
        p for p in routes[f"{V1}/{{folder}}/files/{{path}}"]["delete"]["parameters"] if p["name"] == "purge"
    )
    assert "Irreversible" in purge["description"]
    assert "delete" in routes[f"{V1}/{{folder}}/trash"]


def test_the_web_trash_deletes_one_entry_or_all_for_good(start_app: StartServer, docs: Path) -> None:
    write(docs, "ops/keep.md", "# Keep\n")
    write(docs, "lab/x.md", "# X\n")
    store = KeyStore(docs)
    reader, _ = store.create("reader", ["ops"], "read")
    server = start_app(docs)
    api, read = server.api, server.client(token=reader)
    for name in ("one", "two", "three"):
        ok(api.post("/api/doc", json={"path": f"ops/{name}.md", "text": f"# {name}\n"}), 201)
        ok(api.delete("/api/doc", params={"path": f"ops/{name}.md"}))
    ok(api.post("/api/doc", json={"path": "lab/y.md", "text": "# Y\n"}), 201)
    ok(api.delete("/api/doc", params={"path": "lab/y.md"}))

    refused_read = read.delete("/api/trash", params={"folder": "ops", "path": "ops/one.md"})
    assert refused_read.status_code == 403
    assert read.delete("/api/trash", params={"folder": "lab"}).status_code in (403, 404)
    assert len(ok(api.get("/api/trash", params={"folder": "ops"}))["trash"]) == 3

    one = ok(api.delete("/api/trash", params={"folder": "ops", "path": "ops/one.md"}))
    assert one == {"path": "ops/one.md", "forgotten": ["ops/one.md"]}
    assert api.delete("/api/trash", params={"folder": "ops", "path": "ops/one.md"}).status_code == 404
    assert api.delete("/api/trash", params={"folder": "ops", "path": "ops/keep.md"}).status_code == 409
    assert (docs / "ops/keep.md").exists()
    emptied = ok(api.delete("/api/trash", params={"folder": "ops"}))
    assert sorted(emptied["forgotten"]) == ["ops/three.md", "ops/two.md"]
    assert ok(api.get("/api/trash", params={"folder": "ops"}))["trash"] == []
    assert [e["path"] for e in ok(api.get("/api/trash"))["trash"]] == ["lab/y.md"]  # another folder's stays
    assert traces(docs, "ops/t", b"# one\n", b"# two\n", b"# three\n") == []
