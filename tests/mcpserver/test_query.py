"""`ragdown_query` (issue 26): documents filtered and sorted by frontmatter properties, tags, links and
folders, as a table or JSON, paged; and an Obsidian Base's view answered as a table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BOTH_BACKENDS, write
from tests.mcpserver.conftest import Connect

pytestmark = pytest.mark.anyio
# Both stores: the properties and links tables, and their SQL, are each store's own.
INDEX_BACKENDS = BOTH_BACKENDS

BASE = """filters:
  and:
    - file.hasTag("project")
    - not:
        - file.inFolder("archive")
views:
  - type: table
    name: Open
    filters:
      and:
        - 'status != "done"'
        - note.priority >= 2
    order:
      - file.name
      - status
      - due
      - formula.late
    sort:
      - property: due
        direction: ASC
  - type: table
    name: Everything
    order:
      - file.name
    sort:
      - property: file.name
        direction: DESC
    limit: 2
"""


def notes(docs: Path) -> None:
    write(
        docs,
        "p/alpha.md",
        "---\nstatus: doing\ndue: 2024-05-03\npriority: 3\ntags: [project/x]\n---\n# Alpha\n\nSee [[beta]].\n",
    )
    write(
        docs, "p/beta.md", "---\nstatus: done\ndue: 2024-04-01\npriority: 5\ntags: [project]\n---\n# Beta\n"
    )
    write(
        docs,
        "p/gamma.md",
        "---\nstatus: todo\ndue: 2024-04-20\npriority: 2\n---\n# Gamma\n\n#project\n[[Alpha]]\n",
    )
    write(docs, "p/delta.md", "---\nstatus: todo\npriority: 1\ntags: [project]\n---\n# Delta\n")
    write(
        docs,
        "archive/old.md",
        "---\nstatus: todo\ndue: 2020-01-01\npriority: 9\ntags: [project]\n---\n# Old\n",
    )
    write(docs, "plain.md", "# Plain\n\nNo properties; links to [[beta]].\n")


async def test_query_filters_sorts_pages_and_answers_a_table(docs: Path, connect: Connect) -> None:
    notes(docs)
    async with connect(docs, RAGDOWN_TOOLSET="ragdown,extra") as s:
        assert "ragdown_query" in await s.tool_names()

        async def rows(**args: Any) -> Any:
            return json.loads(await s.ok("ragdown_query", format="json", **args))

        body = await rows(
            where=[{"property": "status", "op": "!=", "value": "done"}, {"tag": "project"}],
            sort=[{"by": "due", "order": "asc"}],
            columns=["name", "status", "due", "tags"],
        )
        assert [r["name"] for r in body["rows"]] == ["old", "gamma", "alpha", "delta"]  # no due: last
        assert body["rows"][2] == {
            "name": "alpha",
            "status": "doing",
            "due": "2024-05-03",
            "tags": ["project/x"],
        }
        assert body["total"] == 4
        assert not body["more"]
        # Ranges on numbers and dates, exists / not exists, folders, paging.
        ranged = await rows(
            where=[
                {"property": "priority", "op": ">=", "value": 3},
                {"property": "due", "op": "<", "value": "2024-05-01"},
            ]
        )
        assert [r["path"] for r in ranged["rows"]] == ["archive/old.md", "p/beta.md"]
        assert [r["path"] for r in (await rows(where=[{"property": "due", "op": "not exists"}]))["rows"]] == [
            "p/delta.md",
            "plain.md",
        ]
        page = await rows(path_prefix="p", limit=2, offset=2, sort=[{"by": "priority", "order": "desc"}])
        assert [r["path"] for r in page["rows"]] == ["p/gamma.md", "p/delta.md"]
        assert page["total"] == 4
        either = await rows(
            where=[
                {
                    "or": [
                        {"property": "status", "value": "done"},
                        {"property": "priority", "op": "<", "value": 2},
                    ]
                }
            ]
        )
        assert [r["path"] for r in either["rows"]] == ["p/beta.md", "p/delta.md"]
        # Links: to a document (by name or alias) and from one.
        linking = await rows(where=[{"links_to": "p/beta.md"}])
        assert [r["path"] for r in linking["rows"]] == ["p/alpha.md", "plain.md"]
        linked = await rows(where=[{"linked_from": "p/gamma.md"}])
        assert [r["path"] for r in linked["rows"]] == ["p/alpha.md"]
        # The text answer is a Markdown table.
        text = await s.ok("ragdown_query", where=[{"property": "status", "value": "done"}])
        assert text.splitlines()[2:] == [
            "| path | title | status |",
            "|---|---|---|",
            "| p/beta.md | Beta | done |",
        ]
        # Bad input: a clear refusal.
        assert "unknown op" in await s.error(
            "ragdown_query", where=[{"property": "a", "op": "~", "value": 1}]
        )


async def test_an_obsidian_base_is_answered_as_a_table(docs: Path, connect: Connect) -> None:
    notes(docs)
    write(docs, "Projects.base", BASE)
    write(docs, "Bad.base", "filters: 'formula.x > 1'\nviews:\n  - type: table\n    name: T\n")
    async with connect(docs, RAGDOWN_TOOLSET="ragdown,extra", RAGDOWN_READ_ONLY="1") as s:
        body = json.loads(await s.ok("ragdown_query", base="Projects.base", format="json"))
        assert body["view"].startswith("Projects.base › Open")
        assert body["columns"] == ["file.name", "status", "due"]
        assert [r["file.name"] for r in body["rows"]] == ["gamma", "alpha"]
        second = json.loads(
            await s.ok("ragdown_query", base="Projects.base", view="Everything", format="json")
        )
        assert [r["file.name"] for r in second["rows"]] == ["gamma", "delta"]
        assert second["total"] == 4
        text = await s.ok("ragdown_query", base="Projects.base")
        assert "| file.name | status | due |" in text
        assert "| gamma | todo | 2024-04-20 |" in text
        assert "formula.x" in await s.error("ragdown_query", base="Bad.base")
        assert "no view" in await s.error("ragdown_query", base="Projects.base", view="Nope")
