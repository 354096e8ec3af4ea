"""Scoped API keys (and OAuth access tokens, which are keys with an expiry), in `<docs>/.ragdown/keys.json`.

- The file lives beside the documents, with their history, so it survives deleting the data dir; it is
  created with mode 0600 and never holds a secret: only each one's SHA-256 (hex).
- A secret is `rdk_` and 43 characters (base64url of 32 random bytes). It is shown once, by `create`.
- `verify` looks a secret up by its hash and compares it with `hmac.compare_digest`; an expired key is
  no key. It re-reads the file when it changed on disk (another process's `ragdown keys create` or
  `revoke` holds at once in a running server): one `stat` per call.
- Every change is read-modify-write under `atomic.path_lock` (threads and processes take turns) and
  written atomically.
- An expiry, when a key has one, is a time to come when the key is made (`create` refuses one already
  past, for the CLI and `/api/keys` alike).
- Names are unique among live keys. Folders are checked by `paths.folder_name` and must exist when the
  key is made (a typo would otherwise make a key that silently sees nothing); `folders=None` is every
  folder, those made later included. A key to a folder that is later renamed or deleted sees nothing of
  it: access follows names, never guesses; one renamed or deleted through ragdown leaves the keys that
  named it (`forget_folder`), so a folder made later under that name is none of theirs.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import logging
import math
import os
import re
import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from ragdown.access.caller import Access, Role
from ragdown.core import atomic
from ragdown.core.errors import bad_request, not_found, printable, unavailable
from ragdown.core.paths import folder_name
from ragdown.history.store import HISTORY_DIR
from ragdown.vault.folders import list_folders

log = logging.getLogger(__name__)

KEYS_FILE = "keys.json"
SECRET_PREFIX = "rdk_"
SECRET_BYTES = 32
NAME_MAX = 100
KeyKind = Literal["key", "oauth"]
KEY_ROLES: tuple[Role, ...] = ("read", "write")  # RAGDOWN_TOKEN is the only admin
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()


def new_secret() -> str:
    raw = base64.urlsafe_b64encode(secrets.token_bytes(SECRET_BYTES)).rstrip(b"=").decode("ascii")
    return SECRET_PREFIX + raw


@dataclass(frozen=True)
class KeyRecord:
    id: str
    name: str
    role: Role
    folders: tuple[str, ...] | None  # None: every folder
    hash: str  # SHA-256 hex of the secret
    created_at: float
    expires_at: float | None = None
    kind: KeyKind = "key"
    client: str | None = None  # an OAuth token's client name

    def expired(self, now: float | None = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (time.time() if now is None else now)

    def access(self) -> Access:
        who = f"oauth:{self.client or self.name}" if self.kind == "oauth" else f"key:{self.name}"
        folders = frozenset(self.folders) if self.folders is not None else None
        return Access(who=who, role=self.role, folders=folders, key_id=self.id)

    def as_json(self) -> dict[str, Any]:
        """What `keys list` and `/api/keys` show: everything but the hash."""
        return {
            "id": self.id,
            "name": self.name,
            "role": self.role,
            "folders": list(self.folders) if self.folders is not None else None,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "expired": self.expired(),
            "kind": self.kind,
            "client": self.client,
        }

    def stored(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "role": self.role,
            "folders": list(self.folders) if self.folders is not None else None,
            "hash": self.hash,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "kind": self.kind,
            "client": self.client,
        }


def _record(raw: Any) -> KeyRecord | None:
    """One stored key, or None when the entry is not one (logged; such an entry opens nothing)."""
    if not isinstance(raw, dict):
        return None
    folders = raw.get("folders")
    ok = (
        isinstance(raw.get("id"), str)
        and isinstance(raw.get("name"), str)
        and raw.get("role") in KEY_ROLES
        and isinstance(raw.get("hash"), str)
        and re.fullmatch(r"[0-9a-f]{64}", raw["hash"]) is not None
        and isinstance(raw.get("created_at"), int | float)
        and (raw.get("expires_at") is None or isinstance(raw.get("expires_at"), int | float))
        and raw.get("kind", "key") in ("key", "oauth")
        and (folders is None or (isinstance(folders, list) and all(isinstance(f, str) for f in folders)))
    )
    if not ok:
        return None
    client = raw.get("client")
    return KeyRecord(
        id=raw["id"],
        name=raw["name"],
        role=cast(Role, raw["role"]),
        folders=tuple(folders) if folders is not None else None,
        hash=raw["hash"],
        created_at=float(raw["created_at"]),
        expires_at=float(raw["expires_at"]) if raw.get("expires_at") is not None else None,
        kind=cast(KeyKind, raw.get("kind", "key")),
        client=client if isinstance(client, str) else None,
    )


Records = list[KeyRecord]  # (`KeyStore.list` shadows the builtin in the class body)


def _check_name(raw: Any) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise bad_request("a key needs a name")
    name = raw.strip()
    if len(name) > NAME_MAX or _CONTROL.search(name):
        raise bad_request(
            f"a key's name is text of at most {NAME_MAX} characters, without control characters"
        )
    return name


def _check_expiry(expires_at: Any, now: float) -> None:
    """A new key's expiry, if any, is a time to come: one already past would make a key that opens nothing
    (the CLI's `--expires-days` and `POST /api/keys`'s `expires_at` both come here)."""
    if expires_at is None:
        return
    if (
        isinstance(expires_at, bool)
        or not isinstance(expires_at, int | float)
        or not math.isfinite(expires_at)
    ):
        raise bad_request("expires_at is a time in seconds since the epoch")
    if expires_at <= now:
        raise bad_request(
            f"expires_at {expires_at:.0f} is not in the future (it is now {now:.0f}, in seconds since the "
            "epoch): a key that has expired already would open nothing; give a later time, or none"
        )


class KeyStore:
    """The keys of one docs dir. Thread-safe; safe across processes (the file is the truth)."""

    def __init__(self, docs_root: Path) -> None:
        self.docs_root = docs_root
        self.path = docs_root / HISTORY_DIR / KEYS_FILE
        self._guard = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._records: Records = []
        self._by_hash: dict[str, KeyRecord] = {}

    # -- reading -----------------------------------------------------------------------------------

    def _file_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _parse(self, data: bytes) -> Records:
        try:
            doc = json.loads(data)
        except ValueError as err:
            raise unavailable(
                f"{self.path} is not valid JSON ({err}): no key works until it is fixed"
            ) from None
        entries = doc.get("keys") if isinstance(doc, dict) else None
        if not isinstance(entries, list):
            raise unavailable(f"{self.path} holds no key list: no key works until it is fixed")
        out = []
        for raw in entries:
            record = _record(raw)
            if record is None:
                log.warning("%s: an entry that is not a key is ignored", self.path)
                continue
            out.append(record)
        return out

    def _refresh(self) -> None:
        """Re-read the file when it changed on disk (caller holds `_guard`)."""
        stamp = self._file_stamp()
        if stamp == self._stamp:
            return
        records: Records = []
        if stamp is not None:
            try:
                records = self._parse(self.path.read_bytes())
            except FileNotFoundError:
                stamp = None
            except Exception as err:  # a damaged file opens nothing; said once per change
                log.error("%s", getattr(err, "message", err))
                records = []
        self._stamp = stamp
        self._records = records
        self._by_hash = {r.hash: r for r in records}

    def verify(self, secret: str) -> KeyRecord | None:
        """The live key whose secret this is, or None (unknown, revoked or expired)."""
        if not secret.startswith(SECRET_PREFIX):
            return None
        digest = hash_secret(secret)
        with self._guard:
            self._refresh()
            found = self._by_hash.get(digest)
        if found is None or not hmac.compare_digest(found.hash, digest):
            return None
        return None if found.expired() else found

    def list(self, kind: KeyKind | None = None) -> Records:
        """The stored keys (expired ones too, marked by `expired()`), oldest first."""
        with self._guard:
            self._refresh()
            records = list(self._records)
        return [r for r in records if kind is None or r.kind == kind]

    # -- changing ----------------------------------------------------------------------------------

    def _load_for_change(self) -> Records:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        return self._parse(data)  # a damaged file is refused, never overwritten

    def _store(self, records: Records, existed: bool) -> None:
        body = json.dumps({"version": 1, "keys": [r.stored() for r in records]}, indent=2) + "\n"
        if existed:
            atomic.replace(self.path, body.encode(), mode=0o600)
        else:
            atomic.write_new(self.path, body.encode(), mode=0o600)
        with self._guard:
            self._stamp = None  # re-read on the next call: the file is the truth

    def _check_folders(self, folders: Sequence[str] | None) -> tuple[str, ...] | None:
        if folders is None:
            return None
        if isinstance(folders, str):
            raise bad_request("folders is a list of folder names, or None for every folder")
        names = sorted({folder_name(f) for f in folders})
        if not names:
            raise bad_request("name at least one folder, or give the key every folder")
        existing = set(list_folders(self.docs_root))
        unknown = [n for n in names if n not in existing]
        if unknown:
            raise bad_request(
                f"no such folder: {', '.join(printable(n) for n in unknown)} (a key names folders that "
                "exist; create the folder first, or give the key every folder)"
            )
        return tuple(names)

    def create(
        self,
        name: str,
        folders: Sequence[str] | None,
        role: Role,
        *,
        expires_at: float | None = None,
        kind: KeyKind = "key",
        client: str | None = None,
    ) -> tuple[str, KeyRecord]:
        """A new key: its secret (shown this once, stored nowhere) and its record."""
        name = _check_name(name)
        if role not in KEY_ROLES:
            raise bad_request("a key's role is read or write (RAGDOWN_TOKEN is the only admin)")
        if kind not in ("key", "oauth"):
            raise bad_request("a key's kind is key or oauth")
        now = time.time()
        _check_expiry(expires_at, now)
        checked = self._check_folders(folders)
        secret = new_secret()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic.path_lock(self.path):
            existed = self.path.exists()
            # The expired go, but OAuth tokens: http/oauth.py removes those with their grant, so revoking
            # one, expired or not, always ends the grant its client would otherwise refresh.
            records = [r for r in self._load_for_change() if not r.expired(now) or r.kind == "oauth"]
            if any(r.name == name for r in records):
                raise bad_request(
                    f"a key named {printable(name)} exists already: revoke it or pick another name"
                )
            record = KeyRecord(
                id=secrets.token_hex(8),
                name=name,
                role=role,
                folders=checked,
                hash=hash_secret(secret),
                created_at=now,
                expires_at=float(expires_at) if expires_at is not None else None,
                kind=kind,
                client=client,
            )
            self._store([*records, record], existed)
        return secret, record

    def forget_folder(self, name: str) -> int:
        """A folder renamed or deleted through ragdown is no longer any key's: a folder made later under the
        name is not given to the keys that named the old one (a key left with no folder sees nothing).
        How many keys lost it."""
        if not self.path.exists():
            return 0
        with atomic.path_lock(self.path):
            records = self._load_for_change()
            changed = [
                dataclasses.replace(r, folders=tuple(f for f in r.folders if f != name))
                if r.folders is not None and name in r.folders
                else r
                for r in records
            ]
            lost = sum(a is not b for a, b in zip(records, changed, strict=True))
            if lost:
                self._store(changed, existed=True)
        return lost

    def revoke(self, id_or_name: str) -> KeyRecord:
        """Remove a key (by id, else by name); it stops working at once, in every process."""
        with atomic.path_lock(self.path):
            records = self._load_for_change()
            found = next((r for r in records if r.id == id_or_name), None) or next(
                (r for r in records if r.name == id_or_name), None
            )
            if found is None:
                raise not_found(f"no key with the id or name {printable(id_or_name)}")
            self._store([r for r in records if r is not found], existed=True)
        return found


__all__ = ["KEYS_FILE", "SECRET_PREFIX", "KeyRecord", "KeyStore", "hash_secret", "new_secret"]
