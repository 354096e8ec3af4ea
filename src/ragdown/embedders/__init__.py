"""Embedders: turn chunk texts and queries into L2-normalised float32 vectors.

`load_embedder(spec, ...)` is the one entry point; `spec` is the value of `RAGDOWN_EMBEDDER`:

- `granite-small` (default), `bge-small`, `embeddinggemma`: local ONNX models, downloaded once into
  `models_dir` from the hub;
- `minilm`: all-MiniLM-L6-v2, from the installed `ragdown[offline]` packages (no network), else `models_dir`,
  else the hub;
- `multilingual`: multilingual-e5-small in 4 bits from the installed `ragdown[multilingual]` package (no
  network; `multilingual.py`); `multilingual-e5-small`, `granite-multilingual`: the hub's, downloaded once;
- `onnx:<dir>`: any local folder holding `model.onnx` + `tokenizer.json` (+ `ragdown-embedder.json`);
- `openai:<model>`: any OpenAI-compatible `/embeddings` endpoint;
- `hash`: the deterministic test embedder (`hash-384`).

Loading raises `EmbedderError` (one sentence a user can act on) for every foreseeable failure: unknown
name, missing or corrupt files, no network. `default_min_score` / `unrelated_score` answer for a name
without loading anything (the hook floor of behaviour spec A8).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdown.core.config import DEFAULT_HF_ENDPOINT, OFFLINE_EMBEDDER, Settings

from .base import Embedder, EmbedderError, Vectors
from .hash import HASH_MIN_SCORE, HASH_NAME, HashEmbedder
from .openai import DEFAULT_BASE_URL, OPENAI_MIN_SCORE, OpenAIEmbedder

if TYPE_CHECKING:
    from .catalog import CATALOG, CatalogModel, InstalledFiles
    from .multilingual import MultilingualEmbedder
    from .onnx import OnnxEmbedder, OnnxModelConfig

    KNOWN_EMBEDDERS: tuple[str, ...]

# The local models' modules (the catalogue, ONNX Runtime's wrapper, its int8 and gather-first copies:
# ~0.1-0.2 s of imports) load the first time one of their names is asked for, so `hash` and `openai:*`
# never pay for them (`tests/cli/test_cli_imports.py`).
_LAZY = {
    "CATALOG": "catalog",
    "CatalogModel": "catalog",
    "InstalledFiles": "catalog",
    "MultilingualEmbedder": "multilingual",
    "OnnxEmbedder": "onnx",
    "OnnxModelConfig": "onnx",
}


def __getattr__(name: str) -> Any:
    if name == "KNOWN_EMBEDDERS":
        return _known_embedders()
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def _known_embedders() -> tuple[str, ...]:
    from .catalog import CATALOG
    from .multilingual import MULTILINGUAL_NAME

    return (*CATALOG, MULTILINGUAL_NAME, "hash", "openai:<model>", "onnx:<dir>")


__all__ = [
    "CATALOG",
    "KNOWN_EMBEDDERS",
    "CatalogModel",
    "Embedder",
    "EmbedderError",
    "HashEmbedder",
    "InstalledFiles",
    "Loaded",
    "MultilingualEmbedder",
    "OnnxEmbedder",
    "OnnxModelConfig",
    "OpenAIEmbedder",
    "Vectors",
    "default_fusion",
    "default_keep_top",
    "default_min_ratio",
    "default_min_score",
    "load_configured",
    "load_embedder",
    "load_or_offline",
    "min_score_warning",
    "unrelated_score",
]


@dataclass(frozen=True)
class Loaded:
    """What `load_or_offline` found: the embedder (None when none could load), that the offline model
    stands in (`notice`, one plain sentence for a banner) and why (`reason`), or why none loaded (`reason`)."""

    embedder: Embedder | None
    notice: str | None = None
    reason: str | None = None

    @property
    def explained(self) -> str | None:
        """The notice with its reason and what to do, for a log or a terminal; None without a notice."""
        if self.notice is None:
            return None
        return f"{self.notice} Why: {self.reason}. Set RAGDOWN_EMBEDDER to choose one."


def load_or_offline(spec: str, load: Callable[[str], Embedder], *, chosen: bool) -> Loaded:
    """The embedder `spec`, loaded by `load`; when nobody chose it (`RAGDOWN_EMBEDDER` unset: the default)
    and it cannot load, as on a first run offline, the installed offline model instead, the notice saying
    so. One the user chose is never swapped: the reason says why it did not load."""
    try:
        return Loaded(load(spec))
    except EmbedderError as err:
        reason = str(err).rstrip(".")
    if chosen or spec == OFFLINE_EMBEDDER:
        return Loaded(None, reason=reason)
    try:
        offline = load(OFFLINE_EMBEDDER)
    except EmbedderError as err:
        return Loaded(
            None, reason=f"{reason}; the offline model {OFFLINE_EMBEDDER} could not load either: {err}"
        )
    return Loaded(
        offline,
        notice=f"The default embedder {spec} could not load, so the installed offline model "
        f"{OFFLINE_EMBEDDER} is used instead.",
        reason=reason,
    )


def _unknown(spec: str) -> EmbedderError:
    return EmbedderError(f"unknown embedder {spec!r}; accepted names are {', '.join(_known_embedders())}")


def _openai_model(raw: str) -> str:
    """`openai:<model>` or the recorded name `openai:<model>@<dim>`: the model either way."""
    model, at, dim = raw.rpartition("@")
    return model if at and dim.isdigit() and model else raw


def load_embedder(
    spec: str,
    *,
    models_dir: Path,
    threads: int,
    hf_endpoint: str = DEFAULT_HF_ENDPOINT,
    embedding_url: str = DEFAULT_BASE_URL,
    api_key: str | None = None,
    quantize: bool = False,
    catalog: Mapping[str, CatalogModel] | None = None,
) -> Embedder:
    """Load the embedder `spec` names; `EmbedderError` for anything that keeps it from loading.

    `quantize` uses a verified local int8 copy of a local ONNX model (off by default; see `quantize.py`).
    `catalog` replaces the named local models (tests point one at a local server through `hf_endpoint`).
    """
    text = spec.strip()
    key = text.lower()
    if key in ("hash", HASH_NAME):
        return HashEmbedder()
    from .catalog import CATALOG, load_catalog_model, load_onnx_dir
    from .multilingual import MULTILINGUAL_NAME, MultilingualEmbedder

    models = CATALOG if catalog is None else catalog
    try:
        if key == MULTILINGUAL_NAME:
            return MultilingualEmbedder(threads=threads)
        if key.startswith("openai:"):
            return OpenAIEmbedder(
                _openai_model(text[len("openai:") :].strip()), base_url=embedding_url, api_key=api_key
            )
        if key.startswith("onnx:"):
            return load_onnx_dir(
                text[len("onnx:") :].strip(), models_dir=models_dir, threads=threads, quantize=quantize
            )
        if key in models:
            return load_catalog_model(
                models[key],
                models_dir=models_dir,
                hf_endpoint=hf_endpoint,
                threads=threads,
                quantize=quantize,
            )
    except EmbedderError:
        raise
    except Exception as exc:  # a last net: loading must end in a sentence, not a traceback
        raise EmbedderError(f"could not load the embedder {text!r}: {type(exc).__name__}: {exc}") from exc
    if key in ("", "openai", "onnx"):
        raise EmbedderError(
            f"RAGDOWN_EMBEDDER {spec!r} is incomplete; accepted names are {', '.join(_known_embedders())}"
        )
    raise _unknown(spec)


def load_configured(spec: str, settings: Settings, *, quantize: bool | None = None) -> Embedder:
    """`load_embedder` with the model cache, threads, endpoints and key of `settings`."""
    return load_embedder(
        spec,
        models_dir=settings.models_dir,
        threads=settings.threads,
        hf_endpoint=settings.hf_endpoint,
        embedding_url=settings.embedding_url,
        api_key=settings.embedding_api_key,
        quantize=settings.quantize if quantize is None else quantize,
    )


def _onnx_dir_config(name: str) -> OnnxModelConfig | None:
    from .onnx import OnnxModelConfig

    try:
        return OnnxModelConfig.from_dir(Path(name.strip()[len("onnx:") :]).expanduser())
    except (EmbedderError, OSError):
        return None


def _measured(name: str, catalog: Mapping[str, CatalogModel] | None) -> OnnxModelConfig | None:
    """What was measured of an embedder, without loading it: a catalog model's config, an `onnx:<dir>`'s
    `ragdown-embedder.json`; None for anything never measured (`hash`, `openai:*`, an unreadable dir)."""
    key = name.strip().lower()
    if key in ("hash", HASH_NAME) or key.startswith("openai:"):  # no catalogue names them: none loaded
        return None
    from .catalog import CATALOG
    from .multilingual import MULTILINGUAL_CONFIG, MULTILINGUAL_NAME

    models = CATALOG if catalog is None else catalog
    if key in models:
        return models[key].config
    if key == MULTILINGUAL_NAME:
        return MULTILINGUAL_CONFIG
    if key.startswith("onnx:"):
        return _onnx_dir_config(name)
    return None


def default_min_score(name: str, *, catalog: Mapping[str, CatalogModel] | None = None) -> float:
    """The hook's default `min_score` for an embedder spec or name, without loading it.

    The measured floor of a catalog model; an `onnx:<dir>`'s `ragdown-embedder.json` value; 0.8 for
    anything never measured (`hash`, `openai:*`), as behaviour spec A8 says.
    """
    config = _measured(name, catalog)
    if config is not None:
        return config.min_score
    key = name.strip().lower()
    if key in ("hash", HASH_NAME):
        return HASH_MIN_SCORE
    if key.startswith("openai:"):
        return OPENAI_MIN_SCORE
    from .onnx import DEFAULT_MIN_SCORE

    return DEFAULT_MIN_SCORE


def default_min_ratio(name: str, *, catalog: Mapping[str, CatalogModel] | None = None) -> float:
    """The hook's default `min_ratio` for an embedder spec or name, without loading it.

    A catalog model's measured value (minilm's own; the spec's 0.95 for the others), an `onnx:<dir>`'s
    `ragdown-embedder.json` value, else 0.95 (behaviour spec A8).
    """
    config = _measured(name, catalog)
    if config is not None:
        return config.min_ratio
    from .onnx import DEFAULT_MIN_RATIO

    return DEFAULT_MIN_RATIO


def default_keep_top(name: str, *, catalog: Mapping[str, CatalogModel] | None = None) -> int:
    """How many of the search's first hits the hook keeps whatever their ratio, under the embedder's own
    `min_ratio`: the catalogue's measured value (minilm's 2, docs/benchmarks.md section 16), else 0: the
    spec's gate alone (behaviour spec A8), for every model it was not measured to help."""
    config = _measured(name, catalog)
    return config.hook_keep_top if config is not None else 0


def default_fusion(name: str, *, catalog: Mapping[str, CatalogModel] | None = None) -> str:
    """The fusion an embedder was measured best with: `score` for minilm, the spec's `rrf` for the rest."""
    config = _measured(name, catalog)
    return config.fusion if config is not None else "rrf"


def unrelated_score(name: str, *, catalog: Mapping[str, CatalogModel] | None = None) -> float | None:
    """The highest cosine an unrelated prompt reached when the model was measured; `None` if never measured."""
    config = _measured(name, catalog)
    return config.unrelated_score if config is not None else None


def min_score_warning(name: str, min_score: float) -> str | None:
    """The startup warning of behaviour spec A8.8 when `min_score` is at or below the unrelated score."""
    unrelated = unrelated_score(name)
    if unrelated is None or min_score > unrelated:
        return None
    return (
        f"RAGDOWN_HOOK_MIN_SCORE {min_score:g} is at or below the highest score an unrelated prompt reached "
        f"with {name} ({unrelated:g}): the hook will inject unrelated documents; "
        f"{name}'s measured floor is {default_min_score(name):g}"
    )
