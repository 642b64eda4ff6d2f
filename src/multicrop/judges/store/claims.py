"""Claims: how runs over one store split the work and never pay twice.

Before a run makes a call it claims the call's key in the store, in one
transaction with the check that the call is neither recorded nor claimed by
another live run.  A claim names its owner (``host:pid:random``) and expires
unless renewed; the run renews its claims while it works and releases each
claim when it records the call (or its failure).  A claim whose owner process
is gone (same host) or whose lease expired is taken over: a crashed run
blocks nobody for longer than its lease.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass

from .layout import digest_bytes
from .runlog import owner_is_gone

__all__ = ["ClaimsMixin", "ClaimResult"]


@dataclass(frozen=True)
class ClaimResult:
    """What became of a request to claim some keys."""

    claimed: tuple[str, ...]  # now ours
    done: tuple[str, ...]  # already recorded (by anyone)
    busy: tuple[str, ...]  # claimed by another live run


class ClaimsMixin:
    """Claim, renew and release calls (a part of :class:`~multicrop.judges.store.CallStore`)."""

    def claim(self, keys: Iterable[str], *, owner: str, lease_s: float) -> ClaimResult:
        """Claim every key not recorded and not held by another live run; one transaction."""
        claimed, done, busy = [], [], []
        now = time.time()
        gone: dict[str, bool] = {}
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            for key in keys:
                raw = digest_bytes(key)
                if db.execute("SELECT 1 FROM calls WHERE key = ?", (raw,)).fetchone():
                    done.append(key)
                    continue
                held = db.execute("SELECT owner, expires FROM claims WHERE key = ?", (raw,)).fetchone()
                if held is not None and held[0] != owner and held[1] > now:
                    if held[0] not in gone:
                        gone[held[0]] = owner_is_gone(held[0])
                    if not gone[held[0]]:
                        busy.append(key)
                        continue
                db.execute("INSERT OR REPLACE INTO claims (key, owner, expires) VALUES (?, ?, ?)",
                           (raw, owner, now + lease_s))
                claimed.append(key)
            db.execute("COMMIT")
        except BaseException as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.DatabaseError):
                raise self._damage(exc) from None
            raise
        return ClaimResult(tuple(claimed), tuple(done), tuple(busy))

    def renew_claims(self, *, owner: str, lease_s: float) -> int:
        """Push back the expiry of every claim of ``owner``; returns how many it holds."""
        cur = self._db.execute("UPDATE claims SET expires = ? WHERE owner = ?", (time.time() + lease_s, owner))
        return cur.rowcount

    def release_claims(self, *, owner: str, keys: Iterable[str] | None = None) -> None:
        """Drop ``owner``'s claims on ``keys`` (all of them when None)."""
        if keys is None:
            self._db.execute("DELETE FROM claims WHERE owner = ?", (owner,))
        else:
            self._db.executemany("DELETE FROM claims WHERE key = ? AND owner = ?",
                                 [(digest_bytes(k), owner) for k in keys])

    def claims(self) -> list[tuple[str, str, float]]:
        """Every claim: ``(call_key, owner, expires unix time)``."""
        from .layout import digest_text

        return [(digest_text(k), o, e) for k, o, e in self._db.execute("SELECT key, owner, expires FROM claims")]
