"""Who may call: the bearer token resolved to an `Access` (in constant time), and the Host/Origin checks.

- `RAGDOWN_TOKEN` is the admin. It is compared through SHA-256 digests with `hmac.compare_digest`, so
  neither its length nor its content leaks through timing.
- Any other bearer value that looks like a key (`rdk_…`) is looked up in the docs dir's `KeyStore` (by
  hash, then compared in constant time): a live key gives its scoped `Access`; an unknown, revoked or
  expired one is refused (401), even on a server without a token, so a revoked key never falls back to
  the open access below.
- No token configured (`SECURE_LOCAL_NET=true`, a trusted network): a request without a key is `OPEN`
  (every folder, as before keys existed); a request with a key is narrowed to that key.
- DNS rebinding: a page on another site that points its own hostname at this server sends that hostname
  as `Host`. A request without the token or a live key (the open routes, and every route of a server
  without a token) is answered only under loopback names, IP literals, this machine's name, the host of
  `RAGDOWN_PUBLIC_URL` and `RAGDOWN_ALLOWED_HOSTS` (`*` turns the check off); one with a credential, which
  no such page holds, under any name (a neighbour container's `http://ragdown:3000`).
- Cross-origin pages: a browser always sends `Origin` on such requests; it must be this server's own
  origin (the bundled UI), `RAGDOWN_PUBLIC_URL`'s, or one of `RAGDOWN_ALLOWED_ORIGINS`. Clients that are
  not browsers send none.
- Proxies (`TrustedProxies`): `X-Forwarded-For` and `X-Forwarded-Proto` are anyone's to send, so they are
  read only on a request whose connection comes from one of `RAGDOWN_TRUSTED_PROXIES` (none by default);
  uvicorn's own reading of them is off (`serve.py`), so no other setting (its `FORWARDED_ALLOW_IPS`)
  brings them back. Otherwise a client would pick its own address, and with it a fresh rate-limit bucket
  per request.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import Scope

from ragdown.access.caller import ADMIN, OPEN, Access
from ragdown.access.keys import SECRET_PREFIX, KeyStore

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode()).digest()


def _split_host(host: str) -> str:
    """The name part of a `Host` header (`[::1]:3000` → `::1`, `a.b:80` → `a.b`), lowercased."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def bearer(header: str | None) -> str | None:
    """The credential of an `Authorization: Bearer …` header, or None."""
    if not header or header[:7].lower() != "bearer ":
        return None
    return header[7:].strip() or None


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _address(text: str) -> IpAddress | None:
    """An address as a proxy writes it (`1.2.3.4`, `1.2.3.4:5678`, `::1`, `[::1]:5678`), IPv4-mapped IPv6
    as IPv4; None for anything else (`unknown`, an obfuscated name)."""
    text = text.strip()
    if text.startswith("[") and "]" in text:
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        found = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = found.ipv4_mapped if isinstance(found, ipaddress.IPv6Address) else None
    return mapped or found


class TrustedProxies:
    """`RAGDOWN_TRUSTED_PROXIES`: the reverse proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are
    believed. `apply` puts the client they name in the ASGI scope, where the rate limit reads it."""

    def __init__(self, networks: Iterable[str]) -> None:
        self._networks = tuple(ipaddress.ip_network(n, strict=False) for n in networks)

    def trusts(self, address: str) -> bool:
        found = _address(address)
        return found is not None and any(found in network for network in self._networks)

    def apply(self, scope: Scope) -> None:
        """On a request from a trusted proxy: its client is the nearest address of `X-Forwarded-For` that
        is not a trusted proxy's (each proxy appends the address it was reached from, so what lies further
        left is the client's own word), or the first when every one is; its scheme, `X-Forwarded-Proto`.
        Any other request keeps the connection's address and scheme, whatever it sends."""
        client = scope.get("client")
        if not self._networks or not client or not self.trusts(str(client[0])):
            return
        chain: list[str] = []
        proto: str | None = None
        for name, value in scope.get("headers", ()):
            if name == b"x-forwarded-for":
                chain += [h.strip() for h in value.decode("latin-1").split(",") if h.strip()]
            elif name == b"x-forwarded-proto":
                proto = value.decode("latin-1").strip().lower()
        if proto in ("http", "https"):
            scope["scheme"] = proto
        if not chain:
            return
        found = next((hop for hop in reversed(chain) if not self.trusts(hop)), chain[0])
        address = _address(found)
        scope["client"] = (str(address) if address is not None else found[:100], 0)


class Guard:
    def __init__(
        self,
        token: str | None,
        allowed_hosts: tuple[str, ...],
        allowed_origins: tuple[str, ...],
        keys: KeyStore | None = None,
        public_url: str | None = None,
    ) -> None:
        self._digest = _digest(token) if token else None
        self.auth_required = token is not None
        self.keys = keys
        self._any_host = "*" in allowed_hosts
        own = {socket.gethostname().lower(), socket.getfqdn().lower()}
        self._hosts = set(LOOPBACK_NAMES | own | {_split_host(h) for h in allowed_hosts if h != "*"})
        self._any_origin = "*" in allowed_origins
        self._origins = {o.lower() for o in allowed_origins if o != "*"}
        if public_url:  # the server's public name (a hosted client, a browser through the proxy) is its own
            public = urlsplit(public_url.lower().rstrip("/"))
            if public.hostname:
                self._hosts.add(public.hostname)
            self._origins.add(f"{public.scheme}://{public.netloc}")

    def resolve(self, header: str | None) -> Access | None:
        """Who an `Authorization` header makes the caller: the admin, a key's access, `OPEN` (no token
        configured, no key presented), or None: not authorized (a 401)."""
        secret = bearer(header)
        if secret is not None:
            if self._digest is not None and hmac.compare_digest(_digest(secret), self._digest):
                return ADMIN
            if self.keys is not None and secret.startswith(SECRET_PREFIX):
                record = self.keys.verify(secret)
                return record.access() if record is not None else None
        return OPEN if self._digest is None else None

    def credentialed(self, header: str | None) -> bool:
        """Whether the request carries the token or a live key: such a request passes the Host check under
        any name (a page that rebinds a name never holds a credential), as a client reaching the server by
        a name of its network (`http://ragdown:3000`) does."""
        access = self.resolve(header) if bearer(header) is not None else None
        return access is not None and access is not OPEN

    def authorized(self, header: str | None) -> bool:
        return self.resolve(header) is not None

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
