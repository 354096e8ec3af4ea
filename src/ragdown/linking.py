"""A folder's link world: its documents (from the index) and attachments (from disk), for resolving links."""

from __future__ import annotations

import os
from pathlib import Path

from ragdown.documents import LinkResolver
from ragdown.index.store import FileRecord, Store
from ragdown.index.walk import is_markdown, is_skipped_dir
from ragdown.scope import Scope


def attachments(folder_dir: Path) -> list[str]:
    """Every non-Markdown file of a folder the indexer would walk (images, PDFs…), folder-relative."""
    out: list[str] = []
    stack = [(folder_dir, "")]
    while stack:
        directory, rel = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                if not is_skipped_dir(entry.name):
                    stack.append((Path(entry.path), f"{rel}{entry.name}/"))
            elif not is_markdown(entry.name):
                out.append(f"{rel}{entry.name}")
    return out


def folder_files(store: Store, scope: Scope) -> list[FileRecord]:
    return [f for f in store.all_files() if f.folder == scope.folder]


def folder_resolver(store: Store, scope: Scope, *, with_attachments: bool = True) -> LinkResolver:
    """Resolves wikilinks among all documents of the scope's folder (not just the scope)."""
    docs = {scope.folder_path(f.path): f.aliases for f in folder_files(store, scope)}
    return LinkResolver(docs, attachments(scope.folder_dir) if with_attachments else ())
