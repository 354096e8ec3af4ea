"""The client commands ReadmeDB's `rdb` has that ragdown's needed more for: `edit` (a document in
`$EDITOR`, written back against the hash it was read at) and `ls --since` (what changed lately).

`edit` never loses an edit: the temp file it opened is removed only once the server took its text; a
conflict (someone saved the document meanwhile) or any other refusal keeps it and says where it is.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ragdown.cli.client.remote import ClientError, Remote, folder_path

# `--since` durations as ReadmeDB spells them (`2h`): a whole number and a unit (seconds to weeks).
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_DURATION = re.compile(r"^(\d+)\s*([smhdw])$")
PAGE = 500  # documents a list request asks for, the route's most


def duration_s(text: str) -> int:
    """`30s`, `15m`, `2h`, `7d`, `2w` as seconds (argparse's type for `--since`)."""
    found = _DURATION.match(text.strip().lower())
    if found is None:
        raise argparse.ArgumentTypeError(
            f"--since takes a duration: a number and s, m, h, d or w (30m, 2h, 7d), not {text!r}"
        )
    return int(found.group(1)) * UNITS[found.group(2)]


def editor() -> list[str]:
    """The editor's command line: `$EDITOR` (its arguments too: `code --wait`), else `vi`."""
    words = shlex.split(os.environ.get("EDITOR", "").strip() or "vi")
    return words or ["vi"]


def edit(args: argparse.Namespace, remote: Remote, folder: str, path: str) -> dict[str, Any]:
    """Open `folder/path` in the editor and write it back against the hash it was read at; a document that
    is not there yet starts empty and is created (only if it is still not there). Returns the answer."""
    try:
        read = remote.call("GET", folder_path(folder, "files", path))
        old, base = str(read["content"]), str(read["hash"])
    except ClientError as err:
        if not err.message.startswith("not found:"):
            raise
        old, base = "", ""
    fd, name = tempfile.mkstemp(prefix="ragdown-edit-", suffix="-" + Path(path).name)
    kept = Path(name)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
        out.write(old)
    try:
        done = subprocess.run([*editor(), str(kept)], check=False)
    except OSError as err:
        kept.unlink(missing_ok=True)
        raise ClientError(
            f"cannot run the editor {editor()[0]!r} ($EDITOR): {err.strerror or err}", 2
        ) from None
    if done.returncode != 0:
        raise ClientError(
            f"the editor exited with {done.returncode}: nothing written; your text is in {kept}"
        )
    try:
        new = kept.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ClientError(f"{kept} is not UTF-8 text: nothing written; it is kept there") from None
    if new == old:
        kept.unlink(missing_ok=True)
        return {"changed": False, "name": path}
    try:
        if base:
            body = remote.call(
                "PUT", folder_path(folder, "files", path), body={"content": new, "base_hash": base}
            )
        else:
            body = remote.call("POST", folder_path(folder, "files"), body={"name": path, "content": new})
    except ClientError as err:
        again = f"ragdown write {folder}/{path} --file {kept}"
        if err.message.startswith("conflict:"):
            raise ClientError(
                f"{folder}/{path} changed on the server since it was opened, so your edit was not written "
                f"over it; it is kept in {kept}: compare (ragdown cat {folder}/{path}), then {again}"
            ) from None
        raise ClientError(f"{err.message}; your edit is kept in {kept}", err.code) from None
    kept.unlink(missing_ok=True)
    return {**body, "changed": True}


def changed_since(remote: Remote, folder: str, prefix: str, since_s: int) -> list[dict[str, Any]]:
    """The documents of `folder` (under `prefix`) whose content changed in the last `since_s` seconds,
    newest first, each with its folder."""
    cutoff = int((time.time() - since_s) * 1000)
    found: list[dict[str, Any]] = []
    offset = 0
    while True:
        params = {"limit": PAGE, "offset": offset, "prefix": prefix or None}
        page = remote.call("GET", folder_path(folder, "files"), params=params)
        found += [{**f, "folder": folder} for f in page["files"] if f["updatedAt"] >= cutoff]
        offset += page["returned"]
        if page["returned"] == 0 or offset >= page["total"]:
            break
    return sorted(found, key=lambda f: (-f["updatedAt"], f["name"]))


def print_edit(folder: str, body: dict[str, Any]) -> None:
    if not body["changed"]:
        print(f"no change: {folder}/{body['name']} left as it is")
        return
    verb = "created" if body.get("created") else "wrote"
    print(f"{verb} {folder}/{body['name']} (hash {str(body['hash'])[:12]})")
    for line in body.get("warnings") or ():
        print(f"warning: {line}", file=sys.stderr)


__all__ = ["changed_since", "duration_s", "edit", "editor", "print_edit"]
