"""`ragdown_related` (issue 26): a note's or a section's neighbourhood from the index alone: links out and
backlinks (the link table, resolved when asked), notes sharing its tags, the sections nearest in meaning,
each with why, to a depth and a budget; on both stores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BOTH_BACKENDS, write
from tests.mcpserver.conftest import Connect

pytestmark = pytest.mark.anyio
INDEX_BACKENDS = BOTH_BACKENDS

HUB = (
    "---\ntags: [garden, plants]\naliases: [Centre]\n---\n# Hub\n\nSee [[leaf]] and [other](sub/other.md) and"
    " [[ghost]].\n\n## Water\n\nWatering roses daily in summer heat keeps roses blooming.\n"
)


def garden(docs: Path) -> None:
    write(docs, "hub.md", HUB)
    write(docs, "leaf.md", "# Leaf\n\nBack to [[Centre]] and on to [[far]].\n")
    write(docs, "sub/other.md", "---\ntags: [garden]\n---\n# Other\n\nNothing here.\n")
    write(docs, "far.md", "# Far\n\nA distant note.\n")
    write(docs, "roses.md", "# Roses\n\nWatering roses daily in summer heat keeps roses blooming well.\n")
    write(docs, "code.md", "# Code\n\n```\n[[hub]]\n```\n")


def by_path(body: dict[str, Any]) -> dict[str, set[str]]:
    """Each neighbour's reasons (similarity scores as `similar`)."""
    return {
        r["path"]: {"similar" if w.startswith("similar") else w for w in r["why"].split("; ")}
        for r in body["related"]
    }


async def test_related_gives_links_backlinks_tags_and_similar_sections_with_why(
    docs: Path, connect: Connect
) -> None:
    garden(docs)
    async with connect(docs, RAGDOWN_TOOLSET="ragdown,extra", RAGDOWN_READ_ONLY="true") as s:
        assert "ragdown_related" in await s.tool_names()

        async def related(**args: Any) -> dict[str, Any]:
            return dict(json.loads(await s.ok("ragdown_related", format="json", **args)))

        body = await related(path="hub.md")
        why = by_path(body)
        assert why["leaf.md"] >= {"link", "backlink"}  # linked both ways: [[leaf]] and [[Centre]] (an alias)
        assert why["sub/other.md"] >= {"link", "tag: garden"}
        assert "backlink" not in why.get("code.md", set())  # a link inside code does not count
        assert "ghost.md" not in why  # no such document (yet)
        assert why["roses.md"] == {"similar"}
        leaf = next(r for r in body["related"] if r["path"] == "leaf.md")
        assert leaf["text"].startswith("line 7: See [[leaf]]")
        # A section: its own links, and the sections nearest to it in meaning (itself excluded).
        water = await related(path="hub.md", heading="Water")
        assert water["section"]["title"] == "Water"
        near = by_path(water)
        assert "link" not in near["leaf.md"]
        assert "backlink" in near["leaf.md"]
        roses = next(r for r in water["related"] if r["path"] == "roses.md")
        assert roses["cite"] == "roses.md:3"
        assert roses["score"] > 0.5
        # Depth 2: the links of links, naming the note they come through.
        assert "far.md" not in why
        assert by_path(await related(path="hub.md", depth=2))["far.md"] == {"link of leaf.md"}
        # The budget caps the neighbours; text cites path:lines.
        small = await related(path="hub.md", budget=1)
        assert (len(small["related"]), small["more"]) == (1, True)
        text = await s.ok("ragdown_related", path="Centre")  # a name or alias works as for read_doc
        assert text.startswith("Related to hub.md:")
        assert "\nleaf.md [link" in text
        assert "roses.md:3 [similar " in text
        assert "is not in the outline" in await s.error("ragdown_related", path="hub.md", node_id="zz")
        assert "no heading" in await s.error("ragdown_related", path="hub.md", heading="Nope")


@pytest.mark.backends("sqlite")
async def test_links_resolve_against_the_documents_there_are_now(docs: Path, connect: Connect) -> None:
    """Links are stored as written and resolved when asked: a document that appears later is linked, and a
    backlink by a name that now means another document is no longer one."""
    garden(docs)
    async with connect(docs, RAGDOWN_TOOLSET="ragdown,extra") as s:
        await s.ok("ragdown_write", path="ghost.md", text="# Ghost\n\nBoo.\n")
        assert by_path(json.loads(await s.ok("ragdown_related", path="hub.md", format="json")))[
            "ghost.md"
        ] == {"link"}
        backlinks = json.loads(await s.ok("ragdown_backlinks", path="ghost.md"))
        assert [(b["path"], b["lines"][0]["line"]) for b in backlinks["backlinks"]] == [("hub.md", 7)]
        # A link by a name no document had: a backlink once a document takes that name as an alias.
        await s.ok("ragdown_write", path="haunt.md", text="# Haunt\n\nBeware the [[Spectre]].\n")
        await s.ok("ragdown_write", path="ghost2.md", text="---\naliases: [Spectre]\n---\n# Ghost\n")
        backlinks = json.loads(await s.ok("ragdown_backlinks", path="ghost2.md"))
        assert [b["path"] for b in backlinks["backlinks"]] == ["haunt.md"]


async def test_shared_tags_and_titles_follow_a_write(docs: Path, connect: Connect) -> None:
    """The tag and title maps are kept per store generation: a note written after a call is found (by a
    nested tag too), under its title, and one deleted is gone."""
    garden(docs)
    async with connect(docs, RAGDOWN_TOOLSET="ragdown,extra") as s:

        async def related() -> dict[str, Any]:
            return dict(json.loads(await s.ok("ragdown_related", path="hub.md", format="json")))

        assert "herbs.md" not in by_path(await related())
        await s.ok(
            "ragdown_write", path="herbs.md", text="---\ntags: [garden/herbs]\n---\n# Herbs\n\nMint.\n"
        )
        herbs = next(r for r in (await related())["related"] if r["path"] == "herbs.md")
        assert (herbs["why"], herbs["title"]) == ("tag: garden", "Herbs")
        await s.ok("ragdown_delete", path="herbs.md")
        assert "herbs.md" not in by_path(await related())
