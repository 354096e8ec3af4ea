"""The client's commands: each one request (or a few) to `/api/v1`, its answer printed as a line of text,
or as the server's JSON with `--json`. A failure prints one line on stderr and exits 1 (2 for a usage
error: no server configured, a path that names no folder)."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragdown.cli.client import extra, rdb
from ragdown.cli.client.remote import (
    API,
    ClientError,
    Remote,
    folder_path,
    remove_config,
    save_config,
    target,
)

SHORT_HASH = 12


def main(args: argparse.Namespace) -> int:
    name: str = getattr(args, "client", None) or "search"
    try:
        if name == "login":
            login(args)
        elif name == "logout":
            logout(args)
        else:
            with Remote(target()) as remote:
                HANDLERS[name](args, remote)
    except ClientError as err:
        print(f"ragdown: {err.message}", file=sys.stderr)
        return err.code
    except KeyboardInterrupt:
        return 130
    return 0


# -- output -----------------------------------------------------------------------------------------


def emit(args: argparse.Namespace, body: Any, text: str | None) -> None:
    """The server's JSON (`--json`), else `text` (nothing when None)."""
    if args.json:
        print(json.dumps(body, ensure_ascii=False))
    elif text is not None:
        print(text)


def warn(lines: list[str]) -> None:
    for line in lines:
        print(f"warning: {line}", file=sys.stderr)


def tell(body: dict[str, Any]) -> None:
    """A change's `notes` on stderr (the index still syncing, an index.md left alone)."""
    for line in body.get("notes") or ():
        print(f"note: {line}", file=sys.stderr)


def out_text(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")


def split_doc(raw: str, what: str = "a document") -> tuple[str, str]:
    """`folder/path.md` as (folder, path in it)."""
    folder, sep, rest = raw.strip().lstrip("/").partition("/")
    if not sep or not folder or not rest.strip("/"):
        raise ClientError(f"name {what} as FOLDER/PATH.md (its folder first), not {raw!r}", 2)
    return folder, rest.strip("/")


def content_of(args: argparse.Namespace) -> str:
    """The text to write: the CONTENT argument, `--file` (`-` is stdin), or stdin when it is piped."""
    if args.content is not None and args.file:
        raise ClientError("give the content or --file, not both", 2)
    if args.content is not None:
        return str(args.content)
    if args.file and args.file != "-":
        try:
            data = Path(args.file).read_bytes()
        except OSError as err:
            raise ClientError(f"cannot read {args.file}: {err.strerror or err}", 2) from None
    elif args.file == "-" or not sys.stdin.isatty():
        data = sys.stdin.buffer.read()
    else:
        raise ClientError("give the content, --file FILE, or pipe it in", 2)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ClientError(f"{args.file or 'stdin'} is not UTF-8 text", 2) from None


def _wrote(verb: str, folder: str, body: dict[str, Any]) -> str:
    return f"{verb} {folder}/{body['name']} (hash {str(body['hash'])[:SHORT_HASH]})"


# -- login, logout, whoami --------------------------------------------------------------------------


def login(args: argparse.Namespace) -> None:
    key = args.key
    if key is None and sys.stdin.isatty():
        key = getpass.getpass("API key (Enter for none): ").strip() or None
    where = target(args.url, key or "")
    with Remote(where) as remote:
        who = remote.call("GET", f"{API}/whoami")
    path = save_config(where.url, where.key)
    emit(
        args,
        {**who, "url": where.url, "config": str(path)},
        f"logged in to {where.url} as {_who(who)}; saved in {path}",
    )


def logout(args: argparse.Namespace) -> None:
    path = remove_config()
    emit(args, {"removed": str(path) if path else None}, f"removed {path}" if path else "not logged in")


def _who(body: dict[str, Any]) -> str:
    folders = body.get("folders")
    sees = "every folder" if folders is None else ", ".join(folders) or "no folder"
    return f"{body['who']} ({body['role']}): {sees}"


def whoami(args: argparse.Namespace, remote: Remote) -> None:
    body = remote.call("GET", f"{API}/whoami")
    emit(args, body, f"{_who(body)} on {remote.where.url}")


# -- documents --------------------------------------------------------------------------------------


def ls(args: argparse.Namespace, remote: Remote) -> None:
    if args.since is not None:
        ls_since(args, remote)
        return
    if not args.where:
        body = remote.call("GET", f"{API}/folders")
        lines = [
            f"{f['name']}/\t{f['files']} documents\t{f['title']}{'' if f['writable'] else ' (read only)'}"
            for f in body["folders"]
        ]
        emit(args, body, "\n".join(lines) if lines else "no folders")
        return
    folder, _, prefix = args.where.strip().strip("/").partition("/")
    params = {"limit": args.limit, "offset": args.offset, "prefix": prefix or None}
    body = remote.call("GET", folder_path(folder, "files"), params=params)
    emit(args, body, "\n".join(f"{folder}/{f['name']}" for f in body["files"]) or None)
    rest = body["total"] - body["offset"] - body["returned"]
    if rest > 0 and not args.json:
        print(f"… {rest} more: --offset {body['offset'] + body['returned']}", file=sys.stderr)


def ls_since(args: argparse.Namespace, remote: Remote) -> None:
    """`ls [FOLDER[/SUB]] --since 2h`: the documents changed lately, newest first (every folder the key
    sees when none is named), then `--offset` and `--limit`."""
    if args.where:
        folder, _, prefix = args.where.strip().strip("/").partition("/")
        places = [(folder, prefix)]
    else:
        places = [(f["name"], "") for f in remote.call("GET", f"{API}/folders")["folders"]]
    found = [f for folder, prefix in places for f in rdb.changed_since(remote, folder, prefix, args.since)]
    found.sort(key=lambda f: (-f["updatedAt"], f["folder"], f["name"]))
    shown = found[args.offset : args.offset + args.limit]
    body = {"files": shown, "since_s": args.since, "total": len(found)}
    emit(args, body, "\n".join(f"{f['folder']}/{f['name']}" for f in shown) or None)


def edit(args: argparse.Namespace, remote: Remote) -> None:
    folder, path = split_doc(args.path)
    body = rdb.edit(args, remote, folder, path)
    if args.json:
        emit(args, body, None)
    else:
        rdb.print_edit(folder, body)
        tell(body)


def cat(args: argparse.Namespace, remote: Remote) -> None:
    start, end = args.lines or (None, None)
    bodies = []
    for raw in args.paths:
        folder, path = split_doc(raw)
        body = remote.call(
            "GET", folder_path(folder, "files", path), params={"start_line": start, "end_line": end}
        )
        bodies.append(body)
        if not args.json:
            out_text(body["content"])
    if args.json:
        emit(args, bodies[0] if len(bodies) == 1 else bodies, None)


def write(args: argparse.Namespace, remote: Remote) -> None:
    folder, path = split_doc(args.path)
    content = content_of(args)
    if args.no_overwrite:
        if args.base_hash:
            raise ClientError("-n writes a new document only: base_hash is for replacing one", 2)
        try:
            body = remote.call("POST", folder_path(folder, "files"), body={"name": path, "content": content})
        except ClientError as err:
            if err.message.startswith("conflict:"):
                raise ClientError(f"{err.message} (-n: left as it is)") from None
            raise
    else:
        payload = {"content": content, "base_hash": args.base_hash}
        body = remote.call("PUT", folder_path(folder, "files", path), body=payload)
    emit(args, body, _wrote("created" if body["created"] else "wrote", folder, body))
    if not args.json:
        warn(body["warnings"])
        tell(body)


def append(args: argparse.Namespace, remote: Remote) -> None:
    folder, path = split_doc(args.path)
    payload = {"content": content_of(args), "heading": args.heading}
    body = remote.call("POST", folder_path(folder, "files", path, "append"), body=payload)
    emit(args, body, _wrote("created" if body["created"] else "appended to", folder, body))
    if not args.json:
        warn(body["warnings"])
        tell(body)


def rm(args: argparse.Namespace, remote: Remote) -> None:
    folder, path = split_doc(args.path)
    params = {"base_hash": args.base_hash, "purge": True if args.purge else None}
    body = remote.call("DELETE", folder_path(folder, "files", path), params=params)
    kept = " (in the trash: ragdown trash lists it, ragdown restore brings it back)" if body["trash"] else ""
    kept = " for good, with all its versions" if args.purge else kept
    emit(args, body, f"deleted {folder}/{body['name']}{kept}")
    if not args.json:
        tell(body)


def mv(args: argparse.Namespace, remote: Remote) -> None:
    folder, path = split_doc(args.source)
    to_folder, to = split_doc(args.target, "the new path")
    if to_folder != folder:
        raise ClientError(f"a move stays inside its folder: {args.target} is not in {folder}/", 2)
    payload = {"to": to, "overwrite": True} if args.force else {"to": to}
    body = remote.call("POST", folder_path(folder, "files", path, "move"), body=payload)
    links = f"; links updated in {', '.join(body['updated'])}" if body["updated"] else ""
    emit(args, body, f"moved {folder}/{body['from']} to {folder}/{body['to']}{links}")
    if not args.json:
        tell(body)


def patch(args: argparse.Namespace, remote: Remote) -> None:
    folder, path = split_doc(args.path)
    if args.all and args.nth is not None:
        raise ClientError("--all or --nth, not both", 2)
    payload = {
        "find": args.find,
        "replace": args.replace,
        "all": args.all,
        "occurrence_index": args.nth,
        "base_hash": args.base_hash,
    }
    body = remote.call("POST", folder_path(folder, "files", path, "patch"), body=payload)
    emit(
        args,
        body,
        f"replaced {body['replaced']} in {folder}/{body['name']} (hash {body['hash'][:SHORT_HASH]})",
    )
    if not args.json:
        warn(body["warnings"])
        tell(body)


# -- versions ---------------------------------------------------------------------------------------


def who_of(version: dict[str, Any]) -> str:
    """Who made a version, with its session (`rest (key:writer)`), as `history` and `trash` print it."""
    return str(version["who"]) + (f" ({version['session']})" if version.get("session") else "")


def trash(args: argparse.Namespace, remote: Remote) -> None:
    folder = args.folder.strip().strip("/")
    if not folder or "/" in folder:
        raise ClientError(f"name a folder (its trash is the folder's), not {args.folder!r}", 2)
    if args.empty:
        body = remote.call("DELETE", folder_path(folder, "trash"))
        n = len(body["forgotten"])
        emit(args, body, f"deleted {n} document{'s' if n != 1 else ''} for good from the trash of {folder}")
        return
    body = remote.call("GET", folder_path(folder, "trash"))
    if not body["enabled"]:
        emit(args, body, "the version history is off on this server: a delete keeps nothing to restore")
        return
    lines = [
        f"{folder}/{e['path']}  deleted {e['deleted_at']}  last v{e['last']['version']} by {who_of(e['last'])},"
        f" {e['last']['size']} bytes"
        for e in body["trash"]
    ]
    if lines:
        lines.append(f"bring one back: ragdown restore {folder}/PATH VERSION")
    emit(args, body, "\n".join(lines) if lines else f"the trash of {folder} is empty")


def history(args: argparse.Namespace, remote: Remote) -> None:
    folder, path = split_doc(args.path)
    body = remote.call("GET", folder_path(folder, "files", path, "history"))
    versions = body["versions"]
    state = " (deleted: ragdown restore brings it back)" if body["deleted"] else ""
    lines = [f"{folder}/{body['path']}: {len(versions)} version{'s' if len(versions) != 1 else ''}{state}"]
    for v in versions:
        who = who_of(v)
        lines.append(
            f"v{v['version']}  {v['at']}  {v['event']}  {v['size']} bytes, {v['lines']} lines  by {who}"
        )
    emit(args, body, "\n".join(lines))


def changes(args: argparse.Namespace, remote: Remote) -> None:
    folder, _, sub = args.folder.strip().strip("/").partition("/")
    params = {
        "since": args.since,
        "after_version": args.after_version,
        "path_prefix": sub or None,
        "who": args.who,
        "limit": args.limit,
    }
    body = remote.call("GET", folder_path(folder, "changes"), params=params)
    lines = []
    for c in body["changes"]:
        where = (
            f"{folder}/{c['moved_from']} -> {folder}/{c['path']}"
            if c.get("moved_from")
            else f"{folder}/{c['path']}"
        )
        who = who_of(c)
        line = (
            f"{c['at']}  {c['event']}  {where}  by {who}  v{c['version']}, {c['size']} bytes ({c['delta']:+})"
        )
        if c.get("sections"):
            line += "  sections: " + "; ".join(c["sections"])
        lines.append(line)
    if body["more"]:
        lines.append("more changes match: raise --limit (up to 200) or narrow --since, --who or the folder")
    emit(args, body, "\n".join(lines) if lines else f"no changes in {args.folder}")


def version(args: argparse.Namespace, remote: Remote) -> None:
    folder, path = split_doc(args.path)
    body = remote.call("GET", folder_path(folder, "files", path, "versions", str(args.number)))
    if args.json:
        emit(args, body, None)
    else:
        out_text(body["content"])


def diff(args: argparse.Namespace, remote: Remote) -> None:
    folder, path = split_doc(args.path)
    params = {"from": args.a, "to": args.b, "context_lines": args.context}
    body = remote.call("GET", folder_path(folder, "files", path, "diff"), params=params)
    emit(args, body, body["diff"])


def restore(args: argparse.Namespace, remote: Remote) -> None:
    folder, path = split_doc(args.path)
    payload = {"version": args.number, "base_hash": args.base_hash}
    body = remote.call("POST", folder_path(folder, "files", path, "restore"), body=payload)
    saved = f"saved as version {body['new_version']}, " if body["new_version"] else ""
    emit(
        args,
        body,
        f"restored {folder}/{body['name']} to version {body['version']} ({saved}hash {body['hash'][:SHORT_HASH]})",
    )
    if not args.json:
        tell(body)


# -- search -----------------------------------------------------------------------------------------


def search(args: argparse.Namespace, remote: Remote) -> None:
    """`ragdown search QUERY`: every folder the key sees (or `--folder`s), in one search on the server
    (`/api/v1/search`), so the hits of different folders are ranked on one scale."""
    params = {
        "query": str(args.dir),
        "top_k": args.top_k,
        "path_prefix": args.path_prefix,
        "tag": args.tag,
        "folder": args.folder or None,
    }
    body = remote.call("GET", f"{API}/search", params=params)
    hits: list[dict[str, Any]] = body["hits"]
    lines = [
        f"{h['path']}:{h['line_start']}-{h['line_end']} — {h['heading'] or h['title']} ("
        + (f"similarity {h['similarity']:.2f}" if h["similarity"] is not None else "lexical")
        + ")"
        for h in hits
    ]
    emit(args, body, "\n".join(lines) if lines else "No matching documents.")


HANDLERS: dict[str, Callable[[argparse.Namespace, Remote], None]] = {
    "whoami": whoami,
    "ls": ls,
    "cat": cat,
    "write": write,
    "append": append,
    "edit": edit,
    "rm": rm,
    "mv": mv,
    "patch": patch,
    "trash": trash,
    "history": history,
    "changes": changes,
    "query": extra.query,
    "related": extra.related,
    "version": version,
    "diff": diff,
    "restore": restore,
    "search": search,
}
