"""The one markdown-it parser of the preview: CommonMark with tables, strikethrough, task lists and footnotes,
plus the Obsidian rules of `links.py`, `blocks.py`, `footnotes.py` and `math.py`."""

from __future__ import annotations

from markdown_it import MarkdownIt
from mdit_py_plugins.footnote import footnote_plugin

from ragdown.render.blocks import callouts, mark_post, mark_rule, task_items
from ragdown.render.footnotes import (
    render_footnote_anchor,
    render_footnote_block_open,
    render_footnote_open,
    render_footnote_ref,
)
from ragdown.render.links import (
    block_ids,
    render_hashtag,
    render_wikilink,
    resolve_links,
    tag_rule,
    wikilink_rule,
)
from ragdown.render.math import math_plugin


def _build_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "tasklists": True})
    md.enable("table").enable("strikethrough")
    md.use(math_plugin)  # `$…$`, `$$…$$`: before the links, so `[[` inside TeX stays TeX
    md.use(footnote_plugin)  # `[^1]` and `^[inline]`, moved to the end by its `footnote_tail` core rule
    md.inline.ruler.before("link", "wikilink", wikilink_rule)
    md.inline.ruler.before("link", "hashtag", tag_rule)
    md.inline.ruler.before("emphasis", "mark", mark_rule)
    md.inline.ruler2.before("emphasis", "mark", mark_post)
    md.core.ruler.after("block", "ragdown_callouts", callouts)
    # After the footnotes are moved, so links in them are resolved and their blocks get `data-line`.
    md.core.ruler.after("footnote_tail", "ragdown_links", resolve_links)
    md.core.ruler.after("ragdown_links", "ragdown_block_ids", block_ids)
    md.core.ruler.after("ragdown_block_ids", "ragdown_tasks", task_items)
    md.add_render_rule("wikilink", render_wikilink)
    md.add_render_rule("hashtag", render_hashtag)
    md.add_render_rule("footnote_ref", render_footnote_ref)
    md.add_render_rule("footnote_block_open", render_footnote_block_open)
    md.add_render_rule("footnote_open", render_footnote_open)
    md.add_render_rule("footnote_anchor", render_footnote_anchor)
    return md


PARSER = _build_parser()
