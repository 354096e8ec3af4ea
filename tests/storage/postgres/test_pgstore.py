"""What only the PostgreSQL backend has: replicas in one process (forwarded syncs, NOTIFY'd generations, a
primary that loses its session), the lock per document, hook memory and the query log shared, its own
schema versioning and re-tokenising. (The store, sync, search and tool tests run on both backends too.)"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import LiteralString
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest
from psycopg import sql

from ragdown.access.scope import Scope
from ragdown.core.config import Settings
from ragdown.engine.engine import Engine
from ragdown.search.hybrid import SearchOptions
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.postgres import retrieval as pgretrieval
from ragdown.storage.postgres import tsvectors as pgsearch
from ragdown.storage.postgres.backend import PostgresBackend
from ragdown.storage.postgres.primary import PgPrimaryLock
from tests.conftest import isolated_env, write
from tests.http.conftest import StartServer
from tests.http.conftest import start_app as start_app  # the fixture: `ragdown serve`'s app, in-process
from tests.mcpserver.conftest import Endpoint
from tests.storage.postgres.server import server_to_stop

OpenEngine = Callable[..., Engine]


@pytest.fixture
def index_backend() -> str:
    return "postgres"


@pytest.fixture
def replica(tmp_path: Path, index_env: dict[str, str]) -> Iterator[Callable[[Path, str], Engine]]:
    """`replica(docs, name)`: another engine on the same index, with a data dir of its own (another machine)."""
    engines: list[Engine] = []

    def make(docs: Path, name: str) -> Engine:
        env = isolated_env(
            tmp_path, RAGDOWN_DOCS_DIR=str(docs), RAGDOWN_DATA_DIR=str(tmp_path / name), **index_env
        )
        engine = Engine(Settings.from_env(env), "stdio", docs_dir=docs)
        engine.start(background=False, initial_sync=False, watch=False)
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        engine.close()


def pg(engine: Engine) -> PostgresBackend:
    backend = engine.backend
    assert isinstance(backend, PostgresBackend)
    return backend


def paths(engine: Engine, query: str) -> list[str]:
    return [h.path for h in engine.search(query, FileFilter(), SearchOptions(top_k=3))]


def wait_for(check: Callable[[], bool], what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def test_a_reader_forwards_its_syncs_and_hears_every_generation(
    docs: Path, open_engine: OpenEngine, replica: Callable[[Path, str], Engine]
) -> None:
    write(docs, "a.md", "# Alpha\n\napricot\n")
    primary = open_engine(docs)
    reader = replica(docs, "other")
    assert (primary.role, reader.role) == ("primary", "reader")
    write(docs, "b.md", "# Beta\n\nblueberry\n")
    report = reader.sync()  # made by the primary, through the database
    assert (report["added"], report["unchanged"]) == (1, 1)
    assert paths(reader, "blueberry")[0] == "b.md"
    # The reader's generation is the one the primary's commit announced (NOTIFY, heard before the sync's
    # answer): its own copy, which only the listener moves while it listens, never a read of the database.
    listener = pg(reader)._listener
    assert listener is not None
    assert listener.listening.is_set()
    assert pg(reader)._generation == pg(primary).read_generation() > 0
    primary.close()
    wait_for(lambda: reader.role == "primary", "the reader never took over")
    write(docs, "c.md", "# Gamma\n\ncherry\n")
    # The new primary indexes it: this sync, or its own take-over sync / watcher if one got there first.
    report = reader.sync()
    assert report["removed"] == 0
    assert paths(reader, "cherry")[0] == "c.md"


def test_a_primary_that_loses_its_session_steps_down(
    docs: Path,
    open_engine: OpenEngine,
    replica: Callable[[Path, str], Engine],
    postgres_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    write(docs, "a.md", "# Alpha\n\napricot\n")
    first = open_engine(docs)
    second = replica(docs, "other")
    lock = first._lock
    assert isinstance(lock, PgPrimaryLock)
    assert lock._conn is not None
    pid = lock._conn.info.backend_pid
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
    wait_for(lambda: "lost the primary role" in caplog.text, "the primary never noticed")
    # Whichever tries first wins the lock again (the one that lost it too, on a new session): one primary.
    wait_for(lambda: sorted((first.role, second.role)) == ["primary", "reader"], "no single primary")
    assert not (lock.held and lock._conn is not None and lock._conn.info.backend_pid == pid)
    reader, winner = (first, second) if first.role == "reader" else (second, first)
    winner.sync()  # its take-over sync done (under load it can end after the write below, and find b.md)
    write(docs, "b.md", "# Beta\n\nblueberry\n")
    assert reader.sync()["added"] == 1  # forwarded to the primary, whichever it is
    assert paths(reader, "blueberry")[0] == "b.md"


def test_a_document_is_locked_across_replicas(tmp_path: Path, postgres_url: str) -> None:
    root = tmp_path / "docs"
    one, two = (PostgresBackend(postgres_url, "locks", root) for _ in range(2))
    lock_one, lock_two = one.document_lock(), two.document_lock()
    assert lock_one is not None
    assert lock_two is not None
    order: list[str] = []
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with lock_one(root / "a.md"):
            order.append("one in")
            held.set()
            release.wait(10)
            order.append("one out")

    thread = threading.Thread(target=hold)
    thread.start()
    assert held.wait(10)
    with lock_two(root / "b.md"):  # another document: not held up
        order.append("two in b")

    def take() -> None:
        with lock_two(root / "a.md"):
            order.append("two in a")

    waiter = threading.Thread(target=take)
    waiter.start()
    waiter.join(0.3)  # it waits for the other replica's lock (whatever the timing, it cannot get in first)
    release.set()
    thread.join(10)
    waiter.join(10)
    assert order == ["one in", "two in b", "one out", "two in a"]
    one.close()
    two.close()


def test_hook_memory_and_the_query_log_are_shared(tmp_path: Path, postgres_url: str) -> None:
    one, two = (PostgresBackend(postgres_url, "shared", tmp_path) for _ in range(2))
    try:
        key = "/docs\x00session-1"
        one.hook_memory().add(key, ["a.md#0@abc", "b.md#1@def"])
        assert two.hook_memory().seen(key) == {"a.md#0@abc", "b.md#1@def"}
        two.hook_memory().reset(key)
        assert one.hook_memory().seen(key) == set()
        one.query_log().record("search", query="kiwi", hits=[])
        two.query_log().record("read", path="a.md")
        assert [e["kind"] for e in one.query_log().entries()] == ["search", "read"]
        assert two.query_log().summary(0.5)["searches"] == 1
        one.query_log().clear()
        assert two.query_log().entries() == []
    finally:
        one.close()
        two.close()


def _execute(engine: Engine, url: str, statement: LiteralString) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(pg(engine).schema)))
        conn.execute(statement)


def test_tokens_made_by_other_rules_are_made_again(
    docs: Path, open_engine: OpenEngine, postgres_url: str
) -> None:
    write(docs, "附件.md", "# 附件\n\n更改默认附件储存位置。\n")
    engine = open_engine(docs)
    engine.close()
    _execute(
        engine,
        postgres_url,
        "UPDATE chunks SET tsv = ''; UPDATE meta SET value = 'other' WHERE key = 'lexical'",
    )
    again = open_engine(docs, sync=False)
    store = again.require_store()
    assert store.bm25('"附件"', FileFilter(), 10, (1.0, 1.0, 1.0))
    assert store.substrings('"储存位"', FileFilter(), 10, (1.0, 1.0, 1.0))
    _execute(again, postgres_url, "SELECT 1")
    assert again.sync()["unchanged"] == 1  # nothing re-read or re-embedded


def test_a_schema_of_another_version_is_rebuilt(
    docs: Path, open_engine: OpenEngine, postgres_url: str
) -> None:
    write(docs, "a.md", "# Alpha\n\napricot\n")
    engine = open_engine(docs)
    engine.close()
    _execute(engine, postgres_url, "UPDATE meta SET value = '0' WHERE key = 'pg_schema'")
    again = open_engine(docs, sync=False)
    assert again.require_store().all_files() == []
    assert again.sync()["added"] == 1
    assert paths(again, "apricot") == ["a.md"]


def test_an_index_of_another_embedder_is_rebuilt(
    docs: Path, open_engine: OpenEngine, postgres_url: str
) -> None:
    write(docs, "a.md", "# Alpha\n\napricot\n")
    engine = open_engine(docs)
    engine.close()
    _execute(
        engine,
        postgres_url,
        "UPDATE meta SET value = 'other' WHERE key = 'embedder'; UPDATE meta SET value = '768' WHERE key = 'dim'",
    )
    again = open_engine(docs, sync=False)
    store = again.require_store()
    assert store.all_files() == []
    assert store.read_meta()["embedder"] == "hash-384"
    assert again.sync()["added"] == 1
    assert paths(again, "apricot") == ["a.md"]  # the vectors' table was made again, for 384 dimensions


def test_tokens_are_those_fts5_makes() -> None:
    assert pgsearch.tokens("Crème BRÛLÉE, naïve_café 42") == ["creme", "brulee", "naive", "cafe", "42"]
    assert pgsearch.tokens("C\ue02b\ue02b and pg_restore") == ["c\ue02b\ue02b", "and", "pg", "restore"]
    assert pgsearch.tokens("附件 默认") == ["附件", "默认"]
    literal, count = pgsearch.tsvector_literal(((["a", "b"], "A"), (["a", "附件"], "D")))
    assert (literal, count) == ("'a':1A,5 'b':2A '附件':6", 4)  # tokens never hold a quote: none is escaped
    assert pgsearch.match_terms('"pg restore" OR "say ""hi"""') == ["pg restore", 'say "hi"']
    assert pgsearch.term_query("pg restore") == "'pg' <-> 'restore'"
    assert pgsearch.substring_query("Ab") is None
    assert pgsearch.substring_query("ABcd") == ("'abc' & 'bcd'", "abcd")


def test_bm25_ranks_the_same_whichever_passes_it_takes(
    docs: Path, open_engine: OpenEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A rare word in too few sections to fill the pool; a rarer-than-most word once in long sections; a
    # commoner word many times in short ones, which outranks it: a pass of the first two alone must not
    # stop. And common words in every section (their IDF is the floor).
    for i in range(40):
        words = ["alpha"] * (i % 5 + 1)
        if i < 4:
            words += ["gamma"]
        elif i < 12:
            words += ["delta"] + ["filler"] * 60
        elif i < 24:
            words += ["epsilon"] * 8
        else:
            words += ["beta"] * (i % 3) + ["filler"] * (i % 7)
        write(docs, f"n{i:02d}.md", f"# Note {i}\n\n{' '.join(words)}\n")
    store = open_engine(docs).require_store()
    queries = ['"gamma" OR "delta" OR "epsilon"', '"gamma" OR "alpha" OR "beta"', '"beta" OR "alpha"']

    def ranked() -> list[list[tuple[int, float]]]:
        return [store.bm25(q, FileFilter(), 10, (3.0, 1.0, 1.0)) for q in queries]

    monkeypatch.setattr(pgretrieval, "_FULL_PASS_SHARE", 0.0)  # one pass, every term: the full ranking
    full = ranked()
    monkeypatch.setattr(pgretrieval, "_FULL_PASS_SHARE", 10.0)  # one term more per pass, from the rarest
    monkeypatch.setattr(pgretrieval, "_FIRST_PASS_CHUNKS", 1)
    stepped = ranked()
    for one, other in zip(full, stepped, strict=True):
        assert len(one) == 10
        assert [cid for cid, _ in one] == [cid for cid, _ in other]
        assert [s for _, s in one] == pytest.approx([s for _, s in other], rel=1e-12)


def test_bm25_runs_no_pass_that_must_fail() -> None:
    # (document frequencies rarest first, terms taken at least, limit, chunks) -> terms taken
    assert pgretrieval._next_pass([3, 100, 900], 1, 32, 1000) == 2  # 3 chunks cannot fill 32 places
    assert pgretrieval._next_pass([40, 100, 900], 1, 32, 1000) == 1
    assert pgretrieval._next_pass([40, 100, 900], 2, 32, 1000) == 2
    assert pgretrieval._next_pass([600, 900, 950], 1, 32, 1000) == 3  # half the index: every term at once
    assert pgretrieval._next_pass([3, 5], 1, 32, 1000) == 2


def test_a_database_that_comes_up_later_is_taken_once_it_does(
    tmp_path: Path, docs: Path, postgres_url: str
) -> None:
    """A replica started before its database can be reached (not created yet, a server still booting) says
    that, not that the index needs a rebuild, and becomes the primary by itself once it can reach it."""
    name = f"later_{uuid.uuid4().hex[:12]}"
    parts = urlsplit(postgres_url)
    later = urlunsplit(parts._replace(path=f"/{name}"))
    write(docs, "a.md", "# Alpha\n\napricot\n")
    env = isolated_env(
        tmp_path,
        RAGDOWN_DOCS_DIR=str(docs),
        RAGDOWN_DATA_DIR=str(tmp_path / "data"),
        RAGDOWN_DATABASE_URL=later,
    )
    engine = Engine(Settings.from_env(env), "stdio", docs_dir=docs, takeover_interval_s=0.1)
    try:
        engine.start(background=False, initial_sync=True, watch=False)
        assert engine.role == "reader"
        assert engine.error is not None
        assert engine.error.startswith("cannot open the index in"), engine.error
        assert f'database "{name}" does not exist' in engine.error, engine.error
        assert "needs a rebuild" not in engine.error
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        wait_for(lambda: engine.role == "primary", "the replica never took the database once it was up")
        assert engine.error is None
        engine.sync()
        assert paths(engine, "apricot") == ["a.md"]
    finally:
        engine.close()
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def test_a_database_stopped_hard_is_unavailable_never_an_internal_error(
    start_app: StartServer, docs: Path, tmp_path: Path
) -> None:
    """PostgreSQL stopped hard (`pg_ctl stop -m immediate`) while searches ran made some of them answer 500:
    a lost session or the pool's wait for a connection escaped as an internal error on paths that read the
    generation. Every request and tool call, while it stops and after, is answered or refused as
    `unavailable` (HTTP 503, an error result saying the index is not available), and promptly."""
    for i in range(12):
        write(docs, f"ops/n{i}.md", f"# Note {i}\n\nrestore the postgres backups, number {i}\n")
    with server_to_stop(tmp_path / "pg") as (url, stop):
        server = start_app(docs, RAGDOWN_DATABASE_URL=url)
        assert server.app is not None
        tools = Endpoint(server.app.runtime, Scope(root=server.app.runtime.engine.root, folder="ops"))
        api = server.api
        requests: list[Callable[[int], tuple[str, int, str]]] = [
            lambda i: ("search", *_http(api.get("/api/search", params={"q": "restore", "folder": "ops"}))),
            lambda i: ("rest search", *_http(api.get("/api/v1/folders/ops/search", params={"query": "x"}))),
            lambda i: ("docs", *_http(api.get("/api/docs", params={"folder": "ops"}))),
            lambda i: ("doc", *_http(api.get("/api/doc", params={"path": "ops/n1.md"}))),
            lambda i: ("rest read", *_http(api.get("/api/v1/folders/ops/files/n1.md"))),
            lambda i: (
                "rest write",
                *_http(api.put(f"/api/v1/folders/ops/files/w{i}.md", json={"content": "# W\n"})),
            ),
            lambda i: ("recall", *_tool(tools, "ragdown_recall", query="restore postgres")),
            lambda i: ("read_doc", *_tool(tools, "ragdown_read_doc", path="n2.md")),
            lambda i: ("list", *_tool(tools, "ragdown_list")),
            lambda i: ("stats", *_tool(tools, "ragdown_stats")),
        ]
        answers: list[tuple[bool, str, int, str]] = []
        stopped, failed = threading.Event(), threading.Event()
        lock = threading.Lock()

        def client(k: int) -> None:
            after = 0
            for i in range(k, 10_000):
                if k == 0 and i == 6:
                    stop()
                    stopped.set()
                was_stopped = stopped.is_set()
                what, status, text = requests[i % len(requests)](i)
                with lock:
                    answers.append((was_stopped, what, status, text))
                if status not in (200, 201, 503):
                    failed.set()
                after += was_stopped
                if after == 2 * len(requests) or failed.is_set():
                    return

        threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not failed.is_set(), [a for a in answers if a[2] not in (200, 201, 503)]
    after = [(what, status, text) for was_stopped, what, status, text in answers if was_stopped]
    refused = {what for what, status, _ in after if status == 503}
    assert refused == {what for what, _, _ in after}, after  # every path said it, once the server was gone


def _http(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.text


def _tool(tools: Endpoint, name: str, /, **args: object) -> tuple[int, str]:
    """A tool call as (200, its text); an error result as the status HTTP gives its kind: 503 when it says
    the index is not available, 500 for anything else (an internal error)."""
    text, error = asyncio.run(tools.call(name, **args))
    if not error:
        return 200, text
    return (503 if "the index is not available" in text else 500), text
