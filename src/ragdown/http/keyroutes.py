"""`/api/keys`: the admin's keys management (Settings → Keys in the web UI), over the docs dir's `KeyStore`.

- `GET /api/keys`: every key (`KeyRecord.as_json`: never a secret, never a hash); `?kind=key|oauth`.
- `POST /api/keys` `{name, folders: [..] | null, role: read|write, expires_at?}`: a new key; its secret
  is in this answer and nowhere else, ever. `expires_at` (seconds since the epoch) is a time to come: one
  already past is a 400, by `KeyStore.create`'s rule, the CLI's too.
- `DELETE /api/keys/<id or name>`: revoked at once, in every process serving these docs.

Who may call them is `app.py`'s `NEEDS` (the admin only).
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import Response

from ragdown.access.keys import KeyStore
from ragdown.core.errors import bad_request, unavailable
from ragdown.http.api.base import Api, json_body
from ragdown.http.errors import ok


def _store(api: Api) -> KeyStore:
    keys = api.keys
    if keys is None:
        raise unavailable("keys are not served by this process")
    return keys


async def list_keys(api: Api, request: Request) -> Response:
    kind = request.query_params.get("kind") or None
    if kind not in (None, "key", "oauth"):
        raise bad_request("kind is key or oauth")
    records = await asyncio.to_thread(_store(api).list, "key" if kind == "key" else "oauth" if kind else None)
    return ok({"keys": [r.as_json() for r in records]})


async def create_key(api: Api, request: Request) -> Response:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise bad_request("send a JSON object: {name, folders: [names] or null for every folder, role}")
    folders = body.get("folders")
    if folders is not None and (
        not isinstance(folders, list) or not all(isinstance(f, str) for f in folders)
    ):
        raise bad_request("folders is a list of folder names, or null for every folder")
    role = body.get("role")
    if role not in ("read", "write"):
        raise bad_request("role is read or write")
    expires_at = body.get("expires_at")
    if expires_at is not None and (isinstance(expires_at, bool) or not isinstance(expires_at, int | float)):
        raise bad_request("expires_at is a time in seconds since the epoch, or null")
    name = body.get("name")
    if not isinstance(name, str):
        raise bad_request("name is required: text naming the key")
    secret, record = await asyncio.to_thread(
        lambda: _store(api).create(name, folders, role, expires_at=expires_at)
    )
    return ok({"key": record.as_json(), "secret": secret}, 201)


async def delete_key(api: Api, _: Request, key: str) -> Response:
    record = await asyncio.to_thread(_store(api).revoke, key)
    return ok({"revoked": record.as_json()})
