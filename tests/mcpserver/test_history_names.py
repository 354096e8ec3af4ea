"""A document's history across its name's lives (deleted, then written again), and refused changes that
leave the history and the disk as they were."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragdown.access.scope import Scope
from ragdown.core.errors import Refusal
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
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
