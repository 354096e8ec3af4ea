"""`ragdown_query`'s conditions and their SQL, once for both stores: a tree of conditions over a document's
frontmatter properties (`props`), its tags, links and file columns becomes a WHERE clause over `files f`, and a
sort an ORDER BY, in either engine's spelling (`filter_sql.SqlDialect`). The stores run it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ragdown.storage.filter_sql import SqlDialect, escape_like, prefix_clause
from ragdown.storage.records import FILE_COLUMNS_F

Op = Literal[
    "=", "!=", "<", "<=", ">", ">=", "contains", "not contains", "starts_with", "exists", "not exists"
]
Value = str | float | bool | None
ValueKind = Literal["n", "d", "b", "t"]  # what a value compares as: number, date (seconds), true/false, text


@dataclass(frozen=True)
class Prop:
    """A frontmatter property (key case-folded) against a value of `kind`."""

    key: str
    op: Op
    value: Value = None
    kind: ValueKind = "t"


@dataclass(frozen=True)
class Column:
    """A column of `files`: path, title, mtime_ns, size (text or numbers as they are stored)."""

    column: Literal["path", "title", "mtime_ns", "size"]
    op: Op
    value: Value = None


@dataclass(frozen=True)
class Under:
    """Files under any of these docs-relative directories ('' is everything)."""

    prefixes: tuple[str, ...]


@dataclass(frozen=True)
class Tag:
    tag: str  # lowercased, no '#'; nested tags match too (`project` matches `project/x`)


@dataclass(frozen=True)
class LinksTo:
    keys: tuple[str, ...]  # `links` name keys (`documents.linkkey.name_key`) that name the document


@dataclass(frozen=True)
class InPaths:
    paths: tuple[str, ...]  # docs-relative


@dataclass(frozen=True)
class WrittenBy:
    who: Literal["agent", "user"]


@dataclass(frozen=True)
class AllOf:
    items: tuple[Cond, ...]


@dataclass(frozen=True)
class AnyOf:
    items: tuple[Cond, ...]


@dataclass(frozen=True)
class NoneOf:
    items: tuple[Cond, ...]


Cond = Prop | Column | Under | Tag | LinksTo | InPaths | WrittenBy | AllOf | AnyOf | NoneOf

_COMPARE = {"=": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class _Writer:
    def __init__(self, dialect: SqlDialect) -> None:
        self.d = dialect
        self.params: list[Any] = []

    def mark(self, value: Any) -> str:
        self.params.append(value)
        return self.d.placeholder

    def like(self, column: str, pattern: str) -> str:
        return f"{column} LIKE {self.mark(pattern)}{self.d.like_escape}"

    def cond(self, c: Cond) -> str:
        if isinstance(c, AllOf | AnyOf | NoneOf):
            if not c.items:
                return self.d.false if isinstance(c, AnyOf) else self.d.true
            joined = (" AND " if isinstance(c, AllOf) else " OR ").join(self.cond(i) for i in c.items)
            return f"NOT ({joined})" if isinstance(c, NoneOf) else f"({joined})"
        if isinstance(c, Prop):
            return self.prop(c)
        if isinstance(c, Column):
            return self.column(c)
        if isinstance(c, Under):
            where, params = prefix_clause(self.d, c.prefixes, "f.path")
            self.params += params
            return where
        if isinstance(c, Tag):
            tag = escape_like(c.tag)
            return f"({self.like('f.tags', f'% {tag} %')} OR {self.like('f.tags', f'% {tag}/%')})"
        if isinstance(c, LinksTo):
            where, value = self.d.in_list("l.key", c.keys)
            self.params.append(value)
            return f"f.id IN (SELECT l.file_id FROM links l WHERE {where})"
        if isinstance(c, InPaths):
            where, value = self.d.in_list("f.path", c.paths)
            self.params.append(value)
            return where
        return f"coalesce(f.created_by, '') {'<>' if c.who == 'agent' else '='} ''"

    def prop(self, c: Prop) -> str:
        negate = c.op in ("!=", "not contains", "not exists")
        head = f"f.id {'NOT IN' if negate else 'IN'} (SELECT p.file_id FROM props p WHERE p.key = "
        head += self.mark(c.key)
        if c.op in ("exists", "not exists"):
            return head + " AND p.kind <> 'z')"
        if c.op in ("contains", "not contains"):
            return head + f" AND {self.like('p.low', '%' + escape_like(str(c.value).casefold()) + '%')})"
        if c.op == "starts_with":
            return head + f" AND {self.like('p.low', escape_like(str(c.value).casefold()) + '%')})"
        op = "=" if c.op == "!=" else _COMPARE[c.op]
        if c.kind == "t":
            return head + f" AND p.kind IN ('t', 'd', 'n', 'o') AND p.text {op} {self.mark(c.value)})"
        kind = "'n'" if c.kind == "n" else "'d'" if c.kind == "d" else "'b'"
        return head + f" AND p.kind = {kind} AND p.num {op} {self.mark(float(c.value or 0))})"

    def column(self, c: Column) -> str:
        column = f"f.{c.column}"
        if c.op in ("exists", "not exists"):
            return self.d.true if c.op == "exists" else self.d.false
        if c.op in ("contains", "not contains"):
            clause = self.like(f"lower({column})", "%" + escape_like(str(c.value).lower()) + "%")
            return f"NOT ({clause})" if c.op == "not contains" else clause
        if c.op == "starts_with":
            return self.like(column, escape_like(str(c.value)) + "%")
        value = int(c.value or 0) if c.column in ("mtime_ns", "size") else str(c.value)
        return f"{column} {_COMPARE[c.op]} {self.mark(value)}"


@dataclass(frozen=True)
class SortKey:
    by: str  # a `files` column (path, title, mtime_ns, size, created_by) or a property key (`prop` True)
    descending: bool = False
    prop: bool = False


SORT_COLUMNS = frozenset({"path", "title", "mtime_ns", "size", "created_by"})


def query_sql(
    dialect: SqlDialect, where: Cond, sort: tuple[SortKey, ...], limit: int, offset: int
) -> tuple[str, list[Any], str, list[Any]]:
    """The count's SQL and parameters, then the page's (`FILE_COLUMNS_F` of the files, in order)."""
    w = _Writer(dialect)
    clause = w.cond(where)
    count_sql = f"SELECT count(*) FROM files f WHERE {clause}"
    # The page's ids are sorted first (narrow rows), then joined to their files. A property's sort value is
    # a correlated look-up in the covering index props(key, file_id, num, text): a seek per matching row,
    # where aggregating the key over every file first cost tens to hundreds of ms at 10,000 notes.
    sort_params: list[Any] = []
    keys: list[tuple[str, str]] = []  # (expression, ordering suffix)
    for key in sort:
        direction = "DESC" if key.descending else "ASC"
        if key.prop:
            pick = "max" if key.descending else "min"
            for column in ("num", "text"):
                keys.append(
                    (
                        f"(SELECT {pick}({column}) FROM {dialect.props_sort} WHERE key = {dialect.placeholder}"
                        " AND file_id = f.id)",
                        f"{direction} NULLS LAST",
                    )
                )
                sort_params.append(key.by)
        elif key.by in SORT_COLUMNS:
            keys.append((f"f.{key.by}", direction))
    keys.append(("f.path", "ASC"))
    if len(sort_params) == 0:  # files' own columns: the path index serves the usual order, no subquery
        order = ", ".join(f"{expr} {suffix}" for expr, suffix in keys)
        page_sql = (
            f"SELECT {FILE_COLUMNS_F} FROM files f WHERE {clause} ORDER BY {order}"
            f" LIMIT {int(limit)} OFFSET {int(offset)}"
        )
        return count_sql, w.params, page_sql, w.params
    inner = ", ".join(f"{expr} AS o{n}" for n, (expr, _) in enumerate(keys))
    inner_order = ", ".join(f"o{n} {suffix}" for n, (_, suffix) in enumerate(keys))
    outer_order = ", ".join(f"pg.o{n} {suffix}" for n, (_, suffix) in enumerate(keys))
    page_sql = (
        f"SELECT {FILE_COLUMNS_F} FROM (SELECT f.id AS pid, {inner} FROM files f WHERE {clause}"
        f" ORDER BY {inner_order} LIMIT {int(limit)} OFFSET {int(offset)}) pg JOIN files f ON f.id = pg.pid"
        f" ORDER BY {outer_order}"
    )
    return count_sql, w.params, page_sql, sort_params + w.params


def props_sql(dialect: SqlDialect, file_ids: list[int]) -> tuple[str, list[Any]]:
    """The (file id, key, value as JSON) rows of these files' properties."""
    where, value = dialect.in_list("file_id", file_ids)  # type: ignore[arg-type]
    return f"SELECT file_id, key, value FROM props WHERE {where} ORDER BY file_id", [value]


def props_by_file(rows: list[tuple[Any, ...]]) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {}
    for file_id, key, value in rows:
        out.setdefault(int(file_id), {}).setdefault(str(key), str(value))
    return out
