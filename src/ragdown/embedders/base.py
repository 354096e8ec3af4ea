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


@runtime_checkable
class WindowedEmbedder(Protocol):
    """An embedder that reads a limited number of tokens and can embed a longer text window by window."""

    def embed_document_windows(self, heads: Sequence[str], bodies: Sequence[str]) -> list[Vectors]:
        """One array per text `heads[i] + bodies[i]`, shape (windows, dim), rows L2-normalised.

        A text the model reads whole is one row, equal to `embed_documents`'; a longer one is cut into
        consecutive windows of its body, each read with the head in front (a chunk's breadcrumb), so the
        end of a long section is embedded too. Row 0 is the window `embed_documents` would read.
        """
        ...
