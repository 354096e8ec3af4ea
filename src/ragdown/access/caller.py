"""Who is calling and what they may touch: the `Access` every HTTP request carries, pure (no I/O).

The HTTP face resolves a request's bearer token once, before any route runs (`http/app.py`), and puts
the answer in the ASGI scope under `ragdown.access`; routes, MCP endpoints and tools read it back with
`access_of`. An `Access` is:

- `ADMIN`: `RAGDOWN_TOKEN`, or a server with no token configured (a trusted local network, as before
  keys existed): every folder, reading and writing, the server's settings, folders and keys;
- a key's (`keys.KeyRecord.access`; OAuth access tokens are keys with an expiry): a role, `read` or
  `write`, over every folder (`folders` None) or over the named ones only.

A folder an `Access` does not `sees` is, to that caller, a folder that does not exist: every face answers
it with the same `not_found` as a missing one, so a key cannot even learn the names of the others.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any, Literal

from ragdown.core.errors import Refusal

Role = Literal["read", "write", "admin"]
ROLES: tuple[Role, ...] = ("read", "write", "admin")
SCOPE_KEY = "ragdown.access"  # where the HTTP dispatch puts a request's Access in its ASGI scope


@dataclass(frozen=True)
class Access:
    who: str  # "admin", "key:<name>", "oauth:<client name>", "open" (no token configured)
    role: Role
    folders: frozenset[str] | None  # None = every folder
    key_id: str | None = None  # the key's id (rate limiting, audit); None for admin/open

    def sees(self, folder: str) -> bool:
        """Whether `folder` exists for this caller (the admin and an all-folders key see every one)."""
        return self.folders is None or folder in self.folders

    def writes(self, folder: str) -> bool:
        """Whether this caller may change documents in `folder`."""
        return self.role in ("write", "admin") and self.sees(folder)

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    @property
    def can_write(self) -> bool:
        """Whether this caller may change anything at all (a read key may not)."""
        return self.role in ("write", "admin")

    @property
    def namespace(self) -> str | None:
        """The one folder this caller is scoped to, or None (the admin, an all-folders key, several folders).

        ReadmeDB's clients know no folders: each key is a namespace, and they call `/api/v1/files…` and
        `/api/mcp` with the key alone. A key (or OAuth token) of exactly one folder has those routes on that
        folder (`http/namespace.py`); any other caller is told to name the folder in the URL."""
        if self.folders is None or len(self.folders) != 1:
            return None
        return next(iter(self.folders))

    def visible(self, folders: list[str]) -> list[str]:
        """The folders of `folders` this caller sees, in their order."""
        if self.folders is None:
            return list(folders)
        return [f for f in folders if f in self.folders]


ADMIN = Access(who="admin", role="admin", folders=None)
OPEN = Access(who="open", role="admin", folders=None)  # no RAGDOWN_TOKEN: the trusted local network
NOBODY = Access(who="nobody", role="read", folders=frozenset())  # a scope no dispatch has vouched for


NAMESPACE_CODE = "not_a_namespace"  # the code of `namespace_of`'s refusal (REST v1's `code`)


def namespace_of(access: Access, route: str) -> str:
    """The folder `route` (`/api/v1/files…`, `/api/mcp`: ReadmeDB's routes, a key's namespace) works on
    for this caller; a caller of no single folder is refused with the routes that name the folder."""
    folder = access.namespace
    if folder is not None:
        return folder
    if access.folders is None:
        whose = "the admin's token" if access.is_admin else "this key sees every folder: it"
    else:
        whose = f"this key sees {len(access.folders)} folders: it"
    raise Refusal(
        "invalid",
        f"{route} works on the one folder a key is made for (a ReadmeDB namespace), and {whose} names no "
        "single folder: name the folder in the URL (/api/v1/folders/{folder}/files… for REST, /mcp/{folder} "
        "for MCP), or use a key of one folder (ragdown keys create --name N --folders F --role write)",
        NAMESPACE_CODE,
    )


def access_of(request_scope: MutableMapping[str, Any]) -> Access:
    """The `Access` the HTTP dispatch resolved for this request. A scope it never saw (a route called by
    hand) sees nothing rather than everything."""
    found = request_scope.get(SCOPE_KEY)
    return found if isinstance(found, Access) else NOBODY


__all__ = [
    "ADMIN",
    "NAMESPACE_CODE",
    "NOBODY",
    "OPEN",
    "ROLES",
    "SCOPE_KEY",
    "Access",
    "Role",
    "access_of",
    "namespace_of",
]
