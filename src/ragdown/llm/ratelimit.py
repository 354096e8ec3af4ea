"""A client-side budget for a run's model calls: at most `requests_per_minute` requests and
`input_tokens_per_minute` estimated input tokens in any sliding 60 s, shared by every call of the run.

Callers wait their turn in order (one lock, held while waiting). A request larger than the whole token
budget still goes through, alone: it waits until the window is empty. The clock and the sleep are
injectable, so the timing is tested by a fake clock, not by waiting.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

WINDOW_S = 60.0


class RateLimiter:
    def __init__(
        self,
        requests_per_minute: int | None = None,
        input_tokens_per_minute: int | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        for name, value in (("rpm", requests_per_minute), ("tpm", input_tokens_per_minute)):
            if value is not None and value < 1:
                raise ValueError(f"{name} must be a positive number, not {value}")
        self.rpm = requests_per_minute
        self.tpm = input_tokens_per_minute
        self._clock = clock
        self._sleep = sleep
        self._sent: deque[tuple[float, int]] = deque()  # (when, estimated input tokens)
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        return self.rpm is not None or self.tpm is not None

    def acquire(self, tokens: int) -> float:
        """Wait until a request of `tokens` estimated input tokens fits, record it; the seconds waited."""
        if not self.active:
            return 0.0
        waited = 0.0
        with self._lock:
            while True:
                now = self._clock()
                while self._sent and self._sent[0][0] <= now - WINDOW_S:
                    self._sent.popleft()
                wait = self._wait(now, tokens)
                if wait <= 0:
                    self._sent.append((now, tokens))
                    return waited
                self._sleep(wait)
                waited += wait

    def _wait(self, now: float, tokens: int) -> float:
        """Seconds until the oldest entries that must leave the window have left it (0: fits now)."""
        need_out = 0
        if self.rpm is not None and len(self._sent) >= self.rpm:
            need_out = len(self._sent) - self.rpm + 1
        if self.tpm is not None:
            used = sum(t for _, t in self._sent)
            if used + tokens > self.tpm:
                if tokens >= self.tpm:  # alone: the whole window must empty
                    need_out = max(need_out, len(self._sent))
                else:
                    freed, count = 0, 0
                    for _, t in self._sent:
                        if used - freed + tokens <= self.tpm:
                            break
                        freed += t
                        count += 1
                    need_out = max(need_out, count)
        if need_out == 0:
            return 0.0
        return max(self._sent[need_out - 1][0] + WINDOW_S - now, 1e-6)
