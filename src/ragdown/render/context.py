"""What the rendering rules share: the link callables a render is given, cached per render, and the UI's
route to a document."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import quote

ResolveLink = Callable[[str], "str | None"]
FileUrl = Callable[[str], str]


ENV_KEY = "ragdown"


def doc_href(path: str, anchor: str | None = None) -> str:
    """The web UI's route to a document: `#/d/<path>`, plus `?h=<heading>` for an anchor."""
    href = "#/d/" + quote(path, safe="/")
    return f"{href}?h={quote(anchor, safe='')}" if anchor else href


@dataclass
class Context:
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
