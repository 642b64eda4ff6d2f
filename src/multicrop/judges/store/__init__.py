"""The SQLite checkpoint store of judge calls, with numbered migrations.

Call keys are canonical-JSON content hashes from :mod:`multicrop.hashing`.
"""

from .migrations import MIGRATIONS
from .store import CallRecord, CallStore, StoreStats, VerifyReport, utc_now

__all__ = ["MIGRATIONS", "CallRecord", "CallStore", "StoreStats", "VerifyReport", "utc_now"]
