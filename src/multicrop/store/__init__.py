"""The SQLite checkpoint store of judge calls, with numbered migrations."""

from .keys import HASH_PREFIX, canonical_json, content_hash, hash_bytes, hash_stream, hash_text
from .migrations import MIGRATIONS
from .store import CallRecord, CallStore, StoreStats, VerifyReport, utc_now

__all__ = [
    "HASH_PREFIX", "canonical_json", "content_hash", "hash_bytes", "hash_stream", "hash_text", "MIGRATIONS",
    "CallRecord", "CallStore", "StoreStats", "VerifyReport", "utc_now",
]
