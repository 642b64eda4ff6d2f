"""The clock the judges wait by: retry waits and ``Retry-After`` dates read it, so tests can inject one.

A run waits between retries (backoff, or what a server's ``Retry-After``
asks) and turns an HTTP-date ``Retry-After`` into seconds from *now*.  Both
go through a :class:`Clock`: :data:`SYSTEM_CLOCK` in use, a
:class:`ManualClock` in tests, which never sleeps (each wait is recorded and
moves its time on), so a test of a 400 ms ``Retry-After`` asserts the wait
asked, not the time it took, and a date is measured from a fixed instant,
not from the wall clock.

Examples
--------
>>> import asyncio
>>> clock = ManualClock(now=1000.0)
>>> asyncio.run(clock.sleep(2.5)); clock.now(), clock.waits
(1002.5, [2.5])
"""

from __future__ import annotations

import asyncio
import time

__all__ = ["Clock", "SYSTEM_CLOCK", "ManualClock"]


class Clock:
    """Wall time (``now``, seconds since the epoch) and an awaitable ``sleep``: the system's."""

    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


#: The clock of every run that is not given one.
SYSTEM_CLOCK = Clock()


class ManualClock(Clock):
    """A clock that never sleeps: ``sleep`` records the wait and moves ``now`` on by it.

    Parameters
    ----------
    now : float
        The wall time it starts at (seconds since the epoch).
    """

    def __init__(self, *, now: float = 1_700_000_000.0) -> None:
        self._now = float(now)
        self.waits: list[float] = []

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(float(seconds))
        self._now += max(0.0, float(seconds))
        await asyncio.sleep(0)  # still a point where other tasks run
