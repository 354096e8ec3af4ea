"""What a tool set offers besides tools: fixed MCP resources, resource templates and prompts.

Each is defined once, like a tool, and read through the same `ToolContext` (the endpoint's scope), so a
set's resources see exactly the documents its tools see.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ragdown.tools.context import ToolContext


@dataclass(frozen=True)
class ResourceSpec:
    """A resource at a fixed URI (`readmedb://policy/naming`)."""

    uri: str
    name: str
    description: str
    read: Callable[[ToolContext], Awaitable[str]]
    mime_type: str = "text/markdown"


@dataclass(frozen=True)
class ResourceTemplateSpec:
    """Resources named by a URI template (RFC 6570 level 1: `readmedb://docs/{tool_name}`).

    `read` gets the template's variables; it raises a `Refusal` (not_found) for a URI it has nothing at."""

    uri_template: str
    name: str
    description: str
    read: Callable[[ToolContext, dict[str, str]], Awaitable[str]]
    mime_type: str = "text/markdown"


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str
    required: bool = False


@dataclass(frozen=True)
class PromptSpec:
    """A prompt a client may offer its user (`onboard_session`): its text, from the arguments given."""

    name: str
    description: str
    render: Callable[[ToolContext, dict[str, str]], Awaitable[str]]
    arguments: tuple[PromptArgument, ...] = ()
