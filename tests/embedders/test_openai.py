"""`openai:<model>` against a real local HTTP server implementing `POST /embeddings`."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from httpcore._sync import http11

from ragdown.embedders import Embedder, EmbedderError, OpenAIEmbedder, default_min_score, load_embedder

from .servers import EmbeddingsEndpoint, embeddings_server, fake_vector, unused_port

MODELS = Path("/nonexistent-models")


def load(
    endpoint: EmbeddingsEndpoint, spec: str = "openai:test-embed", api_key: str | None = "sk-test"
) -> Embedder:
    return load_embedder(spec, models_dir=MODELS, threads=1, embedding_url=endpoint.url, api_key=api_key)


def expected(text: str, dim: int) -> npt.NDArray[np.float32]:
    vector = fake_vector(text, dim)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def test_dimension_and_name_come_from_a_probe() -> None:
    with embeddings_server(dim=12) as endpoint:
        embedder = load(endpoint)
        assert isinstance(embedder, OpenAIEmbedder)
        assert embedder.name == "openai:test-embed@12"
        assert embedder.dim == 12
        assert (embedder.min_score, embedder.unrelated_score) == (0.8, None)
        assert len(endpoint.batches) == 1  # the probe
        assert endpoint.paths == ["/v1/embeddings"]
        assert endpoint.models == ["test-embed"]
        assert endpoint.authorizations == ["Bearer sk-test"]
        embedder.close()
    assert default_min_score("openai:test-embed@12") == 0.8


def test_batches_of_64_in_index_order_and_normalised() -> None:
    texts = [f"chunk number {i}" for i in range(150)]
    with embeddings_server(dim=8) as endpoint:
        embedder = load(endpoint)
        vectors = embedder.embed_documents(texts)
        assert [len(b) for b in endpoint.batches[1:]] == [64, 64, 22]
        assert [b[0] for b in endpoint.batches[1:]] == [
            "chunk number 0",
            "chunk number 64",
            "chunk number 128",
        ]
    assert vectors.shape == (150, 8)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    # The server answers its items in reverse: each row must still be its own text's vector.
    for i in (0, 1, 63, 64, 127, 149):
        assert np.allclose(vectors[i], expected(texts[i], 8), atol=1e-6)
    query = embedder.embed_query("chunk number 5")
    assert np.allclose(query, vectors[5], atol=1e-6)
    assert embedder.embed_documents([]).shape == (0, 8)


def test_the_recorded_name_loads_the_same_model_and_empty_texts_are_sent_as_a_space() -> None:
    with embeddings_server(dim=8) as endpoint:
        embedder = load(endpoint, spec="openai:test-embed@8", api_key=None)
        assert embedder.name == "openai:test-embed@8"
        embedder.embed_documents(["", "x"])
        assert endpoint.batches[-1] == [" ", "x"]
        assert endpoint.models == ["test-embed", "test-embed"]
        assert endpoint.authorizations == [None, None]


class IdleClock:
    """The clock httpcore's HTTP/1.1 connections time their keep-alive by, moved forward on demand: an idle
    pause of any length without waiting it out."""

    def __init__(self) -> None:
        self.skipped = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.skipped


@pytest.fixture
def idle_clock(monkeypatch: pytest.MonkeyPatch) -> IdleClock:
    clock = IdleClock()
    monkeypatch.setattr(http11, "time", clock)
    return clock


def test_the_connection_is_kept_alive_across_a_pause(idle_clock: IdleClock) -> None:
    with embeddings_server() as endpoint:
        embedder = load(endpoint)
        embedder.embed_documents(["one", "two"])
        # Longer than httpx's own 5 s default keep-alive: only the 30 s setting keeps this connection.
        idle_clock.skipped = 5.5
        embedder.embed_query("three")
        assert len(endpoint.batches) == 3
        assert endpoint.connections == 1
        # Idle past the 30 s, the connection is let go and the next request opens another.
        idle_clock.skipped += 30.5
        embedder.embed_query("four")
        assert len(endpoint.batches) == 4
        assert endpoint.connections == 2


def test_a_malformed_answer_names_the_expected_shape() -> None:
    with embeddings_server() as endpoint:
        embedder = load(endpoint)
        endpoint.mode = "malformed"
        with pytest.raises(EmbedderError, match=r"\{ index, embedding \}"):
            embedder.embed_documents(["a", "b"])
    with embeddings_server() as endpoint:
        endpoint.mode = "malformed"
        with pytest.raises(EmbedderError, match=r"\{ index, embedding \}"):
            load(endpoint)  # the probe already fails


def test_a_server_error_is_an_embedder_error() -> None:
    with embeddings_server() as endpoint:
        embedder = load(endpoint)
        endpoint.mode = "error"
        with pytest.raises(
            EmbedderError, match=r"answered HTTP 500 for model 'test-embed': .*the model crashed"
        ):
            embedder.embed_query("hello")


def test_no_endpoint_is_one_sentence() -> None:
    url = f"http://127.0.0.1:{unused_port()}/v1"
    with pytest.raises(EmbedderError) as caught:
        load_embedder("openai:test-embed", models_dir=MODELS, threads=1, embedding_url=url)
    assert str(caught.value).startswith(
        f"could not reach the embedding endpoint {url}/embeddings (no network?): "
    )


@pytest.mark.parametrize(
    ("payload", "detail"),
    [
        ({"data": [{"index": 0, "embedding": [1.0, 2.0]}]}, "1 items for 2 inputs"),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}, "index 0 twice"),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 5, "embedding": [1.0]}]}, "index 5"),
        (
            {"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": "AAAA"}]},
            "no `embedding` list",
        ),
        (
            {"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]},
            "different lengths",
        ),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": ["x"]}]}, "not numbers"),
        ({"embeddings": []}, "no `data` list"),
        ([1, 2], "no `data` list"),
    ],
)
def test_every_malformed_shape_is_caught(payload: object, detail: str) -> None:
    with embeddings_server(dim=1) as endpoint:
        embedder = load(endpoint)
        endpoint.mode = "payload"
        endpoint.payload = payload
        with pytest.raises(EmbedderError, match=r"\{ index, embedding \}") as caught:
            embedder.embed_documents(["a", "b"])
    assert detail in str(caught.value)


def test_a_changed_dimension_is_an_error() -> None:
    with embeddings_server(dim=8) as endpoint:
        embedder = load(endpoint)
        endpoint.dim = 4
        with pytest.raises(EmbedderError, match="changed dimension from 8 to 4"):
            embedder.embed_query("x")
