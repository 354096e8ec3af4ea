"""A folder's link world: its documents (from the index) and attachments (from disk), for resolving links.

`folder_resolver` is the one place a `LinkResolver` over indexed documents is built: the tools, the HTTP
routes and link following in search all take theirs from it. The documents' part is cached per store
generation, so resolving many links costs one index read per change, not one per call.
"""

from __future__ import annotations

import threading
import weakref
from pathlib import Path

from ragdown.core.paths import is_markdown
from ragdown.documents import LinkResolver, find_links
from ragdown.storage.backend import IndexStore
from ragdown.storage.records import FileRecord
from ragdown.vault.walk import tree_files

_cache: weakref.WeakKeyDictionary[IndexStore, dict[str, tuple[int, dict[str, tuple[str, ...]]]]] = (
    weakref.WeakKeyDictionary()
)
_cache_lock = threading.Lock()
_resolvers: weakref.WeakKeyDictionary[IndexStore, dict[str, tuple[int, LinkResolver]]] = (
    weakref.WeakKeyDictionary()
)


def attachments(folder_dir: Path) -> list[str]:
    """Every non-Markdown file of a folder the indexer would walk (images, PDFs…), folder-relative."""
    return [
        Path(e.path).relative_to(folder_dir).as_posix()
        for e in tree_files(folder_dir)
        if not is_markdown(e.name)
    ]


def folder_files(store: IndexStore, folder: str) -> list[FileRecord]:
    """The indexed documents of one folder ('' in stdio mode, where the docs dir is the folder)."""
    return [f for f in store.all_files() if f.folder == folder]


def _documents(store: IndexStore, folder: str) -> dict[str, tuple[str, ...]]:
    """Folder-relative path → aliases of every indexed document of the folder, as of the store's generation."""
    generation = store.generation()
    with _cache_lock:
        cached = _cache.setdefault(store, {}).get(folder)
    if cached is not None and cached[0] == generation:
        return cached[1]
    strip = len(folder) + 1 if folder else 0
    docs = {f.path[strip:]: f.aliases for f in folder_files(store, folder)}
    with _cache_lock:
        _cache.setdefault(store, {})[folder] = (generation, docs)
    return docs


def folder_resolver(store: IndexStore, folder: str, folder_dir: Path | None = None) -> LinkResolver:
    """Resolves wikilinks among all documents of `folder`; with `folder_dir`, attachments on disk too."""
    return LinkResolver(_documents(store, folder), attachments(folder_dir) if folder_dir is not None else ())


def document_resolver(store: IndexStore, folder: str) -> LinkResolver:
    """A resolver over `folder`'s indexed documents alone (no walk of the disk for attachments), built once
    per store generation: where only links between documents count (backlinks, a note's neighbourhood)."""
    generation = store.generation()
    with _cache_lock:
        cached = _resolvers.setdefault(store, {}).get(folder)
    if cached is not None and cached[0] == generation:
        return cached[1]
    resolver = LinkResolver(_documents(store, folder))
    with _cache_lock:
        _resolvers.setdefault(store, {})[folder] = (generation, resolver)
    return resolver


def warm_resolvers(store: IndexStore) -> None:
    """Build `document_resolver` for every folder of `store` (and the Markdown parser that finds links)
    ahead of the first search that lends along links (`search/evidence.py`)."""
    find_links("[[ragdown]]")
    for folder in sorted({f.folder for f in store.all_files()}):
        document_resolver(store, folder)
