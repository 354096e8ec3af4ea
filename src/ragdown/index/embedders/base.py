"""What every embedder offers the index and search."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class EmbedderError(RuntimeError):
    """An embedder could not be loaded or failed to embed; the message is one sentence a user can act on."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors.

    `name` is what the index's meta records (a change rebuilds the index): `hash-384`, `granite-small`,
    `minilm`, `onnx:<dir>`, `openai:<model>@<dim>`.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def min_score(self) -> float:
        """Default `RAGDOWN_HOOK_MIN_SCORE`: the measured floor separating on-topic from unrelated prompts."""
        ...

    @property
    def unrelated_score(self) -> float | None:
        """Highest cosine an unrelated prompt reached when measured; `None` when never measured."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Shape (len(texts), dim), rows L2-normalised, in the order given."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """Shape (dim,), L2-normalised; applies the model's query prefix where it has one."""
        ...
