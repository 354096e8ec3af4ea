"""What OAuth grants are, and where they are kept: the scopes, `Grant` and `OAuthStore` (`http/oauth/routes.py`).

Kept in `<docs>/.ragdown/oauth.json` (mode 0600, atomic writes under the file's lock), so a restart breaks
no connector: the registered clients (as the SDK records them) and the grants (each its refresh token's
SHA-256, its client, folders, role and the id of its current access key).

Scopes: `read`, `write` (a write grant holds both), and `folder:<name>` per folder (percent-encoded) or
`folder:*` for every folder, those made later included. A refresh may ask for fewer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast
from urllib.parse import quote, unquote

from mcp.shared.auth import OAuthClientInformationFull
from pydantic import ValidationError

from ragdown.access.caller import Role
from ragdown.core import atomic
from ragdown.core.errors import printable, unavailable
from ragdown.history.store import HISTORY_DIR

log = logging.getLogger(__name__)

OAUTH_FILE = "oauth.json"
ROLE_SCOPES = ("read", "write")
ALL_FOLDERS = "folder:*"
FOLDER_SCOPE = "folder:"
_T = TypeVar("_T")


# -- scopes ------------------------------------------------------------------------------------------


def scopes_of(role: Role, folders: tuple[str, ...] | None) -> list[str]:
    """The scopes of a role over folders (None: every folder)."""
    roles = ["read", "write"] if role == "write" else ["read"]
    if folders is None:
        return [*roles, ALL_FOLDERS]
    return [*roles, *(FOLDER_SCOPE + quote(f, safe="") for f in folders)]


def narrowed(
    role: Role, folders: tuple[str, ...] | None, asked: list[str]
) -> tuple[Role, tuple[str, ...] | None]:
    """What a refresh asking for `asked` (a subset of the grant's scopes, as the SDK checked) gets: write only
    when asked, the folders asked for (all of the grant's when it names none)."""
    new_role: Role = "write" if role == "write" and "write" in asked else "read"
    named = sorted(
        {unquote(s[len(FOLDER_SCOPE) :]) for s in asked if s.startswith(FOLDER_SCOPE) and s != ALL_FOLDERS}
    )
    if ALL_FOLDERS in asked or not named:
        return new_role, folders
    return new_role, tuple(named)


def granted(scopes: list[str]) -> tuple[Role, tuple[str, ...] | None]:
    """The role and folders of a code's scopes (made by `scopes_of`)."""
    return narrowed("write" if "write" in scopes else "read", None, scopes)


# -- what is stored ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Grant:
    """What one consent gave one client: it lives as long as its refresh token is used in time."""

    id: str
    client_id: str
    client_name: str
    role: Role
    folders: tuple[str, ...] | None
    refresh_hash: str
    refresh_expires_at: float
    key_id: str | None  # the current access key; None while a refresh replaces it
    created_at: float

    @property
    def scopes(self) -> list[str]:
        return scopes_of(self.role, self.folders)

    def stored(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "client_id": self.client_id,
            "client_name": self.client_name,
            "role": self.role,
            "folders": list(self.folders) if self.folders is not None else None,
            "refresh_hash": self.refresh_hash,
            "refresh_expires_at": self.refresh_expires_at,
            "key_id": self.key_id,
            "created_at": self.created_at,
        }

    @classmethod
    def of(cls, raw: Any) -> Grant | None:
        """One stored grant, or None when the entry is not one (such an entry opens nothing)."""
        if not isinstance(raw, dict):
            return None
        folders = raw.get("folders")
        try:
            ok = (
                all(isinstance(raw.get(k), str) for k in ("id", "client_id", "client_name", "refresh_hash"))
                and raw.get("role") in ROLE_SCOPES
                and isinstance(raw.get("refresh_expires_at"), int | float)
                and isinstance(raw.get("created_at"), int | float)
                and (raw.get("key_id") is None or isinstance(raw.get("key_id"), str))
                and (
                    folders is None
                    or (isinstance(folders, list) and all(isinstance(f, str) for f in folders))
                )
            )
        except TypeError:
            return None
        if not ok:
            return None
        return cls(
            id=raw["id"],
            client_id=raw["client_id"],
            client_name=raw["client_name"],
            role=cast(Role, raw["role"]),
            folders=tuple(folders) if folders is not None else None,
            refresh_hash=raw["refresh_hash"],
            refresh_expires_at=float(raw["refresh_expires_at"]),
            key_id=raw.get("key_id"),
            created_at=float(raw["created_at"]),
        )


def _empty() -> dict[str, Any]:
    return {"version": 1, "clients": {}, "grants": {}}


class OAuthStore:
    """`<docs>/.ragdown/oauth.json`: the registered clients and the grants. The file is the truth: it is
    read for each question (it is small, and asked only by the OAuth routes) and changed under its lock.
    Never take this lock while holding the key store's, nor the other way round: both lock the same
    directory (`atomic.path_lock`)."""

    def __init__(self, docs_root: Path) -> None:
        self.path = docs_root / HISTORY_DIR / OAUTH_FILE

    def read(self) -> dict[str, Any]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return _empty()
        try:
            doc = json.loads(data)
        except ValueError as err:
            raise unavailable(
                f"{self.path} is not valid JSON ({err}): OAuth is off until it is fixed"
            ) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("clients"), dict):
            raise unavailable(f"{self.path} holds no client list: OAuth is off until it is fixed")
        if not isinstance(doc.get("grants"), dict):
            raise unavailable(f"{self.path} holds no grant list: OAuth is off until it is fixed")
        return doc

    def change(self, apply: Callable[[dict[str, Any]], _T]) -> _T:
        """Read, `apply` (which changes the document in place, or raises to change nothing), write."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic.path_lock(self.path):
            existed = self.path.exists()
            doc = self.read()  # a damaged file is refused, never overwritten
            result = apply(doc)
            body = (json.dumps(doc, indent=2, ensure_ascii=True) + "\n").encode()
            if existed:
                atomic.replace(self.path, body, mode=0o600)
            else:
                atomic.write_new(self.path, body, mode=0o600)
        return result

    def client(self, client_id: str) -> OAuthClientInformationFull | None:
        entry = self.read()["clients"].get(client_id)
        if not isinstance(entry, dict):
            return None
        try:
            return OAuthClientInformationFull.model_validate(entry.get("client"))
        except ValidationError:
            log.warning("%s: the client %s is not readable and is ignored", self.path, printable(client_id))
            return None

    def forget_folder(self, name: str) -> None:
        """A folder renamed or deleted through ragdown leaves every grant that named it (as it leaves the
        keys, `KeyStore.forget_folder`): a refresh never brings it back under a folder made later."""
        if not self.path.exists():
            return

        def drop(doc: dict[str, Any]) -> None:
            for raw in doc["grants"].values():
                folders = raw.get("folders") if isinstance(raw, dict) else None
                if isinstance(folders, list) and name in folders:
                    raw["folders"] = [f for f in folders if f != name]

        self.change(drop)

    def grants(self) -> list[Grant]:
        return [g for g in map(Grant.of, self.read()["grants"].values()) if g is not None]
