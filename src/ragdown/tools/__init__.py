"""Every tool, defined once; `visible_tools` applies read-only mode and `RAGDOWN_DISABLED_TOOLS`."""

from __future__ import annotations

from typing import Any

from ragdown.config import Settings
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


ROOT_TOOLS: tuple[AnyTool, ...] = (*(with_folder(t) for t in ALL_TOOLS), FOLDERS, CREATE_FOLDER)


def visible_tools(settings: Settings, tools: tuple[AnyTool, ...] = ALL_TOOLS) -> list[AnyTool]:
    """The tools an endpoint lists and accepts: those that change anything only when writable (by their
    annotations, in every tool set), minus the disabled ones."""
    return [
        t for t in tools if not (settings.read_only and t.writes) and t.name not in settings.disabled_tools
    ]


__all__ = ["ALL_TOOLS", "ROOT_TOOLS", "AnyTool", "ToolSpec", "visible_tools"]
