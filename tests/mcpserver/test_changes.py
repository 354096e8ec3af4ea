"""`ragdown_changes` (issue 26): what changed since a time or a version, from the version history: each
change's document, event, who, size change and the sections it touched, narrowed by path and who."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write
from tests.mcpserver.conftest import Connect

pytestmark = pytest.mark.anyio

DOC = "# Plan\n\nIntro.\n\n## Budget\n\nTen coins.\n\n## Risks\n\nNone yet.\n"


async def test_changes_name_each_event_who_and_the_sections_touched(docs: Path, connect: Connect) -> None:
    write(docs, "keep.md", "# Keep\n\nUntouched.\n")
    async with connect(docs, RAGDOWN_TOOLSET="ragdown,extra") as s:
        assert "ragdown_changes" in await s.tool_names()
        assert (await s.ok("ragdown_changes")).startswith("No changes since ")
        await s.ok("ragdown_write", path="work/plan.md", text=DOC, session_id="s-1")
        await s.ok(
            "ragdown_edit",
            path="work/plan.md",
            edits=[{"old_text": "Ten coins.", "new_text": "Twelve coins."}],
        )
        await s.ok("ragdown_move", **{"from": "work/plan.md", "to": "work/plan-2027.md"})
        await s.ok("ragdown_write", path="other/gone.md", text="# Gone\n\nSoon.\n")
        await s.ok("ragdown_delete", path="other/gone.md")

        def changes(**args: Any) -> Any:
            return s.ok("ragdown_changes", format="json", **args)

        body = json.loads(await changes())
        got = [(c["event"], c["path"], c["who"]) for c in body["changes"]]
        assert got == [
            ("deleted", "other/gone.md", "ragdown_delete"),
            ("created", "other/gone.md", "ragdown_write"),
            ("moved", "work/plan-2027.md", "ragdown_move"),
            ("changed", "work/plan.md", "ragdown_edit"),
            ("created", "work/plan.md", "ragdown_write"),
        ]
        deleted, _, moved, edited, created = body["changes"]
        assert edited["sections"] == ["Budget"]
        assert edited["delta"] == len("Twelve coins.") - len("Ten coins.")
        assert created["sections"] == ["Plan", "Budget", "Risks"]
        assert created["session"] == "s-1"
        assert moved["moved_from"] == "work/plan.md"
        assert "sections" not in deleted
        # Narrowed: by folder, by who, and after a version id (what a caller saw last time).
        only_work = json.loads(await changes(path_prefix="work"))["changes"]
        assert {c["path"] for c in only_work} == {"work/plan.md", "work/plan-2027.md"}
        edits = json.loads(await changes(who="ragdown_edit"))["changes"]
        assert [c["event"] for c in edits] == ["changed"]
        assert json.loads(await changes(who="user"))["changes"] == []
        newer = json.loads(await changes(after_version=moved["id"]))["changes"]
        assert [c["event"] for c in newer] == ["deleted", "created"]
        first = json.loads(await changes(limit=1))
        assert (len(first["changes"]), first["more"]) == (1, True)
        # An edit made outside ragdown is recorded as such when the index notices it.
        moved_to = docs / "work/plan-2027.md"
        moved_to.write_text(
            moved_to.read_text(encoding="utf-8").replace("None yet.", "Floods."), encoding="utf-8"
        )
        await s.ok("ragdown_reindex")
        outside = json.loads(await changes(who="user"))["changes"]
        assert [(c["who"], c["sections"]) for c in outside] == [("external", ["Risks"])]
        text = await s.ok("ragdown_changes", since="1h")
        assert "changed work/plan-2027.md by external" in text
        assert "sections: Risks" in text


async def test_bad_times_are_clear_errors(docs: Path, connect: Connect) -> None:
    async with connect(docs, RAGDOWN_TOOLSET="ragdown,extra") as s:
        text = await s.error("ragdown_changes", since="last tuesday")
        assert "is not a time" in text
