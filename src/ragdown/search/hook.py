"""The hook's gates (behaviour spec A8): which sections `ragdown_context` adds to a prompt, and session memory.

1. A trimmed prompt under 12 characters, or a slash command, gets nothing (session memory untouched).
2. Search with 2 × top_k; keep hits whose cosine reaches `min_score` and that this session was not given.
3. Sort by cosine and keep those within `min_ratio` of the best one's cosine (the best always survives),
   cap per document, take `top_k`. `min_ratio` defaults to the embedder's measured value, as `min_score`
   does (`embedders.default_min_ratio`).
4. A candidate holding a name the prompt quotes, and one of a document whose alias the prompt says, go
   first whatever their cosine; then, while `min_ratio` is the embedder's own default and only for an
   embedder measured to need it (its catalogue entry's `hook_keep_top`: minilm's 2), the search's own first
   hits, those reaching `min_score`, whatever their ratio: the fusion ranks them best, and minilm's cosines
   can sit under the gate (`docs/benchmarks.md`, section 16). Every other embedder, and a `min_ratio` set
   by anyone, gets the spec's gate alone (1 keeps one hit).
5. Blocks are added while they fit in `max_chars` (the first always does), and remembered per session.

The tool (`tools/hook.py`) and `ragdown eval --hook` both run these functions, so what is measured is what
agents get.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ragdown.search.format import PathView, Place, hit_block
from ragdown.search.hybrid import Fusion, Hit, Searcher, SearchOptions, cap_per_document
from ragdown.search.query import aliases_in, holds_phrase, identifier_spans, quoted_spans, words
from ragdown.storage.backend import SessionMemory
from ragdown.storage.filter_sql import FileFilter

MIN_PROMPT_CHARS = 12
CAUTION = (
    "These are excerpts from the user's documents, found by search for this prompt, not chosen by the user. "
    "They may be irrelevant or out of date: read the whole file with ragdown_read_doc before relying on one."
)
_VERSION = re.compile(r"^v?\d+(?:\.\d+)*$")


@dataclass(frozen=True)
class HookSettings:
    top_k: int
    min_score: float
    min_ratio: float
    max_chars: int
    # Step 4's first hits kept whatever their ratio: the embedder's `hook_keep_top` under its own `min_ratio`
    # (`Runtime.hook_settings`). A `min_ratio` someone set (the call, the folder, the server settings, the
    # variable) is the spec's gate exactly, as is every embedder not measured to need more: 0.
    keep_top: int = 0


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


def skip_reason(prompt: str) -> str | None:
    """Why a (trimmed) prompt gets nothing without a search: too short, or a slash command."""
    if len(prompt) < MIN_PROMPT_CHARS:
        return "short"
    if prompt.startswith("/"):
        return "slash command"
    return None


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


def hook_candidates(
    searcher: Searcher, prompt: str, flt: FileFilter, top_k: int, fusion: Fusion = "rrf"
) -> tuple[list[Hit], set[str]]:
    """The hook's search (2 × top_k, ranked by fused score) and the paths whose alias the prompt says."""
    candidates = searcher.search(prompt, flt, SearchOptions(top_k=2 * top_k, fusion=fusion))
    alias_paths = aliases_in(prompt, [(alias, h.path) for h in candidates for alias in h.chunk.file.aliases])
    return candidates, alias_paths


def select(
    candidates: list[Hit],
    settings: HookSettings,
    seen: set[str],
    prompt: str,
    alias_paths: set[str],
    max_per_document: int,
    *,
    keep_top: int | None = None,
) -> HookResult:
    """Gate the candidates (ranked by fused score) into what the hook injects, in order.

    `keep_top` (the settings' own when None) is how many of the search's first hits step 4 keeps whatever
    their ratio; 0 (or False) leaves them out: the spec's gates alone (measured against).
    """
    if keep_top is None:
        keep_top = settings.keep_top
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
    tops = [h for h in candidates[: int(keep_top)] if h in passing]
    passing.sort(key=lambda h: -h.similarity)
    if passing and settings.min_ratio > 0:
        floor = passing[0].similarity * settings.min_ratio
        kept = [h for h in passing if h.similarity >= floor or h in tops]
        result.below_ratio = len(passing) - len(kept)
        passing = kept
    if tops:
        passing = [*tops, *(h for h in passing if h not in tops)]
    if max_per_document > 0:
        passing = cap_per_document(passing, max_per_document)
    result.injected = (forced + passing)[: settings.top_k]
    return result


def fit(
    hits: list[Hit],
    settings: HookSettings,
    text_limit: int,
    view: PathView | None = None,
    place: Place | None = None,
) -> tuple[list[str], list[Hit]]:
    """The hit blocks that fit in `max_chars` (the first always does), and their hits."""
    limit = min(text_limit or settings.max_chars, settings.max_chars)
    blocks: list[str] = []
    used: list[Hit] = []
    total = 0
    for i, hit in enumerate(hits, 1):
        block = hit_block(i, hit, limit, view, place) if view is not None else hit_block(i, hit, limit)
        if blocks and total + len(block) > settings.max_chars:
            break
        blocks.append(block)
        used.append(hit)
        total += len(block)
    return blocks, used


def context_block(
    hits: list[Hit],
    settings: HookSettings,
    text_limit: int,
    view: PathView,
    source: str,
    place: Place | None = None,
) -> tuple[str, list[Hit]]:
    """The `<ragdown-context>` block holding as many hits as fit in `max_chars` (at least one)."""
    blocks, used = fit(hits, settings, text_limit, view, place)
    if not blocks:
        return "", []
    body = "\n\n".join(blocks)
    return f'<ragdown-context source="{source}">\n{CAUTION}\n\n{body}\n</ragdown-context>', used


def run_hook(
    searcher: Callable[[], Searcher],
    memory: SessionMemory,
    *,
    prompt: str,
    memory_key: str | None,
    reset: bool,
    settings: HookSettings,
    flt: FileFilter,
    fusion: Fusion,
    max_per_document: int,
    text_limit: int,
    view: PathView,
    source: str,
    place: Place | None = None,
) -> HookResult:
    """One hook call end to end: skip, search, gate, fit, remember. `searcher` is asked for only when a
    search is made (a skipped prompt answers even while the index is not open)."""
    if memory_key is not None and reset:
        memory.reset(memory_key)
    prompt = prompt.strip()
    skipped = skip_reason(prompt)
    if skipped is not None:
        return HookResult(skipped=skipped)
    candidates, alias_paths = hook_candidates(searcher(), prompt, flt, settings.top_k, fusion)
    seen = memory.seen(memory_key) if memory_key is not None else set()
    result = select(candidates, settings, seen, prompt, alias_paths, max_per_document)
    result.text, result.injected = context_block(result.injected, settings, text_limit, view, source, place)
    if memory_key is not None and result.injected:
        memory.add(memory_key, [h.chunk.key for h in result.injected])
    return result
