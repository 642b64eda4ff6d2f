"""How a judging run executes: the one home of its defaults.

Nothing here enters a call key or changes a score; these settings decide
only how fast calls are made, how long one may take and how failures are
retried.  The command line reads its defaults from :class:`RunConfig`, and
this module imports nothing heavy, so ``multicrop --help`` stays fast.

Examples
--------
>>> RunConfig().concurrency, RunConfig().max_retries
(16, 5)
>>> RunConfig(concurrency=0)
Traceback (most recent call last):
...
multicrop.errors.InvalidParameterError: concurrency must be an integer >= 1, got 0
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidParameterError

__all__ = ["RunConfig"]


@dataclass(frozen=True)
class RunConfig:
    """Execution settings (none of them enters a call key).

    Attributes
    ----------
    concurrency : int
        Calls in flight at once.
    timeout_s : float
        Per-call timeout.
    max_retries : int
        Retries of a transient failure before the call is logged as failed.
    backoff_base_s, backoff_max_s : float
        Exponential backoff ``base * 2**attempt`` with full jitter, capped.
    retry_after_max_s : float
        Longest ``Retry-After`` honoured.
    batch_max : int
        Most calls committed in one transaction by the writer.
    max_connection_errors : int
        A family whose endpoint cannot be reached this many times in a row
        (attempts, retries included, with no successful reply in between) is
        stopped: its remaining calls are not made (they stay missing for a
        rerun), it is listed in ``RunSummary.stopped_families``, and the other
        families run on.
    lease_s : float
        How long a claim on a call lasts in the store unless renewed (a run
        renews its claims every third of this): a run that dies holds up
        another run over the same store for at most this long (not at all
        on the same host, where a dead claimant is seen at once).

    Raises
    ------
    InvalidParameterError
        For a value out of range (the message names the setting).
    """

    concurrency: int = 16
    timeout_s: float = 60.0
    max_retries: int = 5
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    retry_after_max_s: float = 120.0
    batch_max: int = 256
    max_connection_errors: int = 20
    lease_s: float = 60.0

    def __post_init__(self) -> None:
        _check_int("concurrency", self.concurrency, minimum=1)
        if not self.timeout_s > 0:
            raise InvalidParameterError(f"timeout_s must be > 0, got {self.timeout_s!r}")
        _check_int("max_retries", self.max_retries, minimum=0)
        _check_int("max_connection_errors", self.max_connection_errors, minimum=1)
        if not self.lease_s > 0:
            raise InvalidParameterError(f"lease_s must be > 0, got {self.lease_s!r}")


def _check_int(name: str, value: object, *, minimum: int) -> None:
    if not isinstance(value, int) or value < minimum:
        raise InvalidParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
