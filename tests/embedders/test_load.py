"""`load_embedder` by name, and the per-model hook floors answered without loading anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragdown.embedders import (
    CATALOG,
    KNOWN_EMBEDDERS,
    EmbedderError,
    HashEmbedder,
    default_min_score,
    load_embedder,
    min_score_warning,
    unrelated_score,
)


def test_an_unknown_name_lists_the_accepted_ones(tmp_path: Path) -> None:
    with pytest.raises(EmbedderError) as caught:
        load_embedder("nope", models_dir=tmp_path, threads=1)
    message = str(caught.value)
    assert message.startswith("unknown embedder 'nope'; accepted names are ")
    for name in (
        "granite-small",
        "bge-small",
        "embeddinggemma",
        "minilm",
        "hash",
        "openai:<model>",
        "onnx:<dir>",
    ):
        assert name in message
    assert set(KNOWN_EMBEDDERS) == {*CATALOG, "multilingual", "hash", "openai:<model>", "onnx:<dir>"}
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("spec", ["", "   ", "openai:", "onnx:", "openai:  "])
def test_incomplete_specs_are_errors(spec: str, tmp_path: Path) -> None:
    with pytest.raises(EmbedderError):
        load_embedder(spec, models_dir=tmp_path, threads=1)


@pytest.mark.parametrize("spec", ["hash", "HASH", " hash ", "hash-384"])
def test_hash_by_any_of_its_names(spec: str, tmp_path: Path) -> None:
    assert isinstance(load_embedder(spec, models_dir=tmp_path, threads=1), HashEmbedder)


@pytest.mark.parametrize(
    ("name", "floor", "unrelated"),
    [
        ("granite-small", 0.8, 0.75),
        ("bge-small", 0.7, 0.60),
        ("embeddinggemma", 0.6, 0.53),
        ("minilm", 0.4, 0.34),
        ("hash", 0.8, None),
        ("hash-384", 0.8, None),
        ("openai:text-embedding-3-small", 0.8, None),
        ("openai:text-embedding-3-small@1536", 0.8, None),
        ("onnx:/no/such/folder", 0.8, None),
        ("something-else", 0.8, None),
    ],
)
def test_floors_per_model_without_loading(name: str, floor: float, unrelated: float | None) -> None:
    assert default_min_score(name) == floor
    assert unrelated_score(name) == unrelated


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_each_measured_floor_is_above_the_models_unrelated_score(name: str) -> None:
    config = CATALOG[name].config
    assert config.unrelated_score is not None
    assert config.min_score > config.unrelated_score
    assert min_score_warning(name, config.min_score) is None


def test_a_floor_at_or_below_the_unrelated_score_warns() -> None:
    warning = min_score_warning("granite-small", 0.7)
    assert warning is not None
    assert "0.75" in warning
    assert "0.8" in warning
    assert min_score_warning("granite-small", 0.75) is not None
    assert min_score_warning("hash", 0.2) is None  # never measured: nothing to compare with


def test_catalog_entries_follow_the_spec() -> None:
    granite, bge, gemma, minilm = (
        CATALOG[n] for n in ("granite-small", "bge-small", "embeddinggemma", "minilm")
    )
    assert (granite.config.pooling, granite.config.dim, granite.config.query_prefix) == ("cls", 384, "")
    assert granite.config.document_prefix == ""
    assert (bge.config.pooling, bge.config.dim) == ("cls", 384)
    assert bge.config.query_prefix == "Represent this sentence for searching relevant passages: "
    assert bge.config.document_prefix == ""
    assert (gemma.config.pooling, gemma.config.dim) == ("mean", 768)
    assert gemma.config.query_prefix == "task: search result | query: "
    assert gemma.config.document_prefix == "title: none | text: "
    assert "onnx/model_quantized.onnx_data" in gemma.required_files
    assert (minilm.config.pooling, minilm.config.dim, minilm.config.max_length) == ("mean", 384, 256)
    for model in CATALOG.values():
        assert model.url("https://huggingface.co/", model.model_file).startswith(
            f"https://huggingface.co/{model.repo}/resolve/main/onnx/"
        )
