"""The folder routes: list, create, change a folder's settings (`.ragdown.json`), rename, delete; and the
loose Markdown files at the docs dir's root."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ragdown import toolsets
from ragdown.access.caller import access_of
from ragdown.core.config import HOOK_KEYS
from ragdown.core.errors import bad_request, conflict, not_found
from ragdown.http.api.base import Api, json_body, param
from ragdown.http.errors import ok
from ragdown.tools.root import create_folder
from ragdown.vault import quota
from ragdown.vault.folders import (
    hook_value_error,
    list_folders,
    settings_to_change,
    validate_folder_name,
    write_settings_file,
)
from ragdown.writes import door


async def get_folders(api: Api, request: Request) -> Response:
    counts = api.store_counts()
    return ok(
        {
            "folders": [api.folder_json(name, counts) for name in api.folders(request)],
            # Files outside every folder are the admin's business alone.
            "loose_files": api.loose_files() if access_of(request.scope).is_admin else [],
        }
    )


async def post_folder(api: Api, request: Request) -> Response:
    api.refuse_read_only("Creating a folder")
    body = await json_body(request)
    if not isinstance(body, dict):
        raise bad_request("send a JSON object: {name, title?, mcp?}")
    title = body.get("title")
    mcp = body.get("mcp", False)
    if title is not None and not isinstance(title, str):
        raise bad_request("title must be text")
    if not isinstance(mcp, bool):
        raise bad_request("mcp must be true or false")
    name = validate_folder_name(body.get("name"))
    await asyncio.to_thread(create_folder, api.root, name, title, mcp=mcp, created_by=None)
    return ok({"folder": api.folder_json(name)}, 201)


async def patch_folder(api: Api, request: Request, name: str) -> Response:
    if name not in list_folders(api.root):
        raise not_found(f"no such folder: {name}")
    body = await json_body(request)
    if not isinstance(body, dict):
        raise bad_request(
            "send a JSON object: {title?, mcp?, hook?, toolset?, include?, exclude?, index_md?, "
            "max_files?, max_bytes?, max_file_bytes?, name?}"
        )
    directory = api.root / name
    data = settings_to_change(directory)
    if "title" in body:
        if body["title"] is not None and not isinstance(body["title"], str):
            raise bad_request("title must be text")
        if body["title"]:
            data["title"] = body["title"].strip()
        else:
            data.pop("title", None)
    if "mcp" in body:
        if not isinstance(body["mcp"], bool):
            raise bad_request("mcp must be true or false")
        data["mcp"] = body["mcp"]
    if "hook" in body:
        data = _patched_hook(data, body["hook"])
    for key in ("include", "exclude"):
        if key in body:
            patterns = body[key]
            if patterns is None or patterns == []:
                data.pop(key, None)
            elif not isinstance(patterns, list) or not all(
                isinstance(p, str) and p.strip() for p in patterns
            ):
                raise bad_request(f"{key} must be a list of gitignore-style patterns (text), or null")
            else:
                data[key] = [p.strip() for p in patterns]
    for key in quota.QUOTA_KEYS:
        if key in body:
            value = quota.quota_value(key, body[key])
            if value is None:
                data.pop(key, None)
            else:
                data[key] = value
    if "index_md" in body:
        if body["index_md"] is None:
            data.pop("index_md", None)
        elif not isinstance(body["index_md"], bool):
            raise bad_request("index_md must be true or false")
        else:
            data["index_md"] = body["index_md"]
    if "toolset" in body:
        toolset = body["toolset"]
        if toolset is None or toolset == "":
            data.pop("toolset", None)
        elif not isinstance(toolset, str):
            raise bad_request("toolset must be text: a tool set's name, or several comma-separated")
        else:
            data["toolset"] = ",".join(toolsets.select(toolset).names)
    new_name = body.get("name")
    if new_name is not None and new_name != name:
        api.refuse_read_only("Renaming a folder")
        new_name = validate_folder_name(new_name)
        if (api.root / new_name).exists():
            raise conflict(f"a folder named {new_name} already exists")
    rules_changed = any(key in body for key in ("include", "exclude"))
    await asyncio.to_thread(write_settings_file, directory, data)
    if rules_changed and (new_name is None or new_name == name):
        await api.synced()  # which files count changed: the index follows before the answer
    if new_name is not None and new_name != name:  # through the door: the folder's history follows it
        journal = api.journal(None)
        move = functools.partial(door.move, journal=journal)
        with door.recording() as changed:
            await asyncio.to_thread(move, api.root / name, api.root / new_name, new_name)
        await asyncio.to_thread(api.forget_folder, name)
        await api.synced(changed)
        name = new_name
        return ok({"folder": api.folder_json(name), "notes": journal.notes})
    return ok({"folder": api.folder_json(name)})


def _patched_hook(data: dict[str, Any], hook: Any) -> dict[str, Any]:
    if hook is None:
        data.pop("hook", None)
        return data
    if not isinstance(hook, dict):
        raise bad_request("hook must be an object")
    current = dict(data.get("hook") or {}) if isinstance(data.get("hook"), dict) else {}
    for key, value in hook.items():
        if key not in HOOK_KEYS:
            raise bad_request(f"hook.{key} is not a hook setting (use {', '.join(HOOK_KEYS)})")
        if value is None:
            current.pop(key, None)
            continue
        problem = hook_value_error(key, value)
        if problem:
            raise bad_request(problem)
        current[key] = value
    if current and hook:
        data["hook"] = current
    else:
        data.pop("hook", None)
    return data


async def delete_folder(api: Api, request: Request, name: str) -> Response:
    api.refuse_read_only("Deleting a folder")
    if request.query_params.get("confirm") != name:
        raise bad_request("confirm must repeat the folder's name exactly")
    if name not in list_folders(api.root):
        raise not_found(f"no such folder: {name}")
    with door.recording() as changed:
        await asyncio.to_thread(
            functools.partial(door.delete_folder, journal=api.journal(None)), api.root / name
        )
    await asyncio.to_thread(api.forget_folder, name)
    return ok({"name": name, "sync": await api.synced(changed)})


async def delete_loose(api: Api, request: Request) -> Response:
    api.refuse_read_only("Deleting a file")
    name = param(request, "name")
    if name not in api.loose_files():
        raise not_found(f"no loose Markdown file named {name}")
    await asyncio.to_thread(functools.partial(door.delete, journal=api.journal(None)), api.root / name, name)
    return ok({"name": name})
