"""One definition per tool: name, description, argument model, annotations, handler.

The same `ToolSpec` feeds the MCP server (listing and calls), the HTTP API and the CLI. Arguments are a
pydantic model: its JSON schema (without pydantic's titles, to keep every agent's context small) is what
`tools/list` shows, and validating a call against it gives a clear error instead of a crash.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from ragdown.core.errors import Kind, Refusal, bad_request


class Args(BaseModel):
    """Base of every tool's arguments: an unknown key is refused (`refuse_invalid` names the arguments there
    are and the nearest one), types are checked strictly enough."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


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
    # A tool that sends document text to a model (MarkIndex's `retrieve`): listed and accepted only where a
    # model is configured for the server (`RAGDOWN_LLM_MODEL`; `catalog.visible_tools`).
    needs_model: bool = False

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
            raise refuse_invalid(err, self.args, self.name) from None

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


# -- unknown arguments: the one rule of every tool of every set, and of the REST routes ---------------


def argument_names(model: type[BaseModel]) -> list[str]:
    """The names a model takes, as a caller sends them (a field's alias where it has one), in its order."""
    return [f.alias or name for name, f in model.model_fields.items()]


def nearest_name(name: str, valid: Sequence[str]) -> str | None:
    """The valid name `name` most likely meant (`topk` → `top_k`, `q` → `query`), None when none is close:
    compared without case, `_` or `-`; a name one begins with counts as close."""

    def plain(text: str) -> str:
        return text.lower().replace("_", "").replace("-", "")

    wanted = plain(name)
    best, score = None, 0.0
    for candidate in valid:
        other = plain(candidate)
        ratio = difflib.SequenceMatcher(None, wanted, other).ratio()
        if wanted and other and (other.startswith(wanted) or wanted.startswith(other)):
            ratio = max(ratio, 0.75)
        if ratio > score:
            best, score = candidate, ratio
    return best if score >= 0.5 else None


def unknown_arguments(
    unknown: Sequence[str], valid: Sequence[str], *, what: str = "argument", of: str = ""
) -> tuple[str, dict[str, Any]]:
    """The sentence and the details that refuse `unknown` names: each with the nearest valid one, then
    every valid name (`unknown argument 'topk' (did you mean 'top_k'?); the arguments are query, top_k`).
    `of` names where they were sent when it is not the top level (`edits[]`)."""
    nearest = {name: nearest_name(name.rsplit(".", 1)[-1], valid) for name in unknown}
    named = ", ".join(
        f"{name!r} (did you mean {nearest[name]!r}?)" if nearest[name] else repr(name) for name in unknown
    )
    plural = "s" if len(unknown) > 1 else ""
    where = f" of {of}" if of else ""
    takes = f"the {what}s{where} are {', '.join(valid)}" if valid else f"there are no {what}s{where} to send"
    details = {"unknown": list(unknown), "nearest": nearest, "valid": list(valid)}
    return f"unknown {what}{plural} {named}; {takes}", details


def refuse_invalid(err: ValidationError, model: type[BaseModel], tool: str = "") -> Refusal:
    """A validation error as a refusal: unknown arguments first (the one rule above, at whatever depth they
    were sent), then every other issue."""
    unknown: dict[tuple[str | int, ...], list[str]] = {}
    others = []
    for issue in err.errors():
        loc = tuple(issue["loc"])
        if issue["type"] == "extra_forbidden" and loc:
            unknown.setdefault(loc[:-1], []).append(".".join(str(p) for p in loc))
        else:
            where = ".".join(str(p) for p in loc) or "arguments"
            others.append(f"{where}: {issue['msg']}")
    parts: list[str] = []
    details: dict[str, Any] = {}
    for parent, names in unknown.items():
        at = _model_at(model, parent)
        of = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parent).lstrip(".")
        sentence, found = unknown_arguments(names, argument_names(at) if at else [], of=of)
        parts.append(sentence)
        details = details or found
    if others:
        parts.append("invalid arguments (" + "; ".join(others) + ")")
    message = "; ".join(parts)
    return Refusal("invalid", f"{tool}: {message}" if tool else message, None, details)


def _model_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The model that validates what was sent at `loc` (list indexes skipped), None past a plain value."""
    current: type[BaseModel] | None = model
    for part in loc:
        if isinstance(part, int) or current is None:
            continue
        field = next((f for n, f in current.model_fields.items() if (f.alias or n) == part), None)
        current = _model_in(field.annotation) if field is not None else None
    return current


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node
