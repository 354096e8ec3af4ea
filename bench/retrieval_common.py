"""Shared pieces of the retrieval benchmarks (`bench/retrieval_*.py`): corpora, embedders, tables, output.

Not a benchmark itself. The scripts import it as `retrieval_common` (Python puts a script's own folder
first on `sys.path`). They run ragdown's own code (`ragdown.evaluation`) on the shared corpora, which are
only read: every index goes to a temporary folder unless `--keep DIR` keeps it for the next run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from _common import cpu_model as cpu_model  # re-exported for the retrieval scripts
from _common import machine as machine
from ragdown.core.config import Settings
from ragdown.embedders.base import Embedder, EmbedderError, Vectors
from ragdown.engine.engine import Engine
from ragdown.evaluation.questions import (
    RUNBOOKS_ANSWERABLE_TYPES,
    RUNBOOKS_PROBE_TYPES,
    Question,
    load_questions,
)
from ragdown.evaluation.runner import indexed, open_embedder
from ragdown.search.hybrid import Fusion

SHARED = Path(
    os.environ.get("RAGDOWN_BENCH_SHARED", Path(__file__).resolve().parents[2] / "shared" / "bench")
)
RUNBOOKS = SHARED / "ragdown-runbooks"
RUNBOOKS_CORPUS = RUNBOOKS / "corpus"
OBSIDIAN = SHARED / "obsidian-help" / "vault"
OBSIDIAN_ZH = SHARED / "obsidian-help-zh" / "vault"
QUESTIONS_DIR = Path(__file__).resolve().parent / "questions"
OUT_DIR = Path(__file__).resolve().parent / "out"
MAIN_TYPES = RUNBOOKS_ANSWERABLE_TYPES
RRF_TYPES = RUNBOOKS_PROBE_TYPES
# The spec's default first (`rrf`: reciprocal rank fusion, identifier queries fused by score), then
# `RAGDOWN_FUSION=score` (every query fused by score), the alternative measured better with minilm.
FUSIONS: tuple[Fusion, ...] = ("rrf", "score")
# Every embedder the catalog names, as (label, spec, quantize).
EMBEDDERS: tuple[tuple[str, str, bool], ...] = (
    ("minilm", "minilm", False),
    ("minilm int8", "minilm", True),
    ("granite-small", "granite-small", False),
    ("bge-small", "bge-small", False),
    ("embeddinggemma", "embeddinggemma", False),
    ("multilingual", "multilingual", False),
    ("hash", "hash", False),
)


class OneVectorPerChunk:
    """An embedder as it was before windows: one vector per chunk, the text cut at the model's window."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    @property
    def min_score(self) -> float:
        return self._inner.min_score

    @property
    def unrelated_score(self) -> float | None:
        return self._inner.unrelated_score

    @property
    def reads_cjk(self) -> bool:
        return bool(getattr(self._inner, "reads_cjk", True))

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        return self._inner.embed_query(text)


class MeanPooledWindows(OneVectorPerChunk):
    """The windows of a long chunk averaged into one vector (re-normalised), instead of one row each."""

    def embed_document_windows(self, heads: Sequence[str], bodies: Sequence[str]) -> list[Vectors]:
        out: list[Vectors] = []
        for rows in self._inner.embed_document_windows(heads, bodies):  # type: ignore[attr-defined]
            mean = np.asarray(rows, dtype=np.float32).mean(axis=0)
            out.append((mean / max(float(np.linalg.norm(mean)), 1e-12)).reshape(1, -1))
        return out


# The minilm indexes the ranking benchmarks compare, by label (also their folder under --keep): (int8 copy,
# how a chunk longer than the model's 256 tokens is embedded): `win`, one row per window, the chunk scoring as
# its best (what ships); `nowin`, one vector, the text cut at the window (before); `mean`, its windows
# averaged into one vector; `pack`, one vector, sections packed to `PACK_CHARS` instead of the chunker's
# 1,500 characters, so most fit the window. A label names its vectors exactly: int8 and float vectors share
# the embedder's name, so an index kept under one label must never be reused for another.
VARIANTS: dict[str, tuple[bool, str]] = {
    "float-win": (False, "win"),
    "float-nowin": (False, "nowin"),
    "float-mean": (False, "mean"),
    "float-pack": (False, "pack"),
    "int8-win": (True, "win"),
    "int8-nowin": (True, "nowin"),
}
DEFAULT_VARIANT = "float-win"  # what ragdown ships for minilm
PACK_CHARS = 1000  # about minilm's 256 tokens of English, less a breadcrumb


def load_variant(s: Settings, variant: str) -> tuple[Embedder | None, str | None]:
    """minilm as a `VARIANTS` label says, or None and why not."""
    if variant not in VARIANTS:
        return None, f"unknown variant {variant!r}; one of {', '.join(VARIANTS)}"
    quantize, mode = VARIANTS[variant]
    embedder, why = load(s, "minilm", quantize)
    if embedder is None or mode == "win":
        return embedder, why
    if mode == "mean":
        return MeanPooledWindows(embedder), None
    return OneVectorPerChunk(embedder), None


@contextlib.contextmanager
def packed(chars: int | None) -> Iterator[None]:
    """While open, the sync's parser packs sections to `chars` (the `pack` variant; None: as shipped)."""
    if chars is None:
        yield
        return
    from ragdown.documents import parse

    defaults = parse.parse_document.__kwdefaults__
    assert defaults is not None  # `max_chunk_chars` is keyword-only
    saved = dict(defaults)
    defaults["max_chunk_chars"] = chars
    try:
        yield
    finally:
        defaults.clear()
        defaults.update(saved)


def machine_line(m: dict[str, Any]) -> str:
    return (
        f"{m['date']} · {m['nproc']} CPUs ({m['cpu']}) · load {m['loadavg'][0]:.2f} · Python {m['python']}, "
        f"onnxruntime {m['onnxruntime']}, SQLite {m['sqlite']}"
    )


def parser(doc: str | None) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", type=Path, help="keep the indexes in this folder and reuse them next time")
    ap.add_argument("--models", type=Path, help="the models folder (default: RAGDOWN_MODELS or the cache)")
    ap.add_argument(
        "--json", type=Path, help="also write the results here (default: bench/out/<script>.json)"
    )
    return ap


def settings(models: Path | None = None) -> Settings:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGDOWN_") or k == "RAGDOWN_MODELS"}
    s = Settings.from_env(env)
    return replace(s, models_dir=models) if models is not None else s


def load(s: Settings, spec: str, quantize: bool = False) -> tuple[Embedder | None, str | None]:
    """The embedder, or None and the one sentence saying why it cannot load here."""
    try:
        embedder = open_embedder(s, spec, quantize=quantize)
    except EmbedderError as err:
        return None, str(err).split("; to run")[0]
    if quantize and not getattr(embedder, "quantized", False):
        report = getattr(embedder, "quantize_report", None)
        reason = (
            getattr(report, "reason", None) or "int8 quantisation is unavailable (install the onnx package)"
        )
        return None, reason
    return embedder, None


@contextlib.contextmanager
def corpus_index(
    s: Settings, corpus: Path, embedder: Embedder, keep: Path | None, label: str
) -> Iterator[tuple[Engine, dict[str, Any]]]:
    """An index of `corpus` for `embedder`: under `keep/<label>` when given (reused), else a temp dir."""
    with contextlib.ExitStack() as stack:
        if keep is not None:
            data = keep / f"{corpus.parent.name}-{corpus.name}-{label}".replace(" ", "-")
        else:
            data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ragdown-bench-")))
        pack = PACK_CHARS if VARIANTS.get(label, (False, ""))[1] == "pack" else None
        stack.enter_context(packed(pack))
        yield stack.enter_context(indexed(s, corpus, embedder, data))


def runbooks_questions(types: Sequence[str]) -> list[Question]:
    return load_questions(RUNBOOKS / "ragdown.questions.jsonl", types)


def first_answerable(n: int) -> list[Question]:
    """The first `n` answerable questions of the published 240, in their order (threshold.ts)."""
    return [q for q in load_questions(RUNBOOKS / "ragdown.main.jsonl") if q.golds][:n]


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def md_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "| " + " | ".join("---" for _ in headers) + " |"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def mcnemar(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Exact two-sided McNemar p-value on paired outcomes (the binomial test on the discordant pairs)."""
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = float(sum(math.comb(n, i) for i in range(k + 1))) / float(2**n)
    return min(1.0, 2.0 * tail)


def write_json(path: Path | None, script: str, data: dict[str, Any]) -> Path:
    target = path or OUT_DIR / f"{script}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return target
