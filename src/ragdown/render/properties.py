"""The frontmatter shown as Obsidian's properties: a table of keys and values, tags as chips, wikilinks
resolved, nested values to a depth."""

from __future__ import annotations

import json
import re

from markdown_it.common.utils import escapeHtml

from ragdown.documents.frontmatter import load_yaml_mapping
from ragdown.documents.meta import normalize_tag
from ragdown.render.context import ENV_KEY, Context
from ragdown.render.parser import PARSER

_MAX_PROPERTY_DEPTH = 3
_TAG_SPLIT = re.compile(r"[\s,]+")
_WIKILINK_VALUE = re.compile(r"\[\[[^\[\]\n]+\]\]")


def render_properties(source: str, context: Context) -> str:
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


def _property_value(key: str, value: object, context: Context, depth: int) -> str:
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
        rendered: str = PARSER.renderInline(text.strip(), {ENV_KEY: context})
        return rendered
    return f'<span class="property-text">{escapeHtml(text)}</span>'


_EMPTY_PROPERTY = '<span class="property-empty" aria-label="empty">—</span>'


def _property_tag(item: object) -> str:
    text = str(item).strip()
    tag = normalize_tag(text)
    if tag is None:
        return f'<li class="property-chip">{escapeHtml(text)}</li>'
    return f'<li class="property-chip property-tag"><span class="tag" data-tag="{escapeHtml(tag)}">#{escapeHtml(tag)}</span></li>'
