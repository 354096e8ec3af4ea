"""A document's history across its name's lives (deleted, then written again), and refused changes that
leave the history and the disk as they were."""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragdown.access.scope import Scope
from ragdown.core.atomic import sha256_hex
from ragdown.core.errors import Refusal
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.history import HistoryStore
from ragdown.history.journal import observe_sync
from ragdown.history.store import HISTORY_DIR, HISTORY_FILE
from ragdown.writes import door
from tests.conftest import write
from tests.mcpserver.conftest import Endpoint

pytestmark = pytest.mark.anyio


def endpoint(engine: Engine) -> Endpoint:
    return Endpoint(Runtime(engine.settings, engine), Scope(root=engine.root, folder=""))


async def history(end: Endpoint, path: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(await end.ok("ragdown_history", path=path, format="json"))
    return body


async def test_a_name_written_again_goes_on_with_its_history(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    end = endpoint(open_engine(docs))
    await end.ok("ragdown_write", path="x.md", text="# X\n\nold one\n")
    base = (await end.ok("ragdown_read_doc", path="x.md")).split("hash ", 1)[1][:12]
    await end.ok("ragdown_write", path="x.md", text="# X\n\nold two\n", base_hash=base)
    await end.ok("ragdown_delete", path="x.md")
    await end.ok("ragdown_write", path="x.md", text="# X\n\nnew\n")
    await end.ok("ragdown_delete", path="x.md")
    trash = await end.ok("ragdown_list", deleted=True)
    assert trash.count("x.md (deleted ") == 1  # one document, not one per life
    versions = (await history(end, "x.md"))["versions"]
    assert [v["event"] for v in versions][:2] == ["deleted", "created"]
    assert "old one" in await end.ok("ragdown_read_doc", path="x.md", version=1)
    await end.ok("ragdown_restore", path="x.md", version=2)
    assert (docs / "x.md").read_text().endswith("# X\n\nold two\n")
    # The same text as the version deleted last: written again all the same, and said so.
    await end.ok("ragdown_delete", path="x.md")
    await end.ok("ragdown_write", path="x.md", text="# X\n\nold two\n")
    again = await history(end, "x.md")
    assert again["deleted"] is False
    assert again["versions"][0]["event"] != "deleted"


async def test_a_restore_refused_by_the_quota_changes_nothing(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    end = endpoint(open_engine(docs))
    await end.ok("ragdown_write", path="qz.md", text="# QZ\n\n" + "some content to restore later\n" * 4)
    await end.ok("ragdown_delete", path="qz.md")
    before = await history(end, "qz.md")
    trash = await end.ok("ragdown_list", deleted=True)
    write(docs, ".ragdown.json", json.dumps({"max_bytes": 40}))
    refused = await end.error("ragdown_restore", path="qz.md", version=1)
    assert "max_bytes" in refused
    assert await history(end, "qz.md") == before
    assert await end.ok("ragdown_list", deleted=True) == trash
    assert not (docs / "qz.md").exists()


async def test_a_refused_write_leaves_no_folder_behind(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, ".gitignore", "*.draft.md\n")
    write(docs, ".ragdown.json", json.dumps({"max_file_bytes": 300}))
    end = endpoint(open_engine(docs))
    assert "ignored" in await end.error("ragdown_write", path="deep/er/x.draft.md", text="# X\n")
    assert "max_file_bytes" in await end.error("ragdown_write", path="big/dir/x.md", text="# X\n" + "y" * 400)
    await end.ok("ragdown_write", path="a.md", text="# A\n")
    write(docs, "b.md", "# B\n")
    assert "already exists" in await end.error("ragdown_move", **{"from": "a.md", "to": "b.md"})
    assert sorted(p.name for p in docs.iterdir() if not p.name.startswith(".")) == ["a.md", "b.md"]
    await end.ok("ragdown_write", path="made/on/write.md", text="# W\n")
    assert (docs / "made/on/write.md").is_file()


async def test_a_folder_with_a_documents_name_and_a_short_hash_are_said_plainly(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    (docs / "dir.md").mkdir(parents=True)
    write(docs, "a.md", "# A\n")
    end = endpoint(open_engine(docs))
    assert await end.error("ragdown_write", path="dir.md", text="x") == "dir.md is a folder, not a document"
    full = (await end.ok("ragdown_read_doc", path="a.md")).split("hash ", 1)[1][:12]
    short = await end.error("ragdown_write", path="a.md", text="# B\n", base_hash=full[:11])
    assert "at least 12" in short
    assert "changed" not in short
    assert "at least 12" in await end.error("ragdown_delete", path="a.md", base_hash=full[:6])
    assert (docs / "a.md").read_text() == "# A\n"


@pytest.mark.parametrize(
    ("number", "says"),
    [
        (errno.EROFS, "read-only filesystem (serve them with RAGDOWN_READ_ONLY=true)"),
        (errno.EACCES, "permission denied by the filesystem"),
        (errno.ENOSPC, "the disk is full"),
    ],
)
def test_what_the_disk_refuses_is_a_refusal(number: int, says: str) -> None:
    with pytest.raises(Refusal) as refused, door.disk_errors("a.md"):
        raise OSError(number, os.strerror(number))
    assert refused.value.message.startswith("a.md cannot be")
    assert refused.value.message.endswith(says)
    with pytest.raises(OSError, match="I/O error"), door.disk_errors("a.md"):  # anything else stays
        raise OSError(errno.EIO, "I/O error")


async def test_the_original_version_is_dated_when_its_bytes_were_written(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, "pre.md", "# Pre\n\nexisting\n")
    write(docs, "gone.md", "# Gone\n\nold\n")
    long_ago = 1704067200.0  # 2024-01-01
    for name in ("pre.md", "gone.md"):
        os.utime(docs / name, (long_ago, long_ago))
    end = endpoint(open_engine(docs))
    base = (await end.ok("ragdown_read_doc", path="pre.md")).split("hash ", 1)[1][:12]
    await end.ok("ragdown_write", path="pre.md", text="# Pre\n\nedited\n", base_hash=base)
    await end.ok("ragdown_delete", path="gone.md")
    for name in ("pre.md", "gone.md"):
        original = (await history(end, name))["versions"][-1]
        assert (original["event"], original["at"][:10]) == ("original", "2024-01-01")


async def test_a_document_moved_onto_a_deleted_ones_path_leaves_it_in_the_trash(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    """Issue 2: `q.md` moved to the path of `p.md`, deleted, took its place in the history and hid every
    version of it. The deleted one stays in the trash beside it, under a free name, readable and restorable."""
    end = endpoint(open_engine(docs))
    await end.ok("ragdown_write", path="p.md", text="# P\n\none\n")
    base = (await end.ok("ragdown_read_doc", path="p.md")).split("hash ", 1)[1][:12]
    await end.ok("ragdown_write", path="p.md", text="# P\n\ntwo\n", base_hash=base)
    await end.ok("ragdown_delete", path="p.md")
    await end.ok("ragdown_write", path="q.md", text="# Q\n")
    moved = await end.ok("ragdown_move", **{"from": "q.md", "to": "p.md"})
    assert "the deleted document that was at p.md stays in the trash as p (earlier).md" in moved
    assert [v["event"] for v in (await history(end, "p.md"))["versions"]] == ["moved", "created"]
    trash = await end.ok("ragdown_list", deleted=True)
    assert "p (earlier).md (deleted " in trash
    kept = await history(end, "p (earlier).md")
    assert kept["deleted"] is True
    assert [v["event"] for v in kept["versions"]] == ["deleted", "changed", "created"]
    assert "one" in await end.ok("ragdown_read_doc", path="p (earlier).md", version=1)
    await end.ok("ragdown_restore", path="p (earlier).md", version=2)
    assert (docs / "p (earlier).md").read_text().endswith("# P\n\ntwo\n")
    assert (docs / "p.md").read_text().endswith("# Q\n")

    # A second one deleted there takes the next free name; so does a folder moved onto a deleted folder's
    # name, for each of its documents, whether the history followed the one moved in or not.
    await end.ok("ragdown_delete", path="p.md")
    write(docs, "r.md", "# R\n")  # never changed through ragdown: no history of its own
    said = await end.ok("ragdown_move", **{"from": "r.md", "to": "p.md"})
    assert "stays in the trash as p (earlier 2).md" in said
    assert (await history(end, "p (earlier 2).md"))["versions"][-1]["event"] == "created"
    await end.ok("ragdown_write", path="proj/x.md", text="# X old\n")
    await end.ok("ragdown_delete", path="proj", recursive=True)
    write(docs, "other/x.md", "# X new\n")
    await end.ok("ragdown_move", **{"from": "other", "to": "proj"})
    old = await history(end, "proj/x (earlier).md")
    assert old["deleted"] is True
    assert "X old" in await end.ok("ragdown_read_doc", path="proj/x (earlier).md", version=1)


def test_a_rename_outside_onto_a_deleted_ones_path_leaves_it_in_the_trash(tmp_path: Path) -> None:
    """The sync's side of issue 2: a file renamed outside ragdown onto a deleted document's name."""
    docs = tmp_path / "docs"
    docs.mkdir()
    store = HistoryStore(docs)
    store.record("p.md", b"p one", who="test")
    store.record_delete("p.md", b"p one", who="test")
    store.record("q.md", b"q one", who="test")
    write(docs, "p.md", "q one")
    observe_sync(store, [], [("p.md", sha256_hex(b"q one"))], ["q.md"], root=docs, lock=door.document_lock)
    live, kept = store.find_doc("p.md"), store.find_doc("p (earlier).md")
    assert live is not None
    assert kept is not None
    assert [store.data(v) for v in store.versions(live)][-1] == b"q one"
    assert store.is_deleted(kept)
    assert [store.data(v) for v in store.versions(kept)] == [b"p one", b"p one"]
    assert [e.path for e in store.trash()] == ["p (earlier).md"]
    store.close()


def test_a_history_with_documents_sharing_a_path_sets_them_apart(tmp_path: Path) -> None:
    """A history an older ragdown wrote, where a move onto a deleted document's path left two documents at
    one path (one reachable): opened, every one of them is reachable under a name of its own."""
    docs = tmp_path / "docs"
    (docs / HISTORY_DIR).mkdir(parents=True)
    conn = sqlite3.connect(docs / HISTORY_DIR / HISTORY_FILE)
    conn.executescript(
        """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '1');
        CREATE TABLE docs(id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, deleted_at REAL);
        CREATE UNIQUE INDEX docs_live ON docs(path) WHERE deleted_at IS NULL;
        CREATE INDEX docs_path ON docs(path);
        INSERT INTO docs(id, path, deleted_at) VALUES (1, 'p.md', 100.0), (2, 'p.md', NULL),
          (3, 'p.md', 200.0), (4, 'p (earlier).md', 50.0);
        """
    )
    conn.close()
    store = HistoryStore(docs)
    for doc_id in (1, 2, 3, 4):
        store.record(f"tmp{doc_id}.md", f"v of {doc_id}".encode(), who="test")
    with store._write() as c:  # the versions belong to the documents sharing a path
        c.execute("UPDATE versions SET doc_id = CAST(substr(path, 4, 1) AS INTEGER)")
        c.execute("DELETE FROM docs WHERE path LIKE 'tmp%'")
    paths = dict(store._conn().execute("SELECT id, path FROM docs").fetchall())
    assert paths == {1: "p (earlier 3).md", 2: "p.md", 3: "p (earlier 2).md", 4: "p (earlier).md"}
    assert sorted(e.path for e in store.trash()) == ["p (earlier 2).md", "p (earlier 3).md", "p (earlier).md"]
    for doc_id, path in paths.items():
        assert store.find_doc(path) == doc_id
        assert [store.data(v) for v in store.versions(doc_id)] == [f"v of {doc_id}".encode()]
    version = store._conn().execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    assert version == "2"
    store.close()
