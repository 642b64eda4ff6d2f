"""The SQLite checkpoint store of judge calls (like ``llm``'s logs.db).

One row per completed call, keyed by a content hash of everything that
determines the reply.  WAL mode; every write is one transaction (a batch of
completed calls together with the failures logged beside them), committed
as soon as the calls complete, so a killed run loses only calls in flight.

Examples
--------
>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "runs.sqlite")
>>> with CallStore(path) as store:
...     rec = CallRecord.new(
...         key_fields={"backend": "measured", "model": "m", "repetition": 0},
...         family="m", backend="measured", model_requested="m", model_returned="m",
...         image="a.jpg", image_sha256="sha256:00", prompt_kind="holistic",
...         dimension="overall", template="holistic@1", rubric_sha256="sha256:11",
...         temperature=0.3, repetition=0, prompt_tokens=0, completion_tokens=0,
...         cost_usd=0.0, latency_s=0.01, attempts=1, raw_reply='{"score": 7}',
...         score=7.0, reason=None, parse_error=None)
...     _ = store.record([rec])
...     store.stats().n_calls, store.verify().ok
(1, True)
"""

from __future__ import annotations

import csv
import json
import math
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...errors import InvalidParameterError, StoreError
from ...hashing import canonical_json, content_hash, hash_text
from .migrations import MIGRATIONS

__all__ = ["CallRecord", "CallStore", "StoreStats", "VerifyReport", "utc_now"]

# Columns whose values also appear in key_json: verify() checks they agree.
_KEY_COLUMNS = {
    "backend": "backend", "model": "model_requested", "template": "template",
    "rubric_sha256": "rubric_sha256", "image_sha256": "image_sha256", "temperature": "temperature",
    "repetition": "repetition", "dimension": "dimension",
}


def utc_now() -> str:
    """ISO 8601 UTC timestamp with microseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class CallRecord:
    """One judge call as stored.  ``score`` is NaN when the reply did not parse."""

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
        values["row_sha256"] = cls.content_sha256(values)
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CallRecord:
        d = dict(d)
        d["score"] = math.nan if d.get("score") is None else float(d["score"])
        return cls(**d)


_COLUMNS = tuple(f.name for f in fields(CallRecord))
_INSERT = f"INSERT OR IGNORE INTO calls ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"
_INSERT_FAILURE = "INSERT INTO failures (call_key, family, image, error, attempts, created_utc) VALUES (?, ?, ?, ?, ?, ?)"


@dataclass(frozen=True)
class StoreStats:
    """Summary of a store."""

    path: str
    schema_version: int
    n_calls: int
    n_parse_failures: int
    n_failures: int
    n_images: int
    cost_usd: float
    prompt_tokens: int
    completion_tokens: int
    per_family: dict[str, int]
    first_utc: str | None
    last_utc: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class VerifyReport:
    """Result of :meth:`CallStore.verify`."""

    n_checked: int
    mismatches: tuple[tuple[str, str], ...]  # (call_key, what is wrong)

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def to_dict(self) -> dict[str, Any]:
        return {"n_checked": self.n_checked, "ok": self.ok,
                "mismatches": [{"call_key": k, "problem": p} for k, p in self.mismatches]}


class CallStore:
    """SQLite store of judge calls; migrations are applied on open.

    Parameters
    ----------
    path : str or Path
        Database file (created if missing).
    readonly : bool
        Open without creating or migrating (``stats``/``export``/``verify``).

    Raises
    ------
    StoreError
        The file is not a multicrop store, or was written by a newer version.
    """

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        if readonly and not self.path.exists():
            raise StoreError(f"{self.path}: no such store")
        try:
            if readonly:
                self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, isolation_level=None)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
                self._db.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL mode: a committed transaction survives a killed
                # process (only an OS crash or power loss can lose the last ones).
                self._db.execute("PRAGMA synchronous=NORMAL")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable SQLite database ({exc})") from None
        if version > len(MIGRATIONS):
            self._db.close()
            raise StoreError(
                f"{self.path}: schema version {version} is newer than this multicrop knows ({len(MIGRATIONS)}); upgrade multicrop"
            )
        if not readonly:
            self._migrate(version)
        elif version < len(MIGRATIONS):
            self._db.close()
            raise StoreError(f"{self.path}: schema version {version} is out of date; open it with `multicrop judge` to migrate")

    def _migrate(self, version: int) -> None:
        for number in range(version + 1, len(MIGRATIONS) + 1):
            try:
                self._db.execute("BEGIN IMMEDIATE")
                for stmt in MIGRATIONS[number - 1].split(";"):
                    if stmt.strip():
                        self._db.execute(stmt)
                self._db.execute(f"PRAGMA user_version = {number}")
                self._db.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                self._db.execute("ROLLBACK")
                raise StoreError(f"{self.path}: migration {number} failed ({exc})") from None

    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    # Context manager -------------------------------------------------------
    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> CallStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Writes ----------------------------------------------------------------
    def record(self, records: Sequence[CallRecord], *, failures: Sequence[dict[str, Any]] = ()) -> int:
        """Insert completed calls and log failed ones, all in one transaction.

        Parameters
        ----------
        records : sequence of CallRecord
        failures : sequence of dict
            Calls that failed after all retries (they stay missing), each with
            the keyword arguments of :meth:`record_failure`.

        Returns
        -------
        int
            How many of ``records`` were new.
        """
        if not records and not failures:
            return 0
        rows = [tuple(None if (k == "score" and math.isnan(v)) else v
                      for k, v in zip(_COLUMNS, (getattr(r, c) for c in _COLUMNS))) for r in records]
        now = utc_now()
        frows = [(f["call_key"], f["family"], f["image"], f["error"], f["attempts"], now) for f in failures]
        self._db.execute("BEGIN IMMEDIATE")
        try:
            before = self._db.total_changes
            self._db.executemany(_INSERT, rows)
            n_new = self._db.total_changes - before
            if frows:
                self._db.executemany(_INSERT_FAILURE, frows)
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return n_new

    def record_failure(self, *, call_key: str, family: str, image: str, error: str, attempts: int) -> None:
        """Log one call that failed after all retries (it stays missing); its own transaction."""
        self.record((), failures=[{"call_key": call_key, "family": family, "image": image, "error": error,
                                   "attempts": attempts}])

    # Reads -----------------------------------------------------------------
    def completed_keys(self) -> set[str]:
        """Keys of every completed call."""
        return {k for (k,) in self._db.execute("SELECT call_key FROM calls")}

    def scores(self) -> dict[str, float]:
        """``call_key -> score`` (NaN for parse failures)."""
        return {k: (math.nan if s is None else s) for k, s in self._db.execute("SELECT call_key, score FROM calls")}

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM calls").fetchone()[0])

    def iter_records(self) -> Iterator[CallRecord]:
        """Every stored call, oldest first."""
        cur = self._db.execute(f"SELECT {', '.join(_COLUMNS)} FROM calls ORDER BY created_utc, call_key")
        for row in cur:
            yield CallRecord.from_dict(dict(zip(_COLUMNS, row)))

    def stats(self) -> StoreStats:
        q = self._db.execute
        n, n_parse, n_img, cost, pt, ct, first, last = q(
            "SELECT count(*), sum(parse_error IS NOT NULL), count(DISTINCT image_sha256), "
            "coalesce(sum(cost_usd), 0), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), "
            "min(created_utc), max(created_utc) FROM calls"
        ).fetchone()
        per_family = dict(q("SELECT family, count(*) FROM calls GROUP BY family ORDER BY family").fetchall())
        n_fail = q("SELECT count(DISTINCT call_key) FROM failures WHERE call_key NOT IN (SELECT call_key FROM calls)").fetchone()[0]
        return StoreStats(
            path=str(self.path), schema_version=self.schema_version, n_calls=n, n_parse_failures=int(n_parse or 0),
            n_failures=int(n_fail), n_images=n_img, cost_usd=float(cost), prompt_tokens=int(pt),
            completion_tokens=int(ct), per_family=per_family, first_utc=first, last_utc=last,
        )

    def verify(self) -> VerifyReport:
        """Re-hash every row: key from key_json, key fields against columns, row content.

        Returns
        -------
        VerifyReport
            Lists each row whose call key, key fields or content hash does not match.
        """
        bad: list[tuple[str, str]] = []
        n = 0
        for rec in self.iter_records():
            n += 1
            if hash_text(rec.key_json) != rec.call_key:
                bad.append((rec.call_key, "call_key does not match the hash of key_json"))
                continue
            try:
                kf = json.loads(rec.key_json)
            except ValueError:
                bad.append((rec.call_key, "key_json is not valid JSON"))
                continue
            for kname, col in _KEY_COLUMNS.items():
                if kname in kf and kf[kname] != getattr(rec, col):
                    bad.append((rec.call_key, f"column {col}={getattr(rec, col)!r} but key says {kf[kname]!r}"))
            if CallRecord.content_sha256(rec.to_dict()) != rec.row_sha256:
                bad.append((rec.call_key, "row content does not match row_sha256"))
        return VerifyReport(n, tuple(bad))

    def export(self, path: str | Path) -> int:
        """Write every record to ``path`` (.csv, .jsonl, .parquet); returns the count.

        A score that did not parse is written as the judge table writes it:
        ``NaN`` in CSV, NaN in Parquet; JSON has no NaN, so ``.jsonl`` has ``null``.

        Raises
        ------
        InvalidParameterError
            For an unsupported extension.
        """
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in (".csv", ".jsonl", ".parquet"):
            raise InvalidParameterError(f"export path must end in .csv, .jsonl or .parquet, got {path.name!r}")
        from ...io.save import atomic_path
        from ...io.tables import NA_REP, write_table

        records: Iterable[CallRecord] = self.iter_records()
        n = 0
        if suffix == ".parquet":
            import pandas as pd

            df = pd.DataFrame([r.to_dict() for r in records], columns=list(_COLUMNS))
            write_table(df, path)
            return len(df)
        with atomic_path(path) as tmp:
            if suffix == ".csv":
                # Streamed (a store can hold 10^5-10^6 calls); NaN spelled as write_table spells it.
                with open(tmp, "w", newline="", encoding="utf-8") as fh:
                    w = csv.writer(fh, lineterminator="\n")
                    w.writerow(_COLUMNS)
                    for r in records:
                        w.writerow([NA_REP if (c == "score" and math.isnan(r.score)) else getattr(r, c)
                                    for c in _COLUMNS])
                        n += 1
            else:
                with open(tmp, "w", encoding="utf-8") as fh:
                    for r in records:
                        d = r.to_dict()
                        d["score"] = None if math.isnan(r.score) else r.score
                        fh.write(json.dumps(d, ensure_ascii=False) + "\n")
                        n += 1
        return n
