"""Reading a store: records, scores, stats, verification, runs, one call."""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import StoreError
from ...hashing import hash_text
from ...serialize import Serializable, computed, serialized
from .export import export_records
from .layout import digest_bytes, digest_text, render_key_json, unpack_pieces
from .records import CALL_COLUMNS, CallRecord
from .runlog import RUN_COLUMNS, RunInfo

__all__ = ["ReadsMixin", "StoreStats", "VerifyReport", "CallDetail"]

# Columns whose values also appear in key_json: verify() checks they agree.
_KEY_COLUMNS = {
    "backend": "backend", "model": "model_requested", "template": "template",
    "rubric_sha256": "rubric_sha256", "image_sha256": "image_sha256", "temperature": "temperature",
    "repetition": "repetition", "dimension": "dimension",
}
_SELECT = (
    "SELECT c.key, c.key_json, q.key_pieces, q.family, q.backend, q.model_requested, c.model_returned, i.label, "
    "i.sha256, q.prompt_kind, q.dimension, q.template, q.rubric_sha256, q.temperature, c.repetition, "
    "c.prompt_tokens, c.completion_tokens, c.cost_usd, c.latency_s, c.attempts, c.created_utc, c.raw_reply, "
    "c.score, c.reason, c.parse_error, c.row_sha "
    "FROM calls c JOIN questions q ON q.id = c.question_id JOIN images i ON i.id = c.image_id"
)


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
class VerifyReport(Serializable):
    """Result of :meth:`CallStore.verify`.  ``damage`` lists what SQLite's integrity check found.

    :meth:`to_dict` is what ``multicrop store verify --json`` prints: each
    mismatch as ``{"call_key", "problem"}``, and ``ok``.
    """

    n_checked: int
    mismatches: tuple[tuple[str, str], ...] = field(  # (call_key, what is wrong)
        metadata=serialized(pairs=("call_key", "problem")))
    damage: tuple[str, ...] = ()

    @computed()
    def ok(self) -> bool:
        """No mismatch and no damage."""
        return not self.mismatches and not self.damage


@dataclass(frozen=True)
class CallDetail:
    """One call with the exact prompt text sent and the run that made it (``store show``)."""

    record: CallRecord
    prompt: str | None
    run: RunInfo | None


def _record(row: tuple) -> CallRecord:
    key, key_json, pieces, *mid, score, reason, perr, row_sha = row
    image_sha, rep = mid[5], mid[11]
    if key_json is None:
        p = unpack_pieces(pieces)
        key_json = render_key_json(p, image_sha, rep) if p is not None else ""
    return CallRecord(digest_text(key), key_json, *mid, math.nan if score is None else score, reason, perr,
                      digest_text(row_sha))


class ReadsMixin:
    """Reads of :class:`~multicrop.judges.store.CallStore`; a damaged file raises :class:`StoreError`."""

    def _read(self, sql: str, args: tuple = ()) -> list:
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._damage(exc) from None

    def completed_keys(self) -> set[str]:
        """Keys of every completed call."""
        return {digest_text(k) for (k,) in self._read("SELECT key FROM calls")}

    def scores(self, keys: Iterable[str] | None = None) -> dict[str, float]:
        """``call_key -> score`` (NaN for parse failures), each record checked against its content hash.

        A record edited after it was written (its score changed by hand, a
        damaged page) no longer matches its ``row_sha256``: it is never reused
        silently.  ``keys`` limits the read (and the check, about 50 us a
        record) to the calls a run reuses, looked up by the unique index.

        Raises
        ------
        StoreError
            Some records do not match their content hash (the message says how many and what to do).
        """
        out: dict[str, float] = {}
        bad: list[str] = []
        if keys is None:
            chunks = [(_SELECT, ())]
        else:
            wanted = sorted(set(keys))
            chunks = [(_SELECT + f" WHERE c.key IN ({', '.join('?' * len(part))})",
                       tuple(digest_bytes(k) for k in part))
                      for part in (wanted[i:i + 500] for i in range(0, len(wanted), 500))]
        try:
            for sql, args in chunks:
                for row in self._db.execute(sql, args):
                    rec = _record(row)
                    if CallRecord.content_sha256(dict(zip(CALL_COLUMNS, rec.values()))) != rec.row_sha256:
                        bad.append(rec.call_key)
                    out[rec.call_key] = rec.score
        except sqlite3.DatabaseError as exc:
            raise self._damage(exc) from None
        if bad:
            raise StoreError(
                f"{self.path}: {len(bad)} stored call(s) do not match their content hash (first {bad[0]}): they were "
                "changed after they were written; `multicrop store verify` lists them; restore the store from a "
                "backup, or delete those rows so the calls are made again")
        return out

    def __len__(self) -> int:
        return int(self._read("SELECT count(*) FROM calls")[0][0])

    def iter_records(self) -> Iterator[CallRecord]:
        """Every stored call, oldest first."""
        try:
            for row in self._db.execute(_SELECT + " ORDER BY c.created_utc, c.key"):
                yield _record(row)
        except sqlite3.DatabaseError as exc:
            raise self._damage(exc) from None

    def stats(self) -> StoreStats:
        n, n_parse, n_img, cost, pt, ct, first, last = self._read(
            "SELECT count(*), sum(c.parse_error IS NOT NULL), count(DISTINCT i.sha256), "
            "coalesce(sum(c.cost_usd), 0), coalesce(sum(c.prompt_tokens), 0), coalesce(sum(c.completion_tokens), 0), "
            "min(c.created_utc), max(c.created_utc) FROM calls c JOIN images i ON i.id = c.image_id")[0]
        per_family = dict(self._read("SELECT q.family, count(*) FROM calls c JOIN questions q ON q.id = c.question_id "
                                     "GROUP BY q.family ORDER BY q.family"))
        done = self.completed_keys()
        n_fail = len({k for (k,) in self._read("SELECT DISTINCT call_key FROM failures")} - done)
        return StoreStats(
            path=str(self.path), schema_version=self.schema_version, n_calls=n, n_parse_failures=int(n_parse or 0),
            n_failures=n_fail, n_images=n_img, cost_usd=float(cost), prompt_tokens=int(pt),
            completion_tokens=int(ct), per_family=per_family, first_utc=first, last_utc=last,
        )

    def integrity(self) -> tuple[str, ...]:
        """What SQLite's own integrity check finds wrong with the file (empty when sound)."""
        try:
            rows = self._db.execute("PRAGMA integrity_check(20)").fetchall()
        except sqlite3.DatabaseError as exc:
            return (str(exc),)
        found = tuple(line.strip() for r in rows for line in str(r[0]).splitlines() if line.strip())
        return () if found == ("ok",) else found

    def verify(self) -> VerifyReport:
        """SQLite's integrity check, then re-hash every row: key from its JSON, key fields, row content.

        Returns
        -------
        VerifyReport
            Damage SQLite found (then rows are not re-hashed), or each row
            whose call key, key fields or content hash does not match.
        """
        damage = self.integrity()
        if damage:
            return VerifyReport(0, (), damage)
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
        bad.extend(self._verify_links())
        return VerifyReport(n, tuple(bad))

    def _verify_links(self) -> list[tuple[str, str]]:
        """Rows of the tables a call points to, checked: each prompt present and matching its hash.

        A call row stores its prompt, question and image by reference; a row
        deleted from ``prompts`` (or ``questions``, ``images``) leaves calls
        that re-hash fine but no longer say what was asked.
        """
        bad: list[tuple[str, str]] = []
        orphans = self._read("SELECT c.key FROM calls c LEFT JOIN questions q ON q.id = c.question_id "
                             "LEFT JOIN images i ON i.id = c.image_id WHERE q.id IS NULL OR i.id IS NULL")
        bad.extend((digest_text(k), "its question or image row is missing (deleted from the store)")
                   for (k,) in orphans)
        rows = self._read("SELECT c.key, q.prompt_sha256, p.text FROM calls c JOIN questions q ON q.id = c.question_id "
                          "LEFT JOIN prompts p ON p.sha256 = q.prompt_sha256 WHERE q.prompt_sha256 IS NOT NULL")
        checked: dict[tuple[str, str | None], str | None] = {}
        for key, sha, text in rows:
            if (sha, text) not in checked:
                checked[(sha, text)] = (f"its prompt {sha[:19]}... is missing from the prompts table (deleted)"
                                        if text is None else None if hash_text(text) == sha
                                        else f"its prompt text does not match its sha256 {sha[:19]}...")
            problem = checked[(sha, text)]
            if problem:
                bad.append((digest_text(key), problem))
        return bad

    def export(self, path: str | Path) -> int:
        """Write every record to ``path`` (.csv, .jsonl, .parquet); returns the count.

        A score that did not parse is written as the judge table writes it:
        ``NaN`` in CSV, NaN in Parquet; JSON has no NaN, so ``.jsonl`` has ``null``.

        Raises
        ------
        InvalidParameterError
            For an unsupported extension.
        StoreError
            The store is damaged (SQLite's integrity check fails); nothing is written.
        """
        damage = self.integrity()
        if damage:
            raise StoreError(f"{self.path}: the store is damaged (SQLite's integrity check says {damage[0]!r}); "
                             "nothing exported")
        return export_records(self.iter_records(), Path(path))

    # Run log ---------------------------------------------------------------
    def runs(self) -> list[RunInfo]:
        """Every run, oldest first."""
        return [RunInfo(*row) for row in self._read(f"SELECT {', '.join(RUN_COLUMNS)} FROM runs ORDER BY id")]

    def show(self, call: str) -> CallDetail:
        """One call by its key, or by a unique prefix of its hex digest (``sha256:`` optional).

        Raises
        ------
        StoreError
            No call, or more than one, has that key or prefix.
        """
        text = call.strip().lower()
        hexpart = text.removeprefix("sha256:")
        if not hexpart or any(ch not in "0123456789abcdef" for ch in hexpart) or len(hexpart) > 64:
            raise StoreError(f"call {call!r} is not a call key (sha256:<hex>) or a prefix of one")
        if len(hexpart) == 64:
            rows = self._read(_SELECT + " WHERE c.key = ?", (digest_bytes("sha256:" + hexpart),))
        else:
            lo = bytes.fromhex(hexpart + "0" * (len(hexpart) % 2))
            hi = bytes.fromhex((hexpart + "f" * (len(hexpart) % 2)).ljust(64, "f"))
            rows = self._read(_SELECT + " WHERE c.key BETWEEN ? AND ? LIMIT 2", (lo, hi))
        if not rows:
            raise StoreError(f"{self.path}: no call {call!r}")
        if len(rows) > 1:
            raise StoreError(f"{self.path}: call prefix {call!r} matches more than one call; give more digits")
        raw = rows[0][0]
        extra = self._read("SELECT p.text, c.run_id FROM calls c JOIN questions q ON q.id = c.question_id "
                           "LEFT JOIN prompts p ON p.sha256 = q.prompt_sha256 WHERE c.key = ?", (raw,))[0]
        run = None
        if extra[1] is not None:
            found = self._read(f"SELECT {', '.join(RUN_COLUMNS)} FROM runs WHERE id = ?", (extra[1],))
            run = RunInfo(*found[0]) if found else None
        return CallDetail(_record(rows[0]), extra[0], run)
