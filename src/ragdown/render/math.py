"""TeX math as Obsidian writes it: `$…$` inline, `$$…$$` for display (on its own lines or inside a
paragraph). mdit-py-plugins' dollarmath parses it, with Obsidian's rules for inline math: no space just
inside the dollars and no digit right after the closing one, so `$5 and $10` stays text. The TeX is kept
as escaped text in `<span class="math math-inline">` / `<span|div class="math math-display">`, and the web
UI typesets it with KaTeX (web/enhance.js); nothing in it is ever HTML."""

from __future__ import annotations

from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from mdit_py_plugins.dollarmath import dollarmath_plugin


def _inline(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    return f'<span class="math math-inline">{escapeHtml(tokens[idx].content)}</span>'


def _inline_display(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    # `$$…$$` inside a paragraph: shown as a display formula, in a span so the paragraph stays valid.
    return f'<span class="math math-display">{escapeHtml(tokens[idx].content)}</span>'


def _block(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    return (
        f'<div class="math math-display"{self.renderAttrs(token)}>{escapeHtml(token.content.strip())}</div>\n'
    )


def math_plugin(md: MarkdownIt) -> None:
    """`$…$` and `$$…$$`, rendered as the module docstring says."""
    md.use(
        dollarmath_plugin,
        allow_labels=False,
        allow_space=False,
        allow_digits=False,
        double_inline=True,
    )
    md.add_render_rule("math_inline", _inline)
    md.add_render_rule("math_inline_double", _inline_display)
    md.add_render_rule("math_block", _block)
