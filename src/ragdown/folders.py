"""Folders and their `.ragdown.json`: title, MCP switch and hook defaults, read on every call.

Unknown keys are kept when the file is written back; an invalid hook value is skipped (the next layer's
default applies) rather than failing the call.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdown import atomic
from ragdown.errors import bad_request

log = logging.getLogger(__name__)

SETTINGS_FILE = ".ragdown.json"
HOOK_KEYS = ("top_k", "min_score", "min_ratio", "max_chars")
_FOLDER_NAME = re.compile(r"^[^./\\\x00-\x1f][^/\\\x00-\x1f]{0,99}$")


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
    raw: dict[str, Any] = field(default_factory=dict)


def hook_value_error(key: str, value: Any) -> str | None:
    """Why `value` is not a valid hook `key`, or None when it is."""
    if isinstance(value, bool):
        return f"hook.{key} must be a number"
    if key in ("top_k", "max_chars"):
        if not isinstance(value, int):
            return f"hook.{key} must be a whole number"
        if key == "top_k" and not 1 <= value <= 50:
            return "hook.top_k must be between 1 and 50"
        if key == "max_chars" and value < 1:
            return "hook.max_chars must be at least 1"
        return None
    if not isinstance(value, int | float):
        return f"hook.{key} must be a number"
    if not 0 <= value <= 1:
        return f"hook.{key} must be between 0 and 1"
    return None


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


def read_settings_file(directory: Path) -> dict[str, Any]:
    path = directory / SETTINGS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        log.warning("%s is not valid JSON (%s); using defaults", path, err)
        return {}
    return data if isinstance(data, dict) else {}


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
        raw=raw,
    )


def write_settings_file(directory: Path, data: dict[str, Any]) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    path = directory / SETTINGS_FILE
    if path.exists():
        atomic.replace(path, text.encode())
    else:
        atomic.write_new(path, text.encode())


def validate_folder_name(raw: Any) -> str:
    """A folder name the web UI accepts: one segment, no dot or dash start, not node_modules."""
    if not isinstance(raw, str) or not raw.strip():
        raise bad_request("a folder name is required")
    name: str = raw.strip()
    if name in (".", "..") or name == "node_modules" or name.startswith("-") or not _FOLDER_NAME.match(name):
        raise bad_request(
            f"{name!r} is not a usable folder name: one name without / or \\, not starting with . or -, "
            "and not node_modules"
        )
    return name


def list_folders(root: Path) -> list[str]:
    """Top-level directories of the docs dir that the indexer walks, sorted."""
    out: list[str] = []
    try:
        entries = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError:
        return out
    for entry in entries:
        if (
            entry.name.startswith(".")
            or entry.name == "node_modules"
            or entry.is_symlink()
            or not entry.is_dir()
        ):
            continue
        out.append(entry.name)
    return out
