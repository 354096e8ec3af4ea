"""The ONNX embedder on the real all-MiniLM-L6-v2 (int8) from PyPI."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from ragdown.embedders import (
    Embedder,
    EmbedderError,
    OnnxEmbedder,
    OnnxModelConfig,
    default_min_score,
    load_embedder,
    unrelated_score,
)
from ragdown.embedders.base import embed_progress

from .conftest import MakeModelDir
from .floor_corpus import CHUNKS, ON_TOPIC, UNRELATED

pytestmark = pytest.mark.integration

WORDS = (
    "backup restore replica snapshot kafka consumer partition lag certificate renewal deploy rollback "
    "redis memory eviction bastion terraform invoice postmortem incident runbook escalation"
).split()


# Words that are one WordPiece token each, to count tokens by counting words.
ONE_TOKEN_WORDS = (
    "backup restore replica consumer partition certificate renewal deploy memory bastion incident".split()
)


def words(count: int, seed: int, vocabulary: list[str] = WORDS) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(vocabulary) for _ in range(count))


def test_loads_with_its_identity(minilm: OnnxEmbedder) -> None:
    assert isinstance(minilm, Embedder)
    assert minilm.name == "minilm"
    assert minilm.dim == 384
    assert minilm.min_score == 0.4
    assert minilm.unrelated_score == 0.34
    assert minilm.min_score > (minilm.unrelated_score or 0.0)


def test_rows_are_unit_length_float32(minilm: OnnxEmbedder) -> None:
    vectors = minilm.embed_documents(["Backups › Restore\n\nRun pg_restore twice.", "ok", "東京タワー"])
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    query = minilm.embed_query("how do I restore?")
    assert query.shape == (384,)
    assert np.linalg.norm(query) == pytest.approx(1.0, abs=1e-5)


def test_order_is_kept_under_length_batching(minilm: OnnxEmbedder) -> None:
    # 40 texts of very different lengths, shuffled: they are embedded sorted by length, 16 at a time.
    texts = [words(n, seed=n) for n in (1, 3, 5, 8, 13, 21, 34, 55, 89, 120) * 4]
    random.Random(7).shuffle(texts)
    together = minilm.embed_documents(texts)
    alone = np.stack([minilm.embed_documents([t])[0] for t in texts])
    cosines = np.sum(together * alone, axis=1)
    assert cosines.min() > 0.9999


def test_splitting_a_batch_by_token_budget_changes_nothing(
    minilm: OnnxEmbedder, minilm_files: tuple[Path, Path]
) -> None:
    texts = [words(n, seed=n) for n in range(1, 60, 3)]
    model, tokenizer = minilm_files
    small = OnnxEmbedder("minilm", model, tokenizer, minilm.config, threads=1, max_batch_tokens=64)
    assert np.sum(small.embed_documents(texts) * minilm.embed_documents(texts), axis=1).min() > 0.9999


def test_a_long_call_tells_how_far_it_is_and_embeds_the_same(minilm: OnnxEmbedder) -> None:
    """A sync's progress counts a long note's sections as they are embedded: the model tells a listener
    after each pass of 16 texts (windows included), in its own thread only; the vectors do not change."""
    texts = [words(n, seed=n) for n in range(1, 41)]
    heard: list[tuple[int, int]] = []
    with embed_progress(lambda done, total: heard.append((done, total))):
        told = minilm.embed_documents(texts)
        windows = minilm.embed_document_windows(["Head\n\n"], [words(700, seed=1)])
    assert heard == [(16, 40), (32, 40), (40, 40), (len(windows[0]), len(windows[0]))]
    assert len(windows[0]) > 1
    assert np.array_equal(told, minilm.embed_documents(texts))  # no listener now: nothing told
    assert len(heard) == 4


def test_a_paraphrase_ranks_the_right_passage_first(minilm: OnnxEmbedder) -> None:
    passages = minilm.embed_documents(CHUNKS)
    hits = sum(int(np.argmax(passages @ minilm.embed_query(q))) == answer for q, answer in ON_TOPIC)
    assert hits >= len(ON_TOPIC) - 2
    restore = minilm.embed_query("bring the database back from last night's snapshot")
    assert int(np.argmax(passages @ restore)) in (0, 1)


def test_on_topic_questions_clear_the_floor_and_unrelated_prompts_do_not(minilm: OnnxEmbedder) -> None:
    passages = minilm.embed_documents(CHUNKS)
    on_topic = [float(passages[answer] @ minilm.embed_query(q)) for q, answer in ON_TOPIC]
    unrelated = [float((passages @ minilm.embed_query(q)).max()) for q in UNRELATED]
    assert max(unrelated) <= (minilm.unrelated_score or 0.0) + 0.02
    assert max(unrelated) < minilm.min_score
    assert np.percentile(on_topic, 10) > minilm.min_score


def test_query_and_document_embeddings_agree_without_prefixes(minilm: OnnxEmbedder) -> None:
    text = "How long are application logs kept?"
    assert float(minilm.embed_query(text) @ minilm.embed_documents([text])[0]) > 0.9999


def test_prefixes_are_applied(make_model_dir: MakeModelDir) -> None:
    directory = make_model_dir({"query_prefix": "query: ", "document_prefix": "passage: ", "dim": 384})
    embedder = load_embedder(f"onnx:{directory}", models_dir=directory.parent / "models", threads=1)
    plain = load_embedder(
        f"onnx:{make_model_dir(name='plain')}", models_dir=directory.parent / "models", threads=1
    )
    text = "restore the replica"
    assert float(embedder.embed_query(text) @ plain.embed_documents(["query: " + text])[0]) > 0.9999
    assert (
        float(embedder.embed_documents([text])[0] @ plain.embed_documents(["passage: " + text])[0]) > 0.9999
    )
    assert float(embedder.embed_query(text) @ embedder.embed_documents([text])[0]) < 0.999


def test_long_text_is_truncated_at_max_length_not_128(minilm: OnnxEmbedder) -> None:
    head = words(180, seed=1, vocabulary=ONE_TOKEN_WORDS)  # 180 tokens: past the shipped Fixed(128)
    a, b = minilm.embed_documents([head + " memory memory memory", head + " bastion bastion bastion"])
    assert float(a @ b) < 0.9999  # tokens 181-183 still count: no cut at 128
    long_head = words(300, seed=2, vocabulary=ONE_TOKEN_WORDS)  # past 256 tokens: the tails are cut off
    c, d = minilm.embed_documents([long_head + " memory", long_head + " bastion" * 50])
    assert float(c @ d) > 0.9999
    huge = minilm.embed_query(words(20_000, seed=3))
    assert np.linalg.norm(huge) == pytest.approx(1.0, abs=1e-5)


def test_empty_inputs(minilm: OnnxEmbedder) -> None:
    assert minilm.embed_documents([]).shape == (0, 384)
    empty = minilm.embed_query("")
    assert np.linalg.norm(empty) == pytest.approx(1.0, abs=1e-5)
    assert minilm.embed_documents(["", "x", ""]).shape == (3, 384)


def test_cls_pooling_differs_from_mean(make_model_dir: MakeModelDir, minilm: OnnxEmbedder) -> None:
    directory = make_model_dir({"pooling": "cls"})
    cls = load_embedder(f"onnx:{directory}", models_dir=directory.parent / "models", threads=1)
    text = "Backups › Restore\n\nRun pg_restore twice."
    vector = cls.embed_documents([text])[0]
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    assert float(vector @ minilm.embed_documents([text])[0]) < 0.99


def test_onnx_dir_names_its_folder_and_reads_its_floor(make_model_dir: MakeModelDir) -> None:
    directory = make_model_dir({"min_score": 0.42, "unrelated_score": 0.2})
    assert default_min_score(f"onnx:{directory}") == 0.42
    assert unrelated_score(f"onnx:{directory}") == 0.2
    embedder = load_embedder(f"onnx:{directory}", models_dir=directory.parent / "models", threads=1)
    assert embedder.name == f"onnx:{directory.resolve()}"
    assert (embedder.min_score, embedder.unrelated_score, embedder.dim) == (0.42, 0.2, 384)
    # defaults: mean pooling, the unmeasured floor
    bare = make_model_dir(name="bare")
    assert default_min_score(f"onnx:{bare}") == 0.8
    assert unrelated_score(f"onnx:{bare}") is None


def test_onnx_dir_failures_are_sentences(make_model_dir: MakeModelDir, tmp_path: Path) -> None:
    models = tmp_path / "models"
    with pytest.raises(EmbedderError, match="no such folder"):
        load_embedder(f"onnx:{tmp_path / 'missing'}", models_dir=models, threads=1)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EmbedderError, match=r"has no model\.onnx and no tokenizer\.json"):
        load_embedder(f"onnx:{empty}", models_dir=models, threads=1)

    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "model.onnx").write_bytes(b"\x08\x07 this is not a model" * 100)
    (corrupt / "tokenizer.json").symlink_to(make_model_dir(name="good") / "tokenizer.json")
    with pytest.raises(EmbedderError, match="could not load the ONNX model"):
        load_embedder(f"onnx:{corrupt}", models_dir=models, threads=1)

    bad_tokenizer = make_model_dir(name="bad-tokenizer")
    (bad_tokenizer / "tokenizer.json").unlink()
    (bad_tokenizer / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(EmbedderError, match="could not load the tokenizer"):
        load_embedder(f"onnx:{bad_tokenizer}", models_dir=models, threads=1)

    for config, message in [
        ({"pooling": "max"}, "pooling must be one of"),
        ({"dim": 768}, "384-dimensional vectors, not the expected 768"),
        ({"min_score": "high"}, "min_score must be a number"),
        ({"colour": "blue"}, "unknown keys"),
        ({"output": "pooler_output"}, "has no output 'pooler_output'"),
    ]:
        directory = make_model_dir(config, name=f"cfg-{len(list(tmp_path.iterdir()))}")
        with pytest.raises(EmbedderError, match=message):
            load_embedder(f"onnx:{directory}", models_dir=models, threads=1)

    broken_json = make_model_dir(name="broken-json")
    (broken_json / "ragdown-embedder.json").write_text("[1, 2", encoding="utf-8")
    with pytest.raises(EmbedderError, match="could not read"):
        load_embedder(f"onnx:{broken_json}", models_dir=models, threads=1)


def test_config_from_mapping_accepts_every_key() -> None:
    config = OnnxModelConfig.from_mapping(
        json.loads(
            '{"pooling": "cls", "dim": 768, "max_length": 1024, "query_prefix": "q: ", "document_prefix": "d: ", '
            '"min_score": 0.6, "unrelated_score": 0.5, "output": "last_hidden_state", "fusion": "score"}'
        ),
        "test",
    )
    assert config == OnnxModelConfig(
        pooling="cls",
        dim=768,
        max_length=1024,
        query_prefix="q: ",
        document_prefix="d: ",
        min_score=0.6,
        unrelated_score=0.5,
        fusion="score",
        output="last_hidden_state",
    )
    with pytest.raises(EmbedderError, match="fusion"):
        OnnxModelConfig.from_mapping({"fusion": "mean"}, "test")
