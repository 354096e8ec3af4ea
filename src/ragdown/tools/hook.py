"""`ragdown_context`: the sections a hook adds to a prompt, behind the gates of behaviour spec A8.

1. A trimmed prompt under 12 characters, or a slash command, gets nothing (session memory untouched).
2. Settings per key: the call, the folder's `hook`, saved server settings, `RAGDOWN_HOOK_*`, defaults.
3. Search with 2 × top_k; keep hits whose cosine reaches `min_score` and that this session was not given.
4. Sort by cosine and keep those within `min_ratio` of the best one's cosine (the best always survives),
   cap per document, take `top_k`.
5. A candidate holding a name the prompt quotes, and one of a document whose alias the prompt says, go
   first whatever their cosine.
6. Blocks are added while they fit in `max_chars` (the first always does), and remembered per session.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import Field

from ragdown.index.store import FileFilter
from ragdown.runtime import HookMemory, HookSettings
from ragdown.search.format import PathView, hit_block
from ragdown.search.hybrid import Fusion, Hit, Searcher, SearchOptions, cap_per_document
from ragdown.search.query import aliases_in, holds_phrase, identifier_spans, quoted_spans, words
from ragdown.tools.base import Annotations, Args, ToolSpec
from ragdown.tools.context import ToolContext
from ragdown.tools.read import hit_summaries

MIN_PROMPT_CHARS = 12
CAUTION = (
    "These are excerpts from the user's documents, found by search for this prompt, not chosen by the user. "
    "They may be irrelevant or out of date: read the whole file with ragdown_read_doc before relying on one."
)
_VERSION = re.compile(r"^v?\d+(?:\.\d+)*$")


class ContextArgs(Args):
    prompt: Annotated[str, Field(description="The user's message.")] = ""
    session_id: Annotated[str | None, Field(description="Sections are sent once per session.")] = None
    reset: Annotated[bool, Field(description="Forget what this session was given first.")] = False
    format: Literal["text", "claude-code"] = "text"
    top_k: Annotated[int | None, Field(ge=1, le=50)] = None
    min_score: Annotated[float | None, Field(ge=0, le=1)] = None
    min_ratio: Annotated[float | None, Field(ge=0, le=1)] = None
    max_chars: Annotated[int | None, Field(ge=1)] = None


@dataclass
class HookResult:
    """What one hook call did: the injected hits and why the others were dropped (for the query log)."""

    text: str = ""
    injected: list[Hit] = field(default_factory=list)
    candidates: int = 0
    below_score: int = 0
    seen_before: int = 0
    below_ratio: int = 0
    skipped: str | None = None


def strong_names(prompt: str) -> list[str]:
    """Names the prompt quotes that are worth forcing in: commands and identifiers, not plain words."""
    names: list[str] = []
    for name in quoted_spans(prompt):
        if len(name) < 3 or _VERSION.match(name):
            continue
        if identifier_spans(name) or (len(words(name)) >= 2 and len(name) >= 6):
            names.append(name)
    return names


def _holds(hit: Hit, names: list[str]) -> bool:
    text = (hit.chunk.breadcrumb + "\n" + hit.chunk.text).lower()
    return any(holds_phrase(text, name) for name in names)


def select(
    candidates: list[Hit],
    settings: HookSettings,
    seen: set[str],
    prompt: str,
    alias_paths: set[str],
    max_per_document: int,
) -> HookResult:
    """Gate the candidates (ranked by fused score) into what the hook injects, in order."""
    result = HookResult(candidates=len(candidates))
    fresh = [h for h in candidates if h.chunk.key not in seen]
    result.seen_before = len(candidates) - len(fresh)
    forced: list[Hit] = []
    names = strong_names(prompt)
    if names:
        quoted = next((h for h in fresh if _holds(h, names)), None)
        if quoted is not None:
            forced.append(quoted)
    if alias_paths:
        aliased = next((h for h in fresh if h.path in alias_paths and h not in forced), None)
        if aliased is not None:
            forced.append(aliased)
    rest = [h for h in fresh if h not in forced]
    passing = [h for h in rest if h.similarity >= settings.min_score]
    result.below_score = len(rest) - len(passing)
    passing.sort(key=lambda h: -h.similarity)
    if passing and settings.min_ratio > 0:
        floor = passing[0].similarity * settings.min_ratio
        kept = [h for h in passing if h.similarity >= floor]
        result.below_ratio = len(passing) - len(kept)
        passing = kept
    if max_per_document > 0:
        passing = cap_per_document(passing, max_per_document)
    result.injected = (forced + passing)[: settings.top_k]
    return result


def fit(
    hits: list[Hit], settings: HookSettings, text_limit: int, view: PathView | None = None
) -> tuple[list[str], list[Hit]]:
    """The hit blocks that fit in `max_chars` (the first always does), and their hits."""
    limit = min(text_limit or settings.max_chars, settings.max_chars)
    blocks: list[str] = []
    used: list[Hit] = []
    total = 0
    for i, hit in enumerate(hits, 1):
        block = hit_block(i, hit, limit, view) if view is not None else hit_block(i, hit, limit)
        if blocks and total + len(block) > settings.max_chars:
            break
        blocks.append(block)
        used.append(hit)
        total += len(block)
    return blocks, used


def render(ctx: ToolContext, hits: list[Hit], settings: HookSettings) -> tuple[str, list[Hit]]:
    """The `<ragdown-context>` block holding as many hits as fit in `max_chars` (at least one)."""
    blocks, used = fit(hits, settings, ctx.runtime.text_limit, ctx.scope.view)
    if not blocks:
        return "", []
    body = "\n\n".join(blocks)
    return f'<ragdown-context source="{ctx.scope.dir}">\n{CAUTION}\n\n{body}\n</ragdown-context>', used


def skip_reason(prompt: str) -> str | None:
    """Why a (trimmed) prompt gets nothing without a search: too short, or a slash command."""
    if len(prompt) < MIN_PROMPT_CHARS:
        return "short"
    if prompt.startswith("/"):
        return "slash command"
    return None


def hook_candidates(
    searcher: Searcher, prompt: str, flt: FileFilter, top_k: int, fusion: Fusion = "rrf"
) -> tuple[list[Hit], set[str]]:
    """The hook's search (2 × top_k, ranked by fused score) and the paths whose alias the prompt says."""
    candidates = searcher.search(prompt, flt, SearchOptions(top_k=2 * top_k, fusion=fusion))
    alias_paths = aliases_in(prompt, [(alias, h.path) for h in candidates for alias in h.chunk.file.aliases])
    return candidates, alias_paths


def hook_context(ctx: ToolContext, a: ContextArgs) -> HookResult:
    memory = ctx.runtime.memory
    key = HookMemory.key(str(ctx.scope.dir), a.session_id) if a.session_id else None
    if key is not None and a.reset:
        memory.reset(key)
    prompt = a.prompt.strip()
    skipped = skip_reason(prompt)
    if skipped is not None:
        return HookResult(skipped=skipped)
    call = {"top_k": a.top_k, "min_score": a.min_score, "min_ratio": a.min_ratio, "max_chars": a.max_chars}
    settings = ctx.runtime.hook_settings(call, ctx.scope.settings().hook)
    searcher = ctx.engine.require_searcher()
    flt = ctx.scope.file_filter()
    candidates, alias_paths = hook_candidates(searcher, prompt, flt, settings.top_k, ctx.runtime.fusion)
    seen = memory.seen(key) if key is not None else set()
    result = select(candidates, settings, seen, prompt, alias_paths, ctx.runtime.max_per_document)
    result.text, result.injected = render(ctx, result.injected, settings)
    if key is not None and result.injected:
        memory.add(key, [h.chunk.key for h in result.injected])
    return result


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
        hits=hit_summaries(result.injected, ctx.scope.view),
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
