"""`ragdown keys create | list | revoke`: scoped API keys of RAGDOWN_DOCS_DIR (`keys.KeyStore`).

They work on the keys file beside the documents (`<docs>/.ragdown/keys.json`), so a running
`ragdown serve` on the same docs honours a key made or revoked here at once. Light to import: the parser
needs nothing; the commands import what they use.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragdown.access.keys import KeyRecord
    from ragdown.core.config import Settings


def register(subparsers: Any) -> None:
    """Add `keys` and its subcommands to the `ragdown` parser."""
    keys = subparsers.add_parser("keys", help="scoped API keys for `ragdown serve` (of RAGDOWN_DOCS_DIR)")
    sub = keys.add_subparsers(dest="keys_command", required=True)

    create = sub.add_parser("create", help="make a key; its secret is printed once, and stored nowhere")
    create.add_argument("--name", required=True, help="a name, unique among the live keys")
    which = create.add_mutually_exclusive_group(required=True)
    which.add_argument("--folders", help="the folders it sees, comma-separated (they must exist)")
    which.add_argument("--all", action="store_true", help="every folder, those made later too")
    create.add_argument("--role", required=True, choices=("read", "write"), help="read, or read and write")
    create.add_argument("--expires-days", type=float, help="expire this many days from now (default: never)")
    create.add_argument("--json", action="store_true", help="the key and its secret as JSON")

    listing = sub.add_parser("list", help="the keys (never their secrets)")
    listing.add_argument("--json", action="store_true", help="as JSON")

    revoke = sub.add_parser("revoke", help="revoke a key by its id or name: it stops working at once")
    revoke.add_argument("key", metavar="NAME_OR_ID")
    revoke.add_argument("--json", action="store_true", help="the revoked key as JSON")


def _when(at: float | None) -> str:
    if at is None:
        return "never"
    from ragdown.core.times import iso_seconds

    return iso_seconds(at)


def _line(r: KeyRecord) -> str:
    folders = ",".join(r.folders) if r.folders is not None else "(all)"
    state = " EXPIRED" if r.expired() else ""
    client = f" client={r.client}" if r.client else ""
    return (
        f"{r.id}  {r.name}  {r.role}  {folders}  {r.kind}{client}  created {_when(r.created_at)}  "
        f"expires {_when(r.expires_at)}{state}"
    )


def run(settings: Settings, args: argparse.Namespace) -> int:
    import time

    from ragdown.access.keys import KeyStore

    store = KeyStore(settings.require_docs_dir())
    if args.keys_command == "create":
        if args.expires_days is not None and args.expires_days <= 0:
            raise ValueError("--expires-days must be more than 0")
        folders = None if args.all else [f.strip() for f in args.folders.split(",") if f.strip()]
        expires = time.time() + args.expires_days * 86400 if args.expires_days is not None else None
        secret, record = store.create(args.name, folders, args.role, expires_at=expires)
        if args.json:
            print(json.dumps({"key": record.as_json(), "secret": secret}, ensure_ascii=False))
        else:
            print(secret)
            print(
                f"key {record.name} ({record.id}): {record.role}, "
                f"{'every folder' if record.folders is None else ', '.join(record.folders)}. The secret "
                "above is shown this once: clients send it as `Authorization: Bearer <secret>`.",
                file=sys.stderr,
            )
        return 0
    if args.keys_command == "list":
        records = store.list()
        if args.json:
            print(json.dumps({"keys": [r.as_json() for r in records]}, ensure_ascii=False))
        elif not records:
            print("No keys.")
        else:
            for r in records:
                print(_line(r))
        return 0
    record = store.revoke(args.key)
    if args.json:
        print(json.dumps({"revoked": record.as_json()}, ensure_ascii=False))
    else:
        print(f"revoked {record.name} ({record.id})")
    return 0


__all__ = ["register", "run"]
