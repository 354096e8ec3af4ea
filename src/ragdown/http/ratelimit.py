"""`RAGDOWN_RATE_LIMIT`: requests per minute per caller, as a token bucket per caller, in-process.

A caller is a key (its id), the admin token, or, for requests that carry no credential (an open server,
the open routes), the client's address. Each caller's bucket holds `limit` requests and refills at
`limit` per minute, so a burst of a minute's worth is served at once and the steady rate is the limit.
A request costs one; an empty bucket answers how many seconds until the next one is there (the
`Retry-After` of the 429). O(1) per request: one dict lookup and a little arithmetic under a lock.

Buckets live in the process (one `ragdown serve`): a restart forgets them, and several processes
behind one proxy each count their own.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

MAX_BUCKETS = 10_000  # callers remembered; past it the full (idle) buckets are dropped


class RateLimiter:
    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._rate = per_minute / 60.0  # requests per second
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # caller -> (tokens, when)
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.per_minute > 0

    def take(self, caller: str) -> int | None:
        """Spend one request of `caller`'s: None when it may go ahead, else the seconds to wait (>= 1)."""
        if self.per_minute <= 0:
            return None
        now = self._clock()
        capacity = float(self.per_minute)
        with self._lock:
            tokens, then = self._buckets.get(caller, (capacity, now))
            tokens = min(capacity, tokens + (now - then) * self._rate)
            if tokens >= 1.0:
                self._buckets[caller] = (tokens - 1.0, now)
                if len(self._buckets) > MAX_BUCKETS:
                    self._prune(now, capacity)
                return None
            self._buckets[caller] = (tokens, now)
        return max(1, math.ceil((1.0 - tokens) / self._rate))

    def _prune(self, now: float, capacity: float) -> None:
        """Forget the callers whose buckets are full again (nothing to remember about them); when too
        many are still busy, the half seen longest ago (amortised O(1): this runs once per that many)."""
        full = [k for k, (t, w) in self._buckets.items() if t + (now - w) * self._rate >= capacity]
        for key in full:
            del self._buckets[key]
        if len(self._buckets) > MAX_BUCKETS // 2:
            by_age = sorted(self._buckets, key=lambda k: self._buckets[k][1])
            for key in by_age[: len(by_age) - MAX_BUCKETS // 2]:
                del self._buckets[key]
