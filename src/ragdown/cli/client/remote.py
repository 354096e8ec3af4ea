"""Where the client's server is and how it is asked: the saved config, the environment, one HTTP session.

`ragdown login` saves `{url, key}` in `$XDG_CONFIG_HOME/ragdown/client.json` (else
`~/.config/ragdown/client.json`), readable by its owner alone (0600, in a 0700 directory);
`RAGDOWN_URL` and `RAGDOWN_API_KEY` win over it (`config.client_env`). Every refusal of the server becomes
a `ClientError` with one line that says what to do about it.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from ragdown.core.config import client_env

API = "/api/v1"
TIMEOUT_S = 120  # a write answers after the index synced, which on a large first index takes a while


class ClientError(Exception):
    """A command that failed, with its one-line message and exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


# -- the saved config -------------------------------------------------------------------------------


def config_file() -> Path:
    return client_env().config_file


def load_config() -> dict[str, Any]:
    path = config_file()
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        raise ClientError(f"cannot read {path}: {err} (ragdown logout removes it)", 2) from None
    return data if isinstance(data, dict) else {}


def save_config(url: str, key: str | None) -> Path:
    """Write the config readable by its owner alone, atomically (a temp file created 0600, then renamed)."""
    path = config_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"url": url, "key": key}, out)
            out.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return path


def remove_config() -> Path | None:
    path = config_file()
    try:
        path.unlink()
    except FileNotFoundError:
        return None
    return path


@dataclass(frozen=True)
class Target:
    url: str
    key: str | None


def target(url: str | None = None, key: str | None = None) -> Target:
    """The server and key to use: given ones, else `RAGDOWN_URL` / `RAGDOWN_API_KEY`, else the saved ones."""
    env = client_env()
    saved = load_config()
    chosen = url or env.url or saved.get("url")
    if not isinstance(chosen, str) or not chosen.strip():
        raise ClientError("no server: run `ragdown login --url URL --key KEY` (or set RAGDOWN_URL)", 2)
    secret = key if key is not None else env.api_key if env.api_key is not None else saved.get("key")
    return Target(normal_url(chosen), secret if isinstance(secret, str) and secret else None)


def normal_url(url: str) -> str:
    text = url.strip().rstrip("/")
    if "://" not in text:
        text = "http://" + text
    return text


# -- asking the server -----------------------------------------------------------------------------


def folder_path(folder: str, *rest: str) -> str:
    """`/api/v1/folders/<folder>/<rest…>`, each segment percent-encoded."""
    parts = [quote(folder, safe="")]
    for piece in rest:
        parts.extend(quote(p, safe="") for p in piece.split("/"))
    return f"{API}/folders/" + "/".join(parts)


class Remote:
    def __init__(self, where: Target) -> None:
        self.where = where
        headers = {"Authorization": f"Bearer {where.key}"} if where.key else {}
        self.http = httpx.Client(base_url=where.url, headers=headers, timeout=TIMEOUT_S)

    def __enter__(self) -> Remote:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.http.close()

    def call(self, method: str, path: str, *, params: dict[str, Any] | None = None, body: Any = None) -> Any:
        """The JSON answer of one request, or a `ClientError` saying what went wrong."""
        query = {
            k: [_query_value(x) for x in v] if isinstance(v, list | tuple) else _query_value(v)
            for k, v in (params or {}).items()
            if v is not None
        }
        try:
            response = self.http.request(method, path, params=query, json=body)
        except httpx.HTTPError as err:
            raise ClientError(f"cannot reach {self.where.url}: {err or type(err).__name__}") from None
        if response.status_code >= 400:
            raise ClientError(refusal(response, self.where.url))
        try:
            return response.json()
        except ValueError:
            raise ClientError(
                f"{self.where.url} answered {response.status_code} with something that is not JSON: is it a "
                "ragdown server?"
            ) from None


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def refusal(response: httpx.Response, url: str) -> str:
    """One line for a refused request, by its status: what happened and what to do."""
    status = response.status_code
    try:
        body = response.json()
    except ValueError:
        body = None
    message = body.get("error") if isinstance(body, dict) else None
    text = str(message) if message else response.reason_phrase or f"status {status}"
    if status == 401:
        return (
            f"{url} did not accept the key ({text}): run `ragdown login --url {url} --key KEY`, or set "
            "RAGDOWN_API_KEY"
        )
    if status == 403:
        return f"not allowed: {text}"
    if status == 404:
        return f"not found: {text}"
    if status == 409:
        return f"conflict: {text}"
    if status == 413:
        return f"too large: {text}"
    if status == 402:
        return f"over quota: {text}"
    if status == 429:
        wait = response.headers.get("retry-after", "")
        when = f"retry in {wait} s" if wait.isdigit() else "retry in a minute"
        return f"rate limited by {url}: {when} (Retry-After)"
    if status == 400:
        return f"refused: {text}"
    return f"{url} answered {status}: {text}"


__all__ = [
    "ClientError",
    "Remote",
    "Target",
    "folder_path",
    "load_config",
    "remove_config",
    "save_config",
    "target",
]
