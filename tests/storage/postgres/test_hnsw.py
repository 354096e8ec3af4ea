"""The HNSW graph's upkeep (`index/pghnsw.py`): built once after a large load instead of row by row, built
again where it is missing or was built with other settings, and the settings themselves."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import psycopg
import pytest
from psycopg import sql

from ragdown.embedders import HashEmbedder
from ragdown.engine.engine import Engine
from ragdown.storage.postgres import hnsw as pghnsw
from ragdown.storage.postgres.backend import PostgresBackend
from tests.conftest import write

OpenEngine = Callable[..., Engine]
LOG = "ragdown.storage.postgres.hnsw"


@pytest.fixture
def index_backend() -> str:
    return "postgres"


def pg(engine: Engine) -> PostgresBackend:
    backend = engine.backend
    assert isinstance(backend, PostgresBackend)
    return backend


def graph(engine: Engine) -> tuple[int | None, dict[str, int] | None]:
    """The graph's oid (a new one after every build) and its build settings; (None, None) without one."""
    backend = pg(engine)
    with backend.connect() as conn:
        row = conn.execute("SELECT to_regclass('vecs_hnsw')::oid").fetchone()
        oid = int(row[0]) if row and row[0] is not None else None
        return oid, pghnsw.built_with(conn, backend.schema)


def nearest(engine: Engine, text: str, k: int = 5) -> tuple[list[int], str]:
    """The dense index's `k` nearest chunks to `text`, and PostgreSQL's plan for them where it must use an
    index (the graph, if it can serve the query)."""
    store = engine.require_store()
    vec = HashEmbedder().embed_query(text)
    ids = [cid for cid, _ in store.dense_index(vec.shape[0]).search(vec, k)]
    with pg(engine).connect() as conn, conn.transaction():
        conn.execute("SET LOCAL enable_seqscan = off")  # at this size the planner prefers a scan and a sort
        plan = conn.execute(
            "EXPLAIN SELECT id FROM vecs ORDER BY emb <=> %s LIMIT %s", (np.asarray(vec, np.float32), k)
        ).fetchall()
    return ids, "\n".join(str(r[0]) for r in plan)


def exact(engine: Engine, text: str, k: int = 5) -> list[int]:
    vec = np.asarray(HashEmbedder().embed_query(text), np.float32)
    with pg(engine).connect() as conn, conn.transaction():
        conn.execute("SET LOCAL enable_indexscan = off")
        rows = conn.execute("SELECT id FROM vecs ORDER BY emb <=> %s, id LIMIT %s", (vec, k)).fetchall()
    return [int(r[0]) for r in rows]


def test_a_large_load_builds_the_graph_once_after_it_and_small_ones_keep_it(
    docs: Path, open_engine: OpenEngine, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, LOG)
    files = pghnsw.BULK_MIN_FILES
    for i in range(files):
        write(docs, f"n{i:04}.md", f"# Note {i}\n\nlemma{i} about topic{i % 7} and more\n")
    engine = open_engine(docs)
    assert f"loading {files:,} files into an index of 0" in caplog.text
    assert f"built the vector index over {files:,} vectors" in caplog.text
    oid, built = graph(engine)
    assert oid is not None
    assert built == {"m": 16, "ef_construction": 64}
    ids, plan = nearest(engine, "lemma17 about topic3")
    assert "Index Scan using vecs_hnsw" in plan  # the graph serves the dense search
    assert ids[0] == exact(engine, "lemma17 about topic3")[0]

    # A checkout that touches every file (same sizes): nothing read changes, the graph stays.
    caplog.clear()
    for path in docs.glob("*.md"):
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert engine.sync()["unchanged"] == files
    # A few new files go into the graph row by row.
    for i in range(3):
        write(docs, f"extra{i}.md", f"# Extra {i}\n\nnewword{i}\n")
    assert engine.sync()["added"] == 3
    assert "vector index" not in caplog.text
    assert graph(engine)[0] == oid
    assert nearest(engine, "newword1")[0][0] == exact(engine, "newword1")[0]


def test_a_missing_graph_or_one_built_otherwise_is_built_again(
    docs: Path, open_engine: OpenEngine, postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, LOG)
    for i in range(20):
        write(docs, f"n{i}.md", f"# Note {i}\n\nlemma{i}\n")
    engine = open_engine(docs)
    steps: list[str | None] = []
    engine.add_progress_listener(lambda p: steps.append(p.step))
    assert "vector index" not in caplog.text  # a small first load: into the graph made with the table
    # A load that stopped half way left no graph: the next sync, with nothing to do, builds it.
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP INDEX {}.vecs_hnsw").format(sql.Identifier(pg(engine).schema)))
    assert graph(engine) == (None, None)
    engine.sync()
    assert "searches use an exact scan until it is done" in caplog.text
    assert steps[-1] == "building the vector index"  # the sync's progress says so while it builds
    assert graph(engine)[1] == {"m": 16, "ef_construction": 64}
    engine.close()

    caplog.clear()
    again = open_engine(
        docs, RAGDOWN_HNSW_M="8", RAGDOWN_HNSW_EF_CONSTRUCTION="32", RAGDOWN_HNSW_EF_SEARCH="77"
    )
    assert "searches keep the one built with m 16, ef_construction 64 until it is done" in caplog.text
    assert graph(again)[1] == {"m": 8, "ef_construction": 32}
    with pg(again).connect() as conn:
        assert conn.execute("SHOW hnsw.ef_search").fetchone() == ("77",)
        assert conn.execute("SELECT to_regclass('vecs_hnsw_next')").fetchone() == (None,)
    assert nearest(again, "lemma4")[0][0] == exact(again, "lemma4")[0]


def test_a_graph_that_cannot_be_built_leaves_the_sync_and_search_working(
    docs: Path, open_engine: OpenEngine, postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "ragdown.storage")
    for i in range(5):
        write(docs, f"n{i}.md", f"# Note {i}\n\nlemma{i}\n")
    engine = open_engine(docs)
    schema = sql.Identifier(pg(engine).schema)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP INDEX {}.vecs_hnsw").format(schema))
        # Something in the way of the build (here a table where the new graph goes): the build fails.
        conn.execute(sql.SQL("CREATE TABLE {}.vecs_hnsw_next(x int)").format(schema))
    write(docs, "new.md", "# New\n\nnewword\n")
    assert engine.sync()["added"] == 1  # the files are in
    assert "could not build the vector index" in caplog.text
    assert "searches use an exact scan; trying again at a sync in 10 min" in caplog.text
    assert nearest(engine, "newword")[0][0] == exact(engine, "newword")[0]
    caplog.clear()
    engine.sync()
    assert "vector index" not in caplog.text  # not tried again at once
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP TABLE {}.vecs_hnsw_next").format(schema))
    store = engine.require_store()
    store._graph_retry_at = 0.0  # type: ignore[attr-defined]  # the ten minutes are up
    engine.sync()
    assert graph(engine)[1] == {"m": 16, "ef_construction": 64}


def test_the_settings_not_set_are_chosen_from_the_index_size() -> None:
    chosen = pghnsw.HnswSettings()
    large, wide = pghnsw.DENSE_FROM, pghnsw.WIDE_FROM
    # pgvector's build below DENSE_FROM (0.983 of the exact top 10 at 100,000 vectors, 0.957 at 200,000),
    # a denser graph from there; searched wider from WIDE_FROM on (0.974 -> 0.985 at 1,000,000):
    # docs/benchmarks.md sections 14 and 38
    assert large < wide
    assert chosen.build_for(0).build() == {"m": 16, "ef_construction": 64}
    assert chosen.build_for(large - 1).build() == {"m": 16, "ef_construction": 64}
    assert chosen.build_for(large).build() == {"m": 32, "ef_construction": 128}
    assert chosen.build_for(wide).build() == {"m": 32, "ef_construction": 128}
    assert (chosen.ef_search_for(large), chosen.ef_search_for(wide - 1), chosen.ef_search_for(wide)) == (
        400,
        400,
        600,
    )
    # a denser graph in use is kept when the index shrinks below DENSE_FROM; a sparser one is built again
    dense = {"m": 32, "ef_construction": 128}
    assert chosen.build_for(large - 1, dense).build() == dense
    assert chosen.build_for(10, {"m": 8, "ef_construction": 32}).build() == {"m": 16, "ef_construction": 64}
    assert chosen.build_for(large, {"m": 16, "ef_construction": 64}).build() == dense
    # what is set is kept whatever the size; an m set alone builds with 4 x m candidates
    assert pghnsw.HnswSettings(m=16).build_for(10 * large).build() == {"m": 16, "ef_construction": 64}
    assert pghnsw.HnswSettings(m=24).build_for(0).build() == {"m": 24, "ef_construction": 96}
    assert pghnsw.HnswSettings(m=16).build_for(large - 1, dense).build() == {"m": 16, "ef_construction": 64}
    assert pghnsw.HnswSettings(ef_search=77).ef_search_for(10 * large) == 77


def test_an_index_past_the_large_size_gets_the_denser_graph_and_wider_searches(
    docs: Path, open_engine: OpenEngine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, LOG)
    # sections, here: the same rules as at 100,000 and 500,000
    monkeypatch.setattr(pghnsw, "DENSE_FROM", 30)
    monkeypatch.setattr(pghnsw, "WIDE_FROM", 35)
    for i in range(20):
        write(docs, f"n{i}.md", f"# Note {i}\n\nlemma{i} about topic{i % 3}\n")
    engine = open_engine(docs)
    assert graph(engine)[1] == {"m": 16, "ef_construction": 64}
    store = engine.require_store()

    def searched_with(text: str) -> tuple[int, str]:
        """The dense search's nearest chunk, and the ef_search it ran with (inside one transaction)."""
        vec = HashEmbedder().embed_query(text)
        with store.read_snapshot() as conn:
            ids = [cid for cid, _ in store.dense_index(vec.shape[0]).search(vec, 5)]
            row = conn.execute("SHOW hnsw.ef_search").fetchone()
        assert row is not None
        return ids[0], str(row[0])

    assert searched_with("lemma4") == (exact(engine, "lemma4")[0], "400")

    for i in range(20, 40):
        write(docs, f"n{i}.md", f"# Note {i}\n\nlemma{i} about topic{i % 3}\n")
    engine.sync()  # 40 sections now: the next graph is the denser one, built beside the one in use
    assert "searches keep the one built with m 16, ef_construction 64 until it is done" in caplog.text
    assert graph(engine)[1] == {"m": 32, "ef_construction": 128}
    assert searched_with("lemma33") == (exact(engine, "lemma33")[0], "600")

    # Fewer sections again: the denser graph stays (no rebuild each time the size crosses the line)
    caplog.clear()
    oid = graph(engine)[0]
    for i in range(20, 40):
        (docs / f"n{i}.md").unlink()
    engine.sync()
    assert "vector index" not in caplog.text
    assert graph(engine)[0] == oid
    assert searched_with("lemma4") == (exact(engine, "lemma4")[0], "400")
    engine.close()

    # A graph set by hand is built as set whatever the size, and the log says what the size calls for
    for i in range(20, 40):
        write(docs, f"n{i}.md", f"# Note {i}\n\nlemma{i} about topic{i % 3}\n")
    again = open_engine(docs, RAGDOWN_HNSW_M="16", RAGDOWN_HNSW_EF_CONSTRUCTION="64")
    assert graph(again)[1] == {"m": 16, "ef_construction": 64}
    assert "than one of m 32, the choice from 30 vectors on where RAGDOWN_HNSW_M is not set" in caplog.text
