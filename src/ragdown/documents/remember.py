"""Names and frontmatter of the documents `ragdown_remember` writes (A11)."""

from __future__ import annotations

import datetime
import posixpath
import re
import unicodedata
from collections.abc import Iterator, Sequence

from ragdown.documents.meta import normalize_tag
from ragdown.documents.writes import yaml_string

REMEMBER_TOOL = "ragdown_remember"
SLUG_LENGTH = 60

_NOT_ALNUM = re.compile(r"[\W_]+")


def slugify(title: str) -> str:
    """Lowercased, NFKD-normalised, runs of anything but letters and digits as `-`, ends trimmed, cut
    to 60 characters; `note` when nothing is left."""
    text = unicodedata.normalize("NFKD", title.lower())
    slug = _NOT_ALNUM.sub("-", text).strip("-")[:SLUG_LENGTH]
    return slug or "note"


def note_tags(raw: Sequence[str]) -> tuple[str, ...]:
    """The tags `ragdown_remember` writes for the ones it was given: each as the indexer reads it
    (`normalize_tag`), so every tag written is a tag the document is found by. Surrounding spaces, a leading
    `#` and a trailing `/` are dropped (`#Project/alpha` is `Project/alpha`), a repeat is written once; a tag
    that is blank, or that the indexer would not take, raises `ValueError` saying why."""
    tags: list[str] = []
    seen: set[str] = set()
    for item in raw:
        if not item.strip():
            raise ValueError(f"tag {item!r} is blank")
        indexed = normalize_tag(item)
        if indexed is None:
            raise ValueError(
                f"tag {item!r} cannot be a tag: a tag holds only letters, digits, _, - and / (no spaces), "
                "and not only digits and slashes"
            )
        if indexed not in seen:
            seen.add(indexed)
            tags.append(item.strip().lstrip("#").rstrip("/"))
    return tuple(tags)


def utc_today() -> datetime.date:
    """Today's date in UTC."""
    return datetime.datetime.now(datetime.UTC).date()


def default_note_name(title: str, today: datetime.date | None = None) -> str:
    """`<YYYY-MM-DD>-<slug>`, the file name (without `.md`) when none is given."""
    return f"{(today or utc_today()).isoformat()}-{slugify(title)}"


def note_names(base: str) -> Iterator[str]:
    """`base`, `base-2`, `base-3`, …: the names to try, in order, until one is free."""
    yield base
    number = 2
    while True:
        yield f"{base}-{number}"
        number += 1


def relative_path(from_file: str, target: str) -> str:
    """`target` as a path relative to the directory of `from_file` (both relative POSIX paths)."""
    source = [part for part in posixpath.dirname(from_file).split("/") if part]
    wanted = [part for part in target.split("/") if part]
    common = 0
    while common < min(len(source), len(wanted)) and source[common] == wanted[common]:
        common += 1
    return "/".join([".."] * (len(source) - common) + wanted[common:])


def remember_text(
    title: str,
    content: str,
    *,
    note_path: str,
    today: datetime.date | None = None,
    tags: Sequence[str] = (),
    supersedes: Sequence[str] = (),
    session_id: str | None = None,
) -> str:
    """The whole file `ragdown_remember` writes at `note_path`: frontmatter, then the content
    right-trimmed and one newline. `supersedes` are paths in the same coordinates as `note_path`
    and are written relative to the note's directory."""
    front = [
        "---",
        f"title: {yaml_string(title)}",
        f"date: {(today or utc_today()).isoformat()}",
    ]
    if tags:
        front.append(f"tags: [{', '.join(yaml_string(tag) for tag in tags)}]")
    if supersedes:
        relative = (yaml_string(relative_path(note_path, path)) for path in supersedes)
        front.append(f"supersedes: [{', '.join(relative)}]")
    front.append(f"created_by: {REMEMBER_TOOL}")
    if session_id:
        front.append(f"session: {yaml_string(session_id)}")
    front.append("---")
    return "\n".join(front) + "\n" + content.rstrip() + "\n"
