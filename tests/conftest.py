"""Shared fixtures: real files in temp dirs, the deterministic `hash` embedder, real SQLite."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ragdown.config import Mode, Settings
from ragdown.engine import Engine

# The behaviour spec's test environment (A13).
TEST_ENV = {
    "RAGDOWN_EMBEDDER": "hash",
    "RAGDOWN_WATCH": "false",
    "RAGDOWN_HOOK_MIN_SCORE": "0.2",
    "RAGDOWN_HOOK_MIN_RATIO": "0",
}

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
BENCH = SHARED / "bench"


def write(root: Path, rel: str, text: str | bytes) -> Path:
    """Write a file the way editors do (temp file, then rename), so a watcher never reads half of it."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.tmp"
    tmp.write_bytes(text if isinstance(text, bytes) else text.encode())
    os.replace(tmp, path)
    return path


def isolated_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_")}
    env.update(TEST_ENV)
    env["HOME"] = str(tmp_path / "home")
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env.update(extra)
    return env


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    return root


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., Settings]:
    def make(docs_dir: Path, **extra: str) -> Settings:
        env = isolated_env(
            tmp_path, RAGDOWN_DOCS_DIR=str(docs_dir), RAGDOWN_DATA_DIR=str(tmp_path / "data"), **extra
        )
        return Settings.from_env(env)

    return make


@pytest.fixture
def open_engine(make_settings: Callable[..., Settings]) -> Iterator[Callable[..., Engine]]:
    engines: list[Engine] = []

    def make(docs_dir: Path, mode: Mode = "stdio", *, sync: bool = True, **extra: str) -> Engine:
        engine = Engine(make_settings(docs_dir, **extra), mode, docs_dir=docs_dir)
        engine.start(background=False, initial_sync=False, watch=False)
        engines.append(engine)
        if sync:
            engine.sync()
        return engine

    yield make
    for engine in engines:
        engine.close()
