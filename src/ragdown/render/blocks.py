"""Obsidian's block rules: callouts (`> [!tip] Title`, foldable with `-` / `+`), `==highlights==` and task
items."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.state_inline import Delimiter
from markdown_it.token import Token

# Obsidian's built-in callout types, each alias with the style (colour and icon) it is shown in;
# any other type is shown in the `note` style, keeping its own name in `data-callout`.
CALLOUT_STYLES: dict[str, str] = {
    "note": "note",
    "abstract": "abstract",
    "summary": "abstract",
    "tldr": "abstract",
    "info": "info",
    "todo": "todo",
    "tip": "tip",
    "hint": "tip",
    "important": "tip",
    "success": "success",
    "check": "success",
    "done": "success",
    "question": "question",
    "help": "question",
    "faq": "question",
    "warning": "warning",
    "caution": "warning",
    "attention": "warning",
    "failure": "failure",
    "fail": "failure",
    "missing": "failure",
    "danger": "danger",
    "error": "danger",
    "bug": "bug",
    "example": "example",
    "quote": "quote",
    "cite": "quote",
}

_CALLOUT = re.compile(r"\[!([\w-]+)\]([+-]?)(?:[ \t]+(.*))?")


def _block_token(
    kind: str,
    tag: str,
    nesting: Literal[-1, 0, 1],
    level: int,
    attrs: dict[str, str] | None = None,
    *,
    block: bool = True,
) -> Token:
    return Token(kind, tag, nesting, attrs=dict(attrs or {}), level=level, block=block)


def _callout_head(tokens: Sequence[Token], index: int) -> tuple[str, str, str, str] | None:
    """(type, fold, title, the rest of the first paragraph) when the blockquote at `index` is a callout."""
    if index + 3 >= len(tokens):
        return None
    if tokens[index + 1].type != "paragraph_open" or tokens[index + 2].type != "inline":
        return None
    first, _, rest = tokens[index + 2].content.partition("\n")
    match = _CALLOUT.fullmatch(first.strip())
    if match is None:
        return None
    kind, fold, title = match.groups()
    return kind.lower(), fold, (title or "").strip(), rest


def callouts(state: StateCore) -> None:
    """Turns callout blockquotes into `<div class="callout">` (or `<details>` when foldable) with a
    title and a content box; runs before the inline rules, so the title is Markdown like any text."""
    tokens = state.tokens
    out: list[Token] = []
    open_quotes: list[tuple[str, int] | None] = []  # per open blockquote: (title tag, level) or None
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.type == "blockquote_close" and open_quotes:
            head = open_quotes.pop()
            if head is not None:
                tag, level = head
                out.append(_block_token("callout_content_close", "div", -1, level + 1))
                out.append(_block_token("callout_close", tag, -1, level))
                index += 1
                continue
        if token.type != "blockquote_open":
            out.append(token)
            index += 1
            continue
        found = _callout_head(tokens, index)
        if found is None:
            open_quotes.append(None)
            out.append(token)
            index += 1
            continue
        kind, fold, title, rest = found
        tag = "details" if fold else "div"
        level = token.level
        attrs = {"class": f"callout callout-{CALLOUT_STYLES.get(kind, 'note')}", "data-callout": kind}
        if fold:
            attrs["data-callout-fold"] = fold
        if fold == "+":
            attrs["open"] = ""
        opened = _block_token("callout_open", tag, 1, level, attrs)
        opened.map = token.map
        opened.markup = token.markup
        opened.meta = {"callout": kind, "fold": fold}
        out.append(opened)
        title_tag = "summary" if fold else "div"
        title_attrs = {"class": "callout-title"}
        out.append(_block_token("callout_title_open", title_tag, 1, level + 1, title_attrs, block=False))
        inner_attrs = {"class": "callout-title-inner"}
        out.append(_block_token("callout_title_inner_open", "span", 1, level + 2, inner_attrs, block=False))
        default_title = kind[:1].upper() + kind[1:]
        out.append(
            Token(
                "inline", "", 0, map=token.map, level=level + 3, content=title or default_title, children=[]
            )
        )
        out.append(_block_token("callout_title_inner_close", "span", -1, level + 2, block=False))
        out.append(_block_token("callout_title_close", title_tag, -1, level + 1))
        out.append(_block_token("callout_content_open", "div", 1, level + 1, {"class": "callout-content"}))
        open_quotes.append((tag, level))
        paragraph, inline = tokens[index + 1], tokens[index + 2]
        if rest.strip():
            if paragraph.map is not None:
                paragraph.map = [paragraph.map[0] + 1, paragraph.map[1]]
            inline.content = rest
            inline.map = paragraph.map
            index += 1
        else:
            index += 4  # the blockquote and its first paragraph, the title alone
    state.tokens = out


_EQUALS = 0x3D


def mark_rule(state: StateInline, silent: bool) -> bool:
    start = state.pos
    if silent or state.src[start] != "=":
        return False
    scanned = state.scanDelims(start, True)
    length = scanned.length
    if length < 2:
        return False
    if length % 2:
        token = state.push("text", "", 0)
        token.content = "="
        length -= 1
    for _ in range(length // 2):
        token = state.push("text", "", 0)
        token.content = "=="
        if scanned.can_open or scanned.can_close:
            state.delimiters.append(
                Delimiter(
                    marker=_EQUALS,
                    length=0,
                    token=len(state.tokens) - 1,
                    end=-1,
                    open=scanned.can_open,
                    close=scanned.can_close,
                )
            )
    state.pos += scanned.length
    return True


def _mark_pairs(state: StateInline, delimiters: list[Delimiter]) -> None:
    lone: list[int] = []
    for start in delimiters:
        if start.marker != _EQUALS or start.end == -1:
            continue
        end = delimiters[start.end]
        opening = state.tokens[start.token]
        opening.type, opening.tag, opening.nesting, opening.markup, opening.content = (
            "mark_open",
            "mark",
            1,
            "==",
            "",
        )
        closing = state.tokens[end.token]
        closing.type, closing.tag, closing.nesting, closing.markup, closing.content = (
            "mark_close",
            "mark",
            -1,
            "==",
            "",
        )
        before = state.tokens[end.token - 1]
        if before.type == "text" and before.content == "=":
            lone.append(end.token - 1)
    # An odd run (`===`) leaves one `=` before the pairs: move it after the closing tags.
    while lone:
        at = lone.pop()
        after = at + 1
        while after < len(state.tokens) and state.tokens[after].type == "mark_close":
            after += 1
        after -= 1
        if at != after:
            state.tokens[at], state.tokens[after] = state.tokens[after], state.tokens[at]


def mark_post(state: StateInline) -> None:
    _mark_pairs(state, state.delimiters)
    for meta in state.tokens_meta:
        if meta and "delimiters" in meta:
            _mark_pairs(state, meta["delimiters"])


def task_items(state: StateCore) -> None:
    for token in state.tokens:
        if token.type == "list_item_open" and token.meta and token.meta.get("checked"):
            token.attrJoin("class", "is-checked")
            token.attrSet("data-task", "x")
