"""Links as Obsidian shows them: wikilinks and `#tags` as inline rules, Markdown links, images and embeds
resolved to documents and attachments (or marked missing), block ids hidden."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from ragdown.core.paths import is_markdown
from ragdown.documents.meta import normalize_tag
from ragdown.render.context import ENV_KEY, Context, doc_href

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".bmp", ".avif", ".ico")
AUDIO_EXTENSIONS = (".mp3", ".wav", ".ogg", ".oga", ".m4a", ".flac", ".opus")
VIDEO_EXTENSIONS = (".mp4", ".webm", ".ogv", ".mov", ".m4v")

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_WEB_URL = re.compile(r"^(?:https?:)?//", re.IGNORECASE)
_EMBED_SIZE = re.compile(r"^\s*(\d{1,5})(?:\s*x\s*(\d{1,5}))?\s*$")
_TAG_BODY = re.compile(r"[\w/-]+")
_MAX_WIKILINK = 1000


def wikilink_rule(state: StateInline, silent: bool) -> bool:
    """`[[target#anchor|shown]]` and `![[embed]]`: one token, resolved later by `resolve_links`."""
    src = state.src
    pos = state.pos
    embed = src.startswith("![[", pos)
    if not embed and not src.startswith("[[", pos):
        return False
    start = pos + (3 if embed else 2)
    close = src.find("]]", start, min(state.posMax, start + _MAX_WIKILINK + 2))
    if close < 0 or close + 2 > state.posMax:
        return False
    inner = src[start:close]
    if not inner.strip() or any(char in inner for char in "[]\n"):
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = inner
        token.markup = "![[" if embed else "[["
        token.meta = {"embed": embed}
    state.pos = close + 2
    return True


def tag_rule(state: StateInline, silent: bool) -> bool:
    """An inline `#tag` after whitespace or at the start of the text, the way Obsidian reads one."""
    src = state.src
    pos = state.pos
    if src[pos] != "#" or (pos > 0 and not src[pos - 1].isspace()):
        return False
    match = _TAG_BODY.match(src, pos + 1, state.posMax)
    if match is None:
        return False
    tag = normalize_tag(match.group(0))
    if tag is None:
        return False
    if not silent:
        token = state.push("hashtag", "", 0)
        token.content = match.group(0)
        token.meta = {"tag": tag}
    state.pos = match.end()
    return True


def resolve_links(state: StateCore) -> None:
    context = state.env.get(ENV_KEY)
    if not isinstance(context, Context):
        return
    for token in state.tokens:
        if token.map is not None and token.nesting >= 0 and token.type != "inline":
            token.attrSet("data-line", str(token.map[0] + 1 + context.line_offset))
        if token.type == "inline" and token.children:
            for child in token.children:
                _resolve_inline(child, context)


_BLOCK_ID = re.compile(r"(?:^|\s+)\^([A-Za-z0-9-]+)\s*$")


def block_ids(state: StateCore) -> None:
    """Obsidian's block ids: `^id` at the end of a block names it, and, like Obsidian, is never shown.

    The named element gets `data-block="id"` (a block embed, `![[Note#^id]]`, shows that element alone):
    the list item whose text ends with it, else the top-level block it ends (a paragraph, a heading, a
    quote or callout, a table). A `^id` alone in a paragraph of its own names the block before it (how
    Obsidian names a list, a table or a quote as a whole); that paragraph is not shown.
    """
    tokens = state.tokens
    opened: list[Token] = []  # the blocks open around the current token, outermost first
    tops: list[Token] = []  # the top-level blocks so far, in order
    for index, token in enumerate(tokens):
        if token.level == 0 and token.block and token.nesting >= 0:
            tops.append(token)
        if token.nesting == 1:
            opened.append(token)
        elif token.nesting == -1 and opened:
            opened.pop()
        if token.type != "inline" or not token.children or not opened:
            continue
        last = token.children[-1]
        found = _BLOCK_ID.search(last.content) if last.type == "text" and "^" in last.content else None
        if found is None:
            continue
        last.content = last.content[: found.start()]
        alone = all(child.type == "softbreak" or not child.content.strip() for child in token.children)
        items = [block for block in opened if block.type == "list_item_open"]
        owner = items[-1] if items else opened[0]
        container = opened[-1]
        if alone and container.type == "paragraph_open":
            container.hidden = True
            tokens[index + 1].hidden = True  # its paragraph_close
            if owner is container and len(tops) > 1:
                owner = tops[-2]  # the block before the lone `^id`
        owner.attrSet("data-block", found.group(1))


def _resolve_inline(token: Token, context: Context) -> None:
    if token.type == "link_open":
        _resolve_anchor(token, context)
    elif token.type == "image":
        _resolve_image(token, context)
    elif token.type == "wikilink":
        _resolve_wikilink(token, context)


def _split_url(url: str) -> tuple[str, str | None]:
    """A URL's path and its decoded `#fragment` (None when it has none or it is a block id)."""
    path, hash_mark, fragment = url.partition("#")
    anchor = unquote(fragment).strip() if hash_mark else ""
    return path, anchor if anchor and not anchor.startswith("^") else None


def _resolve_anchor(token: Token, context: Context) -> None:
    href = str(token.attrGet("href") or "")
    if _WEB_URL.match(href):
        token.attrSet("target", "_blank")
        token.attrSet("rel", "noopener")
        token.attrJoin("class", "external")
        return
    if href.startswith("#"):
        _, anchor = _split_url(href)
        if anchor:
            token.attrSet("data-anchor", anchor)
            token.attrSet("href", "#")
            token.attrJoin("class", "anchor-link")
        return
    if not href or href.startswith("/") or _SCHEME.match(href):
        return
    path, anchor = _split_url(href)
    found = context.relative(href)
    if found is None:
        _mark_missing(token, path)
    elif is_markdown(found):
        _link_document(token, found, anchor)
    else:
        token.attrSet("href", context.file_url(found))
        token.attrSet("data-file", found)
        token.attrJoin("class", "file-link")


def _resolve_image(token: Token, context: Context) -> None:
    src = str(token.attrGet("src") or "")
    token.attrSet("loading", "lazy")
    if not src or src.startswith("/") or _SCHEME.match(src) or _WEB_URL.match(src):
        return
    found = context.relative(src)
    if found is None:
        del token.attrs["src"]
        token.attrSet("data-target", src)
        token.attrJoin("class", "missing")
    else:
        token.attrSet("src", context.file_url(found))
        token.attrSet("data-file", found)


def _resolve_wikilink(token: Token, context: Context) -> None:
    inner = token.content
    target, bar, shown = inner.partition("|")
    if bar and target.endswith("\\"):
        target = target[:-1]  # `[[a\|b]]` in a table cell
    target = target.strip()
    shown = shown.strip()
    name, _, anchor = target.partition("#")
    anchor = anchor.strip()
    block = None
    if anchor.startswith("^"):
        block = anchor[1:].strip() or None  # a block reference: `[[Note#^id]]`
        anchor = ""
    found = context.wiki(target)
    token.meta.update(
        target=target,
        shown=shown,
        label=shown or _wikilink_label(name.strip(), anchor),
        anchor=anchor or None,
        block=block,
        path=found,
    )
    if found is not None and not is_markdown(found):
        token.meta["file_url"] = context.file_url(found)


def _wikilink_label(name: str, anchor: str) -> str:
    if not anchor:
        return name
    return f"{name} > {anchor}" if name else anchor


def _mark_missing(token: Token, target: str) -> None:
    token.attrSet("href", "#")
    token.attrSet("data-target", unquote(target))
    token.attrJoin("class", "missing")


def _link_document(token: Token, path: str, anchor: str | None) -> None:
    token.attrSet("href", doc_href(path, anchor))
    token.attrSet("data-path", path)
    if anchor:
        token.attrSet("data-anchor", anchor)
    token.attrJoin("class", "internal")


def element(tag: str, attrs: Sequence[tuple[str, str | None]], content: str | None = "") -> str:
    """An element with escaped attributes (None ones left out); `content` is HTML, None for a void tag."""
    rendered = "".join(f' {name}="{escapeHtml(value)}"' for name, value in attrs if value is not None)
    return f"<{tag}{rendered}>" if content is None else f"<{tag}{rendered}>{content}</{tag}>"


def render_wikilink(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    meta: dict[str, Any] = token.meta
    if "target" not in meta:  # rendered without a context: leave the text as written
        return escapeHtml(token.markup + token.content + "]]")
    path: str | None = meta["path"]
    target: str = meta["target"]
    anchor: str | None = meta["anchor"]
    label = escapeHtml(meta["label"])
    if meta["embed"]:
        return _render_embed(meta, path, target, anchor)
    if path is None:
        return element("a", [("class", "wikilink missing"), ("href", "#"), ("data-target", target)], label)
    if not is_markdown(path):
        attrs = [("class", "wikilink file-link"), ("href", meta["file_url"]), ("data-file", path)]
        return element("a", [*attrs, ("data-target", target)], label)
    return element(
        "a",
        [
            ("class", "wikilink"),
            ("href", doc_href(path, anchor)),
            ("data-target", target),
            ("data-path", path),
            ("data-anchor", anchor),
        ],
        label,
    )


def _render_embed(meta: dict[str, Any], path: str | None, target: str, anchor: str | None) -> str:
    shown: str = meta["shown"]
    if path is None:
        attrs = [("class", "embed missing"), ("data-target", target)]
        return element("span", attrs, escapeHtml(f"![[{target}]]"))
    lower = path.lower()
    name = posixpath.basename(path)
    if is_markdown(path):
        link = element(
            "a",
            [("class", "wikilink embed-link"), ("href", doc_href(path, anchor)), ("data-path", path)],
            escapeHtml(meta["label"]),
        )
        return element(
            "span",
            [
                ("class", "embed embed-note"),
                ("data-target", target),
                ("data-path", path),
                ("data-anchor", anchor),
                ("data-block", meta.get("block")),
            ],
            link,
        )
    url: str = meta["file_url"]
    if lower.endswith(IMAGE_EXTENSIONS):
        size = _EMBED_SIZE.match(shown)
        return element(
            "img",
            [
                ("class", "embed embed-image"),
                ("src", url),
                ("alt", name if size or not shown else shown),
                ("data-file", path),
                ("width", size.group(1) if size else None),
                ("height", size.group(2) if size else None),
                ("loading", "lazy"),
            ],
            None,
        )
    for extensions, tag in ((AUDIO_EXTENSIONS, "audio"), (VIDEO_EXTENSIONS, "video")):
        if lower.endswith(extensions):
            attrs = [("class", f"embed embed-{tag}"), ("src", url), ("data-file", path), ("controls", "")]
            return element(tag, attrs)
    attrs = [("class", "embed embed-file file-link"), ("href", url), ("data-file", path)]
    return element("a", attrs, escapeHtml(shown or name))


def render_hashtag(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    return f'<span class="tag" data-tag="{escapeHtml(token.meta["tag"])}">#{escapeHtml(token.content)}</span>'
