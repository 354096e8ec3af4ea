"""Setext headings (MarkIndex's `--no-setext`): a converter's page breaks are warned of, and
`RAGDOWN_SETEXT=false` reads `---` under a paragraph as a thematic break, rebuilding the index."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ragdown.documents import blocks, parse_document
from ragdown.engine.engine import Engine
from ragdown.storage.filter_sql import FileFilter
from tests.conftest import write

CONVERTED = (
    "# Annual report\n\n"
    "Revenue grew in every region this year, led by the northern\n"
    "markets, where the new distribution centres opened in spring and\n"
    "carried most of the growth through the second half.\n"
    "---\n\n"
    "Costs rose less than revenue.\n"
)


@pytest.fixture(autouse=True)
def setext_restored() -> Iterator[None]:
    yield
    blocks.read_setext(True)  # one choice per process: the next test parses as every other does


def test_a_long_or_many_line_setext_heading_is_warned_of() -> None:
    doc = parse_document("report.md", CONVERTED)
    (warning,) = [w for w in doc.warnings if "setext" in w]
    assert warning.startswith("line 3: a setext heading of 3 lines, likely a converter's page break")
    assert "RAGDOWN_SETEXT=false" in warning
    long_line = "x" * 130
    assert any("130 characters" in w for w in parse_document("a.md", f"{long_line}\n---\n").warnings)
    assert not [
        w for w in parse_document("b.md", "# T\n\nShort heading\n---\n\ntext\n").warnings if "setext" in w
    ]


def test_with_setext_off_a_page_break_is_no_heading_and_the_index_is_rebuilt(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    write(docs, "report.md", CONVERTED)
    write(docs, "real.md", "Real title\n==========\n\nBody.\n")

    def headings(engine: Engine) -> set[str]:
        store = engine.require_store()
        titles: set[str] = set()
        for f in store.list_files(FileFilter()):
            tree = store.tree_of(f.path)
            assert tree is not None
            titles |= {
                t for n in tree.walk() for t in (n.title, *n.key_items) if n is not tree or t != n.title
            }
        return titles

    on = open_engine(docs)
    assert any("Revenue grew" in h for h in headings(on))
    assert on.require_store().get_file("real.md").title == "Real title"  # type: ignore[union-attr]
    on.close()
    off = open_engine(docs, RAGDOWN_SETEXT="false")
    assert not any("Revenue grew" in h for h in headings(off))
    assert off.require_store().get_file("real.md").title == "real"  # type: ignore[union-attr]
    assert off.require_store().read_meta()["setext"] == "false"
    tree = off.require_store().tree_of("report.md")
    assert tree is not None
    assert [n.title for n in tree.walk()] == ["Annual report"]
    assert list(tree.key_items) in ([], ["Annual report"])
    off.close()
    again = open_engine(docs)
    assert any("Revenue grew" in h for h in headings(again))
    assert "setext" not in again.require_store().read_meta()
