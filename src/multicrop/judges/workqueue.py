"""The calls a run makes, handed to its workers only once claimed in the store.

Two runs over one store (two ``multicrop judge`` processes, or batch engines)
split the work: each claims a small chunk of its missing calls at a time
(:meth:`CallStore.claim <multicrop.judges.store.CallStore.claim>`) and makes
only the calls it holds.  A call another live run holds is put back and
looked at again once the first pass is over: by then it is usually recorded
(and counted as done elsewhere); if its claimant died, it is taken over.
A run never pays for a call another run has recorded or holds.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence

from .plan import PlannedCall
from .store import CallStore

__all__ = ["WorkQueue"]


class WorkQueue:
    """Hand out claimed calls to workers, a chunk of claims at a time.

    Parameters
    ----------
    calls : sequence of PlannedCall
        The missing calls, each key once.
    store : CallStore
    owner : str
        This run's name in the claims table.
    lease_s : float
        How long a claim lasts without renewal.
    chunk : int
        Calls claimed per transaction.
    poll_s : float
        Wait between looks at calls held by another run.
    """

    def __init__(self, calls: Sequence[PlannedCall], store: CallStore, *, owner: str, lease_s: float,
                 chunk: int, poll_s: float = 0.25) -> None:
        self.store, self.owner, self.lease_s = store, owner, lease_s
        self.chunk, self.poll_s = max(1, chunk), poll_s
        self.pending: deque[PlannedCall] = deque(calls)
        self.ready: deque[PlannedCall] = deque()
        self.deferred: list[PlannedCall] = []
        self.done_elsewhere = 0
        self.lock = asyncio.Lock()

    async def next(self) -> PlannedCall | None:
        """The next call this run holds, or None when every call is made or recorded elsewhere."""
        async with self.lock:
            while True:
                if self.ready:
                    return self.ready.popleft()
                if self.pending:
                    self._claim_chunk()
                    continue
                if not self.deferred:
                    return None
                await asyncio.sleep(self.poll_s)
                self.pending.extend(self.deferred)
                self.deferred = []

    def _claim_chunk(self) -> None:
        chunk = [self.pending.popleft() for _ in range(min(self.chunk, len(self.pending)))]
        got = self.store.claim([c.key for c in chunk], owner=self.owner, lease_s=self.lease_s)
        claimed, busy = set(got.claimed), set(got.busy)
        for c in chunk:
            if c.key in claimed:
                self.ready.append(c)
            elif c.key in busy:
                self.deferred.append(c)
            else:
                self.done_elsewhere += 1

    def renew(self) -> None:
        """Push back the expiry of this run's claims."""
        self.store.renew_claims(owner=self.owner, lease_s=self.lease_s)

    def release_all(self) -> None:
        """Drop every claim this run still holds (at its end, whatever happened)."""
        self.store.release_claims(owner=self.owner)
