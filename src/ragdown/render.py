"""Markdown to HTML for the web UI's preview: CommonMark plus tables, strikethrough, task lists and
Obsidian's wikilinks, embeds and `#tags`.

Documents are untrusted, so raw HTML in them is escaped, never passed through, and markdown-it's
link validation (no `javascript:`, `vbscript:`, `file:` or non-image `data:` URLs) stays on. Links
are resolved while rendering, through callables the caller gives:

- `resolve_link(raw)` resolves a wikilink or embed target as written (`Note`, `Note#Heading`,
  `sub/Note`, an alias; no brackets, no `|shown`) to the folder-prefixed path of a document or
  attachment, or None;
- `resolve_relative(url)` resolves the URL of a relative Markdown link or image (`other.md`,
  `../img/a.png`, percent-encoded as markdown-it normalises it) only as a path relative to the
  document; it defaults to `resolve_link`;
- `file_url(path)` is the URL the UI loads an attachment from (`/api/file?path=…`).

`render_document` builds all three from a folder's `LinkResolver`.

A link to a document becomes `href="#/d/<path>"` (the UI's hash route, `?h=<heading>` for an
anchor) with `data-path`; a link to an attachment points at `file_url` with `data-file`; a link
that resolves to nothing gets the class `missing` and `data-target`. Every block element carries
`data-line`, the 1-based line of the source it starts on, so the UI can scroll to a search hit.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from ragdown.documents.frontmatter import frontmatter_end
from ragdown.documents.links import LinkResolver
from ragdown.documents.meta import normalize_tag
from ragdown.documents.text import normalize_text, split_lines
from ragdown.paths import is_markdown

__all__ = ["IMAGE_EXTENSIONS", "doc_href", "render_document", "render_markdown"]

ResolveLink = Callable[[str], "str | None"]
FileUrl = Callable[[str], str]

IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".bmp", ".avif", ".ico")
AUDIO_EXTENSIONS = (".mp3", ".wav", ".ogg", ".oga", ".m4a", ".flac", ".opus")
VIDEO_EXTENSIONS = (".mp4", ".webm", ".ogv", ".mov", ".m4v")

_ENV_KEY = "ragdown"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_WEB_URL = re.compile(r"^(?:https?:)?//", re.IGNORECASE)
_EMBED_SIZE = re.compile(r"^\s*(\d{1,5})(?:\s*x\s*(\d{1,5}))?\s*$")
_TAG_BODY = re.compile(r"[\w/-]+")
_MAX_WIKILINK = 1000


def doc_href(path: str, anchor: str | None = None) -> str:
    """The web UI's route to a document: `#/d/<path>`, plus `?h=<heading>` for an anchor."""
    href = "#/d/" + quote(path, safe="/")
    return f"{href}?h={quote(anchor, safe='')}" if anchor else href


@dataclass
class _Context:
    resolve_link: ResolveLink
    resolve_relative: ResolveLink
    file_url: FileUrl
    line_offset: int
    cache: dict[tuple[bool, str], str | None] = field(default_factory=dict)

    def wiki(self, target: str) -> str | None:
        return self._cached(False, target, self.resolve_link)

    def relative(self, url: str) -> str | None:
        return self._cached(True, url, self.resolve_relative)

    def _cached(self, markdown: bool, raw: str, resolve: ResolveLink) -> str | None:
        key = (markdown, raw)
        if key not in self.cache:
            self.cache[key] = resolve(raw)
        return self.cache[key]


def render_markdown(
    text: str,
    *,
    resolve_link: ResolveLink,
    file_url: FileUrl,
    resolve_relative: ResolveLink | None = None,
) -> str:
    """The preview HTML of a document's text (see the module docstring for the link callables)."""
    lines = split_lines(normalize_text(text))
    end = frontmatter_end(lines)
    head = ""
    if end:
        properties = escapeHtml("\n".join(lines[1 : end - 1]))
        head = f'<pre class="frontmatter" data-line="1">{properties}</pre>\n'
    context = _Context(
        resolve_link=resolve_link,
        resolve_relative=resolve_relative or resolve_link,
        file_url=file_url,
        line_offset=end,
    )
    env: EnvType = {_ENV_KEY: context}
    body = "\n".join(lines[end:])
    html: str = _PARSER.render(body, env)
    return head + html


def render_document(
    text: str,
    *,
    path: str,
    resolver: LinkResolver,
    file_url: FileUrl,
) -> str:
    """`render_markdown` for the document at `path` (folder-prefixed, `work/notes/a.md`), resolving
    its links with its folder's `LinkResolver` (which works in folder-relative paths)."""
    folder, _, rel = path.partition("/")

    def prefixed(found: str | None) -> str | None:
        return f"{folder}/{found}" if found is not None else None

    def wiki(raw: str) -> str | None:
        hit = resolver.resolve(raw, rel)
        return prefixed(hit.path if hit else None)

    def relative(url: str) -> str | None:
        hit = resolver.resolve(url, rel, markdown=True)
        return prefixed(hit.path if hit else None)

    return render_markdown(text, resolve_link=wiki, resolve_relative=relative, file_url=file_url)


# --- parsing: wikilinks and tags as inline rules ------------------------------------------------


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """`[[target#anchor|shown]]` and `![[embed]]`: one token, resolved later by `_resolve_links`."""
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


def _tag_rule(state: StateInline, silent: bool) -> bool:
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


# --- resolving: a core rule over every token ----------------------------------------------------


def _resolve_links(state: StateCore) -> None:
    context = state.env.get(_ENV_KEY)
    if not isinstance(context, _Context):
        return
    for token in state.tokens:
        if token.map is not None and token.nesting >= 0 and token.type != "inline":
            token.attrSet("data-line", str(token.map[0] + 1 + context.line_offset))
        if token.type == "inline" and token.children:
            for child in token.children:
                _resolve_inline(child, context)


_BLOCK_ID = re.compile(r"(?:^|\s+)\^[A-Za-z0-9-]+\s*$")


def _hide_block_ids(state: StateCore) -> None:
    """Obsidian's block ids (`text ^b15695`, or `^id` alone) mark a block; like Obsidian, never show them."""
    for token in state.tokens:
        if token.type != "inline" or not token.children:
            continue
        last = token.children[-1]
        if last.type == "text" and "^" in last.content:
            last.content = _BLOCK_ID.sub("", last.content)


def _resolve_inline(token: Token, context: _Context) -> None:
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


def _resolve_anchor(token: Token, context: _Context) -> None:
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


def _resolve_image(token: Token, context: _Context) -> None:
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


def _resolve_wikilink(token: Token, context: _Context) -> None:
    inner = token.content
    target, bar, shown = inner.partition("|")
    if bar and target.endswith("\\"):
        target = target[:-1]  # `[[a\|b]]` in a table cell
    target = target.strip()
    shown = shown.strip()
    name, _, anchor = target.partition("#")
    anchor = anchor.strip()
    if anchor.startswith("^"):
        anchor = ""
    found = context.wiki(target)
    token.meta.update(
        target=target,
        shown=shown,
        label=shown or _wikilink_label(name.strip(), anchor),
        anchor=anchor or None,
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


# --- rendering ----------------------------------------------------------------------------------


def _element(tag: str, attrs: Sequence[tuple[str, str | None]], content: str | None = "") -> str:
    """An element with escaped attributes (None ones left out); `content` is HTML, None for a void tag."""
    rendered = "".join(f' {name}="{escapeHtml(value)}"' for name, value in attrs if value is not None)
    return f"<{tag}{rendered}>" if content is None else f"<{tag}{rendered}>{content}</{tag}>"


def _render_wikilink(
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
        return _element("a", [("class", "wikilink missing"), ("href", "#"), ("data-target", target)], label)
    if not is_markdown(path):
        attrs = [("class", "wikilink file-link"), ("href", meta["file_url"]), ("data-file", path)]
        return _element("a", [*attrs, ("data-target", target)], label)
    return _element(
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
        return _element("span", attrs, escapeHtml(f"![[{target}]]"))
    lower = path.lower()
    name = posixpath.basename(path)
    if is_markdown(path):
        link = _element(
            "a",
            [("class", "wikilink embed-link"), ("href", doc_href(path, anchor)), ("data-path", path)],
            escapeHtml(meta["label"]),
        )
        return _element(
            "span",
            [
                ("class", "embed embed-note"),
                ("data-target", target),
                ("data-path", path),
                ("data-anchor", anchor),
            ],
            link,
        )
    url: str = meta["file_url"]
    if lower.endswith(IMAGE_EXTENSIONS):
        size = _EMBED_SIZE.match(shown)
        return _element(
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
            return _element(tag, attrs)
    attrs = [("class", "embed embed-file file-link"), ("href", url), ("data-file", path)]
    return _element("a", attrs, escapeHtml(shown or name))


def _render_hashtag(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    return f'<span class="tag" data-tag="{escapeHtml(token.meta["tag"])}">#{escapeHtml(token.content)}</span>'


def _build_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "tasklists": True})
    md.enable("table").enable("strikethrough")
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.inline.ruler.before("link", "hashtag", _tag_rule)
    md.core.ruler.after("inline", "ragdown_links", _resolve_links)
    md.core.ruler.after("ragdown_links", "ragdown_block_ids", _hide_block_ids)
    md.add_render_rule("wikilink", _render_wikilink)
    md.add_render_rule("hashtag", _render_hashtag)
    return md


_PARSER = _build_parser()
