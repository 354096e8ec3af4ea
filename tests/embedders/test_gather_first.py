"""The copy of a model whose int8 word table is looked up before it is turned into float32
(`index/embedders/gather_first.py`), on the real all-MiniLM-L6-v2: the same vectors (to float32
rounding), made once.

The session's `minilm` fixture made its copy on its first load; the tests below make one more at most."""

from __future__ import annotations

import importlib.util
import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from ragdown.embedders import CATALOG, OnnxEmbedder, load_embedder
from ragdown.embedders import gather_first as gf
from ragdown.embedders import quantize as q

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(importlib.util.find_spec("onnx") is None, reason="the rewrite needs the onnx package"),
]


def drift(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)))


def open_minilm(files: tuple[Path, Path], cache_dir: Path) -> OnnxEmbedder:
    return OnnxEmbedder("minilm", *files, CATALOG["minilm"].config, threads=1, cache_dir=cache_dir)


def test_the_copy_gives_the_very_vectors_of_the_model_as_shipped(
    minilm: OnnxEmbedder, minilm_files: tuple[Path, Path], tmp_path: Path
) -> None:
    assert minilm.gather_first
    copy, verdict_path = gf.cache_paths(minilm_files[0], minilm.cache_dir)
    verdict = json.loads(verdict_path.read_text())
    assert (verdict["made"], verdict["reason"]) == (True, "the same vectors")
    # The model as shipped: a cache whose verdict says no copy is to be used.
    gf.write_verdict(minilm_files[0], tmp_path, False, "as shipped, for this test")
    shipped = open_minilm(minilm_files, tmp_path)
    assert not shipped.gather_first
    texts = [*q.SAMPLE_TEXTS, "終端機的設定在哪裡？", "x"]
    # The same products; the copy's session runs without constant folding (its weights stay int8), so its
    # kernels may sum in another order: within float32 rounding (measured 1.5e-7), never more than the check's.
    assert drift(minilm.embed_documents(texts), shipped.embed_documents(texts)) <= gf.MAX_DRIFT
    assert drift(minilm.embed_query(texts[0]), shipped.embed_query(texts[0])) <= gf.MAX_DRIFT

    # The next load opens the copy without making or checking it again.
    stamps = copy.stat().st_mtime_ns, verdict_path.stat().st_mtime_ns
    again = open_minilm(minilm_files, minilm.cache_dir)
    assert again.gather_first
    assert (copy.stat().st_mtime_ns, verdict_path.stat().st_mtime_ns) == stamps
    assert np.array_equal(again.embed_documents(texts[:3]), minilm.embed_documents(texts[:3]))


def test_a_model_without_such_a_table_is_read_once(
    minilm: OnnxEmbedder, minilm_files: tuple[Path, Path], tmp_path: Path
) -> None:
    """The copy itself has nothing left to rewrite: as a model of its own (`onnx:<dir>`) it is used as it
    is, and the verdict saying so keeps the next loads from reading its graph again."""
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(gf.cache_paths(minilm_files[0], minilm.cache_dir)[0], plain / "model.onnx")
    shutil.copy(minilm_files[1], plain / "tokenizer.json")
    first = load_embedder(f"onnx:{plain}", models_dir=tmp_path / "models", threads=1)
    assert isinstance(first, OnnxEmbedder)
    assert not first.gather_first
    copy, verdict_path = gf.cache_paths(plain / "model.onnx", first.cache_dir)
    assert not copy.exists()
    verdict = json.loads(verdict_path.read_text())
    assert verdict["made"] is False
    assert verdict["reason"] == "no int8 table is turned into float32 before a look-up"
    stamp = verdict_path.stat().st_mtime_ns
    again = load_embedder(f"onnx:{plain}", models_dir=tmp_path / "models", threads=1)
    assert isinstance(again, OnnxEmbedder)
    assert not again.gather_first
    assert verdict_path.stat().st_mtime_ns == stamp


def test_an_unusable_copy_is_made_again(
    minilm_files: tuple[Path, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    copy, _ = gf.cache_paths(minilm_files[0], tmp_path)
    copy.write_bytes(b"not a model")
    gf.write_verdict(minilm_files[0], tmp_path, True, "the same vectors")
    with caplog.at_level(logging.WARNING):
        embedder = open_minilm(minilm_files, tmp_path)
    assert "the gather-first copy is unusable" in caplog.text
    assert embedder.gather_first
    assert copy.stat().st_size > 1_000_000
    assert json.loads(gf.cache_paths(minilm_files[0], tmp_path)[1].read_text())["made"] is True
