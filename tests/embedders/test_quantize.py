"""The optional local int8 copy, on the real all-MiniLM-L6-v2 (needs the `onnx` package to build one)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from ragdown.embedders import OnnxEmbedder, load_embedder
from ragdown.embedders import quantize as q

from .conftest import MakeModelDir

pytestmark = pytest.mark.integration

HAS_ONNX = importlib.util.find_spec("onnx") is not None
needs_onnx = pytest.mark.skipif(not HAS_ONNX, reason="building an int8 copy needs the onnx package")


@needs_onnx
def test_builds_checks_caches_and_reuses_an_int8_copy(
    minilm: OnnxEmbedder, minilm_files: tuple[Path, Path], tmp_path: Path
) -> None:
    models = tmp_path / "models"
    quantized = load_embedder("minilm", models_dir=models, threads=2, quantize=True)
    assert isinstance(quantized, OnnxEmbedder)
    assert quantized.quantized
    assert quantized.name == "minilm"  # same vectors within cosine 0.99: same index
    dest, report_path = q.cache_paths(minilm_files[0], models / "minilm")
    assert dest.is_file()
    report = json.loads(report_path.read_text())
    assert report["accepted"] is True
    assert report["min_cosine"] >= q.MIN_COSINE
    assert report["recipe"] in q.Quantizer.RECIPES
    assert report["fingerprint"]["source"] == str(minilm_files[0].resolve())
    assert sorted(p.name for p in (models / "minilm").iterdir()) == sorted([dest.name, report_path.name])

    texts = list(q.SAMPLE_TEXTS)
    assert (
        np.sum(quantized.embed_documents(texts) * minilm.embed_documents(texts), axis=1).min() >= q.MIN_COSINE
    )

    # The second load reuses the copy without rebuilding or re-checking it.
    stamp = dest.stat().st_mtime_ns
    again = load_embedder("minilm", models_dir=models, threads=2, quantize=True)
    assert isinstance(again, OnnxEmbedder)
    assert again.quantized
    assert dest.stat().st_mtime_ns == stamp
    assert np.allclose(again.embed_documents(texts), quantized.embed_documents(texts), atol=1e-5)


def test_a_rejected_copy_is_recorded_and_not_retried(make_model_dir: MakeModelDir, tmp_path: Path) -> None:
    directory = make_model_dir()
    models = tmp_path / "models"
    cache = models / "local" / hashlib.sha1(str(directory.resolve()).encode()).hexdigest()[:16]
    dest, report_path = q.cache_paths(directory / "model.onnx", cache)
    fingerprint = q.SourceFingerprint.of(directory / "model.onnx")
    q.write_report(
        report_path, q.QuantizeReport(fingerprint, False, None, None, None, "matmul: min cosine 0.9500")
    )
    embedder = load_embedder(f"onnx:{directory}", models_dir=models, threads=1, quantize=True)
    assert isinstance(embedder, OnnxEmbedder)
    assert not embedder.quantized
    assert embedder.quantize_report is not None
    assert embedder.quantize_report.reason == "matmul: min cosine 0.9500"
    assert not dest.exists()  # not rebuilt
    assert not list(directory.glob(f"*{q.SUFFIX}*"))  # never written into the user's folder


def test_a_changed_source_invalidates_the_cache(
    make_model_dir: MakeModelDir, minilm_files: tuple[Path, Path], tmp_path: Path
) -> None:
    directory = make_model_dir()
    (directory / "model.onnx").unlink()
    shutil.copyfile(minilm_files[0], directory / "model.onnx")
    source = directory / "model.onnx"
    report_dir = tmp_path / "cache"
    report_dir.mkdir()
    _, report_path = q.cache_paths(source, report_dir)
    fingerprint = q.SourceFingerprint.of(source)
    q.write_report(report_path, q.QuantizeReport(fingerprint, False, None, None, None, "test"))
    assert q.read_report(report_path, source) is not None
    with source.open("ab") as f:
        f.write(b"\0")
    assert q.read_report(report_path, source) is None


def test_without_onnx_the_model_as_shipped_is_used(
    minilm: OnnxEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A machine without the optional `onnx` package: `None` in sys.modules makes every import of it fail.
    monkeypatch.setitem(sys.modules, "onnx", None)
    embedder = load_embedder("minilm", models_dir=tmp_path, threads=1, quantize=True)
    assert isinstance(embedder, OnnxEmbedder)
    assert not embedder.quantized
    text = "Backups › Restore\n\nRun pg_restore twice."
    assert float(embedder.embed_query(text) @ minilm.embed_query(text)) > 0.9999
    assert not list(tmp_path.rglob("*.onnx"))
