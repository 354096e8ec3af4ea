"""A document's frontmatter properties and link targets as the index keeps them, once for both stores.

`props` holds one row per value (a list gives one row per item): the key (case-folded), its kind (`n` number,
`d` date or time, `b` true/false, `t` text, `o` anything else, `z` empty), its text and case-folded text, a
number to compare (the number, or a date's seconds since 1970 UTC) and the whole value as JSON (what a
query shows). `links` holds the case-folded name each link points at (`[[a/Note#H]]`, `../a/Note.md`: `note`),
so "documents linking to X" is one indexed look-up.
"""

from __future__ import annotations

import datetime as dt
import json
import posixpath
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

MAX_ITEMS = 200  # values kept of one list property
MAX_TEXT = 512  # characters of a value kept for comparison

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")


class PropRow(NamedTuple):
    key: str
    kind: str
    text: str | None
    low: str | None
    num: float | None
    value: str


def date_seconds(text: str) -> float | None:
    """Seconds since 1970 (UTC; a date or a time without a zone counts as UTC) of an ISO date, else None."""
    text = text.strip()
    if not _DATE.match(text):
        return None
    try:
        when = dt.datetime.fromisoformat(text.replace(" ", "T", 1) if len(text) > 10 else text)
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


def json_safe(value: Any) -> Any:
    """A frontmatter value as JSON can carry it (keys as text, anything odd as its text)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _item(key: str, item: Any, whole: str) -> PropRow:
    if item is None:
        return PropRow(key, "z", None, None, None, whole)
    if isinstance(item, bool):
        text = "true" if item else "false"
        return PropRow(key, "b", text, text, 1.0 if item else 0.0, whole)
    if isinstance(item, int | float):
        number = float(item)
        return PropRow(key, "n", str(item), str(item), number if abs(number) < 1e300 else None, whole)
    if isinstance(item, str):
        text = item[:MAX_TEXT]
        seconds = date_seconds(text)
        return PropRow(key, "d" if seconds is not None else "t", text, text.casefold(), seconds, whole)
    text = json.dumps(item, ensure_ascii=False, default=str)[:MAX_TEXT]
    return PropRow(key, "o", text, text.casefold(), None, whole)


NAME_KEY = "file.name"  # the file's name without `.md`, kept as a property so it filters and sorts like one


def property_rows(properties: Mapping[str, Any], path: str = "") -> list[PropRow]:
    """The `props` rows of a document's frontmatter, and its file name (`NAME_KEY`; a frontmatter key
    beginning `file.` is left out: that name is the file's)."""
    name = posixpath.basename(path)
    name = name[:-3] if name.lower().endswith(".md") else name
    rows: list[PropRow] = (
        [PropRow(NAME_KEY, "t", name, name.casefold(), None, json.dumps(name))] if path else []
    )
    seen: set[str] = set()
    for raw_key, value in properties.items():
        key = str(raw_key).strip().casefold()
        if not key or key in seen or key.startswith("file."):
            continue
        seen.add(key)
        whole = json.dumps(json_safe(value), ensure_ascii=False)
        items = value[:MAX_ITEMS] if isinstance(value, list) else [value]
        if not items:
            rows.append(PropRow(key, "z", None, None, None, whole))
        rows.extend(_item(key, item, whole) for item in items)
    return rows
