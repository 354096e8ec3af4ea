"""The HTTP face's words for refusals: the only place a refusal's kind becomes a status code.

Every JSON answer is encoded so that it cannot fail: a string holding a lone surrogate (a file name that
is not UTF-8, quoted back) is written as its `\\udcff` escape instead of breaking the response.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse

from ragdown.errors import Kind, Refusal

STATUS: dict[Kind, int] = {
    "invalid": 400,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "too_large": 413,
    "unavailable": 503,
}


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


def refused(err: Refusal) -> JSONResponse:
    return error(status_of(err), err.message, err.code)
