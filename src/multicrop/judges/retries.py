"""One call with its retries: exponential backoff with jitter on 429 / 5xx / timeouts.

A ``Retry-After`` header wins over the backoff; the waits are ``clock.sleep``
(:mod:`multicrop.judges.clock`), so tests inject a clock and never sleep.
:class:`FamilyHealth` stops a judge family after consecutive connection
errors.  Re-exported by :mod:`multicrop.judges.execute`.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass

from .backends import CallFailedError, ConnectionCallError, JudgeBackend, TransientCallError
from .clock import SYSTEM_CLOCK, Clock
from .config import RunConfig
from .types import JudgeReply, JudgeRequest

__all__ = ["Attempts", "FamilyHealth", "call_with_retries"]


@dataclass(frozen=True)
class Attempts:
    """How the attempts at one call ended.

    Exactly one of: a ``reply``; an ``error`` (gave up, or failed for good);
    ``abandoned`` (the family was stopped before or during the call).
    """

    reply: JudgeReply | None
    error: str | None
    abandoned: bool
    attempts: int
    latency_s: float | None
    retries: int


class FamilyHealth:
    """Consecutive connection errors of one family; stops it at a threshold."""

    __slots__ = ("limit", "streak", "stopped", "last")

    def __init__(self, limit: int) -> None:
        self.limit, self.streak, self.stopped, self.last = limit, 0, False, ""

    def connection_error(self, message: str) -> None:
        self.streak += 1
        self.last = message
        if self.streak >= self.limit:
            self.stopped = True

    def reply(self) -> None:
        self.streak = 0

    def why_stopped(self) -> str:
        return f"stopped after {self.streak} connection errors in a row with no reply (last: {self.last})"


def _backoff_s(exc: TransientCallError | TimeoutError, attempt: int, cfg: RunConfig, rng: random.Random) -> float:
    retry_after = getattr(exc, "retry_after", None)
    if retry_after is not None:
        return min(retry_after, cfg.retry_after_max_s)
    return rng.uniform(0.0, min(cfg.backoff_max_s, cfg.backoff_base_s * 2 ** (attempt - 1)))


async def call_with_retries(backend: JudgeBackend, request: JudgeRequest, cfg: RunConfig, rng: random.Random,
                            health: FamilyHealth | None = None, *, clock: Clock = SYSTEM_CLOCK) -> Attempts:
    """Run ``request``, retrying transient failures; never raises for a failed call.

    The waits between attempts are ``clock.sleep`` (:mod:`multicrop.judges.clock`).

    ``health`` counts the family's connection errors; once it says the family
    is stopped (by this call's or another call's errors) the call is abandoned.

    Raises
    ------
    JudgeError
        The backend became unusable (e.g. authentication failed).
    ImageLoadError
        The request's image cannot be read.
    """
    health = health or FamilyHealth(cfg.max_connection_errors)
    attempt = 0
    while True:
        if health.stopped:
            return Attempts(None, None, True, attempt, None, max(attempt - 1, 0))
        attempt += 1
        t0 = time.perf_counter()
        try:
            async with asyncio.timeout(cfg.timeout_s * 1.5 + 1.0):
                reply = await backend.execute(request)
            health.reply()
            return Attempts(reply, None, False, attempt, time.perf_counter() - t0, attempt - 1)
        except (TransientCallError, TimeoutError) as exc:
            if isinstance(exc, ConnectionCallError):
                health.connection_error(str(exc))
                if health.stopped:
                    continue
            if attempt > cfg.max_retries:
                msg = str(exc) or f"timed out after {cfg.timeout_s:g} s"
                return Attempts(None, f"gave up after {attempt} attempts: {msg}", False, attempt, None, attempt - 1)
            await clock.sleep(_backoff_s(exc, attempt, cfg, rng))
        except CallFailedError as exc:
            health.reply()  # the service answered
            return Attempts(None, str(exc), False, attempt, None, attempt - 1)
