"""Footnotes as the UI links them: numbered references and back-references with `data-footnote` attributes,
no element ids (an embedded note's footnotes never clash with the host's)."""

from __future__ import annotations

from collections.abc import Sequence

from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from ragdown.render.links import element


def _footnote_number(token: Token) -> str:
    return str(int(token.meta["id"]) + 1)


def _footnote_ref_key(token: Token) -> str:
    sub = int(token.meta.get("subId", 0) or 0)
    return _footnote_number(token) + (f":{sub}" if sub > 0 else "")


def render_footnote_ref(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    number = _footnote_number(token)
    link = element(
        "a",
        [
            ("href", "#"),
            ("class", "footnote-link"),
            ("data-footnote", number),
            ("aria-label", f"Footnote {number}"),
        ],
        f"[{number}]",
    )
    return element("sup", [("class", "footnote-ref"), ("data-footnote-ref", _footnote_ref_key(token))], link)


def render_footnote_block_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return '<section class="footnotes" aria-label="Footnotes">\n<hr class="footnotes-sep">\n<ol class="footnotes-list">\n'


def render_footnote_open(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    return f'<li class="footnote-item" data-footnote-id="{_footnote_number(tokens[idx])}">'


def render_footnote_anchor(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    attrs = [
        ("href", "#"),
        ("class", "footnote-backref"),
        ("data-footnote-back", _footnote_ref_key(tokens[idx])),
        ("aria-label", "Back to the text"),
    ]
    # ↩ with the text variation selector, so no platform draws it as an emoji.
    return " " + element("a", attrs, "\u21a9\ufe0e")
