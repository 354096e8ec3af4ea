"""The HTTP face's words for refusals: the only place a refusal's kind becomes a status code.

Every JSON answer is encoded so that it cannot fail: a string holding a lone surrogate (a file name that
is not UTF-8, quoted back) is written as its `\\udcff` escape instead of breaking the response.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse

from ragdown.core.errors import Kind, Refusal

STATUS: dict[Kind, int] = {
    "invalid": 400,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "too_large": 413,
    "unavailable": 503,
    "over_quota": 402,  # as ReadmeDB answers a quota exceeded
    "rate_limited": 429,
    "internal": 500,
}
UNAUTHORIZED = 401  # no credential, or not one this server knows (`app.py` adds how to get one)
NO_ROUTE = 404  # no route at this path (the dispatch's, before any refusal could be raised)
NOT_ALLOWED = 405  # a route, but not with this method
MISDIRECTED = 421  # a Host this server does not answer for (DNS rebinding)


def status_of(err: Refusal) -> int:
    return STATUS[err.kind]


class SafeJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode(
            "utf-8", "backslashreplace"
        )


def ok(body: Any, status: int = 200) -> JSONResponse:
    return SafeJSONResponse(body, status_code=status)


def error(status: int, message: str, code: str | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": message}
    if code:
        body["code"] = code
    return SafeJSONResponse(body, status_code=status)


def refused(err: Refusal, *, coded: bool = False) -> JSONResponse:
    """A refusal's answer; `coded` (REST v1) always gives a `code`: the refusal's own, else its kind (the
    web UI's `/api` keeps the core's bodies: `code` only where the refusal has one)."""
    response = error(status_of(err), err.message, err.code or (err.kind if coded else None))
    _retry_after(response, err)
    return response


def _retry_after(response: JSONResponse, err: Refusal) -> None:
    wait = err.details.get("retry_after")
    if isinstance(wait, int):
        response.headers["Retry-After"] = str(wait)


def rpc_refused(err: Refusal, request_id: Any = None) -> JSONResponse:
    """A refusal of an MCP request before it reaches the server (rate limited): the HTTP status, and a
    JSON-RPC error body (a client that reads only the body sees the message, which names the code)."""
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32000, "message": err.message}}
    if err.details:
        body["error"]["data"] = err.details
    response = SafeJSONResponse(body, status_code=status_of(err))
    _retry_after(response, err)
    return response
