"""The SQLite checkpoint store of judge calls (like ``llm``'s logs.db).

One row per completed call, keyed by a content hash of everything that
determines the reply.  WAL mode; every write is one transaction (a batch of
completed calls together with the failures logged beside them), committed
as soon as the calls complete, so a killed run loses only calls in flight.
Runs claim calls before making them (:mod:`~multicrop.judges.store.claims`),
so two runs over one store never pay for the same call twice.

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

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ...errors import StoreError
from ...hashing import hash_text
from .claims import ClaimsMixin
from .layout import digest_bytes, digest_text, pack_pieces, split_key_json
from .migrations import MIGRATIONS, schema_state
from .reads import ReadsMixin, StoreStats, VerifyReport
from .records import CallRecord, utc_now

__all__ = ["CallStore", "StoreStats", "VerifyReport"]

_INSERT = (
    "INSERT OR IGNORE INTO calls (key, question_id, image_id, repetition, run_id, key_json, model_returned, "
    "prompt_tokens, completion_tokens, cost_usd, latency_s, attempts, created_utc, raw_reply, score, reason, "
    "parse_error, row_sha) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_FAILURE = "INSERT INTO failures (call_key, family, image, error, attempts, created_utc) VALUES (?, ?, ?, ?, ?, ?)"
_QUESTION_COLUMNS = ("family", "backend", "model_requested", "template", "rubric_sha256", "temperature",
                     "prompt_kind", "dimension", "prompt_sha256", "key_pieces")


def damaged(path: Path, exc: sqlite3.DatabaseError) -> StoreError:
    """The one-line error for a store SQLite cannot read or write."""
    text = str(exc)
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return StoreError(f"{path}: the store is damaged ({text}); restore it from a backup "
                          "(`multicrop store verify` says what SQLite finds)")
    return StoreError(f"{path}: cannot use the store ({text})")


def readonly_uri(path: Path, mode: str = "ro") -> str:
    """A SQLite URI for ``path`` that never creates it, every special character quoted (``#``, ``?``, ``%``, spaces)."""
    return "file:" + quote(str(path.absolute()), safe="/") + f"?mode={mode}"


def _open_for_reading(path: Path) -> sqlite3.Connection:
    # Read-write without creating, then query_only: as the last connection to
    # close, it checkpoints and removes the -wal and -shm files, which a
    # mode=ro connection would leave behind.  mode=ro where writing is refused.
    # A store the user may only read (a read-only file or folder, a read-only mount): mode=ro; and where
    # SQLite cannot create the -shm it needs for a WAL store either, immutable=1 when no -wal file
    # exists (nothing is being written: the file alone is the whole store).
    if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK):
        try:
            db = sqlite3.connect(readonly_uri(path, "rw"), uri=True, isolation_level=None, timeout=30.0)
            db.execute("PRAGMA query_only = ON")
            db.execute("PRAGMA user_version").fetchone()
            return db
        except sqlite3.OperationalError:
            pass
    try:
        db = sqlite3.connect(readonly_uri(path), uri=True, isolation_level=None, timeout=30.0)
        db.execute("PRAGMA user_version").fetchone()
        return db
    except sqlite3.OperationalError:
        if path.with_name(path.name + "-wal").exists():
            raise
    return sqlite3.connect(readonly_uri(path) + "&immutable=1", uri=True, isolation_level=None)


def _check_header(path: Path, *, readonly: bool) -> None:
    """Refuse a file that is not SQLite, or is shorter than its header says, before SQLite opens it.

    (SQLite would open a truncated file and fail later, leaving ``-wal`` and
    ``-shm`` files beside it.)
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        if readonly:
            raise StoreError(f"{path}: not a multicrop store (it is empty, 0 bytes)")
        return
    with open(path, "rb") as fh:
        head = fh.read(100)
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        raise StoreError(f"{path}: not a usable SQLite database (no SQLite header; {size} bytes)")
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    n_pages = int.from_bytes(head[28:32], "big")
    header_valid = head[24:28] == head[92:96]
    wal = path.with_name(path.name + "-wal")
    if header_valid and not wal.exists() and n_pages * page_size > size:
        raise StoreError(f"{path}: the store is truncated (its header says {n_pages * page_size} bytes, the file "
                         f"has {size}); restore it from a backup")


class CallStore(ReadsMixin, ClaimsMixin):
    """SQLite store of judge calls; migrations are applied on open.

    Parameters
    ----------
    path : str or Path
        Database file (created if missing).  Opened by path: ``#``, ``?`` and
        spaces in the name are part of the name.
    readonly : bool
        Open without creating or migrating (``stats``/``export``/``verify``).

    Raises
    ------
    StoreError
        The file is not a multicrop store, is damaged, or was written by a
        newer version.
    """

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        if self.path.is_symlink() and not self.path.exists():
            raise StoreError(f"{self.path}: a symbolic link to nothing ({os.readlink(self.path)}); name the store itself")
        if readonly and not self.path.is_file():
            raise StoreError(f"{self.path}: no such store" if not self.path.exists() else f"{self.path}: not a file")
        if self.path.exists() and not self.path.is_file():
            raise StoreError(f"{self.path}: not a file (a store is one SQLite file)")
        _check_header(self.path, readonly=readonly)
        self._sidecars = [self.path.with_name(self.path.name + x) for x in ("-wal", "-shm")]
        self._sidecars_before = {p for p in self._sidecars if p.exists()}
        self._is_damaged = False
        self._questions: dict[tuple, int] = {}
        self._images: dict[tuple[str, str], int] = {}
        self._prompts: set[str] = set()
        try:
            if readonly:
                self._db = _open_for_reading(self.path)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(str(self.path), isolation_level=None, timeout=30.0)
                self._db.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL mode: a committed transaction survives a killed
                # process (only an OS crash or power loss can lose the last ones).
                self._db.execute("PRAGMA synchronous=NORMAL")
            version, tables = schema_state(self._db)
        except sqlite3.DatabaseError as exc:
            self._is_damaged = True
            if hasattr(self, "_db"):
                self.close()
            raise StoreError(f"{self.path}: not a usable SQLite database ({exc})") from None
        if version == 0:
            if tables or readonly:
                self._db.close()
                what = f"it has tables {', '.join(tables[:5])}" if tables else "it is empty"
                raise StoreError(f"{self.path}: not a multicrop store ({what}, schema version 0); "
                                 "name another file, or a new one")
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
        # The version is read again inside each migration's write transaction:
        # two processes opening a new store at once must not both migrate it.
        first = version
        while True:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                version = self._db.execute("PRAGMA user_version").fetchone()[0]
                if version >= len(MIGRATIONS):
                    self._db.execute("COMMIT")
                    break
                step = MIGRATIONS[version]
                if callable(step):
                    step(self._db)
                else:
                    for stmt in step.split(";"):
                        if stmt.strip():
                            self._db.execute(stmt)
                self._db.execute(f"PRAGMA user_version = {version + 1}")
                self._db.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                self._db.close()
                raise StoreError(f"{self.path}: migration {version + 1} failed ({exc})") from None
        if 0 < first < 4:  # the compact layout frees most pages of an old store
            try:
                self._db.execute("VACUUM")
            except sqlite3.DatabaseError:  # pragma: no cover - another connection is reading
                pass

    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _damage(self, exc: sqlite3.DatabaseError) -> StoreError:
        """The error for ``exc``; a store found damaged gets no sidecar files left beside it at close."""
        err = damaged(self.path, exc)
        self._is_damaged = "damaged" in str(err)
        return err

    # Context manager -------------------------------------------------------
    def close(self) -> None:
        self._db.close()
        if self._is_damaged:  # nothing was written: remove the -wal/-shm this connection created
            for p in self._sidecars:
                if p not in self._sidecars_before:
                    p.unlink(missing_ok=True)

    def __enter__(self) -> CallStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Writes ----------------------------------------------------------------
    def record(self, records: Sequence[CallRecord], *, failures: Sequence[dict[str, Any]] = (),
               prompts: Sequence[str | None] | None = None, run_id: int | None = None,
               owner: str | None = None, release: Sequence[str] = ()) -> int:
        """Insert completed calls and log failed ones, all in one transaction.

        Parameters
        ----------
        records : sequence of CallRecord
        failures : sequence of dict
            Calls that failed after all retries (they stay missing), each with
            the keyword arguments of :meth:`record_failure`.
        prompts : sequence of str or None, optional
            The exact prompt text sent for each record (stored once per distinct text).
        run_id : int, optional
            The run (:meth:`begin_run`) that made these calls.
        owner : str, optional
            The claimant: its claims on these calls, these failures and
            ``release`` are dropped in the same transaction.
        release : sequence of str
            More call keys whose claims ``owner`` gives up (calls not made).

        Returns
        -------
        int
            How many of ``records`` were new.
        """
        if not records and not failures and not (owner and release):
            return 0
        now = utc_now()
        frows = [(f["call_key"], f["family"], f["image"], f["error"], f["attempts"], now) for f in failures]
        texts = list(prompts) if prompts is not None else [None] * len(records)
        self._db.execute("BEGIN IMMEDIATE")
        try:
            rows = [self._row(r, t, run_id) for r, t in zip(records, texts)]
            before = self._db.total_changes
            self._db.executemany(_INSERT, rows)
            n_new = self._db.total_changes - before
            if frows:
                self._db.executemany(_INSERT_FAILURE, frows)
            if owner is not None:
                keys = [r[0] for r in rows] + [_maybe_raw(k) for k in (*(f["call_key"] for f in failures), *release)]
                self._db.executemany("DELETE FROM claims WHERE key = ? AND owner = ?",
                                     [(k, owner) for k in keys if k is not None])
            self._db.execute("COMMIT")
        except BaseException as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            self._questions.clear()
            self._images.clear()
            self._prompts.clear()
            if isinstance(exc, sqlite3.DatabaseError):
                raise self._damage(exc) from None
            raise
        return n_new

    def record_failure(self, *, call_key: str, family: str, image: str, error: str, attempts: int) -> None:
        """Log one call that failed after all retries (it stays missing); its own transaction."""
        self.record((), failures=[{"call_key": call_key, "family": family, "image": image, "error": error,
                                   "attempts": attempts}])

    def _row(self, r: CallRecord, prompt: str | None, run_id: int | None) -> tuple:
        pieces = split_key_json(r.key_json, r.image_sha256, r.repetition)
        prompt_sha = None
        if prompt is not None:
            prompt_sha = hash_text(prompt)
            if prompt_sha not in self._prompts:
                self._db.execute("INSERT OR IGNORE INTO prompts (sha256, text) VALUES (?, ?)", (prompt_sha, prompt))
                self._prompts.add(prompt_sha)
        q = (r.family, r.backend, r.model_requested, r.template, r.rubric_sha256, r.temperature, r.prompt_kind,
             r.dimension, prompt_sha, pack_pieces(pieces) if pieces else None)
        qid = self._questions.get(q)
        if qid is None:
            qid = self._questions[q] = self._lookup(
                "questions", _QUESTION_COLUMNS, q)
        img = (r.image, r.image_sha256)
        iid = self._images.get(img)
        if iid is None:
            iid = self._images[img] = self._lookup("images", ("label", "sha256"), img)
        score = None if r.score != r.score else r.score
        return (digest_bytes(r.call_key), qid, iid, r.repetition, run_id, None if pieces else r.key_json,
                r.model_returned, r.prompt_tokens, r.completion_tokens, r.cost_usd, r.latency_s, r.attempts,
                r.created_utc, r.raw_reply, score, r.reason, r.parse_error, digest_bytes(r.row_sha256))

    def _lookup(self, table: str, columns: tuple[str, ...], values: tuple) -> int:
        where = " AND ".join(f"{c} IS ?" for c in columns)
        row = self._db.execute(f"SELECT id FROM {table} WHERE {where}", values).fetchone()
        if row is not None:
            return int(row[0])
        cur = self._db.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                               values)
        return int(cur.lastrowid)

    def costs(self, keys: Sequence[str] | set[str]) -> dict[str, float]:
        """``call_key -> cost_usd`` (0.0 where none was logged) of the completed calls among ``keys``.

        Looks the keys up by the unique index (``WHERE key IN (...)``, a few
        hundred at a time); it does not scan the store.  Keys with no
        completed call are absent from the result.
        """
        wanted = sorted(set(keys))
        out: dict[str, float] = {}
        for i in range(0, len(wanted), 500):
            chunk = wanted[i:i + 500]
            rows = self._read(f"SELECT key, cost_usd FROM calls WHERE key IN ({', '.join('?' * len(chunk))})",
                              tuple(digest_bytes(k) for k in chunk))
            out.update({digest_text(k): float(c or 0.0) for k, c in rows})
        return out

    # Runs ------------------------------------------------------------------
    def begin_run(self, *, command: str, panel_json: str, owner: str, tool_version: str | None = None) -> int:
        """Log the start of a run; returns its id (its calls point to it)."""
        if tool_version is None:
            tool_version = _tool_version()
        try:
            cur = self._db.execute(
                "INSERT INTO runs (tool_version, command, panel_json, owner, started_utc, status) "
                "VALUES (?, ?, ?, ?, ?, ?)", (tool_version, command, panel_json, owner, utc_now(), "running"))
        except sqlite3.DatabaseError as exc:
            raise self._damage(exc) from None
        return int(cur.lastrowid)

    def end_run(self, run_id: int, *, status: str, counts: dict[str, Any]) -> None:
        """Log the end of a run: ``status`` and its counts (planned, performed, ..., cost_usd)."""
        cols = ("planned", "already_done", "performed", "parse_failures", "failed", "skipped", "cost_usd")
        try:
            self._db.execute(
                f"UPDATE runs SET ended_utc = ?, status = ?, {', '.join(f'{c} = ?' for c in cols)} WHERE id = ?",
                (utc_now(), status, *(counts.get(c) for c in cols), run_id))
        except sqlite3.DatabaseError as exc:
            raise self._damage(exc) from None


def _tool_version() -> str:
    # importlib.metadata, not ``multicrop.__version__``: the package root
    # reaches into the crop wing, which the judges wing must not import.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("multicrop")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0.0.0+unknown"


def _maybe_raw(key: str) -> bytes | None:
    try:
        return digest_bytes(key)
    except StoreError:
        return None
