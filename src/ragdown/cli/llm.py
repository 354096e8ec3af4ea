"""MarkIndex's model commands (seed 001): `ragdown retrieve DIR QUESTION --model P:M`, and the options
`index` takes for summaries (`--summary-model P:M [--estimate] [--summary-rpm N] [--summary-tpm N]`).

`retrieve`'s model is `--model`, else `RAGDOWN_LLM_MODEL`, and with neither it is refused; `index` makes
summaries only when `--summary-model` names the model: nothing is sent anywhere unless a model is named. The endpoint and key are
`RAGDOWN_LLM_URL` and `RAGDOWN_LLM_API_KEY` (`core/config.py`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdown.cli.markindex import add_db

if TYPE_CHECKING:
    from ragdown.core.config import Settings
    from ragdown.llm.providers import ChatModel
    from ragdown.llm.ratelimit import RateLimiter


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"a positive number, not {value}")
    return value


def add_rate(parser: argparse.ArgumentParser, prefix: str = "") -> None:
    parser.add_argument(
        f"--{prefix}rpm",
        type=positive,
        metavar="N",
        help="at most N model requests in any 60 s (client-side)",
    )
    parser.add_argument(
        f"--{prefix}tpm",
        type=positive,
        metavar="N",
        help="at most N estimated input tokens in any 60 s (client-side; a larger request goes alone)",
    )


def add_summary_options(ix: argparse.ArgumentParser) -> None:
    ix.add_argument(
        "--summary-model",
        metavar="P:M",
        help="summarise nodes and describe documents with this model (openai:<model> or anthropic:<model>); "
        "cached by node text, so an unchanged node is never sent again",
    )
    ix.add_argument(
        "--estimate",
        action="store_true",
        help="with --summary-model: print the calls and tokens, call nothing",
    )
    add_rate(ix, "summary-")


def register(sub: Any) -> None:
    rt = sub.add_parser(
        "retrieve",
        help="a model walks MarkIndex's tools over DIR and the evidence it found is printed (original lines)",
    )
    rt.add_argument("dir", type=Path)
    rt.add_argument("question")
    rt.add_argument(
        "--model", metavar="P:M", help="openai:<model> or anthropic:<model> (default RAGDOWN_LLM_MODEL)"
    )
    rt.add_argument(
        "--max-steps", type=positive, default=12, metavar="N", help="most model calls (default 12)"
    )
    rt.add_argument(
        "--max-input-tokens",
        type=positive,
        default=200_000,
        metavar="N",
        help="stop past this many input tokens",
    )
    add_rate(rt)
    rt.add_argument("--json", action="store_true", help="evidence, usage and stop reason as JSON")
    add_db(rt)


def model_for(
    settings: Settings, spec: str | None, limiter: RateLimiter | None = None, what: str = "--model"
) -> ChatModel:
    """The chat model `spec` (else `RAGDOWN_LLM_MODEL`) names; a clear refusal when neither names one."""
    from ragdown.core.config import ConfigError
    from ragdown.llm.providers import open_model

    chosen = spec or settings.llm_model
    if not chosen:
        raise ConfigError(
            f"this needs a model: give {what} <provider>:<model> (openai:<model>, anthropic:<model>) or set "
            "RAGDOWN_LLM_MODEL; nothing is sent anywhere without one"
        )
    return open_model(chosen, base_url=settings.llm_url, api_key=settings.llm_api_key, limiter=limiter)


def run_retrieve(settings: Settings, args: argparse.Namespace) -> int:
    import json

    from ragdown.access.scope import Scope
    from ragdown.cli.local import open_engine
    from ragdown.engine.runtime import Runtime
    from ragdown.llm.ratelimit import RateLimiter
    from ragdown.tools.context import ToolContext
    from ragdown.toolsets.markindex_loop import retrieve

    model = model_for(settings, args.model, RateLimiter(args.rpm, args.tpm))
    try:
        engine = open_engine(settings, args.dir)
        try:
            if engine.indexer is not None:
                engine.sync()
            ctx = ToolContext(runtime=Runtime(settings, engine), scope=Scope(root=engine.root, folder=""))
            result = retrieve(
                ctx, model, args.question, max_steps=args.max_steps, max_input_tokens=args.max_input_tokens
            )
        finally:
            engine.close()
    finally:
        model.close()
    if args.json:
        sys.stdout.write(json.dumps(result.as_json(), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(result.as_text())
    return 0


def check_summary_args(args: argparse.Namespace) -> None:
    """Before `index` reads anything: the summary options make sense together, the model is well named."""
    from ragdown.core.config import ConfigError
    from ragdown.llm.providers import parse_spec

    if not args.summary_model:
        if args.estimate or args.summary_rpm or args.summary_tpm:
            raise ConfigError("--estimate, --summary-rpm and --summary-tpm go with --summary-model P:M")
        return
    parse_spec(args.summary_model)


def run_summaries(settings: Settings, args: argparse.Namespace) -> None:
    """After `index`: the summaries `--summary-model` asks for (or, with `--estimate`, their cost)."""
    if not args.summary_model:  # before any import: a plain index loads nothing of this
        return
    from ragdown.cli.local import open_engine
    from ragdown.llm.ratelimit import RateLimiter
    from ragdown.llm.summaries import estimate_text, plan, summarise
    from ragdown.storage.summaries import FILE_NAME, Placement, SummaryStore

    out = sys.stderr if args.json else sys.stdout  # --json keeps the report on stdout's last line
    engine = open_engine(settings, args.dir)
    try:
        existing = SummaryStore.open_existing(engine.data_dir)
        placed: list[Placement] = []
        try:
            todo, cached = plan(engine.require_store(), engine.root, existing, placed)
            if existing is not None and not args.estimate:
                existing.place(placed)  # search and descriptions follow the documents as they are now
        finally:
            if existing is not None:
                existing.close()
        if args.estimate or not todo:
            out.write(estimate_text(todo, cached, args.summary_model))
            return
        model = model_for(settings, args.summary_model, RateLimiter(args.summary_rpm, args.summary_tpm))
        cache = SummaryStore(engine.data_dir / FILE_NAME)
        try:
            made, failed = summarise(todo, cache, model)
            cache.place(placed)
        finally:
            cache.close()
            model.close()
        out.write(f"summaries: {made} made, {cached} cached, {failed} failed\n")
    finally:
        engine.close()
