"""The refusal the pure write helpers raise: a message plus an HTTP-like status."""

from __future__ import annotations


class DocumentError(Exception):
    """A request the document helpers refuse: `status` is 400, 404 or 409, `code` an optional tag."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


class EditError(DocumentError):
    """An edit of `apply_replacements` that cannot be applied; nothing of the batch applies."""
