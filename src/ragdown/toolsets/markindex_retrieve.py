"""MarkIndex's `retrieve()` as a tool of the `markindex` set: the model configured for the server
(`RAGDOWN_LLM_MODEL`, at `RAGDOWN_LLM_URL` with `RAGDOWN_LLM_API_KEY`) walks the set's five tools over the
endpoint's scope and the answer is evidence only, original lines re-read by range (`toolsets/markindex_loop.py`), with
usage, steps and why it stopped, in MarkIndex's envelope.

The seed names the library function `retrieve` and no MCP tool for it, so the tool takes that name and the
function's options (`maxSteps`, `maxInputTokens`) as `max_steps` / `max_input_tokens`. It is listed only where
a model is configured (`ToolSpec.needs_model`): without one nothing is ever sent anywhere.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ragdown.core.errors import Refusal
from ragdown.tools.base import Args, ToolSpec
from ragdown.tools.context import ToolContext
from ragdown.toolsets.markindex import MAX_ARG, READ_ONLY, envelope, failure_envelope

MAX_STEPS = 50
DEFAULT_MAX_STEPS = 12
DEFAULT_MAX_INPUT_TOKENS = 200_000
EVIDENCE_CHARS = 80_000  # of text in one answer, under MarkIndex's 95,000-character budget


class RetrieveArgs(Args):
    question: Annotated[str, Field(min_length=1, max_length=MAX_ARG, description="What evidence to find.")]
    max_steps: Annotated[int, Field(ge=1, le=MAX_STEPS, description="Most model calls (default 12).")] = (
        DEFAULT_MAX_STEPS
    )
    max_input_tokens: Annotated[
        int, Field(ge=1, le=10_000_000, description="Stop once this many input tokens are spent.")
    ] = DEFAULT_MAX_INPUT_TOKENS


def run_retrieve(ctx: ToolContext, a: RetrieveArgs) -> str:
    from ragdown.llm.providers import open_model
    from ragdown.toolsets.markindex_loop import retrieve

    settings = ctx.runtime.settings
    if not settings.llm_model:  # not listed then; a guard all the same
        raise Refusal("unavailable", "no model is configured for this server (RAGDOWN_LLM_MODEL)", "NO_MODEL")
    model = open_model(settings.llm_model, base_url=settings.llm_url, api_key=settings.llm_api_key)
    try:
        result = retrieve(ctx, model, a.question, max_steps=a.max_steps, max_input_tokens=a.max_input_tokens)
    finally:
        model.close()
    data = result.as_json()
    data["evidence"] = _fitted(data["evidence"])
    steps = [{"tool": "get_node_content", "why": "read around a piece of evidence before citing it"}]
    return envelope(data, steps)


def _fitted(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each piece with its citation, the texts cut at a line to stay inside the answer budget: a piece cut
    short ends at its last line shown (`end_line`) and says `truncated`; pieces past the budget are left out."""
    left = EVIDENCE_CHARS
    out: list[dict[str, Any]] = []
    for e in evidence:
        lines = e["text"].split("\n")
        kept: list[str] = []
        for line in lines:
            if len(line) + 1 > left:
                break
            kept.append(line)
            left -= len(line) + 1
        if not kept:
            break
        piece = {**e, "text": "\n".join(kept), "end_line": e["start_line"] + len(kept) - 1}
        if len(kept) < len(lines):
            piece["truncated"] = True
        piece["cite"] = f"[{piece['doc_path']}, L{piece['start_line']}-{piece['end_line']}]"
        out.append(piece)
        if len(kept) < len(lines):
            break
    return out


async def _handler(ctx: ToolContext, a: RetrieveArgs) -> str:
    await ctx.ready()
    return str(await ctx.run(run_retrieve, ctx, a))


RETRIEVE = ToolSpec(
    "retrieve",
    "Let the server's model walk the five tools to find evidence for a question: returns the original lines "
    "it found, each as [doc_path, L<start>-<end>] with its title path (never model-written text), with usage "
    "and why it stopped.",
    RetrieveArgs,
    READ_ONLY,
    _handler,
    failure=failure_envelope,
    needs_model=True,
)
