"""Local ONNX embedders run by `onnxruntime` + `tokenizers`: any `model.onnx` + `tokenizer.json` pair.

- Tokenising always overrides whatever padding/truncation `tokenizer.json` ships (all-MiniLM-L6-v2's says
  `Fixed(128)`, which would cut every text at 128 tokens and pad short ones to 128): right-side, batch-longest
  padding and truncation at the model's `max_length`.
- Texts are embedded in order of length, `batch_size` (16) per forward pass, so a batch is padded to a
  similar length; a pass is also capped at `max_batch_tokens` (2,048) padded tokens, so long chunks go 8 or
  fewer at a time. The cap bounds activation memory: on all-MiniLM-L6-v2 with ~250-token chunks it cut
  peak RSS from ~920 MB to ~530 MB at no loss of throughput. Results come back in the order given.
- Pooling is CLS (first token) or the mean over the attention mask of the token embeddings; a model whose
  output is already a pooled 2-D `(batch, dim)` tensor is used as it is. `token_type_ids` are zeros and
  `position_ids` the positions, when the graph takes them. Rows are L2-normalised.
- `intra_op_num_threads` is the `threads` given (by default the physical cores, `cpus.py`). The CPU memory
  arena stays on: turning it off saved ~130 MB of peak RSS here but halved 2-thread throughput (each
  pass's activations then go through malloc/mmap and fresh page faults); `cpu_mem_arena=False` is there
  for hosts where memory matters more than speed. Each pass runs with arena shrinkage
  (`memory.enable_memory_arena_shrinkage`): the pass reuses the arena, and what it grew by goes back at its
  end, so a server no longer keeps an indexing batch's peak (~300 MB on all-MiniLM-L6-v2) for its whole
  life. After a session is built the C heap is trimmed (`heap.trim`): the freed protobuf and optimiser
  copies are ~60 MB (docs/benchmarks.md section 15).
- The gather-first copy (`gather_first.py`) is opened without constant folding: its MatMul weights stay
  int8 (11 MB) instead of being folded into float32 constants at load (43 MB); each pass turns them back
  into float32 in the arena, given back at its end. 30 MB less held for ~5 ms more CPU per query and ~6%
  per indexing pass; vectors within 2e-7 of the folded session's (docs/benchmarks.md section 37).
- `quantize=True` uses a verified, cached per-channel dynamic-int8 copy of the model (see `quantize.py`).
  The vectors stay within cosine 0.99 of the float model's, so the name (and the index built with it) is
  the same either way.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import numpy.typing as npt

from ragdown.core import heap

from . import gather_first
from . import quantize as q
from ._vectors import l2_normalize
from .base import EmbedderError, Vectors, tell_progress

if TYPE_CHECKING:  # imported where a model loads: `hash` and `openai:*` never pay for them
    import onnxruntime as ort
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

Pooling = Literal["cls", "mean"]
POOLINGS: tuple[Pooling, ...] = ("cls", "mean")
BATCH_SIZE = 16
MAX_BATCH_TOKENS = 2048
MAX_WINDOWS = 16  # windows embedded per chunk; the rest of a longer one (a huge code block) is not
MIN_WINDOW_TOKENS = 32  # a head leaving less room than this in a window: one window, cut as before
DEFAULT_MIN_SCORE = 0.8
DEFAULT_MIN_RATIO = 0.95  # behaviour spec A8's default, for a model never measured otherwise
CONFIG_FILE = "ragdown-embedder.json"

_INT_TYPES: dict[str, type[np.integer[Any]]] = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}


@dataclass(frozen=True)
class OnnxModelConfig:
    """How to run one model: pooling, expected dimension, token limit, prefixes and its hook floor."""

    pooling: Pooling = "mean"
    dim: int | None = None
    max_length: int = 512
    query_prefix: str = ""
    document_prefix: str = ""
    min_score: float = DEFAULT_MIN_SCORE
    unrelated_score: float | None = None
    min_ratio: float = DEFAULT_MIN_RATIO
    """The hook's default `min_ratio` (share of the best hit's cosine), measured per model as `min_score` is."""
    hook_keep_top: int = 0
    """How many of the search's first hits the hook keeps whatever their ratio, while `min_ratio` is this
    model's own: only where it was measured to be needed (minilm); 0, the spec's gate alone, elsewhere."""
    fusion: str = "rrf"
    """The fusion this model ranked best with when measured (`rrf` or `score`); `RAGDOWN_FUSION` overrides it."""
    reads_cjk: bool = True
    """False for a model trained on English alone (minilm): score fusion then leans on BM25 for a CJK query."""
    output: str | None = None
    """Graph output to pool; default `last_hidden_state`, else `token_embeddings`, else the first output."""

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], source: str) -> OnnxModelConfig:
        """Validate the JSON of a `ragdown-embedder.json`; any mistake is an `EmbedderError` naming `source`."""
        known = {"pooling", "dim", "max_length", "query_prefix", "document_prefix"}
        known |= {"min_score", "unrelated_score", "min_ratio", "output", "fusion", "reads_cjk"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise EmbedderError(f"{source}: unknown keys {unknown}; accepted keys are {sorted(known)}")
        kwargs: dict[str, Any] = {}
        pooling = data.get("pooling", "mean")
        if pooling not in POOLINGS:
            raise EmbedderError(f"{source}: pooling must be one of {list(POOLINGS)}, not {pooling!r}")
        kwargs["pooling"] = pooling
        for key in ("dim", "max_length"):
            value = data.get(key)
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise EmbedderError(f"{source}: {key} must be a positive whole number, not {value!r}")
            kwargs[key] = value
        for key in ("query_prefix", "document_prefix", "output"):
            value = data.get(key)
            if value is None:
                continue
            if not isinstance(value, str):
                raise EmbedderError(f"{source}: {key} must be a string, not {value!r}")
            kwargs[key] = value
        fusion = data.get("fusion")
        if fusion is not None:
            if fusion not in ("rrf", "score"):
                raise EmbedderError(f"{source}: fusion must be rrf or score, not {fusion!r}")
            kwargs["fusion"] = fusion
        reads_cjk = data.get("reads_cjk")
        if reads_cjk is not None:
            if not isinstance(reads_cjk, bool):
                raise EmbedderError(f"{source}: reads_cjk must be true or false, not {reads_cjk!r}")
            kwargs["reads_cjk"] = reads_cjk
        ratio = data.get("min_ratio")
        if ratio is not None:
            if not isinstance(ratio, int | float) or isinstance(ratio, bool) or not 0.0 <= ratio <= 1.0:
                raise EmbedderError(f"{source}: min_ratio must be a number between 0 and 1, not {ratio!r}")
            kwargs["min_ratio"] = float(ratio)
        for key in ("min_score", "unrelated_score"):
            value = data.get(key)
            if value is None:
                continue
            if not isinstance(value, int | float) or isinstance(value, bool) or not -1.0 <= value <= 1.0:
                raise EmbedderError(f"{source}: {key} must be a number between -1 and 1, not {value!r}")
            kwargs[key] = float(value)
        return cls(**kwargs)

    @classmethod
    def from_dir(cls, directory: Path) -> OnnxModelConfig:
        """`ragdown-embedder.json` of a model folder, or the defaults (mean pooling) when there is none."""
        path = directory / CONFIG_FILE
        if not path.is_file():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise EmbedderError(f"could not read {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise EmbedderError(f"{path} must hold a JSON object")
        return cls.from_mapping(cast("dict[str, object]", data), str(path))


def _session(path: Path, threads: int, cpu_mem_arena: bool, fold: bool = True) -> ort.InferenceSession:
    """One session on the CPU. `fold=False` turns ONNX Runtime's constant folding off: the gather-first
    copy's int8 weights then stay int8 in memory, each pass turning them into float32 before its MatMuls."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, threads)
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.enable_cpu_mem_arena = cpu_mem_arena
    options.log_severity_level = 3
    disabled = [] if fold else ["ConstantFolding"]
    return ort.InferenceSession(
        str(path), options, providers=["CPUExecutionProvider"], disabled_optimizers=disabled
    )


def _run_options(cpu_mem_arena: bool) -> ort.RunOptions:
    """Each pass gives back at its end what the CPU arena grew by during it (only with an arena)."""
    import onnxruntime as ort

    options = ort.RunOptions()
    if cpu_mem_arena:
        options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    return options


def _load_tokenizer(path: Path, max_length: int) -> Tokenizer:
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises a bare Exception for unreadable or invalid files
        raise EmbedderError(f"could not load the tokenizer {path}: {exc}") from exc
    shipped = tokenizer.padding
    if shipped:
        pad_id, pad_token = int(shipped["pad_id"]), str(shipped["pad_token"])
    else:
        pad_token, pad_id = "[PAD]", 0
        for candidate in ("<pad>", "[PAD]", "<|padding|>", "<unk>"):
            found = tokenizer.token_to_id(candidate)
            if found is not None:
                pad_token, pad_id = candidate, found
                break
    # Batch-longest (length=None), right side: never the Fixed(N) some tokenizer.json files ship.
    tokenizer.enable_padding(direction="right", pad_id=pad_id, pad_token=pad_token, length=None)
    tokenizer.enable_truncation(max_length=max_length, direction="right")
    return tokenizer


class OnnxEmbedder:
    """An ONNX sentence-embedding model on the CPU."""

    def __init__(
        self,
        name: str,
        model_path: Path,
        tokenizer_path: Path,
        config: OnnxModelConfig,
        *,
        threads: int,
        batch_size: int = BATCH_SIZE,
        max_batch_tokens: int = MAX_BATCH_TOKENS,
        quantize: bool = False,
        cache_dir: Path | None = None,
        cpu_mem_arena: bool = True,
    ) -> None:
        if batch_size < 1 or max_batch_tokens < 1:
            raise ValueError("batch_size and max_batch_tokens must be positive")
        self._name = name
        self._config = config
        self._threads = threads
        self._batch_size = batch_size
        self._max_batch_tokens = max_batch_tokens
        self._cpu_mem_arena = cpu_mem_arena
        self.model_path = model_path
        self.quantized = False
        self.gather_first = False  # opened from its copy with the word table looked up in int8
        self.quantize_report: q.QuantizeReport | None = None
        for path, what in ((model_path, "model"), (tokenizer_path, "tokenizer")):
            if not path.is_file():
                raise EmbedderError(f"the {what} file of {name} is missing: {path}")
        self._tokenizer = _load_tokenizer(tokenizer_path, config.max_length)
        self._whole: Tokenizer | None = None  # the same tokenizer without truncation, for windows
        self._whole_lock = threading.Lock()

        # Where the local copies go (the int8 one, the gather-first one): beside the model by default.
        self.cache_dir = cache_dir = cache_dir or model_path.parent
        reuse = self._cached_quantized(model_path, cache_dir) if quantize else None
        if reuse is not None:
            try:
                self._open(reuse)
                self._dim = self._probe_dim()
                self.quantized = True
            except EmbedderError as exc:
                log.warning("%s: the cached int8 copy is unusable (%s); rebuilding it", name, exc)
                q.remove_quietly(reuse)
                self.quantize_report = None
                reuse = None
        if reuse is None:
            # The gather-first copy: opened when made before, made when never tried (or found unusable).
            verdict = None if quantize else gather_first.read_verdict(model_path, cache_dir)
            if verdict is not None and verdict.made and self._open_gather_first(model_path, cache_dir):
                return
            self._open(model_path)
            self._dim = self._probe_dim()
            if quantize:
                self._quantize(model_path, cache_dir)
            elif verdict is None or verdict.made:
                self._make_gather_first(model_path, cache_dir)

    # -- the Embedder protocol -------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def min_score(self) -> float:
        return self._config.min_score

    @property
    def unrelated_score(self) -> float | None:
        return self._config.unrelated_score

    @property
    def reads_cjk(self) -> bool:
        return self._config.reads_cjk

    @property
    def config(self) -> OnnxModelConfig:
        return self._config

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        prefix = self._config.document_prefix
        return self._embed([prefix + t for t in texts] if prefix else list(texts))

    def embed_document_windows(self, heads: Sequence[str], bodies: Sequence[str]) -> list[Vectors]:
        """`WindowedEmbedder`: a text over `max_length` tokens as windows of its body, each after its head.

        The windows are consecutive (no overlap), each `max_length` tokens with the head; at most
        `MAX_WINDOWS` per text. All windows of all texts go through the model together, sorted by length.
        """
        prefix = self._config.document_prefix
        plans = [self._windows(prefix + head, body) for head, body in zip(heads, bodies, strict=True)]
        flat = self._embed([w for plan in plans for w in plan])
        out: list[Vectors] = []
        at = 0
        for plan in plans:
            out.append(flat[at : at + len(plan)])
            at += len(plan)
        return out

    def _whole_tokenizer(self) -> Tokenizer:
        with self._whole_lock:
            if self._whole is None:
                from tokenizers import Tokenizer

                whole = Tokenizer.from_str(self._tokenizer.to_str())
                whole.no_truncation()
                whole.no_padding()
                self._whole = whole
            return self._whole

    def _windows(self, head: str, body: str) -> list[str]:
        """The texts to embed for `head + body`: itself when the model reads it whole, else its windows."""
        limit = self._config.max_length
        text = head + body
        if len(text) <= limit:  # a token is at least one character: short texts need no tokenising
            return [text]
        tokenizer = self._whole_tokenizer()
        try:
            total = len(tokenizer.encode(text).ids)
            if total <= limit:
                return [text]
            specials = total - len(tokenizer.encode(text, add_special_tokens=False).ids)
            room = limit - specials - len(tokenizer.encode(head, add_special_tokens=False).ids)
            if room < MIN_WINDOW_TOKENS:
                return [text]
            offsets = tokenizer.encode(body, add_special_tokens=False).offsets
        except Exception as exc:
            raise EmbedderError(f"{self._name} could not tokenise a text: {exc}") from exc
        windows: list[str] = []
        for start in range(0, len(offsets), room):
            if len(windows) == MAX_WINDOWS:
                break
            end = min(len(offsets), start + room)
            windows.append(head + body[offsets[start][0] : offsets[end - 1][1]])
        return windows or [text]

    def embed_query(self, text: str) -> Vectors:
        return np.ascontiguousarray(self._embed([self._config.query_prefix + text])[0], dtype=np.float32)

    def __repr__(self) -> str:
        mode = "int8-dynamic" if self.quantized else "gather-first" if self.gather_first else "as shipped"
        return f"OnnxEmbedder({self._name!r}, {self.model_path}, {mode})"

    # -- loading ---------------------------------------------------------------------------------

    def _open(self, path: Path, *, fold: bool = True) -> None:
        try:
            session = _session(path, self._threads, self._cpu_mem_arena, fold)
        except Exception as exc:  # onnxruntime's errors (InvalidProtobuf, Fail, ...) share no public base
            raise EmbedderError(f"could not load the ONNX model of {self._name} ({path}): {exc}") from exc
        inputs = {i.name: i.type for i in session.get_inputs()}
        supported = {"input_ids", "attention_mask", "token_type_ids", "position_ids"}
        if "input_ids" not in inputs or set(inputs) - supported:
            raise EmbedderError(
                f"the ONNX model of {self._name} takes inputs {sorted(inputs)}; ragdown can feed "
                f"input_ids with any of {sorted(supported - {'input_ids'})}"
            )
        bad_types = {n: t for n, t in inputs.items() if t not in _INT_TYPES}
        if bad_types:
            raise EmbedderError(f"the ONNX model of {self._name} wants non-integer inputs {bad_types}")
        outputs = [o.name for o in session.get_outputs()]
        wanted = self._config.output
        if wanted is not None and wanted not in outputs:
            raise EmbedderError(f"the ONNX model of {self._name} has no output {wanted!r}; it has {outputs}")
        if wanted is None:
            wanted = next((n for n in ("last_hidden_state", "token_embeddings") if n in outputs), outputs[0])
        self._session = session
        self._input_types = {n: _INT_TYPES[t] for n, t in inputs.items()}
        self._output = wanted
        self._run_options = _run_options(self._cpu_mem_arena)
        heap.trim()

    def _probe_dim(self) -> int:
        try:
            dim = int(self._embed(["ragdown"]).shape[1])
        except EmbedderError:
            raise
        except Exception as exc:
            raise EmbedderError(f"the ONNX model of {self._name} could not embed a test text: {exc}") from exc
        if self._config.dim is not None and dim != self._config.dim:
            raise EmbedderError(
                f"the ONNX model of {self._name} gives {dim}-dimensional vectors, not the expected "
                f"{self._config.dim}"
            )
        return dim

    def _open_gather_first(self, source: Path, cache_dir: Path) -> bool:
        """Open the gather-first copy made before for this very source (`gather_first.py`); False when it
        is gone or no longer opens (then it is made again)."""
        copy, verdict = gather_first.cache_paths(source, cache_dir)
        if not copy.is_file():
            return False
        try:
            self._open(copy, fold=False)
            self._dim = self._probe_dim()
        except EmbedderError as exc:
            log.warning("%s: the gather-first copy is unusable (%s); making it again", self._name, exc)
            q.remove_quietly(copy)
            q.remove_quietly(verdict)
            return False
        self.gather_first = True
        return True

    def _make_gather_first(self, source: Path, cache_dir: Path) -> None:
        """Once per source: write the gather-first copy, check its vectors against the model's, and switch
        to it when they are the same. Never fails the load: the model as shipped stays open otherwise."""
        copy, _ = gather_first.cache_paths(source, cache_dir)
        try:
            reason = gather_first.write_copy(source, copy)
        except gather_first.Unavailable as exc:
            log.debug("%s: no gather-first copy: %s", self._name, exc)
            return
        except Exception as exc:  # a graph the rewrite cannot read or check: recorded, never tried again
            reason = f"the rewrite failed: {exc}"
        if reason is None:
            shipped = (self._session, self._input_types, self._output)
            reference = self._embed(list(gather_first.CHECK_TEXTS))
            try:
                self._open(copy, fold=False)
                drift = float(np.max(np.abs(self._embed(list(gather_first.CHECK_TEXTS)) - reference)))
            except EmbedderError as exc:
                drift, reason = float("inf"), f"the copy does not open: {exc}"
            if drift > gather_first.MAX_DRIFT:
                self._session, self._input_types, self._output = shipped
                q.remove_quietly(copy)
                reason = reason or f"its vectors differ from the model's by up to {drift:.2e}"
        made = reason is None
        try:
            gather_first.write_verdict(source, cache_dir, made, reason or "the same vectors")
        except OSError as exc:
            log.warning("%s: could not record the gather-first check in %s: %s", self._name, cache_dir, exc)
        if made:
            self.gather_first = True
            heap.trim()
            log.info(
                "%s: using a copy with its word table looked up in int8 (the same vectors, less memory)",
                self._name,
            )
        else:
            log.info("%s: no gather-first copy (%s); using the model as shipped", self._name, reason)

    def _cached_quantized(self, source: Path, cache_dir: Path) -> Path | None:
        dest, report_path = q.cache_paths(source, cache_dir)
        report = q.read_report(report_path, source)
        if report is None:
            return None
        self.quantize_report = report
        if report.accepted and dest.is_file():
            return dest
        if not report.accepted:
            log.info(
                "%s: the int8 copy was rejected before (%s); using the model as shipped",
                self._name,
                report.reason,
            )
        return None

    def _quantize(self, source: Path, cache_dir: Path) -> None:
        """Build and check int8 candidates; switch to the first close enough. Never fails the load."""
        if self.quantize_report is not None and not self.quantize_report.accepted:
            return
        dest, report_path = q.cache_paths(source, cache_dir)
        fingerprint = q.SourceFingerprint.of(source)
        shipped = (self._session, self._input_types, self._output)
        tried: list[str] = []
        try:
            log.info("%s: building a local int8 copy of %s (once)", self._name, source.name)
            with q.Quantizer(source, cache_dir) as quantizer:
                reference = self._embed(list(q.SAMPLE_TEXTS))
                for recipe in quantizer.RECIPES:
                    self._open(quantizer.build(recipe))
                    cosines = np.sum(reference * self._embed(list(q.SAMPLE_TEXTS)), axis=1)
                    self._session, self._input_types, self._output = shipped
                    worst, mean = float(cosines.min()), float(cosines.mean())
                    tried.append(f"{recipe}: min cosine {worst:.4f}")
                    if worst >= q.MIN_COSINE:
                        os.replace(quantizer.optimized.with_name(f"{recipe}.onnx"), dest)
                        report = q.QuantizeReport(fingerprint, True, recipe, worst, mean, "; ".join(tried))
                        break
                else:
                    report = q.QuantizeReport(fingerprint, False, None, None, None, "; ".join(tried))
        except q.QuantizeUnavailable as exc:
            self._session, self._input_types, self._output = shipped
            log.warning("%s: %s; using the model as shipped", self._name, exc)
            return
        except Exception as exc:  # a graph the quantiser cannot handle: record it, keep the model as shipped
            self._session, self._input_types, self._output = shipped
            q.remove_quietly(dest)
            report = q.QuantizeReport(fingerprint, False, None, None, None, f"quantisation failed: {exc}")
            self._record(report_path, report)
            log.warning("%s: %s; using the model as shipped", self._name, report.reason)
            return
        self._record(report_path, report)
        if not report.accepted:
            log.warning(
                "%s: no int8 copy was close enough (%s); using the model as shipped",
                self._name,
                report.reason,
            )
            return
        try:
            self._open(dest)
        except EmbedderError as exc:
            self._session, self._input_types, self._output = shipped
            log.warning("%s: could not open the int8 copy: %s", self._name, exc)
            return
        self.quantized = True
        log.info("%s: using the local int8 copy (%s)", self._name, report.reason)

    def _record(self, report_path: Path, report: q.QuantizeReport) -> None:
        self.quantize_report = report
        try:
            q.write_report(report_path, report)
        except OSError as exc:
            log.warning("%s: could not record the int8 check in %s: %s", self._name, report_path, exc)

    # -- embedding -------------------------------------------------------------------------------

    def _embed(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: npt.NDArray[np.float32] | None = None
        for start in range(0, len(order), self._batch_size):
            rows = order[start : start + self._batch_size]
            try:
                encodings = self._tokenizer.encode_batch([texts[i] for i in rows])
            except Exception as exc:
                raise EmbedderError(f"{self._name} could not tokenise a batch: {exc}") from exc
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            pooled = self._run_split(ids, mask)
            if out is None:
                out = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
            out[rows] = pooled
            tell_progress(start + len(rows), len(texts))
        assert out is not None
        return l2_normalize(out)

    def _run_split(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """Forward passes over rows sorted by length, each at most `max_batch_tokens` padded tokens."""
        width = max(1, ids.shape[1])
        per_pass = max(1, self._max_batch_tokens // width)
        parts = []
        for start in range(0, ids.shape[0], per_pass):
            sub_mask = mask[start : start + per_pass]
            used = int(sub_mask.sum(axis=1).max()) if sub_mask.size else 0
            used = max(1, used)
            parts.append(self._forward(ids[start : start + per_pass, :used], sub_mask[:, :used]))
        return np.concatenate(parts, axis=0)

    def _forward(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        feeds: dict[str, npt.NDArray[np.integer[Any]]] = {}
        for name, dtype in self._input_types.items():
            if name == "input_ids":
                value: npt.NDArray[np.integer[Any]] = ids
            elif name == "attention_mask":
                value = mask
            elif name == "token_type_ids":
                value = np.zeros_like(ids)
            else:  # position_ids
                value = np.broadcast_to(np.arange(ids.shape[1], dtype=np.int64), ids.shape)
            feeds[name] = np.ascontiguousarray(value, dtype=dtype)
        try:
            (hidden,) = self._session.run([self._output], feeds, self._run_options)
        except Exception as exc:
            raise EmbedderError(f"the ONNX model of {self._name} failed on a batch: {exc}") from exc
        hidden_states: npt.NDArray[np.float32] = np.asarray(hidden, dtype=np.float32)
        if hidden_states.ndim == 2:  # already pooled (e.g. a `sentence_embedding` output)
            return hidden_states
        if hidden_states.ndim != 3:
            raise EmbedderError(
                f"the ONNX output {self._output!r} of {self._name} has shape {hidden_states.shape}"
            )
        if self._config.pooling == "cls":
            return np.ascontiguousarray(hidden_states[:, 0, :], dtype=np.float32)
        weights = mask.astype(np.float32)[:, :, None]
        summed: npt.NDArray[np.float32] = (hidden_states * weights).sum(axis=1)
        counts: npt.NDArray[np.float32] = np.maximum(weights.sum(axis=1), np.float32(1.0))
        return np.asarray(summed / counts, dtype=np.float32)
