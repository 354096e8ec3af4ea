"""The root endpoint's tools (`/mcp` under `RAGDOWN_ROOT_MCP`): every tool with a `folder` argument,
plus `ragdown_folders` and `ragdown_create_folder`.

A folder is still its own: links resolve inside it, a move stays inside it, and its `hook` settings apply
to a `ragdown_context` call that names it. Recall, list, context, stats and reindex cover every folder with
MCP on (that the caller sees) when no folder is named, and each result then names its folder:
`[work] backups.md:7-9`. A human-only folder is not there: naming it answers as a missing folder would.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, create_model

from ragdown.access.scope import Scope
from ragdown.core.errors import conflict, not_found
from ragdown.tools.base import Annotations, Args, Structured, ToolSpec
from ragdown.tools.context import ToolContext
from ragdown.vault.folders import (
    SETTINGS_FILE,
    folder_settings,
    list_folders,
    validate_folder_name,
    write_settings_file,
)

OPTIONAL_FOLDER = frozenset(
    {
        "ragdown_recall",
        "ragdown_list",
        "ragdown_context",
        "ragdown_stats",
        "ragdown_reindex",
        "ragdown_changes",
    }
)
CREATED_BY = "ragdown_create_folder"


def mcp_folders(root_scope: Scope) -> list[str]:
    """The folders with MCP on, as they are on disk now, that the endpoint's caller may see (a key's)."""
    allowed = root_scope.allowed
    return [
        name
        for name in list_folders(root_scope.root)
        if (allowed is None or name in allowed) and folder_settings(root_scope.root / name).mcp
    ]


def folder_scope(ctx: ToolContext, name: str) -> Scope:
    if name not in mcp_folders(ctx.scope):
        raise not_found(f"no such folder: {name} (ragdown_folders lists them)")
    return Scope(root=ctx.scope.root, folder=name)


def with_folder(spec: ToolSpec[Any, ToolContext]) -> ToolSpec[Any, ToolContext]:
    """The same tool at the root endpoint: a `folder` argument picks the folder it works in."""
    required = spec.name not in OPTIONAL_FOLDER
    description = "The folder to work in." if required else "One folder; every folder when left out."
    field: tuple[Any, Any] = (
        (str, Field(min_length=1, description=description))
        if required
        else (str | None, Field(None, description=description))
    )
    args = create_model(f"Root{spec.args.__name__}", __base__=spec.args, folder=field)

    async def handler(ctx: ToolContext, a: Any) -> str | Structured:
        folder = getattr(a, "folder", None)
        if folder:
            ctx = dataclasses.replace(ctx, scope=folder_scope(ctx, folder))
        else:
            scope = Scope.over(ctx.scope.root, tuple(mcp_folders(ctx.scope)))
            ctx = dataclasses.replace(ctx, scope=scope)
        return await spec.handler(ctx, a)

    return ToolSpec(
        name=spec.name, description=spec.description, args=args, annotations=spec.annotations, handler=handler
    )


# -- ragdown_folders ------------------------------------------------------------------------------


class FoldersArgs(Args):
    pass


def list_mcp_folders(ctx: ToolContext) -> str:
    names = mcp_folders(ctx.scope)
    if not names:
        return "No folders."
    counts = ctx.store().folder_counts()
    lines = []
    for name in names:
        title = folder_settings(ctx.scope.root / name).title
        files = counts.get(name, (0, 0))[0]
        lines.append(f"{name} — {title} ({files} document{'s' if files != 1 else ''})")
    return "\n".join(lines)


async def folders(ctx: ToolContext, _: FoldersArgs) -> str:
    await ctx.ready()
    return await ctx.run(list_mcp_folders, ctx)


FOLDERS = ToolSpec(
    name="ragdown_folders",
    description="The folders you can search and write: one line each with its name, title and document count.",
    args=FoldersArgs,
    annotations=Annotations(read_only=True),
    handler=folders,
)


# -- ragdown_create_folder ------------------------------------------------------------------------


class CreateFolderArgs(Args):
    name: Annotated[str, Field(min_length=1, description="One name: no / or \\, not starting with . or -.")]
    title: str | None = None


def create_folder(
    root: Path, name: str, title: str | None, *, mcp: bool, created_by: str | None
) -> dict[str, Any]:
    """Make an empty folder with its `.ragdown.json`; never overwrites (a `conflict` when the name is taken)."""
    name = validate_folder_name(name)
    path = root / name
    if path.exists() or path.is_symlink():
        raise conflict(f"a folder named {name} already exists")
    try:
        path.mkdir()
    except FileExistsError:
        raise conflict(f"a folder named {name} already exists") from None
    data: dict[str, Any] = {"title": (title or "").strip() or name, "mcp": mcp}
    if created_by:
        data["created_by"] = created_by
    write_settings_file(path, data)
    return data


async def create_folder_tool(ctx: ToolContext, a: CreateFolderArgs) -> str:
    await ctx.ready()
    await ctx.run(
        functools.partial(create_folder, mcp=True, created_by=CREATED_BY), ctx.scope.root, a.name, a.title
    )
    return f"created folder {a.name.strip()} (MCP on; {SETTINGS_FILE} written)"


CREATE_FOLDER = ToolSpec(
    name="ragdown_create_folder",
    description="Make an empty folder with MCP on, from a name and an optional title. Never overwrites.",
    args=CreateFolderArgs,
    annotations=Annotations(read_only=False, destructive=False),
    handler=create_folder_tool,
)
