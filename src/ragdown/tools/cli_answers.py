"""What `ragdown search` and `ragdown index` print, computed in one place for two callers.

The CLI runs them on an engine of its own when no process serves the folder. When a primary already serves
it (`ragdown stdio`, or another `ragdown index`), the CLI sends the command over the primary's socket
(`storage/sqlite/primary.py`: `{"op": "search", ...}` or `{"op": "index", ...}`, one JSON line each way) and the
primary answers with these same functions, on its loaded model and open index, with the CLI's own settings
(the request carries the variables `Settings.from_env` reads). So the output is the same either way, and
the CLI never loads the model again.

A primary answers only when it would give exactly what the CLI alone would: same folder, one-folder mode, no
extra ignore patterns, and the embedder the CLI's settings name, loaded. Otherwise it says why and the CLI
works alone, as it always did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdown.core.config import SEARCH_TOP_K, ConfigError, Settings
from ragdown.core.errors import Refusal
from ragdown.core.paths import normalise_prefix
from ragdown.engine.runtime import Runtime
from ragdown.search.format import cli_line, recall_json
from ragdown.search.tags import normalise_tag
from ragdown.storage.filter_sql import FileFilter

if TYPE_CHECKING:
    from ragdown.engine.engine import Engine

# The ops a primary answers for the CLI (beside `sync`, `ping` and `watch`).
CLI_OPS = ("search", "index")


@dataclass(frozen=True)
class SearchRequest:
    """`ragdown search DIR QUERY [--top-k] [--path-prefix] [--tag] [--json]`."""

    query: str
    top_k: int
    path_prefix: str | None = None
    tag: str | None = None
    as_json: bool = False


def check_search(request: SearchRequest) -> None:
    """Refuse what `ragdown_recall` refuses, with its message: the arguments are checked by the tool's own
    definition (`RecallArgs`), so the CLI takes exactly what MCP and REST take, and a bad one is a `Refusal`
    (`ragdown: ragdown_recall: invalid arguments (...)`, exit 2).

    The model is loaded only for arguments it may refuse: a query that is not blank and a `top_k` within
    `SEARCH_TOP_K`, the bounds `RecallArgs` is built from, are all it asks of these, and a search that passes
    them keeps the CLI from importing pydantic and the tools (`tests/cli/test_cli_imports.py`)."""
    low, high = SEARCH_TOP_K
    if request.query.strip() and low <= request.top_k <= high:
        return
    from ragdown.tools.read import RECALL

    RECALL.parse(
        {
            "query": request.query,
            "top_k": request.top_k,
            "path_prefix": request.path_prefix,
            "tag": request.tag,
        }
    )


def search_output(settings: Settings, engine: Engine, request: SearchRequest) -> str:
    """Check (as `ragdown_recall` does), sync (in the primary), search and format: exactly what
    `ragdown search` writes to stdout."""
    check_search(request)
    if engine.indexer is not None:
        engine.sync()
    flt = FileFilter(
        prefixes=(normalise_prefix(request.path_prefix),) if request.path_prefix else (),
        tag=normalise_tag(request.tag) if request.tag else None,
    )
    opts = Runtime(settings, engine).search_options(request.top_k)
    hits = engine.search(request.query, flt, opts)
    if request.as_json:
        return recall_json(hits, settings.text_limit) + "\n"
    if not hits:
        return "No matching documents.\n"
    return "".join(cli_line(hit) + "\n" for hit in hits)


def sync_warnings(engine: Engine) -> list[str]:
    """The warnings (`<path>: <what>`) of the files the engine's last sync parsed; none in a reader."""
    last = engine.indexer.last_sync if engine.indexer is not None else None
    return list(last.warnings) if last is not None else []


def index_output(report: Mapping[str, Any], as_json: bool, warnings: Sequence[str] = ()) -> str:
    """What `ragdown index` writes to stdout for a sync report: as MarkIndex does, a `warning <path>: …`
    line per warning (a converter's page break read as a heading, …) before the counts, or `warnings` in
    the JSON report."""
    if as_json:
        import json

        return json.dumps({**report, "warnings": list(warnings)}, separators=(",", ":")) + "\n"
    return "".join(f"warning {w}\n" for w in warnings) + (
        f"{report['added']} added, {report['updated']} updated, {report['removed']} removed, "
        f"{report['unchanged']} unchanged; {report['chunks']} chunks in {report['ms']} ms\n"
    )


def _embedder_identity(settings: Settings, spec: str) -> tuple[object, ...]:
    """What decides which embedder a process loads (and so which vectors a query gets)."""
    return (
        spec,
        settings.embedder_chosen,
        settings.quantize,
        str(settings.models_dir),
        settings.hf_endpoint,
        settings.embedding_url,
    )


def why_not(engine: Engine, settings: Settings, root: Path) -> str | None:
    """Why this primary would not answer exactly as the CLI alone would; None when it can."""
    if engine.folders or engine.mode != "stdio":
        return "this primary serves folders (ragdown serve)"
    if engine.root != root:
        return f"this primary serves {engine.root}, not {root}"
    if engine.ignore:
        return "this primary indexes with extra --ignore patterns"
    if engine.error or engine.embedder is None or engine.embedder_error:
        return "this primary has no embedder loaded"
    ours = _embedder_identity(engine.settings, engine.embedder_spec or engine.settings.embedder)
    if _embedder_identity(settings, settings.embedder) != ours:
        return "the CLI's settings name another embedder than this primary's"
    return None


def answer(engine: Engine, request: Mapping[str, Any]) -> dict[str, Any]:
    """A primary's answer to a CLI op: `{"ok": true, "output": text}`, or `{"ok": false, "error": why}`
    (the CLI then works alone)."""
    env, root = request.get("env"), request.get("root")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        return {"ok": False, "error": "env must be an object of strings"}
    if not isinstance(root, str):
        return {"ok": False, "error": "root must be a path"}
    try:
        settings = Settings.from_env(env).with_docs_dir(Path(root))
    except ConfigError as err:
        return {"ok": False, "error": str(err)}
    why = why_not(engine, settings, Path(root))
    if why is not None:
        declined: dict[str, Any] = {"ok": False, "error": why}
        if engine.root != Path(root) or engine.folders:  # this data dir holds another index than the CLI's
            declined["serves"] = str(engine.root)
            declined["mode"] = engine.mode
        return declined
    op = request.get("op")
    if op == "index":
        report = engine.sync(bool(request.get("full")))
        output = index_output(report, bool(request.get("json")), sync_warnings(engine))
    elif op == "search":
        query, top_k = request.get("query"), request.get("top_k")
        path_prefix, tag = request.get("path_prefix"), request.get("tag")
        if not isinstance(query, str) or not isinstance(top_k, int) or isinstance(top_k, bool):
            return {"ok": False, "error": "query must be a string and top_k a whole number"}
        if not (path_prefix is None or isinstance(path_prefix, str)) or not (
            tag is None or isinstance(tag, str)
        ):
            return {"ok": False, "error": "path_prefix and tag must be strings"}
        try:
            output = search_output(
                settings,
                engine,
                SearchRequest(query, top_k, path_prefix, tag, bool(request.get("json"))),
            )
        except Refusal as err:  # the CLI, alone, refuses it with the same message
            return {"ok": False, "error": err.message}
    else:
        return {"ok": False, "error": f"unknown op {op!r}"}
    return {"ok": True, "output": output}
