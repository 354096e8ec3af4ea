"""Server settings saved from the web UI: `.ragdown-server.json` in the docs dir, over the variables.

Each saved value wins over the `RAGDOWN_*` variable of the same setting, at once and after restarts, until
it is cleared (`null`), which gives the value back to its variable. The file is deleted when empty.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from ragdown.core import atomic
from ragdown.core.config import HOOK_KEYS, SERVER_KEYS, problem
from ragdown.core.errors import bad_request

log = logging.getLogger(__name__)

FILE_NAME = ".ragdown-server.json"
KEYS = (*SERVER_KEYS, "hook")


def _problem(key: str, value: Any) -> str | None:
    """Why a saved value is not valid, checked against the one settings schema (`config.SETTINGS`)."""
    if key == "hook":
        if not isinstance(value, dict):
            return "hook must be an object"
        for k, v in value.items():
            if k not in HOOK_KEYS:
                return f"hook.{k} is not a setting (use {', '.join(HOOK_KEYS)})"
            if v is not None and (found := problem(f"hook.{k}", v)):
                return found
        return None
    if key not in SERVER_KEYS:
        return f"{key} is not a server setting (use {', '.join(KEYS)})"
    return problem(key, value)


def load(docs_dir: Path) -> dict[str, Any]:
    """The saved settings; invalid entries are logged and ignored."""
    path = docs_dir / FILE_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        log.warning("%s is not valid JSON (%s); ignoring it", path, err)
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, Any] = {}
    for key, value in data.items():
        problem = _problem(key, value)
        if problem:
            log.warning("%s: %s; ignoring it", path, problem)
            continue
        out[key] = {k: v for k, v in value.items() if v is not None} if key == "hook" else value
    return out


def merge(saved: dict[str, Any], patch: Any) -> dict[str, Any]:
    """The saved settings after a PATCH body (400 for anything invalid; nothing changes then)."""
    if not isinstance(patch, dict):
        raise bad_request("send a JSON object of settings")
    result = {k: (dict(v) if isinstance(v, dict) else v) for k, v in saved.items()}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
            continue
        problem = _problem(key, value)
        if problem:
            raise bad_request(problem)
        if key == "hook":
            hook = dict(result.get("hook") or {})
            for k, v in value.items():
                if v is None:
                    hook.pop(k, None)
                else:
                    hook[k] = v
            if hook:
                result["hook"] = hook
            else:
                result.pop("hook", None)
        else:
            result[key] = value.strip() if isinstance(value, str) else value
    return result


def save(docs_dir: Path, data: dict[str, Any]) -> None:
    path = docs_dir / FILE_NAME
    if not data:
        path.unlink(missing_ok=True)
        return
    text = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()
    if path.exists():
        atomic.replace(path, text)
    else:
        atomic.write_new(path, text)
