"""A document's preview HTML, the two entry points: `render_markdown` (the text, with the link callables the
caller gives) and `render_document` (links resolved by the folder's `LinkResolver`)."""

from __future__ import annotations

from markdown_it.utils import EnvType

from ragdown.documents.frontmatter import frontmatter_end
from ragdown.documents.links import LinkResolver
from ragdown.documents.text import normalize_text, split_lines
from ragdown.render.context import ENV_KEY, Context, FileUrl, ResolveLink, doc_href
from ragdown.render.parser import PARSER
from ragdown.render.properties import render_properties

__all__ = ["doc_href", "render_document", "render_markdown"]


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
    context = Context(
        resolve_link=resolve_link,
        resolve_relative=resolve_relative or resolve_link,
        file_url=file_url,
        line_offset=end,
    )
    head = render_properties("\n".join(lines[1 : end - 1]), context) if end else ""
    env: EnvType = {ENV_KEY: context}
    body = "\n".join(lines[end:])
    html: str = PARSER.render(body, env)
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


# --- resolving: a core rule over every token ----------------------------------------------------


# --- rendering ----------------------------------------------------------------------------------


# --- Obsidian callouts: a blockquote whose first line is `[!type]` --------------------------------


# --- `==highlight==`: markdown-it's strikethrough rule with `=` (as markdown-it-mark) ------------


# --- task lists: Obsidian marks a done item ------------------------------------------------------


# --- footnotes: mdit-py-plugins' parser, rendered without element ids ----------------------------


# --- frontmatter: a table of properties ----------------------------------------------------------
