"""One-time local dynamic int8 quantisation of an ONNX embedding model, cached and verified.

Many published "int8" ONNX embedders are weight-only (the weights are stored as int8 and dequantised to
float before every MatMul), which runs at fp32 speed. Re-quantising them once with onnxruntime's
`quantize_dynamic` (int8 weights, per-channel scales, MatMulInteger at run time), after a basic graph
optimisation has folded the dequantisation away, runs much faster on CPUs with int8 dot products.
Per-tensor scales drift too far (cosine ~0.95 to the float model on all-MiniLM-L6-v2), so only per-channel
recipes are tried, fastest first, and a copy is used only when its vectors of every `SAMPLE_TEXTS` entry
are within cosine `MIN_COSINE` (0.99) of the model as shipped. The verdict is recorded in a small JSON
beside the copy, keyed by the source file's size and mtime, the recipe set and the onnxruntime version,
so the check runs once per model and runtime.

`SAMPLE_TEXTS` are chunk- and query-like texts; degenerate inputs (an empty string, a two-letter word)
drift more (~0.98 on all-MiniLM-L6-v2) but never reach the model in ragdown: every chunk carries its
breadcrumb and the hook ignores prompts under 12 characters.

`onnxruntime.quantization` needs the `onnx` package, which ragdown does not require; without it the option
is reported as unavailable and the model as shipped is used.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

RECIPE = "ort-basic-opt+quantize_dynamic(qint8,per_channel):matmul|matmul-ffn-float/1"
MIN_COSINE = 0.99
SUFFIX = ".int8-dynamic"

SAMPLE_TEXTS: tuple[str, ...] = (
    "How do I restore the nightly Postgres backup onto a fresh replica?",
    "Backups\n\nNightly snapshots are taken at 02:00 UTC and kept for 30 days in the cold bucket.",
    "Backups › Restore\n\nRun `pg_restore --clean --if-exists -d app latest.dump` twice; the first pass "
    "creates the roles, the second the grants.",
    "Kafka consumer lag alerts fire when a partition falls more than 10,000 messages behind.",
    "On-call › Rotation\n\nThe on-call engineer rotates every Monday at 09:00; escalate to the platform lead "
    "after 30 minutes without an acknowledgement.",
    "TLS certificates are renewed by cert-manager 30 days before expiry; check `kubectl get certificate -A`.",
    "what's the weather in Paris tomorrow",
    "a recipe for carbonara with guanciale, pecorino and egg yolks",
    "Release checklist\n\n- [x] rotate the API keys\n- [ ] update the runbook\n- [ ] tell the support team",
    "Services\n\n| service | port | owner |\n| --- | --- | --- |\n| billing | 8443 | payments |",
    "Sicherung\n\nDie Datenbank wird jede Nacht gesichert; die Sicherung liegt im Objektspeicher.",
    "Migrations › Failures\n\n"
    + "error: connection refused (ECONNREFUSED 10.0.3.7:5432) while running migrations; retrying. " * 8,
)


class QuantizeUnavailable(RuntimeError):
    """`onnxruntime.quantization` cannot run here (the `onnx` package is missing)."""


@dataclass(frozen=True)
class SourceFingerprint:
    source: str
    size: int
    mtime_ns: int
    onnxruntime: str
    recipe: str

    @classmethod
    def of(cls, source: Path, recipe: str = RECIPE) -> SourceFingerprint:
        import onnxruntime as ort  # imported where used: ~25-100 ms, and `hash` never needs it

        stat = source.stat()
        return cls(str(source.resolve()), stat.st_size, stat.st_mtime_ns, ort.__version__, recipe)


@dataclass(frozen=True)
class QuantizeReport:
    """What the one-time check found; `accepted` decides whether the copy is used."""

    fingerprint: SourceFingerprint
    accepted: bool
    recipe: str | None
    min_cosine: float | None
    mean_cosine: float | None
    reason: str


def cache_paths(source: Path, cache_dir: Path) -> tuple[Path, Path]:
    """`(quantised model, report JSON)` for a source model in a cache folder."""
    stem = source.name.removesuffix(".onnx")
    return cache_dir / f"{stem}{SUFFIX}.onnx", cache_dir / f"{stem}{SUFFIX}.json"


def read_report(report_path: Path, source: Path) -> QuantizeReport | None:
    """The recorded verdict, or `None` when there is none or it was made for another source or runtime."""
    try:
        data = json.loads(report_path.read_text(encoding="utf-8"))
        fingerprint = SourceFingerprint(**data["fingerprint"])
        report = QuantizeReport(
            fingerprint=fingerprint,
            accepted=bool(data["accepted"]),
            recipe=None if data["recipe"] is None else str(data["recipe"]),
            min_cosine=None if data["min_cosine"] is None else float(data["min_cosine"]),
            mean_cosine=None if data["mean_cosine"] is None else float(data["mean_cosine"]),
            reason=str(data["reason"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if report.fingerprint != SourceFingerprint.of(source):
        return None
    return report


def write_report(report_path: Path, report: QuantizeReport) -> None:
    write_json(report_path, asdict(report))


def write_json(path: Path, data: object) -> None:
    """A local copy's verdict file, replaced whole (a reader never sees half of one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _has_external_data(source: Path) -> bool:
    """Whether the model keeps its weights in side files (`model.onnx_data`, `model.onnx.data`, ...)."""
    return any(p.name != source.name for p in source.parent.glob(f"{source.name}*data*"))


class _DropQuantizerChatter(logging.Filter):
    """`onnxruntime.quantization` logs every tensor it skips on the root logger; keep that out of ours."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "onnxruntime/quantization/" not in record.pathname.replace("\\", "/")


class Quantizer:
    """Builds int8 candidates of one source model in a private temporary folder (removed on exit).

    Recipes, fastest first (the caller takes the first whose vectors pass the check):
    - `matmul`: every MatMul with constant weights, per-channel int8;
    - `matmul-ffn-float`: the same, except the feed-forward down-projections (MatMuls fed by the GELU's
      output, whose activations have the outliers that int8 handles worst), which stay float.
    """

    RECIPES: tuple[str, ...] = ("matmul", "matmul-ffn-float")

    def __init__(self, source: Path, workdir: Path) -> None:
        self.source = source
        self.workdir = workdir
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.optimized = workdir / "optimized.onnx"
        self._filter = _DropQuantizerChatter()

    def __enter__(self) -> Quantizer:
        try:
            importlib.import_module("onnx")  # onnxruntime.quantization needs it
        except ImportError as exc:
            raise QuantizeUnavailable(
                f"local int8 quantisation needs the onnx package (pip install onnx): {exc}"
            ) from exc
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._tmp = tempfile.TemporaryDirectory(prefix=".ragdown-quantize-", dir=self.workdir)
        logging.getLogger().addFilter(self._filter)
        try:
            self._optimize()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _optimize(self) -> None:
        assert self._tmp is not None
        import onnxruntime as ort

        self.optimized = Path(self._tmp.name) / "optimized.onnx"
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(self.optimized)
        if _has_external_data(self.source) or self.source.stat().st_size > 1_000_000_000:
            options.add_session_config_entry(
                "session.optimized_model_external_initializers_file_name", "optimized.onnx_data"
            )
            options.add_session_config_entry(
                "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
            )
        # Creating the session writes the optimised graph: constant folding turns weight-only int8
        # chains ("Cast/DequantizeLinear -> Mul -> MatMul") back into float initializers to re-quantise.
        ort.InferenceSession(str(self.source), options, providers=["CPUExecutionProvider"])

    def __exit__(self, *exc: object) -> None:
        logging.getLogger().removeFilter(self._filter)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def build(self, recipe: str) -> Path:
        """The candidate for `recipe`, inside the temporary folder."""
        onnx = importlib.import_module("onnx")
        from onnxruntime.quantization import QuantType, quantize_dynamic

        excluded: list[str] = []
        if recipe == "matmul-ffn-float":
            graph = onnx.load(str(self.optimized), load_external_data=False).graph
            constants = {init.name for init in graph.initializer}
            producer = {out: node for node in graph.node for out in node.output}
            activations = {"Gelu", "FastGelu", "BiasGelu", "Mul", "Erf", "Relu", "Tanh"}
            excluded = [
                node.name
                for node in graph.node
                if node.op_type == "MatMul"
                and node.input[1] in constants
                and node.input[0] in producer
                and producer[node.input[0]].op_type in activations
            ]
        elif recipe != "matmul":
            raise ValueError(f"unknown quantisation recipe {recipe!r}")
        out = self.optimized.with_name(f"{recipe}.onnx")
        quantize_dynamic(
            self.optimized,
            out,
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=excluded,
            use_external_data_format=False,
        )
        return out


def remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
