"""Folders and their `.ragdown.json`: title, MCP switch and hook defaults, read on every call.

Unknown keys are kept when the file is written back; an invalid hook value is skipped (the next layer's
default applies) rather than failing the call.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdown.core import atomic
from ragdown.core.config import HOOK_KEYS, problem
from ragdown.core.errors import conflict
from ragdown.core.paths import folder_name, is_hidden, name_problem, printable_name

log = logging.getLogger(__name__)

SETTINGS_FILE = ".ragdown.json"


@dataclass(frozen=True)
class HookOverrides:
    top_k: int | None = None
    min_score: float | None = None
    min_ratio: float | None = None
    max_chars: int | None = None

    def as_dict(self) -> dict[str, int | float]:
        return {k: v for k in HOOK_KEYS if (v := getattr(self, k)) is not None}


@dataclass(frozen=True)
class FolderSettings:
    name: str
    title: str
    mcp: bool
    hook: HookOverrides
    created_by: str | None = None
    toolset: str | None = None  # the tool set its MCP endpoint offers (`toolsets`); None: the server's
    raw: dict[str, Any] = field(default_factory=dict)


def hook_value_error(key: str, value: Any) -> str | None:
    """Why `value` is not a valid hook `key` (checked against the one settings schema), or None."""
    return problem(f"hook.{key}", value)


def parse_hook(raw: Any, *, where: str) -> HookOverrides:
    """The valid keys of a `hook` object; invalid ones are logged and skipped."""
    if not isinstance(raw, dict):
        return HookOverrides()
    values: dict[str, Any] = {}
    for key in HOOK_KEYS:
        if key not in raw or raw[key] is None:
            continue
        problem = hook_value_error(key, raw[key])
        if problem:
            log.warning("%s: %s; using the next default", where, problem)
            continue
        values[key] = raw[key]
    return HookOverrides(**values)


def _load_settings(directory: Path) -> dict[str, Any]:
    """A folder's `.ragdown.json` ({} when there is none); a `ValueError` saying what is wrong with it."""
    path = directory / SETTINGS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        raise ValueError(f"cannot be read ({err})") from None
    try:
        data = json.loads(text)
    except ValueError as err:
        raise ValueError(f"is not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise ValueError("is not a JSON object")
    return data


def read_settings_file(directory: Path) -> dict[str, Any]:
    """A folder's settings as they apply: the defaults, logged, while its file cannot be used."""
    try:
        return _load_settings(directory)
    except ValueError as err:
        log.warning("%s %s; using defaults", directory / SETTINGS_FILE, err)
        return {}


def settings_to_change(directory: Path) -> dict[str, Any]:
    """A folder's settings about to be changed and written back: refused (nothing written) while its
    `.ragdown.json` cannot be used, which writing would replace, losing what the file held."""
    try:
        return _load_settings(directory)
    except ValueError as err:
        raise conflict(
            f"{directory.name}/{SETTINGS_FILE} {err}: fix it by hand first; nothing was changed"
        ) from None


def folder_settings(directory: Path, name: str | None = None) -> FolderSettings:
    raw = read_settings_file(directory)
    name = name or directory.name
    title = raw.get("title")
    created_by = raw.get("created_by")
    return FolderSettings(
        name=name,
        title=title if isinstance(title, str) and title.strip() else name,
        mcp=raw.get("mcp") is True,
        hook=parse_hook(raw.get("hook"), where=str(directory / SETTINGS_FILE)),
        created_by=created_by if isinstance(created_by, str) and created_by else None,
        toolset=toolset if isinstance(toolset := raw.get("toolset"), str) and toolset.strip() else None,
        raw=raw,
    )


def write_settings_file(directory: Path, data: dict[str, Any]) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    path = directory / SETTINGS_FILE
    if path.exists():
        atomic.replace(path, text.encode())
    else:
        atomic.write_new(path, text.encode(), display=f"{directory.name}/{SETTINGS_FILE}")


def validate_folder_name(raw: Any) -> str:
    """A folder name the web UI and the tools accept (`paths.folder_name`); refused before any disk change."""
    return folder_name(raw)


_reported_unusable: set[str] = set()


def list_folders(root: Path) -> list[str]:
    """Top-level directories of the docs dir that the indexer walks, sorted.

    A directory whose name ragdown cannot carry (not UTF-8 text, or holding a control character:
    `paths.name_problem`) is listed nowhere (and logged once).
    """
    out: list[str] = []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return out
    for entry in entries:
        try:
            if is_hidden(entry.name) or not entry.is_dir(follow_symlinks=False):
                continue
        except OSError:
            continue
        problem = name_problem(entry.name)
        if problem is not None:
            shown_name = printable_name(entry.name)
            if shown_name not in _reported_unusable:
                _reported_unusable.add(shown_name)
                log.warning("%s/%s is not a folder ragdown can use: %s", root, shown_name, problem)
            continue
        out.append(entry.name)
    return out
