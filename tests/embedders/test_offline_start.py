"""A first start with no model hub reachable (issue 8, fault 7): when nobody chose the embedder and the default
cannot download, the installed offline `minilm` is used and that is said; an embedder the user chose is
kept, the error says what to set instead, and hits found by words alone never show a cosine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdown.access.scope import Scope
from ragdown.core.config import Settings
from ragdown.engine.engine import Engine
from ragdown.engine.runtime import Runtime
from ragdown.http.api.base import Api
from tests.conftest import isolated_env, write
from tests.mcpserver.conftest import Endpoint

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

UNREACHABLE_HUB = "http://127.0.0.1:9"  # the discard port: nothing listens, the download fails at once


def offline_engine(tmp_path: Path, docs: Path, **env: str) -> Engine:
    environ = isolated_env(
        tmp_path,
        RAGDOWN_DOCS_DIR=str(docs),
        RAGDOWN_DATA_DIR=str(tmp_path / "data"),
        RAGDOWN_MODELS=str(tmp_path / "models"),
        HF_ENDPOINT=UNREACHABLE_HUB,
        **env,
    )
    if "RAGDOWN_EMBEDDER" not in env:
        environ.pop("RAGDOWN_EMBEDDER")  # the tests' own `hash`: here nobody chose one
    engine = Engine(Settings.from_env(environ), "stdio", docs_dir=docs)
    engine.start(background=False, initial_sync=False, watch=False)
    engine.sync()
    return engine


@pytest.fixture
def notes(docs: Path) -> Path:
    write(docs, "backups.md", "# Backups\n\nNightly snapshots of the postgres database.")
    return docs


async def test_nobody_chose_the_embedder_so_the_offline_model_steps_in(
    tmp_path: Path, notes: Path, caplog: pytest.LogCaptureFixture
) -> None:
    engine = offline_engine(tmp_path, notes)
    try:
        assert engine.embedder is not None
        assert engine.embedder.name == "minilm"
        assert engine.embedder_error is None
        notice = engine.embedder_notice or ""
        # One plain sentence (a banner shows it); the error that kept the default out is said apart.
        assert notice == (
            "The default embedder granite-small could not load, so the installed offline model minilm is used instead."
        )
        reason = engine.embedder_notice_reason or ""
        assert "granite-small" in reason
        assert any(
            r.getMessage() == f"{notice} Why: {reason}. Set RAGDOWN_EMBEDDER to choose one."
            for r in caplog.records
        )
        runtime = Runtime(engine.settings, engine)
        settings = Api(runtime, auth_required=False).settings_json()  # /api/status's `settings`
        assert (settings["embedder"], settings["sources"]["embedder"]) == ("minilm", "offline")
        assert settings["env"]["embedder"] is None  # RAGDOWN_EMBEDDER is not set
        assert settings["sources"]["text_limit"] == "default"
        end = Endpoint(runtime, Scope(root=notes, folder=""))
        stats = json.loads(await end.ok("ragdown_stats"))
        assert stats["embedder"] == "minilm"
        assert stats["embedder_notice"] == notice
        hits = json.loads(await end.ok("ragdown_recall", query="database snapshots", format="json"))["hits"]
        assert hits
        assert isinstance(hits[0]["similarity"], float)
        assert hits[0]["similarity"] > 0
    finally:
        engine.close()


async def test_a_chosen_embedder_is_kept_and_the_error_says_what_to_set(tmp_path: Path, notes: Path) -> None:
    engine = offline_engine(tmp_path, notes, RAGDOWN_EMBEDDER="granite-small")
    try:
        assert engine.embedder is None
        assert engine.embedder_notice is None
        error = engine.embedder_error or ""
        assert "BM25 alone" in error
        assert "RAGDOWN_EMBEDDER=minilm" in error
        runtime = Runtime(engine.settings, engine)
        settings = Api(runtime, auth_required=False).settings_json()
        assert (settings["embedder"], settings["sources"]["embedder"]) == ("granite-small", "env")
        assert settings["env"]["embedder"] == "granite-small"
        end = Endpoint(runtime, Scope(root=notes, folder=""))
        stats = json.loads(await end.ok("ragdown_stats"))
        assert stats["embedder"] == "none"
        assert stats["embedder_error"] == error
        text = await end.ok("ragdown_recall", query="postgres snapshots")
        assert "backups.md:3-3 — Backups (lexical, changed " in text
        assert "similarity" not in text
        hits = json.loads(await end.ok("ragdown_recall", query="postgres snapshots", format="json"))["hits"]
        assert hits
        assert hits[0]["similarity"] is None
    finally:
        engine.close()
