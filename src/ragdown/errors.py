"""Refusals: the errors a caller can act on, with the HTTP status they map to.

A tool turns a `Refusal` into an `isError` result carrying its message; the HTTP API answers
`{error, code?}` with its status. Anything else is a bug and becomes a 500 / a generic tool error.
"""

from __future__ import annotations


class Refusal(Exception):
    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


def bad_request(message: str) -> Refusal:
    return Refusal(400, message)


def not_found(message: str) -> Refusal:
    return Refusal(404, message)


def conflict(message: str, code: str | None = None) -> Refusal:
    return Refusal(409, message, code)


def forbidden(message: str) -> Refusal:
    return Refusal(403, message)
