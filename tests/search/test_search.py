from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ragdown.documents import parse_document
from ragdown.engine.engine import Engine
from ragdown.search.hybrid import Hit, SearchOptions, cap_per_document
from ragdown.search.query import aliases_in, fts_match, names_identifier
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.records import PendingFile
from tests.conftest import BOTH_BACKENDS, write

OpenEngine = Callable[..., Engine]
# Each engine test runs on SQLite and on PostgreSQL (`tests/conftest.py`).
INDEX_BACKENDS = BOTH_BACKENDS


def search(engine: Engine, query: str, top_k: int = 8, **flt: object) -> list[Hit]:
    return engine.search(query, FileFilter(**flt), SearchOptions(top_k=top_k))  # type: ignore[arg-type]


def test_finds_chunks_by_keyword_and_by_vector(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "ops/backups.md", "# Backups\n\nNightly snapshots.\n\n## Restore\n\nRun pg_restore twice.")
    write(docs, "ops/other.md", "# Other\n\nSomething unrelated entirely.\n")
    engine = open_engine(docs)
    hits = search(engine, "pg_restore twice")
    assert hits[0].path == "ops/backups.md"
    assert hits[0].chunk.heading == "Backups › Restore"
    assert (hits[0].chunk.start_line, hits[0].chunk.end_line) == (7, 7)
    assert hits[0].sources == ("dense", "lexical")


def test_similarity_is_the_exact_cosine_whichever_retriever_found_it(
    docs: Path, open_engine: OpenEngine
) -> None:
    write(docs, "a.md", "# Alpha\n\nzebra crossing plan\n")
    write(docs, "b.md", "# Beta\n\nzebra\n")
    engine = open_engine(docs)
    searcher = engine.require_searcher()
    assert searcher.embedder is not None
    q = searcher.embedder.embed_query("zebra crossing")
    for hit in search(engine, "zebra crossing"):
        v = searcher.embedder.embed_documents([hit.chunk.breadcrumb + "\n\n" + hit.chunk.text])[0]
        assert hit.similarity == pytest.approx(float(np.dot(q, v)), abs=1e-5)


def test_path_prefix_is_a_directory_and_quotes_are_safe(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "projects/alpha/a.md", "# A\n\nshared words here\n")
    write(docs, "projects/alpha-old/b.md", "# B\n\nshared words here\n")
    write(docs, "it's/c.md", "# C\n\nshared words here\n")
    engine = open_engine(docs)
    assert {h.path for h in search(engine, "shared words", prefixes=("projects/alpha",))} == {
        "projects/alpha/a.md"
    }
    assert {h.path for h in search(engine, "shared words", prefixes=("it's",))} == {"it's/c.md"}
    assert len(search(engine, "shared words")) == 3


def test_a_paths_filter_keeps_exactly_those_documents(docs: Path, open_engine: OpenEngine) -> None:
    for rel in ("a.md", "a.md.d/b.md", "sub/c.md", "sub/d.md"):
        write(docs, rel, "# Note\n\nshared words here\n")
    engine = open_engine(docs)
    assert {h.path for h in search(engine, "shared words", paths=("a.md", "sub/d.md"))} == {
        "a.md",
        "sub/d.md",
    }
    pool = engine.require_searcher().lexical_pool("shared words", FileFilter(paths=("sub/c.md",)), 10)
    assert {c.path for c in engine.require_store().chunks_by_id([cid for cid, _ in pool]).values()} == {
        "sub/c.md"
    }
    assert search(engine, "shared words", paths=()) == []
    assert [f.path for f in engine.require_store().list_files(FileFilter(paths=("sub/c.md",)))] == [
        "sub/c.md"
    ]


def test_matches_a_chunk_on_words_only_its_heading_has(docs: Path, open_engine: OpenEngine) -> None:
    write(
        docs,
        "kestrel.md",
        "# Kestrel Ingest\n\n## Configuration\n\n| Setting | Value |\n|---|---|\n| Replicas | 3 |\n",
    )
    write(docs, "other.md", "# Other\n\n## Setup\n\n| Setting | Value |\n|---|---|\n| Replicas | 5 |\n")
    engine = open_engine(docs)
    hits = engine.require_searcher().lexical_pool("kestrel configuration", FileFilter(), 10)
    records = engine.require_store().chunks_by_id([cid for cid, _ in hits])
    assert records[hits[0][0]].breadcrumb == "Kestrel Ingest › Configuration"


def test_tag_filter_matches_nested_tags_only(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "a.md", "---\ntags: [project/alpha]\n---\n# A\n\ncommon words\n")
    write(docs, "b.md", "# B\n\ncommon words #infra/db\n")
    write(docs, "c.md", "# C\n\ncommon words\n")
    engine = open_engine(docs)
    assert [h.path for h in search(engine, "common words", tag="project")] == ["a.md"]
    assert [h.path for h in search(engine, "common words", tag="infra/db")] == ["b.md"]
    assert search(engine, "common words", tag="infr") == []


def test_skipped_files_follow_the_filters_directories_and_folders(
    docs: Path, open_engine: OpenEngine
) -> None:
    for rel in ("top.md", "sub/deep/bin.md", "sub-old/bin.md", "other/bin.md"):
        path = docs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"# Binary\x00\x01\n")
    store = open_engine(docs).require_store()

    def skipped(**flt: object) -> list[str]:
        return [path for path, _ in store.skipped_files(FileFilter(**flt))]  # type: ignore[arg-type]

    assert skipped() == ["other/bin.md", "sub-old/bin.md", "sub/deep/bin.md", "top.md"]
    assert skipped(prefixes=("sub",)) == ["sub/deep/bin.md"]
    assert skipped(folders=("other", "sub")) == ["other/bin.md", "sub/deep/bin.md"]
    assert skipped(prefixes=("sub",), folders=("other",)) == []
    assert skipped(folders=()) == []


def test_a_tag_with_a_like_wildcard_matches_only_itself(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "a.md", "---\ntags: [q_1]\n---\n# A\n\ncommon words\n")
    write(docs, "b.md", "---\ntags: [qx1, q11]\n---\n# B\n\ncommon words\n")
    engine = open_engine(docs)
    assert [h.path for h in search(engine, "common words", tag="q_1")] == ["a.md"]
    assert [h.path for h in search(engine, "common words", tag="qx1")] == ["b.md"]


def test_written_by_and_superseded(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "old.md", "# Old\n\nembedder choice is bge\n")
    write(
        docs,
        "new.md",
        '---\ncreated_by: ragdown_remember\nsupersedes: ["old.md"]\n---\n# New\n\nembedder choice is granite\n',
    )
    write(docs, "mine.md", "# Mine\n\nembedder choice notes\n")
    engine = open_engine(docs)
    paths = {h.path for h in search(engine, "embedder choice")}
    assert paths == {"new.md", "mine.md"}
    assert {h.path for h in search(engine, "embedder choice", written_by="agent")} == {"new.md"}
    assert {h.path for h in search(engine, "embedder choice", written_by="user")} == {"mine.md"}


def test_a_document_retires_only_documents_of_its_own_folder(docs: Path, open_engine: OpenEngine) -> None:
    """`supersedes: ["../lab/secret.md"]` in work/new.md once hid lab/secret.md from lab's search: entries
    resolve inside the declaring document's folder (`..` out of it names nothing), and the store honours
    only a supersedes of the same folder, whatever an index written before that rule holds."""
    write(docs, "work/old.md", "# Old\n\nembedder choice is bge\n")
    write(docs, "lab/secret.md", "# Secret\n\nembedder choice is secret\n")
    text = (
        '---\nsupersedes: ["old.md", "../lab/secret.md", "../../lab/secret.md", "/lab/secret.md"]\n---\n'
        "# New\n\nembedder choice is granite\n"
    )
    write(docs, "work/new.md", text)
    engine = open_engine(docs, "serve")
    store = engine.require_store()
    assert store.superseded_by() == {"work/old.md": ["work/new.md"]}
    assert {h.path for h in search(engine, "embedder choice")} == {"work/new.md", "lab/secret.md"}
    assert [h.path for h in search(engine, "embedder choice", folders=("lab",))] == ["lab/secret.md"]

    # The row the indexer wrote before: the entries resolved against the docs dir, not the folder.
    before = parse_document("work/new.md", text)
    assert "lab/secret.md" in before.meta.supersedes
    record = store.get_file("work/new.md")
    assert record is not None
    store.write_files(
        [PendingFile("work/new.md", "work", record.size, 1, record.mtime_ns, record.hash, before, None)]
    )
    assert store.superseded_by() == {"work/old.md": ["work/new.md"]}
    assert [h.path for h in search(engine, "embedder choice", folders=("lab",))] == ["lab/secret.md"]


def test_alias_boost_lifts_the_aliased_document(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "a.md", "---\naliases: [Bluebird]\n---\n# Service A\n\nruns the nightly batch job\n")
    for i in range(5):
        write(docs, f"b{i}.md", f"# Service B{i}\n\nruns the nightly batch job every night batch job\n")
    engine = open_engine(docs)
    hits = search(engine, "what does bluebird run in the nightly batch job")
    assert hits[0].path == "a.md"


def test_identifier_routing() -> None:
    for routed in [
        "what does `veltra smoke` do",
        "where is max_batch_size set",
        "value of db.m6g.large",
        "config in projects/alpha",
        "what does --percent do",
        "who calls getUserName",
        "which class is r6g",
    ]:
        assert names_identifier(routed), routed
    for prose in ["is it up-to-date", "e.g. the backups", "meet at 10:30", "how do I restore a backup"]:
        assert not names_identifier(prose), prose


def test_fts_match_quotes_every_word_and_drops_stop_words() -> None:
    assert fts_match("what is the pg_restore flag") == '"pg restore" OR "flag"'
    assert fts_match('say "hi" OR NEAR(x)') == '"say" OR "hi" OR "near" OR "x"'
    assert fts_match("?? !!") is None
    assert fts_match("the") == '"the"'


def test_aliases_are_matched_whole_and_need_three_characters() -> None:
    pairs = [("Bluebird", "a.md"), ("db", "b.md"), ("Old Name", "c.md")]
    assert aliases_in("ask bluebird now", pairs) == {"a.md"}
    assert aliases_in("bluebirds", pairs) == set()
    assert aliases_in("the db is down", pairs) == set()
    assert aliases_in("the old name was", pairs) == {"c.md"}


def test_max_per_document_moves_extra_sections_behind_others(docs: Path, open_engine: OpenEngine) -> None:
    write(
        docs, "long.md", "# Long\n\n## One\n\nkiwi fruit\n\n## Two\n\nkiwi fruit\n\n## Three\n\nkiwi fruit\n"
    )
    write(docs, "short.md", "# Short\n\nkiwi\n")
    engine = open_engine(docs)
    hits = search(engine, "kiwi fruit")
    capped = cap_per_document(hits, 1)
    assert [h.path for h in capped][:2] == ["long.md", "short.md"]
    assert len(capped) == len(hits)


def test_follow_links_places_linked_sections_after_the_hit(docs: Path, open_engine: OpenEngine) -> None:
    write(docs, "incident.md", "# Incident\n\nThe outage was recovered with [[Procedure]].\n")
    write(docs, "Procedure.md", "# Procedure\n\n## Steps\n\nfirst command is reboot\n\n## Notes\n\nnothing\n")
    for i in range(4):
        write(docs, f"noise{i}.md", f"# Noise {i}\n\noutage number {i}\n")
    engine = open_engine(docs)
    plain = engine.search("outage recovered", FileFilter(), SearchOptions(top_k=4))
    followed = engine.search("outage recovered", FileFilter(), SearchOptions(top_k=4, follow_links=1))
    assert plain[0].path == followed[0].path == "incident.md"
    assert "Procedure.md" not in [h.path for h in plain]
    assert [h.path for h in followed[1:3]] == ["Procedure.md", "Procedure.md"]
    assert followed[1].score == followed[0].score
