"""Refusals: the errors a caller can act on, each of a kind that says what went wrong.

The disk layer, the tools and the routes raise a `Refusal` of one `Kind`; each face maps the kind to its
own words: a tool turns it into an `isError` result carrying the message, the HTTP face into the status
code of `ragdown.http.errors` with `{error, code?}`. Anything else is a bug (a 500 / a generic tool error).
"""

from __future__ import annotations

from typing import Any, Literal

Kind = Literal[
    "invalid",  # the request cannot be used as it is (a bad path, argument or body)
    "forbidden",  # the caller may not do this (read-only, a key's role)
    "not_found",  # nothing there (or nothing this caller may see)
    "conflict",  # the state on disk disagrees (exists already, changed since read)
    "too_large",  # past a size limit
    "unavailable",  # the index is not open yet or cannot be used
    "over_quota",  # a folder's quota (max_files, max_bytes) would be passed
    "rate_limited",  # too many requests from this caller (details: retry_after, in seconds)
    "internal",  # a bug: ragdown itself failed (the log has the traceback); nothing the caller can fix
]


class Refusal(Exception):
    """`code` tags a refusal a caller may test for (`changed`, `too_large`); `details` carries what a face
    may show besides the message (MarkIndex's envelopes show them: similar names of a missing document)."""

    def __init__(
        self, kind: Kind, message: str, code: str | None = None, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.kind: Kind = kind
        self.message = message
        self.code = code
        self.details = details or {}


def bad_request(message: str) -> Refusal:
    return Refusal("invalid", message)


def not_found(message: str) -> Refusal:
    return Refusal("not_found", message)


def conflict(message: str, code: str | None = None) -> Refusal:
    return Refusal("conflict", message, code)


def forbidden(message: str) -> Refusal:
    return Refusal("forbidden", message)


def too_large(message: str, code: str | None = None) -> Refusal:
    return Refusal("too_large", message, code)


def unavailable(message: str) -> Refusal:
    return Refusal("unavailable", message)


def over_quota(message: str, details: dict[str, Any] | None = None) -> Refusal:
    return Refusal("over_quota", message, "over_quota", details)


def rate_limited(retry_after: int) -> Refusal:
    return Refusal(
        "rate_limited",
        f"RATE_LIMIT_EXCEEDED: too many requests; retry after {retry_after} s",
        "RATE_LIMIT_EXCEEDED",
        {"retry_after": retry_after},
    )


def internal(message: str) -> Refusal:
    return Refusal("internal", message, "internal")


def printable(text: str) -> str:
    """`text` safe to encode anywhere: a lone surrogate (a name that is not UTF-8) shown as `\\udcff`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
