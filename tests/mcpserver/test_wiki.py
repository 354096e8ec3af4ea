"""A wiki agents keep tidy (issue 12): index.md upkeep on every kind of write, advisory write lints, footnotes."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.access.scope import Scope
from ragdown.documents import lint as lints
from ragdown.documents.links import LinkResolver
from ragdown.documents.lint import lint
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from tests.conftest import HOSTILE_FRONTMATTER, write
from tests.mcpserver.conftest import Connect, Endpoint

pytestmark = pytest.mark.anyio

START, END = "<!-- ragdown:index-start -->", "<!-- ragdown:index-end -->"


def endpoint(engine: Engine, folder: str = "") -> Endpoint:
    return Endpoint(Runtime(engine.settings, engine), Scope(root=engine.root, folder=folder))


@pytest.fixture
def wiki(docs: Path, open_engine: Callable[..., Engine]) -> tuple[Path, Endpoint]:
    root = docs / "wiki"
    write(docs, "wiki/.ragdown.json", json.dumps({"mcp": True, "index_md": True}))
    write(docs, "wiki/index.md", f"# Wiki\n\nPeople write this part.\n\n{START}\n{END}\n\nAnd this.\n")
    write(docs, "wiki/Alpha.md", "# Alpha page\n\ntext\n")
    engine = open_engine(docs, "serve")
    return root, endpoint(engine, "wiki")


def block(path: Path) -> list[str]:
    lines = path.read_text().split("\n")
    return lines[lines.index(START) + 1 : lines.index(END)]


async def test_each_write_keeps_the_index_lists_current(wiki: tuple[Path, Endpoint]) -> None:
    root, end = wiki
    await end.ok("ragdown_write", path="guides/setup.md", text="# Setting up\n\nsteps\n")
    # the root's list: subdirectories first, then files, case-insensitively; prose outside untouched
    assert block(root / "index.md") == [
        "- [guides/](./guides/index.md) — guides",
        "- [Alpha.md](./Alpha.md) — Alpha page",
    ]
    text = (root / "index.md").read_text()
    assert text.startswith("# Wiki\n\nPeople write this part.\n")
    assert text.endswith("\nAnd this.\n")
    # a missing index.md is scaffolded
    assert (
        root / "guides/index.md"
    ).read_text() == f"# guides\n\n{START}\n- [setup.md](./setup.md) — Setting up\n{END}\n"

    await end.ok("ragdown_write", path="guides/b.md", text="Not a heading first\n\n# Late\n")
    assert block(root / "guides/index.md") == ["- [b.md](./b.md)", "- [setup.md](./setup.md) — Setting up"]

    await end.ok("ragdown_move", **{"from": "guides/b.md", "to": "guides/deep/b.md"})
    assert block(root / "guides/index.md") == [
        "- [deep/](./deep/index.md) — deep",
        "- [setup.md](./setup.md) — Setting up",
    ]
    assert block(root / "guides/deep/index.md") == ["- [b.md](./b.md)"]

    await end.ok("ragdown_delete", path="guides/deep/b.md")
    assert block(root / "guides/index.md") == ["- [setup.md](./setup.md) — Setting up"]
    await end.ok("ragdown_remember", title="A note", content="remembered")
    assert any(line.startswith("- [notes/](./notes/index.md)") for line in block(root / "index.md"))


async def test_an_unchanged_list_is_not_written_and_damaged_markers_are_left_alone(
    wiki: tuple[Path, Endpoint],
) -> None:
    root, end = wiki
    await end.ok("ragdown_write", path="a.md", text="# A\n")
    before = (root / "index.md").stat().st_mtime_ns
    read = await end.ok("ragdown_read_doc", path="a.md")
    base = read.split("hash ", 1)[1][:12]
    await end.ok("ragdown_write", path="a.md", text="# A\n\nmore text, same title\n", base_hash=base)
    assert (root / "index.md").stat().st_mtime_ns == before  # nothing to change: not rewritten

    write(root.parent, "wiki/broken/index.md", f"# Broken\n\n{START}\nno end marker\n")
    answer = await end.ok("ragdown_write", path="broken/x.md", text="# X\n")
    assert "note: index.md of broken/ has <!-- ragdown:index-start --> without" in answer
    assert (root / "broken/index.md").read_text() == f"# Broken\n\n{START}\nno end marker\n"
    write(root.parent, "wiki/plain/index.md", "# Plain\n\nno markers at all\n")
    answer = await end.ok("ragdown_write", path="plain/y.md", text="# Y\n")
    assert "has no index markers: left alone" in answer
    assert (root / "plain/index.md").read_text() == "# Plain\n\nno markers at all\n"


async def test_hallouminate_markers_are_kept_and_the_callers_own_index_is_not_written_over(
    wiki: tuple[Path, Endpoint],
) -> None:
    root, end = wiki
    h_start, h_end = "<!-- HALLOUMINATE:INDEX-START -->", "<!-- HALLOUMINATE:INDEX-END -->"
    write(root.parent, "wiki/h/index.md", f"# H\n\n{h_start}\n{h_end}\n")
    await end.ok("ragdown_write", path="h/page.md", text="# Page\n")
    assert (root / "h/index.md").read_text() == f"# H\n\n{h_start}\n- [page.md](./page.md) — Page\n{h_end}\n"
    own = f"# Mine\n\n{START}\n- hand-written\n{END}\n"
    await end.ok("ragdown_write", path="mine/index.md", text=own)
    assert (
        (root / "mine/index.md").read_text().endswith(own)
    )  # the caller's own write stands (plus provenance)


async def test_index_upkeep_is_opt_in(docs: Path, open_engine: Callable[..., Engine]) -> None:
    write(docs, "plain/index.md", f"# Plain\n\n{START}\n{END}\n")
    end = endpoint(open_engine(docs, "serve"), "plain")
    await end.ok("ragdown_write", path="a.md", text="# A\n")
    assert block(docs / "plain/index.md") == []
    assert not (docs / "plain/sub").exists()


async def test_index_writes_go_into_the_history(wiki: tuple[Path, Endpoint]) -> None:
    _root, end = wiki
    await end.ok("ragdown_write", path="z.md", text="# Zed\n")
    body = json.loads(await end.ok("ragdown_history", path="index.md", format="json"))
    assert body["versions"][0]["who"] == "ragdown_write (index.md)"


LINTS = [
    ("# A\n\n### C\n", "heading level jumps from h1 to h3"),
    ("# A\n\nsee [here]() now\n", "a link with an empty destination"),
    ("# A\n\n![pic]()\n", "an image with an empty destination"),
    ("# A\n\n```mermaid\n\n```\n", "an empty mermaid diagram"),
    ("# A\n\n[[Nowhere]]\n", "[[Nowhere]] links to nothing in this folder"),
    ("# A\n\n[[twin]]\n", "[[twin]] could mean several documents: p/twin.md, q/twin.md"),
    ("# A\n\n[x](gone.md) and ![i](pics/none.png)\n", "a link to a missing file: gone.md"),
    ("# A\n\n![i](pics/none.png)\n", "an embed to a missing file: pics/none.png"),
    ("---\ntitle: [oops\n---\n# A\n", "the frontmatter is not valid YAML"),
]
CLEAN = [
    "# A\n\n## B\n\n### C\n",
    "# A\n\nsee [here](b.md) and `[code]()`\n",
    "# A\n\n```mermaid\ngraph TD\n```\n",
    "# A\n\n[[b]] and [[p/twin]]\n",
    "# A\n\n```\n[[Nowhere]] in code\n```\n",
    "---\ntitle: fine\n---\n# A\n",
]


@pytest.mark.parametrize(("text", "warning"), LINTS)
def test_each_lint_finds_its_problem(text: str, warning: str) -> None:
    resolver = LinkResolver({"b.md": (), "p/twin.md": (), "q/twin.md": ()}, ["pics/there.png"])
    found = lint(text, "a.md", resolver)
    assert any(warning in w for w in found), found


@pytest.mark.parametrize("text", CLEAN)
def test_each_lint_is_quiet_on_good_markdown(text: str) -> None:
    resolver = LinkResolver({"b.md": (), "p/twin.md": (), "q/twin.md": ()}, ["pics/there.png"])
    assert lint(text, "a.md", resolver) == []


@pytest.mark.parametrize("frontmatter", HOSTILE_FRONTMATTER.values(), ids=HOSTILE_FRONTMATTER)
def test_the_lints_never_fail_on_any_frontmatter(frontmatter: str) -> None:
    resolver = LinkResolver({"b.md": ()})
    found = lint(f"---\n{frontmatter}\n---\n# A\n\n### C\n\n[[b]] [[nowhere]]\n", "a.md", resolver)
    # the other lints still run
    heading = frontmatter.count("\n") + 6
    assert f"line {heading}: heading level jumps from h1 to h3" in found, found
    assert any("[[nowhere]] links to nothing" in w for w in found), found


def test_a_lint_that_fails_is_a_warning_of_its_own_not_the_writes_failure() -> None:
    def fails() -> list[str]:
        raise RecursionError("maximum recursion depth exceeded")

    said = lints._advisory("heading", "a.md", fails)
    assert said == ["line 1: the heading lint could not check this document (RecursionError)"]


async def test_a_write_with_hostile_frontmatter_is_answered_as_made_in_every_tool_set(
    docs: Path, connect: Connect
) -> None:
    """Each write tool answers success (its lints advisory), the version is recorded, the index holds the
    document, and the read-only sets read it."""
    write(docs, "b.md", "# B\n")
    async with connect(docs, RAGDOWN_TOOLSET="ragdown,hallouminate") as s:
        for name, frontmatter in HOSTILE_FRONTMATTER.items():
            text = f"---\n{frontmatter}\n---\n# {name}\n\nbody\n"
            await s.ok("ragdown_write", path=f"r/{name}.md", text=text)
            added = json.loads(
                await s.ok("add_markdown", corpus=docs.name, path=f"h/{name}.md", content=text)
            )
            assert added["created"] is True
            history = json.loads(await s.ok("ragdown_history", path=f"r/{name}.md", format="json"))
            assert len(history["versions"]) == 1
            await s.ok("ragdown_read_doc", path=f"h/{name}.md")
        listed = await s.ok("ragdown_list", path_prefix="r")
        assert listed.startswith(f"documents: {len(HOSTILE_FRONTMATTER)}\n"), listed
    async with connect(docs, RAGDOWN_TOOLSET="readmedb") as s:
        for name, frontmatter in HOSTILE_FRONTMATTER.items():
            text = f"---\n{frontmatter}\n---\n# {name}\n\nbody\n"
            await s.ok("write_file", name=f"m/{name}.md", content=text)
            await s.ok("read_file", name=f"m/{name}.md")
    async with connect(docs, RAGDOWN_TOOLSET="markindex") as s:
        for name in HOSTILE_FRONTMATTER:
            await s.ok("get_document", doc_path=f"m/{name}.md")
            await s.ok("get_document_structure", doc_path=f"m/{name}.md")


async def test_write_answers_list_the_warnings_and_the_write_is_made(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, "b.md", "# B\n")
    end = endpoint(open_engine(docs))
    answer = await end.ok("ragdown_write", path="new.md", text="# New\n\n### Deep\n\n[[b]] [[missing]]\n")
    first, *rest = answer.split("\n")
    assert first.startswith("created new.md (hash ")
    assert rest[0].startswith("warnings")
    # Lines as the file holds them: after the provenance frontmatter the write added (3 lines).
    assert "- new.md line 6: heading level jumps from h1 to h3" in rest
    assert "- new.md line 8: [[missing]] links to nothing in this folder" in rest
    assert not any("[[b]]" in line for line in rest)  # it resolves, even though it was just written
    assert (docs / "new.md").exists()
    clean = await end.ok("ragdown_write", path="clean.md", text="# Clean\n\n[[new]]\n")
    assert "\n" not in clean  # the link to what the last call made resolves: no warning


FOOTNOTED = (
    "# Paper\n\nA claim[^1] and another[^note].\n\n```\n[^fake]: not a footnote\n```\n\n"
    "[^1]: See [[Sources]] and [the spec](spec.md).\n"
    "[^note]: A longer note,\n    continued on an indented line.\n\nAfter.\n"
)


async def test_footnotes_one_at_a_time_or_left_out(docs: Path, open_engine: Callable[..., Engine]) -> None:
    write(docs, "paper.md", FOOTNOTED)
    write(docs, "Sources.md", "# Sources\n")
    end = endpoint(open_engine(docs))
    one = await end.ok("ragdown_read_doc", path="paper.md", footnote="1")
    head, text, *links = one.split("\n")
    assert head.startswith("paper.md:9-9 (hash ")
    assert head.endswith("footnote [^1])")
    assert text == "See [[Sources]] and [the spec](spec.md)."
    assert links == ["links:", "- [[Sources]] → Sources.md", "- spec.md → (nothing: missing)"]
    note = await end.ok("ragdown_read_doc", path="paper.md", footnote="[^note]")
    assert note.split("\n", 1)[1] == "A longer note,\ncontinued on an indented line."
    missing = await end.error("ragdown_read_doc", path="paper.md", footnote="fake")
    assert "has no footnote [^fake]: its footnotes are 1, note" in missing
    without = await end.ok("ragdown_read_doc", path="paper.md", footnotes="exclude", line_numbers=True)
    assert "[^1]:" not in without
    assert "continued on an indented line" not in without
    assert without.split("\n")[-1] == "13│ After."
    assert "footnote definitions left out" in without.split("\n", 1)[0]


async def test_a_footnote_takes_its_lazy_lines_and_its_web_links_and_any_case_of_its_label(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(
        docs,
        "report.md",
        "# Report\n\nClaim[^Src] and[^2].\n\n"
        "[^src]: The source is the annual report,\npage 12 of the 2023 edition.\n\n"
        "[^2]: See [the spec][s], <https://auto.example/> and [a page](https://example.org/p).\n\n"
        "```\n[^3]: in code, no footnote\n```\n\n[s]: https://spec.example/v1\n",
    )
    end = endpoint(open_engine(docs))
    source = await end.ok("ragdown_read_doc", path="report.md", footnote="Src")
    assert source.split("\n", 1)[1] == "The source is the annual report,\npage 12 of the 2023 edition."
    assert source.startswith("report.md:5-6 (hash ")
    web = await end.ok("ragdown_read_doc", path="report.md", footnote="2")
    assert web.split("\nlinks:\n", 1)[1].split("\n") == [
        "- https://spec.example/v1 → (on the web)",
        "- https://auto.example/ → (on the web)",
        "- https://example.org/p → (on the web)",
    ]
    assert "its footnotes are src, 2" in await end.error("ragdown_read_doc", path="report.md", footnote="3")
    without = await end.ok("ragdown_read_doc", path="report.md", footnotes="exclude")
    assert "page 12" not in without
    assert "in code, no footnote" in without


def test_the_lint_does_not_read_outside(tmp_path: Path) -> None:
    assert os.path.isdir(tmp_path)
    assert lint("# A\n\n[x](../../etc/passwd)\n", "a.md", LinkResolver({}, [])) == [
        "line 3: a link to a missing file: ../../etc/passwd"
    ]


async def test_the_lists_leave_out_what_the_ignore_rules_leave_out(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, "w/.ragdown.json", json.dumps({"index_md": True, "exclude": ["drafts/", "*.tmp.md"]}))
    write(docs, "w/drafts/d.md", "# Draft\n")
    write(docs, "w/s.tmp.md", "# Scratch\n")
    end = endpoint(open_engine(docs, "serve"), "w")
    await end.ok("ragdown_write", path="kept.md", text="# Kept\n")
    assert block(docs / "w/index.md") == ["- [kept.md](./kept.md) — Kept"]


async def test_markers_shown_in_a_code_block_are_no_markers(wiki: tuple[Path, Endpoint]) -> None:
    root, end = wiki
    shown = f"# Docs\n\nWrite the markers like this:\n\n```markdown\n{START}\n(your list goes here)\n{END}\n```\n\n"
    write(root.parent, "wiki/docs/index.md", f"{shown}{START}\n{END}\n")
    await end.ok("ragdown_write", path="docs/page.md", text="# Page\n")
    assert (root / "docs/index.md").read_text() == f"{shown}{START}\n- [page.md](./page.md) — Page\n{END}\n"
    write(root.parent, "wiki/only/index.md", f"# Only\n\n```\n{START}\n{END}\n```\n")
    answer = await end.ok("ragdown_write", path="only/page.md", text="# Page\n")
    assert "has no index markers: left alone" in answer


async def test_an_index_md_the_ignore_rules_leave_out_is_not_made(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, "w/.ragdown.json", json.dumps({"index_md": True}))
    write(docs, "w/.gitignore", "index.md\n")
    end = endpoint(open_engine(docs, "serve"), "w")
    await end.ok("ragdown_write", path="a/b/page.md", text="# Page\n")
    assert (docs / "w/a/b/page.md").is_file()
    assert sorted(p.name for p in (docs / "w").rglob("index.md")) == []


async def test_a_subfolder_without_an_index_md_is_named_never_linked(wiki: tuple[Path, Endpoint]) -> None:
    """Issue 14: a subfolder whose documents were made outside ragdown has no index.md; the list names it
    instead of linking to a file that is not there, so a later write of the index.md lints clean."""
    root, end = wiki
    write(root.parent, "wiki/outside/made-by-hand.md", "# By hand\n")
    await end.ok("ragdown_write", path="guides/setup.md", text="# Setting up\n")
    assert not (root / "outside/index.md").exists()
    assert block(root / "index.md") == [
        "- [guides/](./guides/index.md) — guides",
        "- outside/",
        "- [Alpha.md](./Alpha.md) — Alpha page",
    ]
    answer = await end.ok(
        "ragdown_edit", path="index.md", edits=[{"old_text": "And this.", "new_text": "And that."}]
    )
    assert "missing file" not in answer, answer
