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

import json
import math
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import StoreError
from ...hashing import hash_text
from ...serialize import Serializable
from .export import export_records
from .migrations import MIGRATIONS
from .records import CALL_COLUMNS, CallRecord, utc_now

__all__ = ["CallStore", "StoreStats", "VerifyReport"]

# Columns whose values also appear in key_json: verify() checks they agree.
_KEY_COLUMNS = {
    "backend": "backend", "model": "model_requested", "template": "template",
    "rubric_sha256": "rubric_sha256", "image_sha256": "image_sha256", "temperature": "temperature",
    "repetition": "repetition", "dimension": "dimension",
}
_INSERT = f"INSERT OR IGNORE INTO calls ({', '.join(CALL_COLUMNS)}) VALUES ({', '.join('?' * len(CALL_COLUMNS))})"
_INSERT_FAILURE = "INSERT INTO failures (call_key, family, image, error, attempts, created_utc) VALUES (?, ?, ?, ?, ?, ?)"


@dataclass(frozen=True)
class StoreStats(Serializable):
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


@dataclass(frozen=True)
class VerifyReport:
    """Result of :meth:`CallStore.verify`."""

    n_checked: int
    mismatches: tuple[tuple[str, str], ...]  # (call_key, what is wrong)

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def to_dict(self) -> dict[str, Any]:
        """What ``multicrop store verify --json`` prints.

        Written by hand, not by :mod:`multicrop.serialize`: it adds ``ok`` and
        names the parts of each mismatch (``{"call_key", "problem"}``).
        """
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
        rows = [r.row() for r in records]
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
        cur = self._db.execute(f"SELECT {', '.join(CALL_COLUMNS)} FROM calls ORDER BY created_utc, call_key")
        for row in cur:
            yield CallRecord.from_row(row)

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
        return export_records(self.iter_records(), Path(path))
