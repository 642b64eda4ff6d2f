"""The SQLite checkpoint store of judge calls, with numbered migrations.

Call keys are canonical-JSON content hashes from :mod:`multicrop.hashing`.
"""

from .claims import ClaimResult
from .migrations import MIGRATIONS
from .reads import CallDetail
from .records import CALL_COLUMNS, CallRecord, utc_now
from .runlog import RunInfo, new_owner, redact, strip_userinfo
from .store import CallStore, StoreStats, VerifyReport

__all__ = ["MIGRATIONS", "CALL_COLUMNS", "CallDetail", "CallRecord", "CallStore", "ClaimResult", "RunInfo",
           "StoreStats", "VerifyReport", "new_owner", "redact", "strip_userinfo", "utc_now"]
