"""Normalising what callers pass as filters: path prefixes and tags."""

from __future__ import annotations


class OutsideError(ValueError):
    """A path that leaves the folder it is meant for."""


def normalise_prefix(raw: str) -> str:
    """`./ops/`, `ops/` and `ops` are the same directory; `..` anywhere is refused; `` is everything."""
    text = raw.replace("\\", "/").strip()
    if "\x00" in text:
        raise OutsideError(f"path_prefix {raw!r} is outside the docs folder")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if text.startswith("/") or any(p == ".." for p in parts):
        raise OutsideError(f"path_prefix {raw!r} is outside the docs folder")
    return "/".join(parts)


def normalise_tag(raw: str) -> str:
    """Leading `#` and trailing `/` stripped, lowercased: `#Project/` is `project`."""
    return raw.strip().lstrip("#").rstrip("/").lower()
