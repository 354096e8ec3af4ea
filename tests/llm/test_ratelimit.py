"""The client-side budget by a fake clock: requests and estimated input tokens in any sliding 60 s, and a
request over the whole token budget going through alone."""

from __future__ import annotations

import pytest

from ragdown.llm.ratelimit import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


def test_requests_per_minute_wait_for_the_oldest_to_leave_the_window() -> None:
    clock = Clock()
    limiter = RateLimiter(2, None, clock=clock, sleep=clock.sleep)
    assert limiter.acquire(10) == 0
    clock.now += 10
    assert limiter.acquire(10) == 0
    assert limiter.acquire(10) == pytest.approx(50)  # the first leaves the window at 1060
    assert clock.now == pytest.approx(1060)
    assert limiter.acquire(10) == pytest.approx(10)  # the second (1010) leaves at 1070


def test_tokens_per_minute_count_estimated_input_tokens() -> None:
    clock = Clock()
    limiter = RateLimiter(None, 100, clock=clock, sleep=clock.sleep)
    limiter.acquire(60)
    clock.now += 5
    limiter.acquire(30)
    assert limiter.acquire(20) == pytest.approx(55)  # 60 + 30 + 20 > 100: the 60 must leave first
    clock.now += 1
    assert limiter.acquire(50) == 0  # 30 + 20 + 50 = 100 fits


def test_a_request_larger_than_the_budget_goes_alone() -> None:
    clock = Clock()
    limiter = RateLimiter(None, 100, clock=clock, sleep=clock.sleep)
    limiter.acquire(10)
    clock.now += 30
    assert limiter.acquire(500) == pytest.approx(30)  # waits for an empty window, then goes
    assert limiter.acquire(1) == pytest.approx(60)  # and fills it for its 60 s


def test_no_limit_never_waits_and_bad_limits_are_refused() -> None:
    clock = Clock()
    limiter = RateLimiter(clock=clock, sleep=clock.sleep)
    for _ in range(1000):
        limiter.acquire(10_000)
    assert clock.slept == []
    with pytest.raises(ValueError, match="rpm"):
        RateLimiter(0, None)
