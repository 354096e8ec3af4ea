"""The refusals the pure write helpers raise: `Refusal`s, so every face maps them as it maps its own."""

from __future__ import annotations

from ragdown.core.errors import Refusal


class DocumentError(Refusal):
    """A request the document helpers refuse (`invalid`, `not_found` or `conflict`), `code` an optional tag."""


class EditError(DocumentError):
    """An edit of `apply_replacements` that cannot be applied; nothing of the batch applies."""
