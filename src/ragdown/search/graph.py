"""The link graph from the index's link table: a document's links out and its backlinks, without reading
any file.

Links are stored as written, keyed by the name they use (`documents/linkkey.py`), and resolved when asked,
with the folder's resolver cached per store generation (`linking.document_resolver`): a document that
appears, moves or gains an alias changes where others' links point with nothing stored to update.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

from ragdown.documents.linkkey import document_keys
from ragdown.search.linking import document_resolver
from ragdown.storage.backend import IndexStore
from ragdown.storage.filter_sql import FileFilter
from ragdown.storage.records import FileRecord, LinkRow


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


@dataclass(frozen=True)
class ScopeFiles:
    """The documents a filter lets through, by path, and by tag (each file under every tag it has and every
    parent of one: `project/x` under `project` too, as the tag filter matches), paths in path order."""

    by_path: dict[str, FileRecord]
    tagged: dict[str, list[str]]


_scope_cache: weakref.WeakKeyDictionary[IndexStore, dict[FileFilter, tuple[int, ScopeFiles]]] = (
    weakref.WeakKeyDictionary()
)
_scope_lock = threading.Lock()
SCOPE_CACHE = 16  # filters (endpoints, keys) kept per store


def scope_files(store: IndexStore, flt: FileFilter) -> ScopeFiles:
    """`store.list_files(flt)` as path and tag maps, built once per store generation: a note's shared-tag
    neighbours and its neighbours' titles are then dictionary look-ups, not a `LIKE` scan per tag."""
    generation = store.generation()
    with _scope_lock:
        cached = _scope_cache.setdefault(store, {}).get(flt)
    if cached is not None and cached[0] == generation:
        return cached[1]
    files = store.list_files(flt)
    by_path = {f.path: f for f in files}
    tagged: dict[str, list[str]] = {}
    for f in sorted(files, key=lambda f: f.path):
        names = {
            "/".join(parts[:n]) for parts in (t.split("/") for t in f.tags) for n in range(1, len(parts) + 1)
        }
        for name in names:
            tagged.setdefault(name, []).append(f.path)
    view = ScopeFiles(by_path, tagged)
    with _scope_lock:
        kept = _scope_cache.setdefault(store, {})
        if len(kept) >= SCOPE_CACHE and flt not in kept:
            kept.pop(next(iter(kept)))
        kept[flt] = (generation, view)
    return view
