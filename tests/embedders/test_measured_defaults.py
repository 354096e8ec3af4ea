"""Each embedder's measured defaults beside `MIN_SCORE`: the hook's `min_ratio` and whether it reads CJK."""

from __future__ import annotations

import pytest

from ragdown.embedders import CATALOG, EmbedderError, OnnxModelConfig, default_min_ratio
from ragdown.embedders.catalog import MINILM_MIN_RATIO
from ragdown.embedders.onnx import DEFAULT_MIN_RATIO
from tests.embedders.conftest import MakeModelDir


def test_min_ratio_follows_the_embedder_without_loading_it(make_model_dir: MakeModelDir) -> None:
    assert default_min_ratio("minilm") == MINILM_MIN_RATIO != DEFAULT_MIN_RATIO
    assert default_min_ratio(" MiniLM ") == MINILM_MIN_RATIO
    assert default_min_ratio("granite-small") == DEFAULT_MIN_RATIO == 0.95  # the spec's, never re-measured
    assert default_min_ratio("hash") == DEFAULT_MIN_RATIO
    assert default_min_ratio("openai:text-embedding-3-small") == DEFAULT_MIN_RATIO
    measured = make_model_dir({"min_ratio": 0.8})
    assert default_min_ratio(f"onnx:{measured}") == 0.8
    assert default_min_ratio(f"onnx:{make_model_dir(name='bare')}") == DEFAULT_MIN_RATIO


def test_the_english_only_models_are_marked_as_not_reading_cjk() -> None:
    unread = sorted(name for name, model in CATALOG.items() if not model.config.reads_cjk)
    assert unread == ["bge-small", "granite-small", "minilm"]  # embeddinggemma is multilingual


def test_ragdown_embedder_json_takes_min_ratio_and_reads_cjk() -> None:
    config = OnnxModelConfig.from_mapping({"min_ratio": 0.85, "reads_cjk": False}, "test")
    assert (config.min_ratio, config.reads_cjk) == (0.85, False)
    assert OnnxModelConfig.from_mapping({}, "test").reads_cjk is True
    for bad, message in (
        ({"min_ratio": 1.5}, "min_ratio must be a number between 0 and 1"),
        ({"min_ratio": True}, "min_ratio must be a number between 0 and 1"),
        ({"reads_cjk": "no"}, "reads_cjk must be true or false"),
    ):
        with pytest.raises(EmbedderError, match=message):
            OnnxModelConfig.from_mapping(bad, "test")
