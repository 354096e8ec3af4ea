"""A one-time local copy of an ONNX model whose word-embedding table is stored int8 and turned into float32
before the look-up, with the look-up moved first: the same vectors, ~35 MB less memory for `minilm`.

The shipped `minilm` (and other weight-only int8 exports) computes `Gather(Mul(Cast(W_q), scale), ids)`:
the whole table dequantised, then the rows of the input's tokens taken. ONNX Runtime folds the constant
part at load, so the session keeps the table as float32 (30,522 x 384: 47 MB) and builds it through a
~90 MB peak. Taking the rows first, `Mul(Cast(Gather(W_q, ids)), Gather(scale, ids))`, computes the same
float32 products of the same int8 values and per-row scales, so the vectors are the same, bit for bit
(checked on `CHECK_TEXTS` before the copy is used); only the table stays int8 (12 MB). The copy is opened
without constant folding (`onnx.py`), so its MatMul weights stay int8 too (30 MB less again); its kernels
then sum some products in another order: the vectors stay within 2e-7 of the model's.

The copy and a small JSON verdict live beside the int8 copy's (`quantize.cache_paths`' folder), keyed like
it by the source file's size, mtime and onnxruntime's version: a model without such a table (the float
models) is read once and never again. Editing the graph needs the `onnx` package (the `offline` extra
installs it); without it the model as shipped is used.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragdown.embedders.quantize import SAMPLE_TEXTS, SourceFingerprint, write_json

log = logging.getLogger(__name__)

RECIPE = "gather-first/1"
SUFFIX = ".gather-first"
_INT8_TYPES = (2, 3)  # onnx.TensorProto.UINT8, INT8
# What the copy is checked on before it is used: every token of every text goes through the rewritten
# look-up, so a few short texts show any difference (the long ones would only pad the batch: 4x the time).
CHECK_TEXTS: tuple[str, ...] = SAMPLE_TEXTS[:4]
# The most a vector of the copy may differ from the model's, per component: the products are the same; the
# copy's session runs without constant folding (`onnx._session`), whose kernels order some sums otherwise:
# up to 1.5e-7 measured.
MAX_DRIFT = 1e-6


class Unavailable(RuntimeError):
    """The copy cannot be made here (no `onnx` package); the next start tries again."""


@dataclass(frozen=True)
class Verdict:
    """What the one-time rewrite found; `made` says whether the copy is there to use."""

    fingerprint: SourceFingerprint
    made: bool
    reason: str


def cache_paths(source: Path, cache_dir: Path) -> tuple[Path, Path]:
    """`(the copy, its verdict JSON)` for a source model in a cache folder."""
    stem = source.name.removesuffix(".onnx")
    return cache_dir / f"{stem}{SUFFIX}.onnx", cache_dir / f"{stem}{SUFFIX}.json"


def fingerprint(source: Path) -> SourceFingerprint:
    return SourceFingerprint.of(source, recipe=RECIPE)


def read_verdict(source: Path, cache_dir: Path) -> Verdict | None:
    """The recorded verdict for this very source file and runtime, or None."""
    _, verdict_path = cache_paths(source, cache_dir)
    try:
        data = json.loads(verdict_path.read_text(encoding="utf-8"))
        verdict = Verdict(SourceFingerprint(**data["fingerprint"]), bool(data["made"]), str(data["reason"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return verdict if verdict.fingerprint == fingerprint(source) else None


def write_verdict(source: Path, cache_dir: Path, made: bool, reason: str) -> None:
    write_json(cache_paths(source, cache_dir)[1], asdict(Verdict(fingerprint(source), made, reason)))


def write_copy(source: Path, dest: Path) -> str | None:
    """Write the rewritten copy to `dest` (atomically). None when written; else why there is nothing to
    rewrite (no int8 table dequantised before a look-up, weights in side files). `Unavailable` without
    the `onnx` package."""
    try:
        import onnx
    except ImportError:
        raise Unavailable("the onnx package is not installed") from None
    model = onnx.load(str(source), load_external_data=False)
    graph = model.graph
    if any(i.data_location == onnx.TensorProto.EXTERNAL for i in graph.initializer):
        return "its weights are in side files"
    rewritten = _gather_first(onnx, graph)
    if not rewritten:
        return "no int8 table is turned into float32 before a look-up"
    onnx.checker.check_model(model)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        onnx.save(model, str(tmp))
        os.replace(tmp, dest)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    log.debug("%s: looked up first: %s", source.name, ", ".join(rewritten))
    return None


def _gather_first(onnx: Any, graph: Any) -> list[str]:
    """Rewrite each `Gather(Mul(Cast(table_q), scale), ids)` of the graph in place; the tables' names."""
    inits = {i.name: i for i in graph.initializer}
    consumers: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            consumers[name] = consumers.get(name, 0) + 1
    made_by = {out: node for node in graph.node for out in node.output}
    done: list[str] = []
    for gather in list(graph.node):
        if gather.op_type != "Gather" or any(a.name == "axis" and a.i != 0 for a in gather.attribute):
            continue
        mul = made_by.get(gather.input[0])
        if mul is None or mul.op_type != "Mul" or consumers.get(mul.output[0]) != 1:
            continue
        cast = next((made_by[i] for i in mul.input if i in made_by and made_by[i].op_type == "Cast"), None)
        if cast is None or consumers.get(cast.output[0]) != 1:
            continue
        table = inits.get(cast.input[0])
        scale_name = next((i for i in mul.input if i != cast.output[0]), None)
        scale = inits.get(scale_name) if scale_name is not None else None
        if table is None or table.data_type not in _INT8_TYPES or len(table.dims) != 2 or scale is None:
            continue
        if list(scale.dims) != [table.dims[0], 1]:  # one scale per row: the rows' scales are looked up too
            continue
        ids, out = gather.input[1], gather.output[0]
        base = gather.name or out
        to = next(a.i for a in cast.attribute if a.name == "to")
        replacement = [
            onnx.helper.make_node(
                "Gather", [table.name, ids], [f"{base}/rows_q"], name=f"{base}/rows", axis=0
            ),
            onnx.helper.make_node("Cast", [f"{base}/rows_q"], [f"{base}/rows_f"], name=f"{base}/cast", to=to),
            onnx.helper.make_node(
                "Gather", [scale.name, ids], [f"{base}/scales"], name=f"{base}/scales", axis=0
            ),
            onnx.helper.make_node("Mul", [f"{base}/rows_f", f"{base}/scales"], [out], name=f"{base}/mul"),
        ]
        gone = {cast.output[0], mul.output[0], out}
        at = next(i for i, n in enumerate(graph.node) if n.output[0] == out) - 2  # the gather's place, less 2
        nodes = [n for n in graph.node if n.output[0] not in gone]
        del graph.node[:]
        graph.node.extend(nodes[:at] + replacement + nodes[at:])
        made_by = {o: node for node in graph.node for o in node.output}
        done.append(table.name)
    return done
