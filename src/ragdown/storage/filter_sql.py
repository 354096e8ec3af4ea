"""The file filter and its SQL, once for both stores: a `FileFilter` becomes a WHERE clause over the
`files` table and its parameters, in SQLite's or PostgreSQL's spelling (`SqlDialect`). The stores stay the
only code that runs SQL; this module only writes the clause they run."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FileFilter:
    """File-level filters shared by both retrievers and by listing; all are applied in SQL.

    `prefixes` are docs-relative directories: a file matches when its path lies under any of them (a
    directory, not a string prefix). `()` means every file. `folders` limits to whole folders.
    """

    prefixes: tuple[str, ...] = ()
    folders: tuple[str, ...] | None = None  # None: any folder; (): none at all
    tag: str | None = None
    written_by: str | None = None  # "agent" | "user"
    session: str | None = None
    hide_superseded: bool = True
    changed_since_ns: int | None = None  # only files whose content changed at or after this (mtime_ns)
    paths: tuple[str, ...] | None = None  # only these docs-relative files; None: any

    @property
    def narrows(self) -> bool:
        """Whether some file may fail it for another reason than being superseded."""
        return bool(self.prefixes and "" not in self.prefixes) or bool(
            self.tag
            or self.written_by
            or self.session
            or self.folders is not None
            or self.changed_since_ns is not None
            or self.paths is not None
        )


@dataclass(frozen=True)
class SqlDialect:
    """What differs between the two engines in a filter clause."""

    placeholder: str
    true: str
    false: str
    like_escape: str
    """What follows a LIKE pattern so that `escape_like`'s backslashes escape (PostgreSQL's default)."""
    json_lists: bool
    """SQLite takes a list as one JSON text (`json_each`); PostgreSQL takes an array (`= ANY`)."""
    props_sort: str = "props"
    """`props` as a sort look-up reads it: SQLite's planner, without statistics, reads a `min(text)` from the
    text index's whole key range unless told to seek the covering (key, file_id, ...) index."""

    def in_list(self, column: str, values: Sequence[str], *, negate: bool = False) -> tuple[str, Any]:
        """`column` among `values` (or not, with `negate`), as a clause and its one parameter."""
        if self.json_lists:
            clause = (
                f"{column} {'NOT IN' if negate else 'IN'} (SELECT value FROM json_each({self.placeholder}))"
            )
            return clause, json.dumps(list(values), ensure_ascii=False)
        clause = f"{column} = ANY({self.placeholder})"
        return (f"NOT ({clause})" if negate else clause), list(values)


SQLITE = SqlDialect(
    placeholder="?",
    true="1",
    false="0",
    like_escape=" ESCAPE '\\'",
    json_lists=True,
    props_sort="props INDEXED BY props_sort",
)
POSTGRES = SqlDialect(placeholder="%s", true="TRUE", false="FALSE", like_escape="", json_lists=False)


def escape_like(value: str) -> str:
    """`value` matched literally inside a LIKE pattern (backslash escapes)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def prefix_clause(dialect: SqlDialect, prefixes: Sequence[str], column: str) -> tuple[str, list[Any]]:
    """Files under any of `prefixes` (directories): `path >= 'p/' AND path < 'p0'` ('0' is the character
    after '/', compared as bytes: PostgreSQL's path columns are `COLLATE "C"`); '' is everything."""
    if not prefixes or any(p == "" for p in prefixes):
        return dialect.true, []
    mark = dialect.placeholder
    parts: list[str] = []
    params: list[Any] = []
    for prefix in prefixes:
        base = prefix.rstrip("/")
        parts.append(f"({column} >= {mark} AND {column} < {mark})")
        params += [base + "/", base + "0"]
    return "(" + " OR ".join(parts) + ")", params


def skipped_clause(dialect: SqlDialect, flt: FileFilter) -> tuple[str, list[Any]]:
    """A WHERE clause over the `skipped` table (files the syncs left out: a path, no columns of their own to
    filter on): the filter's prefixes and its folders, a folder being the prefix of its files."""
    clauses: list[str] = []
    params: list[Any] = []
    if flt.prefixes:
        where, prefix_params = prefix_clause(dialect, flt.prefixes, "path")
        clauses.append(where)
        params += prefix_params
    if flt.folders is not None:
        where, folder_params = (
            prefix_clause(dialect, flt.folders, "path") if flt.folders else (dialect.false, [])
        )
        clauses.append(where)
        params += folder_params
    if flt.paths is not None:
        where, value = dialect.in_list("path", flt.paths)
        clauses.append(where)
        params.append(value)
    return (" AND ".join(clauses) or dialect.true), params


def file_filter_clause(
    dialect: SqlDialect,
    flt: FileFilter,
    superseded: Callable[[], Iterable[str]],
    *,
    alias: str = "",
) -> tuple[str, list[Any]]:
    """A WHERE clause over `files` (its columns prefixed by `alias`, e.g. "f.") and its parameters.
    `superseded` gives the paths a newer document supersedes, asked only when the filter hides them."""
    mark = dialect.placeholder
    clauses: list[str] = []
    params: list[Any] = []
    if flt.prefixes:
        where, prefix_params = prefix_clause(dialect, flt.prefixes, f"{alias}path")
        clauses.append(where)
        params += prefix_params
    if flt.folders is not None:
        where, value = dialect.in_list(f"{alias}folder", flt.folders)
        clauses.append(where)
        params.append(value)
    if flt.paths is not None:
        where, value = dialect.in_list(f"{alias}path", flt.paths)
        clauses.append(where)
        params.append(value)
    if flt.tag:
        tag = escape_like(flt.tag)
        like = f"{alias}tags LIKE {mark}{dialect.like_escape}"
        clauses.append(f"({like} OR {like})")
        params += [f"% {tag} %", f"% {tag}/%"]
    if flt.written_by == "agent":
        clauses.append(f"coalesce({alias}created_by, '') <> ''")
    elif flt.written_by == "user":
        clauses.append(f"coalesce({alias}created_by, '') = ''")
    if flt.session:
        clauses.append(f"{alias}session = {mark}")
        params.append(flt.session)
    if flt.changed_since_ns is not None:
        clauses.append(f"{alias}mtime_ns >= {mark}")
        params.append(int(flt.changed_since_ns))
    if flt.hide_superseded:
        hidden = sorted(superseded())
        if hidden:
            where, value = dialect.in_list(f"{alias}path", hidden, negate=True)
            clauses.append(where)
            params.append(value)
    return (" AND ".join(clauses) or dialect.true), params
