"""What every embedder offers the index and search."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]

# Told (texts embedded, texts in the call) as a long `embed_documents` / `embed_document_windows` call goes,
# by an embedder that embeds in passes (the ONNX ones, after each pass); per thread, so a sync's listener
# hears its own calls only, never a search's query beside it. An embedder that cannot tell says nothing.
EmbedProgress = Callable[[int, int], None]
_LISTENER: ContextVar[EmbedProgress | None] = ContextVar("ragdown_embed_progress", default=None)


@contextlib.contextmanager
def embed_progress(listener: EmbedProgress) -> Iterator[None]:
    """Within this block (this thread), the embedders' calls tell `listener` how far they are."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def tell_progress(done: int, total: int) -> None:
    """For an embedder: `done` of the `total` texts of the running call are embedded."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(done, total)


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
        end of a long section is embedded too. Row 0 is the window `embed_documents` would read. Further rows
        may be other views of the same chunk rather than windows (`multilingual`: its breadcrumb alone).
        """
        ...
