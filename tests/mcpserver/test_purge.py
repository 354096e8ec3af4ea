"""Deleting for good (issue 21): `ragdown_delete purge`, the history's `purge`, and retention that forgets.
What is forgotten is gone from the history's file (its bytes read back), not only from its tables."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.access.scope import Scope
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.history import HistoryStore
from tests.conftest import write
from tests.mcpserver.conftest import Endpoint
from tests.mcpserver.traces import traces

pytestmark = pytest.mark.anyio


def endpoint(engine: Engine) -> Endpoint:
    return Endpoint(Runtime(engine.settings, engine), Scope(root=engine.root, folder=""))


async def rewrite(end: Endpoint, path: str, text: str) -> None:
    found = re.search(r"hash ([0-9a-f]{12})", await end.ok("ragdown_read_doc", path=path))
    assert found
    await end.ok("ragdown_write", path=path, text=text, base_hash=found[1])


def test_purge_forgets_a_document_and_its_bytes_leave_the_file(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path)
    secret = [f"# Secret\n\nthe launch code is {i}\n".encode() for i in range(3)]
    for text in secret:
        store.record("secret-plans.md", text, who="test")
    store.record("kept.md", secret[0], who="test")  # the same bytes as another document's version
    store.record("other.md", b"# Other\n", who="test")
    store.record_delete("other.md", b"# Other\n", who="test")
    assert traces(tmp_path, "secret-plans.md", *secret[1:]) != []

    assert store.purge("secret-plans.md") is True
    assert store.find_doc("secret-plans.md") is None
    assert traces(tmp_path, "secret-plans.md", *secret[1:]) == []
    kept = store.find_doc("kept.md")
    assert kept is not None
    assert store.data(store.versions(kept)[0]) == secret[0]  # another document's copy stays, as its own
    assert store.purge("secret-plans.md") is False
    with pytest.raises(ValueError, match="name a folder"):
        store.purge_under("/")
    store.close()


def test_purge_under_empties_a_folders_trash_or_forgets_all_of_it(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path)
    for name in ("a/one.md", "a/two.md", "a/sub/three.md", "b/four.md", "ab.md"):
        store.record(name, f"# {name}\n".encode(), who="test")
    for name in ("a/one.md", "a/sub/three.md", "b/four.md"):
        store.record_delete(name, None, who="test")
    assert store.purge_under("a", trash_only=True) == ["a/one.md", "a/sub/three.md"]
    assert [e.path for e in store.trash()] == ["b/four.md"]
    assert store.find_doc("a/two.md") is not None  # live: not in the trash
    assert store.purge_under("a/") == ["a/two.md"]
    assert store.find_doc("ab.md") is not None  # beside the folder, not under it
    assert traces(tmp_path, "a/one.md", b"# a/one.md\n", b"# a/two.md\n") == []
    store.close()


def test_pruned_versions_and_old_trash_are_gone_from_the_file(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path, keep_days=30, keep=1, trash_days=7)
    old = [f"# Draft\n\nold wording {i}\n".encode() for i in range(3)]
    for text in old:
        store.record("draft.md", text, who="test")
    store.record("gone.md", b"# Gone\n\nforgotten after a week\n", who="test")
    store.record_delete("gone.md", None, who="test")
    store.record("fresh.md", b"# Fresh\n", who="test")
    store.record_delete("fresh.md", None, who="test")
    conn = store._conn()
    conn.execute("UPDATE versions SET at = at - 40 * 86400 WHERE path != 'fresh.md'")
    conn.execute("UPDATE docs SET deleted_at = deleted_at - 8 * 86400 WHERE path = 'gone.md'")
    assert store.prune() == 2 + 2  # two old drafts; gone.md's version and its delete
    draft = store.find_doc("draft.md")
    assert draft is not None
    assert [store.data(v) for v in store.versions(draft)] == [old[2]]
    assert [e.path for e in store.trash()] == ["fresh.md"]  # deleted a moment ago: kept
    assert traces(tmp_path, "gone.md", b"# Gone\n\nforgotten after a week\n", *old[:2]) == []
    store.close()


async def test_ragdown_delete_purge_deletes_for_good_on_disk_in_history_and_in_the_index(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    first, second = b"# Payroll\n\nalice earns zanzibar\n", b"# Payroll\n\nbob earns zanzibar too\n"
    write(docs, "payroll.md", first.decode())
    write(docs, "keep.md", "# Keep\n\nstays\n")
    engine = open_engine(docs)
    end = endpoint(engine)
    await rewrite(end, "payroll.md", second.decode())
    assert "payroll.md" in await end.ok("ragdown_recall", query="zanzibar")

    answer = await end.ok("ragdown_delete", path="payroll.md", purge=True)
    assert answer.startswith("deleted payroll.md for good: 1 document and all their versions forgotten")
    assert not (docs / "payroll.md").exists()
    assert "no document payroll.md" in await end.error("ragdown_history", path="payroll.md")
    assert "payroll.md" not in await end.ok("ragdown_list", deleted=True)
    assert "payroll.md" not in await end.ok("ragdown_recall", query="zanzibar")
    assert engine.require_store().get_file("payroll.md") is None
    assert traces(docs, "payroll.md", first, second) == []

    # The default keeps ragdown's trash; purge then forgets what the trash holds.
    await end.ok("ragdown_delete", path="keep.md")
    assert "keep.md (deleted " in await end.ok("ragdown_list", deleted=True)
    assert await end.ok("ragdown_delete", path="keep.md", purge=True) == (
        "removed from the trash keep.md for good: 1 document and all their versions forgotten"
    )
    assert "keep.md" not in await end.ok("ragdown_list", deleted=True)
    assert "nothing on disk or in the trash" in await end.error("ragdown_delete", path="keep.md", purge=True)


async def test_a_subfolder_deleted_for_good_takes_its_trash_with_it(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, "team/a.md", "# A\n")
    write(docs, "team/deep/b.md", "# B\n")
    engine = open_engine(docs)
    end = endpoint(engine)
    await rewrite(end, "team/a.md", "# A\n\nedited\n")
    await end.ok("ragdown_write", path="team/old.md", text="# Old\n")
    await end.ok("ragdown_delete", path="team/old.md")
    assert "recursive: true" in await end.error("ragdown_delete", path="team", purge=True)
    answer = await end.ok("ragdown_delete", path="team", purge=True, recursive=True)
    assert answer == "deleted team for good: 2 documents and all their versions forgotten"
    assert not (docs / "team").exists()
    assert "team/" not in await end.ok("ragdown_list", deleted=True)
    assert traces(docs, "team/", b"# A\n\nedited\n", b"# Old\n") == []

    # A folder deleted into the trash, then forgotten by its name.
    await end.ok("ragdown_write", path="ops/run.md", text="# Run\n")
    await end.ok("ragdown_delete", path="ops", recursive=True)
    assert "ops/run.md" in await end.ok("ragdown_list", deleted=True)
    assert (await end.ok("ragdown_delete", path="ops", purge=True)).startswith("removed from the trash ops")
    assert "ops/run.md" not in await end.ok("ragdown_list", deleted=True)


async def test_purge_keeps_base_hash_and_is_described(docs: Path, open_engine: Callable[..., Engine]) -> None:
    write(docs, "a.md", "# A\n")
    end = endpoint(open_engine(docs))
    assert "changed" in await end.error("ragdown_delete", path="a.md", purge=True, base_hash="0" * 12)
    assert (docs / "a.md").exists()
    schema = json.loads(json.dumps(end.tools["ragdown_delete"].args.model_json_schema()))
    assert schema["properties"]["purge"]["default"] is False
    description = end.tools["ragdown_delete"].description
    assert "ragdown's trash" in description
    assert "purge: true" in description
