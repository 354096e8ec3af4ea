"""Normalising what callers pass as a tag filter (path prefixes are `paths.normalise_prefix`)."""

from __future__ import annotations


def normalise_tag(raw: str) -> str:
    """Leading `#` and trailing `/` stripped, lowercased: `#Project/` is `project`."""
    return raw.strip().lstrip("#").rstrip("/").lower()
