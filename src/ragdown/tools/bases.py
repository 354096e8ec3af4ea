"""Obsidian Bases (`.base` files) as `ragdown_query` plans: the Base's filters and one view's filters, order
(columns), sort, group and limit. The common subset of the expression language is read (`file.hasTag`,
`file.inFolder`, `file.hasLink`, `file.hasProperty`, comparisons of a property with a literal, `.contains`,
`.startsWith`, `.isEmpty`, `!`, `&&`, `||`, `date(...)`, `today()`, `now()`); anything else is refused, named."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Any

from ragdown.core.errors import Refusal, bad_request, not_found
from ragdown.core.paths import split_safe
from ragdown.documents import decode_text
from ragdown.documents.frontmatter import load_yaml_mapping
from ragdown.storage.query_sql import AllOf, AnyOf, Cond, NoneOf, Prop, SortKey, Tag, Under
from ragdown.tools.context import ToolContext
from ragdown.tools.query_plan import Conditions, Plan, QueryArgs, field_of, sort_keys
from ragdown.vault.sandbox import read_plain

_TOKEN = re.compile(
    r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')|(?P<num>-?\d+(?:\.\d+)?)'
    r"|(?P<op>==|!=|>=|<=|&&|\|\||[<>!().,\[\]])|(?P<name>[A-Za-z_][\w-]*))"
)
_OPS = {"==": "=", "!=": "!=", ">": ">", "<": "<", ">=": ">=", "<=": "<="}
_FILE_CALLS = ("hasTag", "inFolder", "hasLink", "hasProperty")


class _Unsupported(Exception):
    pass


class _Expr:
    """One filter expression, parsed straight into conditions."""

    def __init__(self, text: str, conds: Conditions) -> None:
        self.text = text
        self.conds = conds
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None or m.end() == pos:
                if text[pos:].strip():
                    raise _Unsupported(f"cannot read {text[pos:]!r}")
                break
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.tokens) or (want is not None and self.tokens[self.i][1] != want):
            raise _Unsupported(f"expected {want or 'more'}")
        self.i += 1
        return self.tokens[self.i - 1]

    def parse(self) -> Cond:
        cond = self.or_()
        if self.i != len(self.tokens):
            raise _Unsupported(f"unexpected {self.peek()!r}")
        return cond

    def or_(self) -> Cond:
        items = [self.and_()]
        while self.peek() == "||":
            self.take()
            items.append(self.and_())
        return items[0] if len(items) == 1 else AnyOf(tuple(items))

    def and_(self) -> Cond:
        items = [self.unary()]
        while self.peek() == "&&":
            self.take()
            items.append(self.unary())
        return items[0] if len(items) == 1 else AllOf(tuple(items))

    def unary(self) -> Cond:
        if self.peek() == "!":
            self.take()
            return NoneOf((self.unary(),))
        if self.peek() == "(":
            self.take()
            inner = self.or_()
            self.take(")")
            return inner
        return self.compare()

    def reference(self) -> tuple[str, str | None, list[Any]]:
        """A property (`status`, `note.status`, `note["due date"]`, `file.name`) and an optional method call
        on it, with its literal arguments."""
        kind, first = self.take()
        if kind != "name":
            raise _Unsupported(f"expected a property, not {first!r}")
        parts = [first]
        method: str | None = None
        args: list[Any] = []
        while self.peek() in (".", "["):
            if self.take()[1] == "[":
                kind, key = self.take()
                if kind != "str":
                    raise _Unsupported("note[...] takes a quoted name")
                parts.append(_unquote(key))
                self.take("]")
                continue
            name = self.take()[1]
            if self.peek() == "(":
                method = name
                args = self.arguments()
                break
            parts.append(name)
        if parts[0] == "note" and len(parts) > 1:
            return "note." + ".".join(parts[1:]), method, args
        return ".".join(parts), method, args

    def arguments(self) -> list[Any]:
        self.take("(")
        args: list[Any] = []
        while self.peek() != ")":
            args.append(self.literal())
            if self.peek() == ",":
                self.take()
        self.take(")")
        return args

    def literal(self) -> Any:
        kind, text = self.take()
        if kind == "str":
            return _unquote(text)
        if kind == "num":
            return float(text) if "." in text else int(text)
        if text in ("true", "false"):
            return text == "true"
        if text in ("today", "now", "date"):
            args = self.arguments()
            if text == "date" and len(args) == 1 and isinstance(args[0], str):
                return args[0]
            if text == "today" and not args:
                return dt.datetime.now(dt.UTC).date().isoformat()
            if text == "now" and not args:
                return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
        raise _Unsupported(f"unsupported value {text!r}")

    def compare(self) -> Cond:
        name, method, args = self.reference()
        if name == "file" and method in _FILE_CALLS:
            return self.file_call(method, args)
        if name.startswith("formula.") or name.startswith("this"):
            raise _Unsupported(f"{name} (formulas and this are not supported)")
        if method is not None:
            if method == "contains" and len(args) == 1:
                return self.conds.compare(name, "contains", args[0])
            if method == "startsWith" and len(args) == 1:
                return self.conds.compare(name, "starts_with", args[0])
            if method == "isEmpty" and not args:
                return self.conds.compare(name, "not exists", None)
            raise _Unsupported(f"{name}.{method}(...)")
        op = self.peek()
        if op not in _OPS:
            return self.conds.compare(name, "exists", None)
        self.take()
        return self.conds.compare(name, _OPS[op], self.literal())  # type: ignore[arg-type]

    def file_call(self, method: str, args: list[Any]) -> Cond:
        if not args or not all(isinstance(a, str) for a in args):
            raise _Unsupported(f"file.{method} takes quoted names")
        if method == "hasTag":
            return AnyOf(tuple(Tag(a.strip().lstrip("#").lower()) for a in args))
        if method == "inFolder":
            return AnyOf(tuple(Under((self.conds.path(a, folder=True),)) for a in args))
        if method == "hasLink":
            return AnyOf(tuple(self.conds.links_to(a.strip("[]")) for a in args))
        return AnyOf(tuple(Prop(a.casefold(), "exists") for a in args))


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text[1:-1])


def filters(node: Any, conds: Conditions, depth: int = 0) -> Cond:
    """A Base's `filters` (a string, or one of and / or / not over a list of filters)."""
    if depth > 16:
        raise bad_request("the Base's filters nest too deep")
    if node is None:
        return AllOf(())
    if isinstance(node, str):
        try:
            return _Expr(node, conds).parse()
        except _Unsupported as err:
            raise bad_request(f"unsupported Base filter {node!r}: {err}") from None
    if isinstance(node, dict) and len(node) == 1:
        key, items = next(iter(node.items()))
        if key in ("and", "or", "not") and isinstance(items, list):
            inner = tuple(filters(i, conds, depth + 1) for i in items)
            return AllOf(inner) if key == "and" else AnyOf(inner) if key == "or" else NoneOf(inner)
    raise bad_request(f"unsupported Base filter {node!r}: a filter is a string or one of and, or, not")


def _column(name: str) -> str | None:
    """A view's column as the query names it; None for a formula (not computed)."""
    if name.startswith("formula."):
        return None
    try:
        field_of(name)
    except Refusal:
        raise bad_request(f"unsupported Base column {name!r}") from None
    return name


def base_plan(ctx: ToolContext, a: QueryArgs) -> tuple[Plan, str | None]:
    raw = a.base or ""
    if not raw.lower().endswith(".base"):
        raise bad_request(f"base names a .base file, not {raw!r}")
    path = ctx.scope.docs_path("/".join(split_safe(raw)))
    data = read_plain(ctx.docs_root, path)
    if data is None:
        raise not_found(f"no such Base: {raw}")
    try:
        doc, _warnings = load_yaml_mapping(decode_text(data)[0])
    except Exception as err:
        raise bad_request(f"{raw} is not a Base's YAML: {err}") from None
    views: Sequence[Any] = doc.get("views") or [{"type": "table", "name": "Table"}]
    if not isinstance(views, list) or not all(isinstance(v, dict) for v in views):
        raise bad_request(f"{raw}: views must be a list")
    view = views[0] if a.view is None else next((v for v in views if str(v.get("name")) == a.view), None)
    if view is None:
        names = ", ".join(str(v.get("name")) for v in views)
        raise not_found(f"{raw} has no view {a.view!r}: its views are {names}")
    conds = Conditions(ctx)
    where: tuple[Cond, ...] = (filters(doc.get("filters"), conds), filters(view.get("filters"), conds))
    sort_raw: list[dict[str, Any]] = []
    group = view.get("groupBy")
    for s in ([group] if isinstance(group, dict) else []) + list(view.get("sort") or []):
        if not isinstance(s, dict) or "property" not in s:
            raise bad_request(f"{raw}: unsupported sort {s!r}")
        if str(s["property"]).startswith("formula."):
            raise bad_request(f"{raw}: unsupported sort by {s['property']} (formulas are not computed)")
        sort_raw.append({"by": s["property"], "order": str(s.get("direction", "ASC")).lower()})
    sort: tuple[SortKey, ...] = sort_keys(sort_raw)
    order = [str(c) for c in (view.get("order") or ["file.name"])]
    columns = tuple(c for c in (_column(c) for c in order) if c is not None)
    skipped = [c for c in order if c.startswith("formula.")]
    limit = a.limit
    if isinstance(view.get("limit"), int) and view["limit"] > 0:
        limit = min(limit, int(view["limit"]))
    heading = f"{raw} › {view.get('name') or 'view'}"
    if skipped:
        heading += f" (formula columns not shown: {', '.join(skipped)})"
    return Plan(where, sort, columns or ("file.name",), limit, a.offset), heading
