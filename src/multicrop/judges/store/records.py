"""One judge call as the store keeps it."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from typing import Any

from ...errors import InvalidParameterError
from ...hashing import canonical_json, content_hash, hash_text
from ...serialize import Serializable

__all__ = ["CallRecord", "CALL_COLUMNS", "MAX_TOKENS", "utc_now"]


def utc_now() -> str:
    """ISO 8601 UTC timestamp with microseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class CallRecord(Serializable):
    """One judge call as stored.  ``score`` is NaN when the reply did not parse.

    ``to_dict()`` / ``from_dict()`` follow :mod:`multicrop.serialize` (a NaN
    score is written as ``None`` and read back as NaN).
    """

    call_key: str
    key_json: str
    family: str
    backend: str
    model_requested: str
    model_returned: str | None
    image: str
    image_sha256: str
    prompt_kind: str
    dimension: str
    template: str
    rubric_sha256: str
    temperature: float
    repetition: int
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    latency_s: float | None
    attempts: int
    created_utc: str
    raw_reply: str | None
    score: float
    reason: str | None
    parse_error: str | None
    row_sha256: str

    @staticmethod
    def content_sha256(values: dict[str, Any]) -> str:
        """Hash of every field except the hash itself (NaN written as null)."""
        body = {k: (None if isinstance(v, float) and math.isnan(v) else v)
                for k, v in values.items() if k != "row_sha256"}
        return content_hash(body)

    @classmethod
    def new(cls, *, key_fields: dict[str, Any] | None = None, key_json: str | None = None,
            created_utc: str | None = None, **values: Any) -> CallRecord:
        """Build a record, computing ``call_key`` (from ``key_fields`` or their
        canonical ``key_json``), the timestamp and ``row_sha256``."""
        if key_json is None:
            if key_fields is None:
                raise InvalidParameterError("CallRecord.new needs key_fields or key_json")
            key_json = canonical_json(key_fields)
        values.update(call_key=hash_text(key_json), key_json=key_json, created_utc=created_utc or utc_now())
        values["score"] = math.nan if values.get("score") is None else float(values["score"])
        _check_counts(values)
        values["row_sha256"] = cls.content_sha256(values)
        return cls(**values)

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> CallRecord:
        """A record from a ``calls`` row in :data:`CALL_COLUMNS` order (a NULL score is NaN)."""
        if row[_SCORE] is None:
            row = (*row[:_SCORE], math.nan, *row[_SCORE + 1:])
        return cls(*row)

    def values(self) -> tuple[Any, ...]:
        """The fields in :data:`CALL_COLUMNS` order (a score that did not parse is NaN)."""
        return _field_values(self)

    def row(self) -> tuple[Any, ...]:
        """The ``calls`` row: :meth:`values` with a NaN score as NULL."""
        row = _field_values(self)
        if math.isnan(self.score):
            row = (*row[:_SCORE], None, *row[_SCORE + 1:])
        return row


#: Largest token count a record may hold (a reply claiming more is wrong, not expensive).
MAX_TOKENS = 1_000_000_000


def _check_counts(values: dict[str, Any]) -> None:
    """Token counts are whole numbers in [0, MAX_TOKENS] (or None); cost and latency finite and >= 0."""
    for name in ("prompt_tokens", "completion_tokens"):
        v = values.get(name)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_TOKENS:
            raise InvalidParameterError(f"{name} must be an integer in [0, {MAX_TOKENS:,}] or None, got {v!r}")
    for name in ("cost_usd", "latency_s"):
        v = values.get(name)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise InvalidParameterError(f"{name} must be a finite number >= 0 or None, got {v!r}")


#: Columns of the ``calls`` table: the fields of :class:`CallRecord`, in order.
CALL_COLUMNS = tuple(f.name for f in fields(CallRecord))
_SCORE = CALL_COLUMNS.index("score")
_field_values = operator.attrgetter(*CALL_COLUMNS)
