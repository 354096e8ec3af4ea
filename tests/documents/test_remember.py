"""`ragdown_remember` names and frontmatter (A11, A14 `mcp-tools.test` 8 and superseding)."""

from __future__ import annotations

import datetime
import itertools
import re

from ragdown.documents import read_document_meta
from ragdown.documents.remember import default_note_name, note_names, relative_path, remember_text, slugify

DAY = datetime.date(2026, 9, 15)


def test_slug_rules() -> None:
    assert slugify("Kafka retention") == "kafka-retention"
    assert slugify("  --Hello, World!--  ") == "hello-world"
    assert slugify("snake_case and ünïcode") == "snake-case-and-u-ni-code"
    assert slugify("ﬁ ligature") == "fi-ligature"
    assert slugify("日本語のノート") == "日本語のノート"
    assert slugify("!!!") == "note"
    assert slugify("") == "note"
    assert slugify("a" * 70) == "a" * 60
    assert slugify("x" * 59 + " y") == "x" * 59 + "-"


def test_default_name_is_the_utc_date_and_slug() -> None:
    assert default_note_name("Kafka retention", DAY) == "2026-09-15-kafka-retention"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}-note", default_note_name(""))


def test_taken_names_get_numbers() -> None:
    assert list(itertools.islice(note_names("kafka"), 3)) == ["kafka", "kafka-2", "kafka-3"]


def test_the_exact_frontmatter_layout() -> None:
    text = remember_text(
        "Kafka retention",
        "Retention is seven days.\n\n  ",
        note_path="notes/kafka.md",
        today=DAY,
        tags=["ops"],
    )
    assert text == (
        '---\ntitle: "Kafka retention"\ndate: 2026-09-15\ntags: ["ops"]\ncreated_by: ragdown_remember\n---\n'
        "Retention is seven days.\n"
    )


def test_supersedes_are_relative_to_the_new_document_and_session_is_recorded() -> None:
    text = remember_text(
        'Embedder "v2"',
        "The embedder is granite-small.",
        note_path="notes/embedder-v2.md",
        today=DAY,
        supersedes=["notes/embedder.md", "ops/old.md"],
        session_id="session-1",
    )
    assert text == (
        '---\ntitle: "Embedder \\"v2\\""\ndate: 2026-09-15\nsupersedes: ["embedder.md", "../ops/old.md"]\n'
        'created_by: ragdown_remember\nsession: "session-1"\n---\nThe embedder is granite-small.\n'
    )
    meta = read_document_meta(text, "notes/embedder-v2.md")
    assert meta.title == 'Embedder "v2"'
    assert meta.supersedes == ("notes/embedder.md", "ops/old.md")
    assert (meta.created_by, meta.session) == ("ragdown_remember", "session-1")


def test_relative_paths() -> None:
    assert relative_path("notes/new.md", "notes/old.md") == "old.md"
    assert relative_path("new.md", "a/b.md") == "a/b.md"
    assert relative_path("a/b/c.md", "a/x/y.md") == "../x/y.md"
    assert relative_path("a/b/c.md", "z.md") == "../../z.md"
