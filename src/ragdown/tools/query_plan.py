"""What a `ragdown_query` asks, read into a plan: its arguments (`QueryArgs`), the conditions they make
(`Conditions`: properties, tags, links, folders, dates, author), its sort keys and columns. `tools/query.py` runs a
plan; `tools/bases.py` makes one from an Obsidian Base's view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

from pydantic import Field

from ragdown.core.errors import bad_request, not_found
from ragdown.core.paths import normalise_prefix, split_safe
from ragdown.documents import decode_text, find_links
from ragdown.documents.linkkey import name_key
from ragdown.search.tags import normalise_tag
from ragdown.storage.properties import NAME_KEY, date_seconds
from ragdown.storage.query_sql import (
    AllOf,
    AnyOf,
    Column,
    Cond,
    InPaths,
    LinksTo,
    NoneOf,
    Op,
    Prop,
    SortKey,
    Tag,
    Under,
    Value,
    ValueKind,
    WrittenBy,
)
from ragdown.tools.base import Args
from ragdown.tools.context import ToolContext
from ragdown.tools.read import scope_resolver
from ragdown.vault.sandbox import read_plain

QUERY_NAME = "ragdown_query"
OPS: frozenset[str] = frozenset(get_args(Op))
MAX_DEPTH = 8
CELL_LIMIT = 200
# A file's own fields by the names a query may use (Obsidian's `file.` names, and the plain ones).
FILE_FIELDS = {
    "path": "path",
    "folder": "folder",
    "name": "name",
    "title": "title",
    "tags": "tags",
    "tag": "tags",
    "modified": "modified",
    "mtime": "modified",
    "size": "size",
    "created_by": "created_by",
}
SORTABLE = {
    "path": "path",
    "title": "title",
    "modified": "mtime_ns",
    "size": "size",
    "created_by": "created_by",
}


class QueryArgs(Args):
    where: Annotated[
        list[dict[str, Any]] | None,
        Field(
            max_length=50,
            description='All must hold: {"property":"status","op":"=","value":"done"} (ops = != < <= > >= '
            'contains starts_with exists "not exists"), {"tag":"x"}, {"folder":"a"}, {"links_to":"Note"}, '
            '{"linked_from":"a.md"}, {"written_by":"agent"}, {"or":[...]}, {"not":[...]}.',
        ),
    ] = None
    sort: Annotated[
        list[dict[str, Any]] | None,
        Field(max_length=8, description='[{"by":"due","order":"asc"}]; default path.'),
    ] = None
    columns: Annotated[
        list[str] | None,
        Field(max_length=30, description="Default path, title and the properties named in where."),
    ] = None
    path_prefix: Annotated[str | None, Field(max_length=1024)] = None
    base: Annotated[
        str | None, Field(max_length=1024, description="An Obsidian .base file: answer its view.")
    ] = None
    view: Annotated[str | None, Field(max_length=256, description="The Base's view (default its first).")] = (
        None
    )
    limit: Annotated[int, Field(ge=1, le=500)] = 50
    offset: Annotated[int, Field(ge=0)] = 0
    format: Literal["text", "json"] = "text"


@dataclass(frozen=True)
class Plan:
    where: tuple[Cond, ...]
    sort: tuple[SortKey, ...]
    columns: tuple[str, ...]
    limit: int
    offset: int


def field_of(name: str) -> tuple[str, str]:
    """("file", field) for a file's own field, ("note", key) for a frontmatter property."""
    raw = name.strip()
    low = raw.casefold()
    if low.startswith("note."):
        return "note", low[5:]
    if low.startswith("file."):
        field = FILE_FIELDS.get(low[5:])
        if field is None:
            raise bad_request(f"unknown file field {raw!r}: one of {', '.join(sorted(set(FILE_FIELDS)))}")
        return "file", field
    if low in FILE_FIELDS:
        return "file", FILE_FIELDS[low]
    if not low:
        raise bad_request("a property name is empty")
    return "note", low


def value_kind(value: Any) -> tuple[Value, ValueKind]:
    if isinstance(value, bool):
        return value, "b"
    if isinstance(value, int | float):
        return float(value), "n"
    if isinstance(value, str):
        seconds = date_seconds(value)
        return (seconds, "d") if seconds is not None else (value, "t")
    if value is None:
        return None, "t"
    raise bad_request(f"a condition's value must be text, a number, true or false, not {value!r}")


class Conditions:
    """Conditions from their JSON shapes, paths taken in the caller's scope."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.properties: list[str] = []  # the properties named, for the default columns

    def many(self, items: Sequence[Any], depth: int = 0) -> tuple[Cond, ...]:
        if depth > MAX_DEPTH:
            raise bad_request(f"conditions nest deeper than {MAX_DEPTH}")
        if isinstance(items, dict):
            items = [items]
        if not isinstance(items, list):
            raise bad_request(f"conditions must be a list of objects, not {items!r}")
        return tuple(self.one(item, depth) for item in items)

    def one(self, c: Any, depth: int) -> Cond:
        if not isinstance(c, dict) or not c:
            raise bad_request(f"a condition must be an object, not {c!r}")
        for key, cls in (("and", AllOf), ("or", AnyOf), ("not", NoneOf)):
            if key in c:
                return cls(self.many(c[key], depth + 1))
        if "tag" in c:
            tag = normalise_tag(str(c["tag"]))
            if not tag:
                raise bad_request(f"not a tag: {c['tag']!r}")
            return Tag(tag)
        if "folder" in c:
            return Under((self.path(str(c["folder"]), folder=True),))
        if "links_to" in c:
            return self.links_to(str(c["links_to"]))
        if "linked_from" in c:
            return self.linked_from(str(c["linked_from"]))
        if "written_by" in c:
            who = c["written_by"]
            if who not in ("agent", "user"):
                raise bad_request(f"written_by is agent or user, not {who!r}")
            return WrittenBy(who)
        if "property" not in c:
            raise bad_request(f"a condition needs property (or tag, folder, links_to, or, not …): {c!r}")
        op = str(c.get("op", "exists" if "value" not in c else "=")).strip().lower()
        if op not in OPS:
            raise bad_request(f"unknown op {op!r}: one of {', '.join(sorted(OPS))}")
        return self.compare(str(c["property"]), op, c.get("value"))  # type: ignore[arg-type]

    def compare(self, name: str, op: Op, raw: Any) -> Cond:
        if op not in ("exists", "not exists") and raw is None:
            raise bad_request(f"{name} {op} needs a value")
        kind_of, field = field_of(name)
        if kind_of == "note":
            value, kind = value_kind(raw)
            if field not in self.properties:
                self.properties.append(field)
            return Prop(field, op, value, kind)
        if field == "name":
            value, kind = value_kind(raw)
            return Prop(NAME_KEY, op, str(raw) if raw is not None else None, "t")
        if field == "tags":
            if op not in ("=", "contains", "!=", "not contains"):
                raise bad_request(f"tags take = or contains (a tag), not {op}")
            tag = Tag(normalise_tag(str(raw)) or str(raw))
            return NoneOf((tag,)) if op in ("!=", "not contains") else tag
        if field == "folder":
            under = Under((self.path(str(raw), folder=True),))
            if op in ("=", "starts_with", "contains"):
                return under
            if op in ("!=", "not contains"):
                return NoneOf((under,))
            raise bad_request(f"folder takes = or != (a folder and its subfolders), not {op}")
        if field == "created_by":
            if raw in ("agent", "user"):
                return WrittenBy(raw) if op == "=" else NoneOf((WrittenBy(raw),))
            return Prop("created_by", op, str(raw) if raw is not None else None, "t")
        if field == "path":
            if op in ("=", "!=", "starts_with"):
                raw = self.path(str(raw), folder=op == "starts_with")
                if op == "starts_with":
                    return Under((raw,))
            return Column("path", op, raw)
        if field == "modified":
            seconds = date_seconds(str(raw)) if raw is not None else None
            if raw is not None and seconds is None:
                raise bad_request(f"modified compares with a date (2024-05-01 or an ISO time), not {raw!r}")
            return Column("mtime_ns", op, int((seconds or 0) * 1e9))
        if field == "size":
            return Column("size", op, int(raw or 0))
        return Column("title", op, raw)

    def path(self, raw: str, *, folder: bool) -> str:
        clean = normalise_prefix(raw) if folder else "/".join(split_safe(raw))
        return self.ctx.scope.docs_path(clean) if clean or not folder else self.ctx.scope.prefix

    def links_to(self, raw: str) -> Cond:
        store = self.ctx.store()
        keys = {name_key(raw)}
        target = store.get_file(self.path(raw if raw.lower().endswith(".md") else raw + ".md", folder=False))
        if target is not None:
            keys.update(name_key(a) for a in target.aliases)
        return LinksTo(tuple(sorted(k for k in keys if k)))

    def linked_from(self, raw: str) -> Cond:
        ctx = self.ctx
        source = self.path(raw, folder=False)
        data = read_plain(ctx.docs_root, source)
        if data is None or ctx.store().get_file(source) is None:
            raise not_found(f"no such document: {raw}")
        resolver = scope_resolver(ctx, ctx.store())
        paths: set[str] = set()
        for link in find_links(decode_text(data)[0]):
            resolved = resolver.resolve_link(link, ctx.scope.folder_path(source))
            if resolved is not None:
                paths.add(ctx.scope.from_folder_path(resolved.path))
        return InPaths(tuple(sorted(paths)))


def sort_keys(raw: Sequence[dict[str, Any]]) -> tuple[SortKey, ...]:
    keys: list[SortKey] = []
    for s in raw:
        if not isinstance(s, dict) or "by" not in s:
            raise bad_request(f'a sort is {{"by": "due", "order": "asc"}}, not {s!r}')
        order = str(s.get("order", "asc")).lower()
        if order not in ("asc", "desc"):
            raise bad_request(f"order is asc or desc, not {order!r}")
        kind, field = field_of(str(s["by"]))
        if kind == "note" or field == "name":
            keys.append(SortKey(NAME_KEY if field == "name" else field, order == "desc", prop=True))
        elif field in SORTABLE:
            keys.append(SortKey(SORTABLE[field], order == "desc"))
        else:
            raise bad_request(f"cannot sort by {s['by']!r}: sort by a property or {', '.join(SORTABLE)}")
    return tuple(keys)
