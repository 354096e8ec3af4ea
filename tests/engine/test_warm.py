"""A server's engine loads the dense matrix once its first sync is over, before any search asks for it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.core.config import Settings
from ragdown.engine.engine import Engine
from ragdown.search import linking
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.sqlite.vectors import DenseMatrix
from tests.conftest import write


def _notes(docs: Path) -> None:
    for i in range(6):
        write(
            docs, f"n{i}.md", f"# Note {i}\n\nSome words about topic {i}.\n\n## More\n\nAnd more about {i}.\n"
        )


def _matrix(engine: Engine) -> DenseMatrix:
    assert engine.searcher is not None
    matrix = engine.searcher.matrix
    assert isinstance(matrix, DenseMatrix)
    return matrix


def test_a_server_loads_the_matrix_after_its_first_sync(
    docs: Path, make_settings: Callable[..., Settings]
) -> None:
    _notes(docs)
    engine = Engine(make_settings(docs), "stdio", docs_dir=docs)
    try:
        engine.start(background=True, watch=False)  # as the MCP and HTTP servers start it
        assert engine.wait_ready(60)
        assert engine.warmed.wait(60)
        matrix = _matrix(engine)
        assert engine.store is not None
        _files, chunks = engine.store.counts(FileFilter())
        assert chunks == 12
        assert len(matrix) == chunks  # loaded, though nothing searched yet
        assert engine.searcher is not None
        assert engine.searcher._alias_cache is not None  # and the aliases read
    finally:
        engine.close()


def test_the_cli_does_not_load_a_matrix_it_may_never_use(
    docs: Path, open_engine: Callable[..., Engine]
) -> None:
    _notes(docs)
    engine = open_engine(docs)  # `start(background=False)`, as `ragdown index` and `ragdown search` start it
    assert not engine.warmed.is_set()
    assert _matrix(engine).capacity == 0


def test_closing_waits_for_a_warming_that_reads_the_store(
    docs: Path, make_settings: Callable[..., Settings]
) -> None:
    """A server stopped while it warms (a short-lived MCP session) must not close the store under the warming
    thread: SQLite crashes the process when a connection closes under a query. `close` joins it first."""
    _notes(docs)
    for _ in range(3):
        engine = Engine(make_settings(docs), "stdio", docs_dir=docs)
        engine.start(background=True, watch=False)
        assert engine.wait_ready(60)
        engine.close()  # as soon as it is ready: the warming may be running now
        assert all(not thread.is_alive() for thread in engine._warming)
    # A warming asked for after the close does not start at all.
    engine._warm_searcher(engine.searcher)
    assert all(not thread.is_alive() for thread in engine._warming)


def _resolver_cached(engine: Engine) -> bool:
    """Whether the link resolver of the folder (`''` in stdio) is built for the index as it is now."""
    assert engine.store is not None
    cached = linking._resolvers.get(engine.store, {}).get("")
    return cached is not None and cached[0] == engine.store.generation()


@pytest.mark.parametrize(("fusion", "built"), [("score", True), ("rrf", False)])
def test_a_server_whose_searches_lend_along_links_builds_its_resolver_ahead(
    docs: Path, make_settings: Callable[..., Settings], fusion: str, built: bool
) -> None:
    """Score fusion lends along the first hits' wikilinks (`search/evidence.py`) through a resolver over every
    note of the folder: built by the warming, not by the first search. RRF never lends: nothing built, no
    memory held for it."""
    _notes(docs)
    write(docs, "links.md", "# Links\n\nSee [[n1]] and [[n2#More]].\n")
    engine = Engine(make_settings(docs, RAGDOWN_FUSION=fusion), "stdio", docs_dir=docs)
    try:
        engine.start(background=True, watch=False)
        assert engine.wait_ready(60)
        assert engine.warmed.wait(60)
        assert _resolver_cached(engine) is built
    finally:
        engine.close()
