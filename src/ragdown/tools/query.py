"""`ragdown_query`: documents filtered and sorted by their frontmatter properties, tags, links, folder, dates
and author, with the columns asked for, one page at a time; or the view of an Obsidian Base (`tools/bases.py`).

A condition is a small JSON object: `{"property": "status", "op": "=", "value": "done"}` (ops: = != < <= > >=
contains, not contains, starts_with, exists, not exists), `{"tag": "project"}`, `{"folder": "a/b"}`,
`{"links_to": "Note"}`, `{"linked_from": "notes/x.md"}`, `{"written_by": "agent"}`, or `{"or": [...]}`,
`{"and": [...]}`, `{"not": [...]}`. A property named `path`, `folder`, `name`, `title`, `tags`, `modified`,
`size` or `created_by` (or `file.` and any of those) is the file's own; `note.X` is always the property X.
"""

from __future__ import annotations

import datetime as dt
import json
import posixpath
from typing import Any

from ragdown.storage.query_sql import (
    AllOf,
    Cond,
    Under,
)
from ragdown.storage.records import FileRecord
from ragdown.tools.base import Annotations, ToolSpec
from ragdown.tools.bases import base_plan
from ragdown.tools.context import ToolContext
from ragdown.tools.query_plan import (
    CELL_LIMIT,
    QUERY_NAME,
    Conditions,
    Plan,
    QueryArgs,
    field_of,
    sort_keys,
)


def cell(ctx: ToolContext, f: FileRecord, props: dict[str, str], column: str) -> Any:
    kind, field = field_of(column)
    if kind == "note":
        return json.loads(props[field]) if field in props else None
    view = ctx.scope.view(f.path)
    if field == "path":
        return view
    if field == "name":
        return posixpath.splitext(posixpath.basename(view))[0]
    if field == "folder":
        return posixpath.dirname(view)
    if field == "tags":
        return list(f.tags)
    if field == "modified":
        return dt.datetime.fromtimestamp(f.mtime_ns / 1e9, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if field == "size":
        return f.size
    if field == "created_by":
        return f.created_by
    return f.title


def cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        text = ", ".join(cell_text(v) for v in value)
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, dict):
        text = json.dumps(value, ensure_ascii=False)
    else:
        text = str(value)
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= CELL_LIMIT else text[: CELL_LIMIT - 1] + "…"


def plan_of(ctx: ToolContext, a: QueryArgs) -> tuple[Plan, str | None]:
    """The plan of the arguments (or of the Base they name), and a heading naming the Base's view."""
    if a.base:
        return base_plan(ctx, a)
    conds = Conditions(ctx)
    where = conds.many(a.where or [])
    if a.path_prefix:
        where += (Under((conds.path(a.path_prefix, folder=True),)),)
    sort = sort_keys(a.sort or [])
    columns = tuple(a.columns or ("path", "title", *conds.properties))
    for column in columns:
        field_of(column)
    return Plan(where, sort, columns, a.limit, a.offset), None


def run_plan(ctx: ToolContext, plan: Plan, heading: str | None, fmt: str) -> str:
    scope_where: tuple[Cond, ...] = (Under((ctx.scope.prefix,)),) if ctx.scope.prefix else ()
    if ctx.scope.folders is not None:
        scope_where += (Under(tuple(ctx.scope.folders)),)
    total, files, props = ctx.store().query_documents(
        AllOf(scope_where + plan.where), plan.sort, plan.limit, plan.offset
    )
    rows = [[cell(ctx, f, props.get(f.id, {}), c) for c in plan.columns] for f in files]
    more = plan.offset + len(files) < total
    if fmt == "json":
        body: dict[str, Any] = {
            "total": total,
            "offset": plan.offset,
            "columns": list(plan.columns),
            "rows": [dict(zip(plan.columns, r, strict=True)) for r in rows],
            "more": more,
        }
        if heading:
            body["view"] = heading
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    head = f"{heading}: " if heading else ""
    if not files:
        return f"{head}no documents match (total {total})."
    shown = f"{plan.offset + 1}–{plan.offset + len(files)} of {total}"
    lines = [
        f"{head}documents {shown}{' (more: offset=' + str(plan.offset + len(files)) + ')' if more else ''}",
        "",
        "| " + " | ".join(cell_text(c) for c in plan.columns) + " |",
        "|" + "---|" * len(plan.columns),
        *("| " + " | ".join(cell_text(v) for v in r) + " |" for r in rows),
    ]
    return "\n".join(lines)


def query_text(ctx: ToolContext, a: QueryArgs) -> str:
    plan, heading = plan_of(ctx, a)
    return run_plan(ctx, plan, heading, a.format)


async def query(ctx: ToolContext, a: QueryArgs) -> str:
    await ctx.ready()
    return await ctx.run(query_text, ctx, a)


QUERY = ToolSpec(
    name=QUERY_NAME,
    description=(
        "Documents as a table, filtered and sorted by frontmatter properties, tags, links, folder, dates, "
        "author (Dataview without Obsidian), or an Obsidian Base's view (base, view). Paged: limit, offset."
    ),
    args=QueryArgs,
    annotations=Annotations(read_only=True),
    handler=query,
)
