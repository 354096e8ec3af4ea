"""The copy of a model whose int8 word table is looked up before it is turned into float32
(`index/embedders/gather_first.py`), on the real all-MiniLM-L6-v2: the same vectors, made once."""

from __future__ import annotations

import importlib.util
import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from ragdown.index.embedders import OnnxEmbedder, load_embedder
from ragdown.index.embedders import gather_first as gf
from ragdown.index.embedders import quantize as q

from .conftest import MakeModelDir

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(importlib.util.find_spec("onnx") is None, reason="the rewrite needs the onnx package"),
]


def onnx_dir(directory: Path, models: Path) -> OnnxEmbedder:
    embedder = load_embedder(f"onnx:{directory}", models_dir=models, threads=1)
    assert isinstance(embedder, OnnxEmbedder)
    return embedder


def test_the_copy_gives_the_very_vectors_of_the_model_as_shipped(
    make_model_dir: MakeModelDir, tmp_path: Path
) -> None:
    shipped_dir, lean_dir = make_model_dir(name="shipped"), make_model_dir(name="lean")
    made_for_shipped = onnx_dir(shipped_dir, tmp_path / "models")
    gf.write_verdict(
        shipped_dir / "model.onnx", made_for_shipped.cache_dir, False, "as shipped, for this test"
    )
    shipped = onnx_dir(shipped_dir, tmp_path / "models")
    assert not shipped.gather_first

    lean = onnx_dir(lean_dir, tmp_path / "models")
    assert lean.gather_first
    copy, verdict_path = gf.cache_paths(lean_dir / "model.onnx", lean.cache_dir)
    assert copy.is_file()
    verdict = json.loads(verdict_path.read_text())
    assert (verdict["made"], verdict["reason"]) == (True, "the same vectors")
    texts = [*q.SAMPLE_TEXTS, "終端機的設定在哪裡？", "x"]
    assert np.array_equal(lean.embed_documents(texts), shipped.embed_documents(texts))
    assert np.array_equal(lean.embed_query(texts[0]), shipped.embed_query(texts[0]))

    # The next load opens the copy without making or checking it again.
    stamps = copy.stat().st_mtime_ns, verdict_path.stat().st_mtime_ns
    again = onnx_dir(lean_dir, tmp_path / "models")
    assert again.gather_first
    assert (copy.stat().st_mtime_ns, verdict_path.stat().st_mtime_ns) == stamps
    assert np.array_equal(again.embed_documents(texts), shipped.embed_documents(texts))


def test_a_model_without_such_a_table_is_read_once(make_model_dir: MakeModelDir, tmp_path: Path) -> None:
    """The copy itself has nothing left to rewrite: as a model of its own it is used as it is, and the
    verdict saying so keeps the next loads from reading the graph again."""
    made = make_model_dir(name="made")
    maker = onnx_dir(made, tmp_path / "models")
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(gf.cache_paths(made / "model.onnx", maker.cache_dir)[0], plain / "model.onnx")
    shutil.copy(made / "tokenizer.json", plain / "tokenizer.json")
    first = onnx_dir(plain, tmp_path / "models")
    assert not first.gather_first
    copy, verdict_path = gf.cache_paths(plain / "model.onnx", first.cache_dir)
    assert not copy.exists()
    verdict = json.loads(verdict_path.read_text())
    assert verdict["made"] is False
    assert verdict["reason"] == "no int8 table is turned into float32 before a look-up"
    stamp = verdict_path.stat().st_mtime_ns
    assert not onnx_dir(plain, tmp_path / "models").gather_first
    assert verdict_path.stat().st_mtime_ns == stamp


def test_an_unusable_copy_is_made_again(
    make_model_dir: MakeModelDir, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = make_model_dir()
    first = onnx_dir(directory, tmp_path / "models")
    copy, _ = gf.cache_paths(directory / "model.onnx", first.cache_dir)
    copy.write_bytes(b"not a model")
    with caplog.at_level(logging.WARNING):
        again = onnx_dir(directory, tmp_path / "models")
    assert "the gather-first copy is unusable" in caplog.text
    assert again.gather_first
    assert copy.stat().st_size > 1_000_000
