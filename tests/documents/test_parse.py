"""`parse_document`: decoding, the whole pipeline, properties over arbitrary input, and speed."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdown.documents import Document, normalize_text, parse_document
from tests.conftest import BENCH

VAULT = BENCH / "obsidian-help" / "vault"

PIECES = [
    "#",
    "# ",
    "## H",
    "```",
    "~~~",
    "---",
    "...",
    "===",
    "    ",
    "\t",
    "- ",
    "1. ",
    "> ",
    "[[",
    "]]",
    "[a](",
    "b.md",
    ")",
    "|",
    "`",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "\ufeff",
    "title: x",
    "tags: [a, b]",
    "aliases: y",
    "#tag",
    "word",
    " ",
    "<!--",
    "-->",
    "&a",
    "*a",
    "%20",
    "\\",
    "é",
    "\u2028",
    "\x00",
]
markdownish = st.lists(st.sampled_from(PIECES), max_size=80).map("".join)


def check_invariants(source: str, doc: Document) -> None:
    """Every chunk lies within the file, and unsplit chunks are exactly the lines they name."""
    lines = normalize_text(source).split("\n")
    assert not any(w.startswith("internal error") for w in doc.warnings), doc.warnings
    assert doc.chunks, "every document has at least one chunk"
    assert [c.index for c in doc.chunks] == list(range(len(doc.chunks)))
    body_less = len(doc.chunks) == 1 and doc.chunks[0].heading == ""
    for chunk in doc.chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        span = "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        if chunk.text == span:
            assert chunk.text.strip()
            continue
        if chunk.start_line == chunk.end_line and chunk.text and chunk.text in span:
            continue  # a piece of a line longer than the limit
        assert body_less, (chunk, span)
        body = "\n".join(lines[chunk.start_line - 1 :]).strip()
        assert chunk.text in (body, doc.meta.title)
    for link in doc.links:
        text = normalize_text(source)
        assert text[link.target_start : link.target_end] == link.target
        assert 1 <= link.line <= len(lines)


def test_bytes_are_decoded_as_utf8() -> None:
    doc = parse_document("n.md", "# Café\n\nbody".encode())
    assert doc.meta.title == "Café"
    assert doc.warnings == ()


def test_invalid_utf8_is_replaced_with_a_warning() -> None:
    doc = parse_document("n.md", b"# Bad \xff\xfe byte\n\nbody")
    assert doc.meta.title == "Bad \ufffd\ufffd byte"
    assert doc.warnings == ("not valid UTF-8: undecodable bytes were replaced",)


def test_a_document_brings_meta_chunks_and_links_together() -> None:
    source = "---\r\ntitle: Runbook\r\ntags: ops\r\n---\r\n# Restore\r\n\r\nSee [[backups#Nightly]] #db\r\n"
    doc = parse_document("ops/run.md", source.encode())
    assert doc.path == "ops/run.md"
    assert (doc.meta.title, doc.meta.tags) == ("Runbook", ("db", "ops"))
    assert [(c.heading, c.breadcrumb, c.text, c.start_line, c.end_line) for c in doc.chunks] == [
        ("Restore", "Runbook › Restore", "See [[backups#Nightly]] #db", 7, 7)
    ]
    assert [(link.target, link.anchor, link.line) for link in doc.links] == [("backups", "Nightly", 7)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=st.text(), limit=st.integers(min_value=1, max_value=200))
def test_never_raises_on_arbitrary_text(source: str, limit: int) -> None:
    check_invariants(source, parse_document("any.md", source, max_chunk_chars=limit))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=markdownish, limit=st.integers(min_value=1, max_value=120))
def test_never_raises_on_markdownish_text(source: str, limit: int) -> None:
    check_invariants(source, parse_document("doc.md", source, max_chunk_chars=limit))


@settings(max_examples=200, deadline=None)
@given(raw=st.binary())
def test_never_raises_on_arbitrary_bytes(raw: bytes) -> None:
    doc = parse_document("bytes.md", raw)
    check_invariants(raw.decode("utf-8", errors="replace"), doc)


@pytest.mark.skipif(not VAULT.is_dir(), reason="the Obsidian help vault is not here")
def test_the_obsidian_help_vault_parses_cleanly() -> None:
    files = [(p.relative_to(VAULT).as_posix(), p.read_bytes()) for p in sorted(VAULT.rglob("*.md"))]
    docs = [parse_document(path, raw) for path, raw in files]
    assert len(docs) >= 170
    for (_, raw), doc in zip(files, docs, strict=True):
        assert doc.warnings == ()
        check_invariants(raw.decode(), doc)


@pytest.mark.parametrize(
    "source",
    [
        pytest.param("x" * 5_000_000, id="5MB-one-line"),
        pytest.param("".join("  " * i + "- item\n" for i in range(2000)), id="2000-deep-list"),
        pytest.param("".join(">" * i + " quote\n" for i in range(2000)), id="2000-deep-quote"),
        pytest.param("[" * 2_000_000 + "`" * 1000 + "](" * 500_000, id="bracket-soup"),
        pytest.param(" #t" * 500_000, id="many-tags"),
    ],
)
@pytest.mark.timeout(120)  # a hang guard: speed is measured in bench/, not asserted here
def test_hostile_sizes_parse_with_bounded_chunks(source: str) -> None:
    doc = parse_document("big.md", source)
    assert doc.chunks
    assert all(len(c.text) <= 1500 for c in doc.chunks)
