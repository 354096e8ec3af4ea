"""Who may call: the bearer token (compared in constant time) and the Host/Origin checks.

- The token is compared through SHA-256 digests with `hmac.compare_digest`, so neither its length nor its
  content leaks through timing.
- DNS rebinding: a page on another site that points its own hostname at this server sends that hostname
  as `Host`. Only loopback names, IP literals, this machine's name and `RAGDOWN_ALLOWED_HOSTS` are
  accepted (set it to the public name when a proxy forwards one; `*` turns the check off).
- Cross-origin pages: a browser always sends `Origin` on such requests; it must be this server's own
  origin (the bundled UI) or one of `RAGDOWN_ALLOWED_ORIGINS`. Clients that are not browsers send none.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import socket
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode()).digest()


def _split_host(host: str) -> str:
    """The name part of a `Host` header (`[::1]:3000` → `::1`, `a.b:80` → `a.b`), lowercased."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class Guard:
    def __init__(
        self, token: str | None, allowed_hosts: tuple[str, ...], allowed_origins: tuple[str, ...]
    ) -> None:
        self._digest = _digest(token) if token else None
        self.auth_required = token is not None
        self._any_host = "*" in allowed_hosts
        own = {socket.gethostname().lower(), socket.getfqdn().lower()}
        self._hosts = LOOPBACK_NAMES | own | {_split_host(h) for h in allowed_hosts if h != "*"}
        self._any_origin = "*" in allowed_origins
        self._origins = {o.lower() for o in allowed_origins if o != "*"}

    def authorized(self, header: str | None) -> bool:
        if self._digest is None:
            return True
        if not header or not header.lower().startswith("bearer "):
            return False
        return hmac.compare_digest(_digest(header[7:].strip()), self._digest)

    def host_allowed(self, host: str | None) -> bool:
        if self._any_host or not host:
            return True
        name = _split_host(host)
        return _is_ip(name) or name in self._hosts or name.endswith(".localhost")

    def origin_allowed(self, origin: str | None, host: str | None, scheme: str) -> bool:
        if origin is None or self._any_origin:
            return True
        origin = origin.lower().rstrip("/")
        if origin in self._origins:
            return True
        parts = urlsplit(origin)
        return (
            bool(host) and parts.netloc == (host or "").lower() and parts.scheme in ("http", "https", scheme)
        )
