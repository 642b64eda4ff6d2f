"""What a judge run did: one :class:`Outcome` per planned call, and the run's :class:`RunSummary`.

Workers of :mod:`multicrop.judges.execute` send an :class:`Outcome` per call
to the one writer, which records it and counts it into the summary
(re-exported by ``execute``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from ..serialize import Serializable, serialized
from .plan import PlannedCall
from .store import CallRecord

__all__ = ["RunSummary", "OutcomeKind", "Outcome"]


@dataclass
class RunSummary(Serializable):
    """What a run did.

    :meth:`to_dict` is the summary as ``multicrop judge --json`` prints it:
    the counts in the order users read them, each pair an object with named
    parts (``{"image", "error"}``, ``{"family", "error"}``) and no sample of
    failures (the store's ``failures`` table has them all).
    """

    planned: int = 0
    already_done: int = 0
    performed: int = 0
    parse_failures: int = 0
    failed: int = 0
    skipped: int = 0  # calls not made because their image could not be read
    identical: int = 0  # missing calls shared with an identical image (same bytes), made once
    collapsed: int = 0  # missing repetitions of a deterministic family's prompt, served by its one call
    abandoned: int = 0  # calls not made because their family was stopped
    done_elsewhere: int = 0  # missing calls another run over the same store recorded meanwhile
    retries: int = 0
    cost_usd: float = 0.0
    elapsed_s: float = 0.0
    bad_images: list[tuple[str, str]] = field(  # (image label, problem), each once
        default_factory=list, metadata=serialized(pairs=("image", "error")))
    stopped_families: list[tuple[str, str]] = field(  # (family, why)
        default_factory=list, metadata=serialized(pairs=("family", "error")))
    failures: list[tuple[str, str]] = field(  # (call_key, error), first 20
        default_factory=list, metadata=serialized(skip=True))


class OutcomeKind(enum.Enum):
    """What became of one planned call."""

    RECORDED = "recorded"  # a reply came back (parsed or not): a completed call
    FAILED = "failed"  # no reply after every retry, or a permanent error: logged, stays missing
    SKIPPED = "skipped"  # its image cannot be read: not made, stays missing
    ABANDONED = "abandoned"  # its family was stopped: not made, stays missing


@dataclass(frozen=True)
class Outcome:
    """What became of one planned call; each worker sends one per call to the writer.

    Attributes
    ----------
    kind : OutcomeKind
    call : PlannedCall
    record : CallRecord or None
        The completed call (``RECORDED`` only).
    error : str or None
        Logged in the store's ``failures`` table when set: why a ``FAILED``
        call failed, or, on the first ``SKIPPED`` call of an image, why the
        image cannot be read (logged once per image).
    attempts : int
        Attempts made (0 for calls not made).
    """

    kind: OutcomeKind
    call: PlannedCall
    record: CallRecord | None = None
    error: str | None = None
    attempts: int = 0

    def failure_row(self) -> dict[str, Any]:
        """The ``failures`` row this outcome logs (see :meth:`CallStore.record`)."""
        return {"call_key": self.call.key, "family": self.call.family.name, "image": self.call.image.label,
                "error": self.error, "attempts": self.attempts}
