"""The client's commands for the `extra` tool set's routes: `ragdown query FOLDER[/SUB]` (documents by their
properties, `/api/v1/folders/F/query`) and `ragdown related FOLDER/PATH` (a note's neighbourhood,
`/api/v1/folders/F/related`), each one request, its answer as a table or lines, or the JSON with `--json`."""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from ragdown.cli.client.remote import ClientError, Remote, folder_path

# `KEY OP VALUE` (`status=done`, `priority >= 8`, `owner contains son`), `KEY exists`, `KEY not exists`.
_CONDITION = re.compile(
    r"^\s*(?P<key>[^\s=!<>]+)\s*(?P<op>!=|<=|>=|=|<|>|\s(?:not contains|contains|starts_with)\s)\s*(?P<value>.*?)\s*$"
)
_EXISTS = re.compile(r"^\s*(?P<key>\S+)\s+(?P<op>exists|not exists)\s*$")


def _value(text: str) -> Any:
    """A condition's value as JSON would carry it: a number, true/false, or the text (quotes taken off)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() and "." not in text else number


def condition(text: str) -> dict[str, Any]:
    """One `--where` as the tool's condition object."""
    found = _EXISTS.match(text)
    if found is not None:
        return {"property": found["key"], "op": found["op"]}
    found = _CONDITION.match(text)
    if found is None or not found["value"]:
        raise ClientError(
            f"--where takes KEY OP VALUE (status=done, 'priority >= 8', 'owner contains son') or"
            f" 'KEY exists', not {text!r}",
            2,
        )
    return {"property": found["key"], "op": found["op"].strip(), "value": _value(found["value"])}


def _sort(text: str) -> dict[str, str]:
    """`--sort due` or `--sort due:desc` (`:asc` too)."""
    by, _, order = text.rpartition(":")
    if order.lower() in ("asc", "desc") and by:
        return {"by": by, "order": order.lower()}
    return {"by": text, "order": "asc"}


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def query(args: argparse.Namespace, remote: Remote) -> None:
    folder, _, sub = args.folder.strip().strip("/").partition("/")
    where: list[dict[str, Any]] = [condition(w) for w in args.where or ()]
    if args.where_json:
        try:
            given = json.loads(args.where_json)
        except json.JSONDecodeError as err:
            raise ClientError(f"--where-json is not JSON: {err}", 2) from None
        where += given if isinstance(given, list) else [given]
    where += [{"tag": t} for t in args.tag or ()]
    where += [{"links_to": t} for t in args.links_to or ()]
    payload: dict[str, Any] = {
        "where": where or None,
        "sort": [_sort(s) for s in args.sort] if args.sort else None,
        "columns": [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None,
        "path_prefix": sub or None,
        "base": args.base,
        "view": args.view,
        "limit": args.limit,
        "offset": args.offset,
    }
    body = remote.call(
        "POST", folder_path(folder, "query"), body={k: v for k, v in payload.items() if v is not None}
    )
    columns: list[str] = body["columns"]
    rows = [[_cell(row.get(c)) for c in columns] for row in body["rows"]]
    widths = [max([len(c), *(len(r[n]) for r in rows)]) for n, c in enumerate(columns)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()
        for cells in [columns, *rows]
    ]
    shown = (
        f"{body['offset'] + 1}-{body['offset'] + len(rows)} of {body['total']}"
        if rows
        else f"0 of {body['total']}"
    )
    lines.append(
        f"({shown} documents" + (f"; next: --offset {body['offset'] + len(rows)})" if body["more"] else ")")
    )
    emit_text(args, body, "\n".join(lines))


def related(args: argparse.Namespace, remote: Remote) -> None:
    folder, _, path = args.path.strip().strip("/").partition("/")
    if not path:
        raise ClientError(f"name a document as FOLDER/PATH, not {args.path!r}", 2)
    params = {
        "path": path,
        "node_id": args.node_id,
        "heading": args.heading,
        "depth": args.depth,
        "budget": args.budget,
    }
    body = remote.call("GET", folder_path(folder, "related"), params=params)
    lines = []
    for r in body["related"]:
        line = f"{folder}/{r['cite']}  [{r['why']}]"
        if r.get("title"):
            line += f"  {r['title']}"
        if r.get("text"):
            line += f" — {r['text']}"
        lines.append(line)
    if body["more"]:
        lines.append("more neighbours: raise --budget")
    emit_text(args, body, "\n".join(lines) if lines else f"nothing related to {args.path}")


def emit_text(args: argparse.Namespace, body: Any, text: str) -> None:
    print(json.dumps(body, ensure_ascii=False) if args.json else text)
