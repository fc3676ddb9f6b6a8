"""The clock the driver reads: wall time for stamps, monotonic time for intervals.

Injectable, so the driver loop runs in simulated time in tests (``hyperlab.testing.FakeClock``,
advanced by ``hyperlab.testing.FakeExecutor`` while it "waits"), as Syne Tune's ``TimeKeeper``
lets its loop do.
"""

from __future__ import annotations

import time
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "Clock", "SystemClock"]


class Clock(Protocol):
    """What the driver asks of a clock."""

    def time(self) -> float:
        """Seconds since the epoch: the stamps written to the store."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back: budgets, heartbeats, poll intervals."""
        ...


class SystemClock:
    """The real clock: ``time.time`` and ``time.monotonic``."""

    def time(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()


SYSTEM_CLOCK = SystemClock()
