"""`openai:<model>`: any OpenAI-compatible `POST /embeddings` endpoint (OpenAI, Ollama, llama.cpp, vLLM, ...).

The dimension is learned from one probe call at load, and the name becomes `openai:<model>@<dim>`, so a
model that changes its dimension rebuilds the index. Texts go 64 to a request over one keep-alive
connection (kept 30 s idle; 60 s timeout per request); the answer's items are put back in order by their
`index`, and each vector is L2-normalised. Any other answer is an `EmbedderError` saying what came back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ._vectors import l2_normalize
from .base import EmbedderError, Vectors

DEFAULT_BASE_URL = "https://api.openai.com/v1"
BATCH_SIZE = 64
TIMEOUT_S = 60.0
KEEPALIVE_S = 30.0
OPENAI_MIN_SCORE = 0.8
"""Never measured for any remote model: the default model's floor, as a guess (behaviour spec A8)."""
PROBE_TEXT = "ragdown probes the embedding dimension"

if TYPE_CHECKING:  # imported where used: httpx costs ~60 ms at start-up
    import httpx


class OpenAIEmbedder:
    """Vectors from a remote `/embeddings` endpoint."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        batch_size: int = BATCH_SIZE,
        timeout: float = TIMEOUT_S,
        keepalive_expiry: float = KEEPALIVE_S,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import httpx

        if not model.strip():
            raise EmbedderError("openai:<model> needs a model name, such as openai:text-embedding-3-small")
        if not base_url.startswith(("http://", "https://")):
            raise EmbedderError(f"the embedding endpoint must be an http(s) URL, not {base_url!r}")
        if batch_size < 1:
            raise ValueError("batch_size must be positive")
        self._model = model
        self._url = base_url.rstrip("/") + "/embeddings"
        self._batch_size = batch_size
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout),
            limits=httpx.Limits(max_keepalive_connections=4, keepalive_expiry=keepalive_expiry),
            headers=headers,
            transport=transport,
        )
        self._dim = 0
        try:
            probe = self._request([PROBE_TEXT])
        except BaseException:
            self._client.close()
            raise
        self._dim = int(probe.shape[1])

    @property
    def name(self) -> str:
        return f"openai:{self._model}@{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def min_score(self) -> float:
        return OPENAI_MIN_SCORE

    @property
    def unrelated_score(self) -> float | None:
        return None

    @property
    def url(self) -> str:
        return self._url

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        parts = [
            self._request(list(texts[start : start + self._batch_size]))
            for start in range(0, len(texts), self._batch_size)
        ]
        return np.concatenate(parts, axis=0)

    def embed_query(self, text: str) -> Vectors:
        return np.ascontiguousarray(self._request([text])[0], dtype=np.float32)

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self._model!r}, {self._url!r})"

    def _request(self, batch: list[str]) -> Vectors:
        # OpenAI rejects empty strings in `input`; a space embeds as "nothing" just as well.
        import httpx

        body = {"model": self._model, "input": [t if t else " " for t in batch]}
        try:
            response = self._client.post(self._url, json=body)
        except httpx.HTTPError as exc:
            detail = str(exc) or type(exc).__name__
            raise EmbedderError(
                f"could not reach the embedding endpoint {self._url} (no network?): {detail}"
            ) from exc
        if response.status_code != 200:
            text = " ".join(response.text.split())[:300]
            raise EmbedderError(
                f"the embedding endpoint {self._url} answered HTTP {response.status_code} for model "
                f"{self._model!r}: {text}"
            )
        return l2_normalize(self._parse(response, len(batch)))

    def _parse(self, response: httpx.Response, count: int) -> Vectors:
        def malformed(detail: str) -> EmbedderError:
            return EmbedderError(
                f"the embedding endpoint {self._url} answered 200 but not with a `data` list holding one "
                f"{{ index, embedding }} item per input ({detail})"
            )

        try:
            payload = response.json()
        except ValueError as exc:
            raise malformed("the body is not JSON") from exc
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise malformed("no `data` list")
        if len(data) != count:
            raise malformed(f"{len(data)} items for {count} inputs")
        rows: list[list[float] | None] = [None] * count
        for item in data:
            index = item.get("index") if isinstance(item, dict) else None
            embedding = item.get("embedding") if isinstance(item, dict) else None
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
                raise malformed(f"an item with index {index!r}")
            if rows[index] is not None:
                raise malformed(f"index {index} twice")
            if not isinstance(embedding, list) or not embedding:
                raise malformed(f"item {index} has no `embedding` list of numbers")
            rows[index] = embedding
        try:
            matrix = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise malformed("embeddings of different lengths, or not numbers") from exc
        if matrix.ndim != 2 or not np.all(np.isfinite(matrix)):
            raise malformed("embeddings of different lengths, or not finite numbers")
        if self._dim and matrix.shape[1] != self._dim:
            raise EmbedderError(
                f"the embedding endpoint {self._url} changed dimension from {self._dim} to {matrix.shape[1]} "
                f"for model {self._model!r}"
            )
        return matrix
