"""The SQLite checkpoint store of judge calls, with numbered migrations.

Call keys are canonical-JSON content hashes from :mod:`multicrop.hashing`.
"""

from .migrations import MIGRATIONS
from .records import CALL_COLUMNS, CallRecord, utc_now
from .store import CallStore, StoreStats, VerifyReport

__all__ = ["MIGRATIONS", "CALL_COLUMNS", "CallRecord", "CallStore", "StoreStats", "VerifyReport", "utc_now"]
