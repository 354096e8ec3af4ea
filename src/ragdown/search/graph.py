"""The link graph from the index's link table: a document's links out and its backlinks, without reading
any file.

Links are stored as written, keyed by the name they use (`documents/linkkey.py`), and resolved when asked,
with the folder's resolver cached per store generation (`linking.document_resolver`): a document that
appears, moves or gains an alias changes where others' links point with nothing stored to update.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragdown.documents.linkkey import document_keys
from ragdown.search.linking import document_resolver
from ragdown.storage.backend import IndexStore
from ragdown.storage.records import LinkRow


@dataclass(frozen=True)
class Edge:
    """A link from `source` to `target` (docs-relative paths), with its line and that line's text."""

    source: str
    target: str
    anchor: str | None
    line: int
    text: str


def _in_folder(folder: str, docs_path: str) -> str:
    return docs_path[len(folder) + 1 :] if folder else docs_path


def _docs(folder: str, folder_path: str) -> str:
    return f"{folder}/{folder_path}" if folder else folder_path


def links_out(store: IndexStore, folder: str, source: str) -> list[Edge]:
    """The links written in the document `source` (docs-relative) that resolve to a document of its folder."""
    resolver = document_resolver(store, folder)
    from_path = _in_folder(folder, source)
    out: list[Edge] = []
    for row in store.links_from(source):
        resolved = resolver.resolve_link(row.as_link(), from_path)
        if resolved is not None and resolved.path is not None and resolved.path in resolver.documents:
            out.append(Edge(source, _docs(folder, resolved.path), resolved.anchor, row.line, row.text))
    return out


def backlinks(store: IndexStore, folder: str, target: str, aliases: tuple[str, ...]) -> list[Edge]:
    """The links of other documents of the folder that resolve to `target` (docs-relative), by source path
    and line: only the stored links named by its name or an alias are resolved."""
    resolver = document_resolver(store, folder)
    wanted = _in_folder(folder, target)
    rows: list[LinkRow] = store.links_named(folder, document_keys(wanted, aliases))
    out: list[Edge] = []
    for row in rows:
        if row.source == target:
            continue
        resolved = resolver.resolve_link(row.as_link(), _in_folder(folder, row.source))
        if resolved is not None and resolved.path == wanted:
            out.append(Edge(row.source, target, resolved.anchor, row.line, row.text))
    return out
