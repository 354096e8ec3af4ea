"""A scope is what one endpoint sees: a folder, a subfolder of one, or (stdio) the whole docs dir.

Every path coming in or going out is relative to the scope. Paths in the index are relative to the docs
dir; `Scope` converts between the two and builds the file filter that keeps searches inside it.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path

from ragdown.core.errors import Refusal, not_found
from ragdown.core.paths import is_hidden, split_safe
from ragdown.storage.filter_sql import FileFilter
from ragdown.vault.folders import FolderSettings, folder_settings


@dataclass(frozen=True)
class Scope:
    root: Path  # the docs dir, resolved
    folder: str  # '' in stdio mode, else the folder name
    sub: str = ""  # a subfolder of the folder, '' for its root
    folders: tuple[str, ...] | None = None  # the root endpoint: every folder with MCP on, none chosen
    # The root endpoint's caller may see only these folders (a scoped key's, `access.Access.folders`);
    # None: every folder. `tools.root.mcp_folders` applies it, so each root tool sees only them.
    allowed: frozenset[str] | None = None

    @classmethod
    def over(cls, root: Path, folders: tuple[str, ...], allowed: frozenset[str] | None = None) -> Scope:
        """Several folders as one scope: its `file_filter` makes one search over all of them, so its hits are
        ranked together, on one scale (a search per folder ranks each on its own pools: their scores do
        not compare). The root MCP endpoint's, `/api/v1/search`'s and the web UI's search over folders."""
        return cls(root=root, folder="", folders=folders, allowed=allowed)

    @property
    def is_root(self) -> bool:
        return self.folders is not None

    @property
    def folder_prefix(self) -> str:
        return self.folder

    @property
    def prefix(self) -> str:
        """The scope's directory, relative to the docs dir ('' for the whole docs dir)."""
        return "/".join(p for p in (self.folder, self.sub) if p)

    @property
    def dir(self) -> Path:
        return self.root / self.prefix if self.prefix else self.root

    @property
    def folder_dir(self) -> Path:
        return self.root / self.folder if self.folder else self.root

    @property
    def is_subfolder(self) -> bool:
        return bool(self.sub)

    @property
    def index_folders(self) -> frozenset[str] | None:
        """The folders this scope covers, as the index groups documents (what its syncs walk and its reports
        count): its folder (a subfolder's too), the root endpoint's folders, or None, the whole docs dir."""
        if self.folders is not None:
            return frozenset(self.folders)
        return frozenset({self.folder}) if self.folder else None

    def settings(self) -> FolderSettings:
        return folder_settings(self.folder_dir, self.folder or self.root.name)

    def docs_path(self, scope_path: str) -> str:
        """A scope-relative path as a docs-relative one (the caller has sandboxed it)."""
        return f"{self.prefix}/{scope_path}" if self.prefix else scope_path

    def view(self, docs_path: str) -> str:
        """A docs-relative path as the scope shows it (`[work] backups.md` at the root endpoint); one outside a
        subfolder endpoint's subfolder (a link rewritten elsewhere in its folder) relative to it, `../a.md`."""
        if self.folders is not None:
            folder, _, rest = docs_path.partition("/")
            return f"[{folder}] {rest}"
        if not self.prefix:
            return docs_path
        if docs_path.startswith(self.prefix + "/"):
            return docs_path[len(self.prefix) + 1 :]
        return posixpath.relpath(docs_path, self.prefix)

    def place(self, docs_path: str) -> dict[str, str]:
        """A docs-relative path as the JSON keys that name it to this endpoint's tools, so that a hit passes
        back as it came: `{"folder": "work", "path": "backups.md"}` at the root endpoint (whose tools take a
        folder), `{"path": ...}` as `view` shows it elsewhere (whose tools take none)."""
        if self.folders is not None:
            folder, _, rest = docs_path.partition("/")
            return {"folder": folder, "path": rest}
        return {"path": self.view(docs_path)}

    def folder_path(self, docs_path: str) -> str:
        """A docs-relative path relative to its folder (where links resolve)."""
        if not self.folder:
            return docs_path
        return docs_path[len(self.folder) + 1 :]

    def from_folder_path(self, folder_path: str) -> str:
        return f"{self.folder}/{folder_path}" if self.folder else folder_path

    def contains(self, docs_path: str) -> bool:
        if self.folders is not None:
            return docs_path.split("/", 1)[0] in self.folders
        return not self.prefix or docs_path.startswith(self.prefix + "/")

    def file_filter(
        self,
        path_prefix: str = "",
        *,
        tag: str | None = None,
        written_by: str | None = None,
        session: str | None = None,
        hide_superseded: bool = True,
        changed_since_ns: int | None = None,
    ) -> FileFilter:
        if self.folders is not None:
            return FileFilter(
                prefixes=tuple(f"{f}/{path_prefix}" for f in self.folders) if path_prefix else (),
                folders=self.folders,
                tag=tag,
                written_by=written_by,
                session=session,
                hide_superseded=hide_superseded,
                changed_since_ns=changed_since_ns,
            )
        prefix = "/".join(p for p in (self.prefix, path_prefix) if p)
        return FileFilter(
            prefixes=(prefix,) if prefix else (),
            tag=tag,
            written_by=written_by,
            session=session,
            hide_superseded=hide_superseded,
            changed_since_ns=changed_since_ns,
        )


def open_scope(root: Path, folder: str, sub: str = "") -> Scope:
    """A scope for a folder (and subfolder); `not_found` for anything the indexer would not walk."""
    parts = [folder] if folder else []
    if sub:
        try:
            parts += split_safe(sub)
        except Refusal:
            raise not_found(f"no such folder: {folder}/{sub}") from None
    current = root
    for part in parts:
        if is_hidden(part) or "\\" in part or "\x00" in part or part == "..":
            raise not_found(f"no such folder: {'/'.join(parts)}")
        current = current / part
        if current.is_symlink() or not current.is_dir():
            raise not_found(f"no such folder: {'/'.join(parts)}")
    return Scope(root=root, folder=folder, sub="/".join(parts[1:]) if folder else "/".join(parts))
