"""One definition per tool: name, description, argument model, annotations, handler.

The same `ToolSpec` feeds the MCP server (listing and calls), the HTTP API and the CLI. Arguments are a
pydantic model: its JSON schema (without pydantic's titles, to keep every agent's context small) is what
`tools/list` shows, and validating a call against it gives a clear error instead of a crash.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ragdown.core.errors import Kind, bad_request


class Args(BaseModel):
    """Base of every tool's arguments: unknown keys are ignored, types are checked strictly enough."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=False)


A = TypeVar("A", bound=Args)
C = TypeVar("C")


@dataclass(frozen=True)
class Annotations:
    read_only: bool
    destructive: bool = False
    idempotent: bool | None = None

    def as_mcp(self) -> dict[str, bool]:
        if self.read_only:
            return {"readOnlyHint": True, "openWorldHint": False}
        out = {"readOnlyHint": False, "destructiveHint": self.destructive, "openWorldHint": False}
        if self.idempotent is not None:
            out["idempotentHint"] = self.idempotent
        return out


@dataclass(frozen=True)
class Failure:
    """A call that failed: what to say, its kind (a refusal's, or `internal` for a bug) and code."""

    message: str
    kind: Kind | Literal["internal"]
    code: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


class ProtocolError(Exception):
    """Raised by a tool set's failure style to answer a JSON-RPC error instead of an `isError` result."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


FailureStyle = Callable[[Failure], str]


@dataclass(frozen=True)
class Structured:
    """A tool's answer with a structured part: `text` for every client, `data` as MCP `structuredContent`."""

    text: str
    data: dict[str, Any]


@dataclass(frozen=True)
class ToolSpec(Generic[A, C]):
    name: str
    description: str
    args: type[A]
    annotations: Annotations
    handler: Callable[[C, A], Awaitable[str | Structured]]
    # How a failure is said: None is ragdown's own (the message as an `isError` result); a tool set may
    # answer its own shape (MarkIndex's JSON envelope) or raise `ProtocolError` (hallouminate's JSON-RPC codes).
    failure: FailureStyle | None = None

    @property
    def writes(self) -> bool:
        return not self.annotations.read_only

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments, without pydantic's titles (computed once per model)."""
        return _schema_of(self.args)

    def parse(self, arguments: dict[str, Any] | None) -> A:
        bad = not_unicode(arguments)
        if bad is not None:
            raise bad_request(f"{self.name}: arguments must be Unicode text, and {bad[:40]!r} is not")
        try:
            return self.args.model_validate(arguments or {})
        except ValidationError as err:
            raise bad_request(f"{self.name}: {describe_validation(err)}") from None

    async def call(self, ctx: C, arguments: dict[str, Any] | None) -> str | Structured:
        return await self.handler(ctx, self.parse(arguments))


@functools.cache
def _schema_of(args: type[Args]) -> dict[str, Any]:
    schema: dict[str, Any] = _strip_titles(args.model_json_schema())
    schema.setdefault("properties", {})
    schema.pop("description", None)
    return schema


def not_unicode(value: Any) -> str | None:
    """The first string in `value` that is not Unicode text (a lone surrogate, which JSON can carry as
    `"\\ud800"` but no file, SQLite or encoder takes), or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return None


def describe_validation(err: ValidationError) -> str:
    parts = []
    for issue in err.errors():
        where = ".".join(str(p) for p in issue["loc"]) or "arguments"
        parts.append(f"{where}: {issue['msg']}")
    return "invalid arguments (" + "; ".join(parts) + ")"


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node
