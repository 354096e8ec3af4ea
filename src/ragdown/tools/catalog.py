"""Every tool, defined once; `visible_tools` applies read-only mode, a key's role and `RAGDOWN_DISABLED_TOOLS`."""

from __future__ import annotations

from typing import Any

from ragdown.access.caller import Access
from ragdown.core.config import Settings
from ragdown.tools.base import ToolSpec
from ragdown.tools.history import DIFF, HISTORY, RESTORE
from ragdown.tools.hook import CONTEXT
from ragdown.tools.outline import OUTLINE
from ragdown.tools.read import BACKLINKS, LIST, READ_DOC, RECALL, STATS
from ragdown.tools.root import CREATE_FOLDER, FOLDERS, with_folder
from ragdown.tools.write import DELETE, EDIT, MOVE, REINDEX, REMEMBER, WRITE

AnyTool = ToolSpec[Any, Any]

ALL_TOOLS: tuple[AnyTool, ...] = (
    RECALL,
    READ_DOC,
    OUTLINE,
    BACKLINKS,
    LIST,
    HISTORY,
    DIFF,
    STATS,
    CONTEXT,
    REMEMBER,
    WRITE,
    EDIT,
    MOVE,
    DELETE,
    RESTORE,
    REINDEX,
)


def __getattr__(name: str) -> tuple[AnyTool, ...]:
    """`ROOT_TOOLS`, the root endpoint's tools (each with a `folder` argument), built on first use: only
    `serve`'s `/mcp` offers them, and building their models costs the stdio start-up for nothing."""
    if name != "ROOT_TOOLS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    tools = (*(with_folder(t) for t in ALL_TOOLS), FOLDERS, CREATE_FOLDER)
    globals()["ROOT_TOOLS"] = tools
    return tools


ADMIN_TOOLS = frozenset({CREATE_FOLDER.name})  # folders are made by the admin only (RAGDOWN_TOKEN)


def visible_tools(
    settings: Settings, tools: tuple[AnyTool, ...] = ALL_TOOLS, access: Access | None = None
) -> list[AnyTool]:
    """The tools an endpoint lists and accepts: those that change anything only when writable (by their
    annotations, in every tool set: read-only mode, a read key), the admin's only for the admin, minus the
    disabled ones, and one that needs a model where none is configured. A tool left out is refused as an
    unknown one. `access` None: stdio, the local user."""
    read_only = settings.read_only or (access is not None and not access.can_write)
    admin = access is None or access.is_admin
    return [
        t
        for t in tools
        if not (read_only and t.writes)
        and (admin or t.name not in ADMIN_TOOLS)
        and t.name not in settings.disabled_tools
        and (settings.llm_model or not t.needs_model)
    ]


__all__ = [
    "ADMIN_TOOLS",
    "ALL_TOOLS",
    "AnyTool",
    "ToolSpec",
    "visible_tools",
]  # and ROOT_TOOLS, built on first use
