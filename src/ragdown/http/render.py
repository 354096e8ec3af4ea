"""Markdown to HTML for the web UI's preview: CommonMark plus tables, strikethrough, task lists and
Obsidian Flavored Markdown the way Obsidian shows it: wikilinks, embeds, `#tags`, callouts (`> [!tip]
Title`, foldable with `[!tip]-` / `[!tip]+`), `==highlights==`, footnotes (`[^1]`, `^[inline]`) and the
frontmatter as a table of properties.

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

Footnote references and back-references are `href="#"` links with `data-footnote` /
`data-footnote-back` (no element ids, so an embedded note's footnotes never clash with the host's);
the UI scrolls to `[data-footnote-id]` / `[data-footnote-ref]` within the same document.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.state_inline import Delimiter
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.footnote import footnote_plugin

from ragdown.core.paths import is_markdown
from ragdown.documents.frontmatter import frontmatter_end, load_yaml_mapping
from ragdown.documents.links import LinkResolver
from ragdown.documents.meta import normalize_tag
from ragdown.documents.text import normalize_text, split_lines

__all__ = ["CALLOUT_STYLES", "IMAGE_EXTENSIONS", "doc_href", "render_document", "render_markdown"]

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
    context = _Context(
        resolve_link=resolve_link,
        resolve_relative=resolve_relative or resolve_link,
        file_url=file_url,
        line_offset=end,
    )
    head = _render_properties("\n".join(lines[1 : end - 1]), context) if end else ""
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


# --- Obsidian callouts: a blockquote whose first line is `[!type]` --------------------------------

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


def _callouts(state: StateCore) -> None:
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


# --- `==highlight==`: markdown-it's strikethrough rule with `=` (as markdown-it-mark) ------------

_EQUALS = 0x3D


def _mark_rule(state: StateInline, silent: bool) -> bool:
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


def _mark_post(state: StateInline) -> None:
    _mark_pairs(state, state.delimiters)
    for meta in state.tokens_meta:
        if meta and "delimiters" in meta:
            _mark_pairs(state, meta["delimiters"])


# --- task lists: Obsidian marks a done item ------------------------------------------------------


def _task_items(state: StateCore) -> None:
    for token in state.tokens:
        if token.type == "list_item_open" and token.meta and token.meta.get("checked"):
            token.attrJoin("class", "is-checked")
            token.attrSet("data-task", "x")


# --- footnotes: mdit-py-plugins' parser, rendered without element ids ----------------------------


def _footnote_number(token: Token) -> str:
    return str(int(token.meta["id"]) + 1)


def _footnote_ref_key(token: Token) -> str:
    sub = int(token.meta.get("subId", 0) or 0)
    return _footnote_number(token) + (f":{sub}" if sub > 0 else "")


def _render_footnote_ref(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    number = _footnote_number(token)
    link = _element(
        "a",
        [
            ("href", "#"),
            ("class", "footnote-link"),
            ("data-footnote", number),
            ("aria-label", f"Footnote {number}"),
        ],
        f"[{number}]",
    )
    return _element("sup", [("class", "footnote-ref"), ("data-footnote-ref", _footnote_ref_key(token))], link)


def _render_footnote_block_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return '<section class="footnotes" aria-label="Footnotes">\n<hr class="footnotes-sep">\n<ol class="footnotes-list">\n'


def _render_footnote_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return f'<li class="footnote-item" data-footnote-id="{_footnote_number(tokens[idx])}">'


def _render_footnote_anchor(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    attrs = [
        ("href", "#"),
        ("class", "footnote-backref"),
        ("data-footnote-back", _footnote_ref_key(tokens[idx])),
        ("aria-label", "Back to the text"),
    ]
    # ↩ with the text variation selector, so no platform draws it as an emoji.
    return " " + _element("a", attrs, "\u21a9\ufe0e")


# --- frontmatter: a table of properties ----------------------------------------------------------

_MAX_PROPERTY_DEPTH = 3
_TAG_SPLIT = re.compile(r"[\s,]+")
_WIKILINK_VALUE = re.compile(r"\[\[[^\[\]\n]+\]\]")


def _render_properties(source: str, context: _Context) -> str:
    """The frontmatter as Obsidian shows it: a key → value table, lists as chips, tags as tags; YAML
    that is not a mapping is shown as it is, in a block marked invalid."""
    data, warnings = load_yaml_mapping(source)
    if warnings:
        return (
            '<div class="properties properties-invalid" data-line="1">\n'
            f'<p class="properties-warning">{escapeHtml(warnings[0])}</p>\n'
            f'<pre class="frontmatter"><code class="language-yaml">{escapeHtml(source)}</code></pre>\n'
            "</div>\n"
        )
    if not data:
        return ""
    rows = "".join(
        f'<tr><th scope="row">{escapeHtml(key)}</th><td>{_property_value(key, value, context, 0)}</td></tr>\n'
        for key, value in data.items()
    )
    return (
        '<div class="properties" data-line="1">\n'
        '<table class="properties-table" aria-label="Properties">\n'
        f"<tbody>\n{rows}</tbody>\n</table>\n</div>\n"
    )


def _property_value(key: str, value: object, context: _Context, depth: int) -> str:
    """One property's value as HTML: lists as chips (a `tags` list as tags), a mapping as a nested table,
    a boolean as a checkbox, a wikilink as a link, anything else as text."""
    if depth == 0 and key.lower() in ("tags", "tag"):
        items: list[object] = value if isinstance(value, list) else _TAG_SPLIT.split(str(value or ""))
        chips = "".join(_property_tag(item) for item in items if item is not None and str(item).strip())
        return f'<ul class="property-list">{chips}</ul>' if chips else _EMPTY_PROPERTY
    if isinstance(value, list):
        chips = "".join(
            f'<li class="property-chip">{_property_value(key, item, context, depth + 1)}</li>'
            for item in value
        )
        return f'<ul class="property-list">{chips}</ul>' if chips else _EMPTY_PROPERTY
    if isinstance(value, dict):
        if depth >= _MAX_PROPERTY_DEPTH:
            flat = json.dumps(value, default=str, ensure_ascii=False)
            return f'<code class="property-json">{escapeHtml(flat)}</code>'
        rows = "".join(
            f'<tr><th scope="row">{escapeHtml(str(name))}</th>'
            f"<td>{_property_value(str(name), item, context, depth + 1)}</td></tr>"
            for name, item in value.items()
        )
        return f'<table class="properties-table properties-nested"><tbody>{rows}</tbody></table>'
    if value is None or value == "":
        return _EMPTY_PROPERTY
    if isinstance(value, bool):
        checked = ' checked=""' if value else ""
        return (
            f'<input type="checkbox" class="property-checkbox" disabled=""{checked}'
            f' aria-label="{"true" if value else "false"}">'
        )
    if isinstance(value, int | float):
        return f'<span class="property-number">{escapeHtml(str(value))}</span>'
    text = str(value)
    if _WIKILINK_VALUE.fullmatch(text.strip()):
        rendered: str = _PARSER.renderInline(text.strip(), {_ENV_KEY: context})
        return rendered
    return f'<span class="property-text">{escapeHtml(text)}</span>'


_EMPTY_PROPERTY = '<span class="property-empty" aria-label="empty">—</span>'


def _property_tag(item: object) -> str:
    text = str(item).strip()
    tag = normalize_tag(text)
    if tag is None:
        return f'<li class="property-chip">{escapeHtml(text)}</li>'
    return f'<li class="property-chip property-tag"><span class="tag" data-tag="{escapeHtml(tag)}">#{escapeHtml(tag)}</span></li>'


def _build_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "tasklists": True})
    md.enable("table").enable("strikethrough")
    md.use(footnote_plugin)  # `[^1]` and `^[inline]`, moved to the end by its `footnote_tail` core rule
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.inline.ruler.before("link", "hashtag", _tag_rule)
    md.inline.ruler.before("emphasis", "mark", _mark_rule)
    md.inline.ruler2.before("emphasis", "mark", _mark_post)
    md.core.ruler.after("block", "ragdown_callouts", _callouts)
    # After the footnotes are moved, so links in them are resolved and their blocks get `data-line`.
    md.core.ruler.after("footnote_tail", "ragdown_links", _resolve_links)
    md.core.ruler.after("ragdown_links", "ragdown_block_ids", _hide_block_ids)
    md.core.ruler.after("ragdown_block_ids", "ragdown_tasks", _task_items)
    md.add_render_rule("wikilink", _render_wikilink)
    md.add_render_rule("hashtag", _render_hashtag)
    md.add_render_rule("footnote_ref", _render_footnote_ref)
    md.add_render_rule("footnote_block_open", _render_footnote_block_open)
    md.add_render_rule("footnote_open", _render_footnote_open)
    md.add_render_rule("footnote_anchor", _render_footnote_anchor)
    return md


_PARSER = _build_parser()
