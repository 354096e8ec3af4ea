"""Which files count: gitignore rules, read with `pathspec`'s gitignore semantics, never a hand-written matcher.

Under each folder (the docs dir itself under `stdio`), these decide, in order:

1. `.gitignore` files at any level, and `.git/info/exclude` at the folder root: a deeper file's patterns are
   read after its parents', so they win (negation `!` included); a path inside an ignored directory cannot
   be brought back (git's own rule: the walk never enters the directory);
2. `.ragdownignore` at the folder root (the same syntax), for rules that do not belong in `.gitignore`, and
   `.markindexignore` there too (MarkIndex's file, read the same way, so a library it indexed keeps its rules);
3. the folder's settings (`.ragdown.json`): `exclude`, gitignore-style patterns that only exclude, and
   `include`: when given, only paths it matches count;
4. `ragdown index --ignore PATTERN`: more exclusions.

The rules are read once per sync (an `IgnoreRules` lives for one walk, and caches what it read per
directory); a single path can be checked the same way before a write (`ignored_reason`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ragdown.core.errors import bad_request
from ragdown.vault.folders import read_settings_file

if TYPE_CHECKING:  # imported by `_spec`, the first time a rule is read: a vault without rules never loads it
    from pathspec import GitIgnoreSpec

IGNORE_FILE = ".ragdownignore"
MARKINDEX_IGNORE_FILE = ".markindexignore"  # MarkIndex's own (seed 001): the same syntax, only excludes
GITIGNORE = ".gitignore"


@dataclass(frozen=True)
class _Layer:
    base: str  # the directory the patterns are relative to (docs-relative, '' for the docs dir)
    spec: GitIgnoreSpec
    source: str  # where they came from, for messages
    git: bool  # gitignore precedence (a deeper match, `!` too, wins); else an exclusion that always holds


def _read_lines(path: str) -> list[str] | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().splitlines()
    except OSError:
        return None


def _patterns(raw: object) -> list[str]:
    """A settings value as a list of patterns: a list of strings, or one string."""
    if isinstance(raw, str):
        return [raw] if raw.strip() else []
    if isinstance(raw, list):
        return [p for p in raw if isinstance(p, str) and p.strip()]
    return []


def _spec(lines: Sequence[str]) -> GitIgnoreSpec:
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec.from_lines(lines)


def _relative(path: str, base: str) -> str:
    return path[len(base) + 1 :] if base else path


class IgnoreRules:
    """The rules of one docs dir, as one walk (or one check) reads them."""

    def __init__(self, root: Path, *, folders: bool, extra: Sequence[str] = ()) -> None:
        self.root = root
        self.folders = folders
        self._extra = _spec(extra) if extra else None
        self._layers: dict[str, tuple[_Layer, ...]] = {}
        self._includes: dict[str, GitIgnoreSpec | None] = {}

    def folder_of(self, rel: str) -> str:
        """The folder (its docs-relative root) a docs-relative path lies in: its first segment under serve."""
        return rel.split("/", 1)[0] if self.folders else ""

    def _folder_layers(self, folder: str) -> list[_Layer]:
        """`.git/info/exclude`, `.ragdownignore` and the settings' `exclude` of a folder's root."""
        directory = os.path.join(self.root, folder) if folder else str(self.root)
        layers: list[_Layer] = []
        exclude = _read_lines(os.path.join(directory, ".git", "info", "exclude"))
        if exclude:
            layers.append(_Layer(folder, _spec(exclude), ".git/info/exclude", git=True))
        for name in (IGNORE_FILE, MARKINDEX_IGNORE_FILE):
            own = _read_lines(os.path.join(directory, name))
            if own:
                layers.append(_Layer(folder, _spec(own), name, git=False))
        settings = read_settings_file(Path(directory))
        excluded = _patterns(settings.get("exclude"))
        if excluded:
            spec = _spec(excluded)
            layers.append(_Layer(folder, spec, "the folder's exclude setting", git=False))
        included = _patterns(settings.get("include"))
        self._includes[folder] = _spec(included) if included else None
        return layers

    def _layers_of(self, directory: str) -> tuple[_Layer, ...]:
        """Every layer that applies inside `directory` (docs-relative), shallowest first; each file read once."""
        cached = self._layers.get(directory)
        if cached is not None:
            return cached
        inherited: tuple[_Layer, ...] = ()
        if directory:
            inherited = self._layers_of(directory.rsplit("/", 1)[0] if "/" in directory else "")
        own: list[_Layer] = []
        is_folder_root = directory == self.folder_of(directory) and not (self.folders and directory == "")
        if is_folder_root:
            own.extend(self._folder_layers(directory))
        lines = _read_lines(os.path.join(self.root, directory, GITIGNORE))
        if lines:
            source = f"{directory}/{GITIGNORE}" if directory else GITIGNORE
            own.append(_Layer(directory, _spec(lines), source, git=True))
        layers = (*inherited, *own)
        self._layers[directory] = layers
        return layers

    def quiet(self, directory: str) -> bool:
        """True when no rule can leave out an entry of `directory` (docs-relative, '' for the docs dir): no
        ignore file or `exclude` above it, no `include` for its folder, no `--ignore`. The walk then asks
        nothing about its entries (a vault without rules pays no matching per file)."""
        if self._extra is not None or self._layers_of(directory):
            return False
        if self.folders and not directory:
            return True  # files here are loose, never indexed; an `include` applies to files only
        folder = self.folder_of(directory)
        if folder not in self._includes:
            self._layers_of(folder)
        return self._includes.get(folder) is None

    def why(self, rel: str, *, is_dir: bool) -> str | None:
        """Why the docs-relative `rel` is ignored (the rule's source), or None when it counts.

        The walk asks for each entry of a directory it entered, so its ancestors are known to count; a
        single path is checked with `ignored_reason`, which asks for each ancestor first."""
        parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
        candidate = _relative(rel, "") + ("/" if is_dir else "")
        git_verdict: _Layer | None = None
        for layer in self._layers_of(parent):
            if layer.base and not rel.startswith(layer.base + "/"):
                continue
            checked = layer.spec.check_file(_relative(rel, layer.base) + ("/" if is_dir else ""))
            if layer.git:
                if checked.include is not None:
                    git_verdict = layer if checked.include else None
            elif checked.include:
                return layer.source
        if git_verdict is not None:
            return git_verdict.source
        folder = self.folder_of(rel)
        if folder not in self._includes:
            self._layers_of(folder)
        include = self._includes.get(folder)
        if include is not None and not is_dir and not include.match_file(_relative(rel, folder)):
            return "the folder's include setting"
        if self._extra is not None and self._extra.match_file(candidate):
            return "--ignore"
        return None

    def ignored(self, rel: str, *, is_dir: bool) -> bool:
        return self.why(rel, is_dir=is_dir) is not None


def ignored_reason(root: Path, rel: str, *, folders: bool) -> str | None:
    """Why a docs-relative path would not be indexed by the rules on disk now: it, or a directory above it,
    is ignored. None when it counts. Used before a write, so nothing is written that search never finds."""
    rules = IgnoreRules(root, folders=folders)
    parts = rel.split("/")
    for depth in range(1, len(parts)):
        reason = rules.why("/".join(parts[:depth]), is_dir=True)
        if reason is not None:
            return reason
    return rules.why(rel, is_dir=False)


def refuse_ignored(root: Path, path: Path, display: str, *, folders: bool) -> None:
    """Refuse a write to a path the ignore rules leave out: an agent must not write a note never found."""
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        return
    reason = ignored_reason(root, rel, folders=folders)
    if reason is not None:
        raise bad_request(
            f"{display} is ignored (by {reason}), so it would never be indexed or found: write it where the "
            "ignore rules allow, or change the rule"
        )
