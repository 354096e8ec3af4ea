from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ragdown.embedders import CATALOG, OnnxEmbedder, load_embedder

MakeModelDir = Callable[..., Path]


@pytest.fixture(scope="session")
def minilm_files() -> tuple[Path, Path]:
    """`(model.onnx, tokenizer.json)` of all-MiniLM-L6-v2 from the installed `ragdown[offline]` packages."""
    installed = CATALOG["minilm"].installed
    assert installed is not None
    found = installed.find()
    if found is None:
        pytest.skip(f"all-MiniLM-L6-v2 is not installed: {installed.pip_hint}")
    return found


@pytest.fixture(scope="session")
def minilm(minilm_files: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> OnnxEmbedder:
    embedder = load_embedder("minilm", models_dir=tmp_path_factory.mktemp("models"), threads=2)
    assert isinstance(embedder, OnnxEmbedder)
    return embedder


@pytest.fixture
def make_model_dir(minilm_files: tuple[Path, Path], tmp_path: Path) -> MakeModelDir:
    """A folder for `onnx:<dir>`: minilm's files linked in, plus an optional `ragdown-embedder.json`."""

    def make(config: dict[str, object] | None = None, *, name: str = "model") -> Path:
        directory = tmp_path / name
        directory.mkdir()
        model, tokenizer = minilm_files
        (directory / "model.onnx").symlink_to(model)
        (directory / "tokenizer.json").symlink_to(tokenizer)
        if config is not None:
            (directory / "ragdown-embedder.json").write_text(json.dumps(config), encoding="utf-8")
        return directory

    return make
