"""`ragdown_context`: the sections a hook adds to a prompt. The gates themselves (behaviour spec A8) live in
`search/hook.py`; this module is the tool: its arguments, the settings layers, the query log and the answer.
"""

from __future__ import annotations

import json
import time
from typing import Annotated, Literal

from pydantic import Field

from ragdown.core.config import bounds
from ragdown.search.format import log_hits
from ragdown.search.hook import HookResult, run_hook
from ragdown.storage.hook_memory import HookMemory
from ragdown.tools.base import Annotations, Args, ToolSpec
from ragdown.tools.context import ToolContext


class ContextArgs(Args):
    prompt: Annotated[str, Field(description="The user's message.")] = ""
    session_id: Annotated[str | None, Field(description="Sections are sent once per session.")] = None
    reset: Annotated[bool, Field(description="Forget what this session was given first.")] = False
    format: Literal["text", "claude-code"] = "text"
    top_k: Annotated[int | None, Field(**bounds("hook.top_k"))] = None
    min_score: Annotated[float | None, Field(**bounds("hook.min_score"))] = None
    min_ratio: Annotated[float | None, Field(**bounds("hook.min_ratio"))] = None
    max_chars: Annotated[int | None, Field(**bounds("hook.max_chars"))] = None


def hook_context(ctx: ToolContext, a: ContextArgs) -> HookResult:
    rt = ctx.runtime
    call = {"top_k": a.top_k, "min_score": a.min_score, "min_ratio": a.min_ratio, "max_chars": a.max_chars}
    return run_hook(
        ctx.engine.require_searcher,
        rt.memory,
        prompt=a.prompt,
        memory_key=HookMemory.key(str(ctx.scope.dir), a.session_id) if a.session_id else None,
        reset=a.reset,
        settings=rt.hook_settings(call, ctx.scope.settings().hook),
        flt=ctx.scope.file_filter(),
        fusion=rt.fusion,
        max_per_document=rt.max_per_document,
        text_limit=rt.text_limit,
        view=ctx.scope.view,
        place=ctx.scope.place,
        source=ctx.location(ctx.scope.dir),
    )


async def context(ctx: ToolContext, a: ContextArgs) -> str:
    await ctx.ready()
    started = time.perf_counter()
    result = await ctx.run(hook_context, ctx, a)
    ctx.runtime.log(
        "context",
        scope=str(ctx.scope.dir),
        query=a.prompt.strip(),
        session=a.session_id,
        skipped=result.skipped,
        dropped={
            "seen": result.seen_before,
            "min_score": result.below_score,
            "min_ratio": result.below_ratio,
        },
        candidates=result.candidates,
        hits=log_hits(result.injected),
        ms=round((time.perf_counter() - started) * 1000, 1),
    )
    if not result.text:
        return ""
    if a.format == "claude-code":
        payload = {
            "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": result.text}
        }
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return result.text


CONTEXT = ToolSpec(
    name="ragdown_context",
    description=(
        "For hooks, not for answering: the document sections related to `prompt`, as a "
        "<ragdown-context> block, or empty text when nothing is close enough. Skips short prompts and "
        "slash commands; never repeats a section for the same session_id until reset. format claude-code "
        "wraps the block as a Claude Code hook's additionalContext. top_k, min_score, min_ratio and "
        "max_chars override the folder's and the server's defaults."
    ),
    args=ContextArgs,
    annotations=Annotations(read_only=True),
    handler=context,
)
