"""Points in time as callers write them: `2h`, `3d`, `90m`, `1w`, or an ISO 8601 date or time."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime

from ragdown.core.errors import bad_request

_AGO = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)\s*$", re.IGNORECASE)
_UNIT_S = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(raw: str, now: float | None = None) -> float:
    """Seconds since the epoch for `raw`: a span back from now (`2h`, `3d`) or an ISO time (UTC if no zone)."""
    now = time.time() if now is None else now
    match = _AGO.match(raw)
    if match:
        return now - float(match[1]) * _UNIT_S[match[2].lower()]
    text = raw.strip()
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise bad_request(
            f"since {raw!r} is not a time: give a span back from now (30m, 2h, 3d, 1w) or an ISO date or time "
            "(2026-12-01, 2026-12-01T09:30:00Z)"
        ) from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def iso_seconds(at: float) -> str:
    """`2026-12-01T09:30:00Z`: a time in UTC to the second."""
    return datetime.fromtimestamp(at, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
