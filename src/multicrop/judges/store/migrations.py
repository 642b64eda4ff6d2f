"""Numbered schema migrations, applied in order when a store is opened.

``PRAGMA user_version`` holds the number of migrations applied.  Never edit a
migration that has shipped; append a new one.  A migration is SQL text
(statements separated by ``;``) or a function of the open connection, run
inside the migration's transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from .layout import pack_pieces, split_key_json

__all__ = ["MIGRATIONS", "schema_state"]


def _compact(db: sqlite3.Connection) -> None:
    """4: the run log, prompts stored once, and compact call rows.

    Everything a call shares with the other calls of its question (family,
    backend, model, template, rubric, temperature, the fixed part of the key)
    moves to ``questions``; image label and hash to ``images``; call keys and
    row hashes are kept as 32 raw bytes.  The key text is rebuilt from the
    question's key pieces, the image hash and the repetition, byte for byte;
    a key that does not have that shape keeps its full text in ``key_json``.
    """
    for stmt in _V4.split(";"):
        if stmt.strip():
            db.execute(stmt)
    old = db.execute(
        "SELECT call_key, key_json, family, backend, model_requested, model_returned, image, image_sha256, "
        "prompt_kind, dimension, template, rubric_sha256, temperature, repetition, prompt_tokens, "
        "completion_tokens, cost_usd, latency_s, attempts, created_utc, raw_reply, score, reason, parse_error, "
        "row_sha256 FROM calls_v1")
    questions: dict[tuple, int] = {}
    images: dict[tuple, int] = {}
    for row in old:
        (key, key_json, family, backend, model, model_ret, image, image_sha, kind, dim, template, rubric, temp,
         rep, pt, ct, cost, lat, att, created, raw, score, reason, perr, row_sha) = row
        pieces = split_key_json(key_json, image_sha, rep)
        qfields = (family, backend, model, template, rubric, temp, kind, dim, None,
                   pack_pieces(pieces) if pieces else None)
        qid = questions.get(qfields)
        if qid is None:
            qid = questions[qfields] = _question_id(db, qfields)
        iid = images.get((image, image_sha))
        if iid is None:
            db.execute("INSERT OR IGNORE INTO images (label, sha256) VALUES (?, ?)", (image, image_sha))
            iid = images[(image, image_sha)] = db.execute(
                "SELECT id FROM images WHERE label = ? AND sha256 = ?", (image, image_sha)).fetchone()[0]
        db.execute(
            "INSERT OR IGNORE INTO calls (key, question_id, image_id, repetition, run_id, key_json, model_returned, "
            "prompt_tokens, completion_tokens, cost_usd, latency_s, attempts, created_utc, raw_reply, score, reason, "
            "parse_error, row_sha) VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (_raw(key), qid, iid, rep, None if pieces else key_json, model_ret, pt, ct, cost, lat, att, created,
             raw, score, reason, perr, _raw(row_sha)))
    db.execute("DROP TABLE calls_v1")


def _raw(prefixed: str) -> bytes:
    from .layout import digest_bytes

    return digest_bytes(prefixed)


def _question_id(db: sqlite3.Connection, q: tuple) -> int:
    db.execute(
        "INSERT OR IGNORE INTO questions (family, backend, model_requested, template, rubric_sha256, temperature, "
        "prompt_kind, dimension, prompt_sha256, key_pieces) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", q)
    return db.execute(
        "SELECT id FROM questions WHERE family IS ? AND backend IS ? AND model_requested IS ? AND template IS ? "
        "AND rubric_sha256 IS ? AND temperature IS ? AND prompt_kind IS ? AND dimension IS ? "
        "AND prompt_sha256 IS ? AND key_pieces IS ?", q).fetchone()[0]


_V4 = """
ALTER TABLE calls RENAME TO calls_v1;
CREATE TABLE prompts (
    sha256 TEXT PRIMARY KEY,
    text   TEXT NOT NULL
);
CREATE TABLE runs (
    id             INTEGER PRIMARY KEY,
    tool_version   TEXT NOT NULL,
    command        TEXT NOT NULL,
    panel_json     TEXT NOT NULL,
    owner          TEXT NOT NULL,
    started_utc    TEXT NOT NULL,
    ended_utc      TEXT,
    status         TEXT NOT NULL,
    planned        INTEGER,
    already_done   INTEGER,
    performed      INTEGER,
    parse_failures INTEGER,
    failed         INTEGER,
    skipped        INTEGER,
    cost_usd       REAL
);
CREATE TABLE questions (
    id              INTEGER PRIMARY KEY,
    family          TEXT NOT NULL,
    backend         TEXT NOT NULL,
    model_requested TEXT NOT NULL,
    template        TEXT NOT NULL,
    rubric_sha256   TEXT NOT NULL,
    temperature     REAL NOT NULL,
    prompt_kind     TEXT NOT NULL,
    dimension       TEXT NOT NULL,
    prompt_sha256   TEXT REFERENCES prompts(sha256),
    key_pieces      TEXT,
    UNIQUE (family, backend, model_requested, template, rubric_sha256, temperature, prompt_kind, dimension,
            prompt_sha256, key_pieces)
);
CREATE TABLE images (
    id     INTEGER PRIMARY KEY,
    label  TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    UNIQUE (sha256, label)
);
CREATE TABLE calls (
    id                INTEGER PRIMARY KEY,
    key               BLOB NOT NULL UNIQUE,
    question_id       INTEGER NOT NULL REFERENCES questions(id),
    image_id          INTEGER NOT NULL REFERENCES images(id),
    repetition        INTEGER NOT NULL,
    run_id            INTEGER REFERENCES runs(id),
    key_json          TEXT,
    model_returned    TEXT,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    cost_usd          REAL,
    latency_s         REAL,
    attempts          INTEGER NOT NULL,
    created_utc       TEXT NOT NULL,
    raw_reply         TEXT,
    score             REAL,
    reason            TEXT,
    parse_error       TEXT,
    row_sha           BLOB NOT NULL
);
DROP INDEX IF EXISTS calls_image;
CREATE INDEX calls_run ON calls(run_id)
"""

MIGRATIONS: tuple[str | Callable[[sqlite3.Connection], None], ...] = (
    # 1: one row per completed call (a parse failure is a completed call).
    """
    CREATE TABLE calls (
        call_key          TEXT PRIMARY KEY,
        key_json          TEXT NOT NULL,
        family            TEXT NOT NULL,
        backend           TEXT NOT NULL,
        model_requested   TEXT NOT NULL,
        model_returned    TEXT,
        image             TEXT NOT NULL,
        image_sha256      TEXT NOT NULL,
        prompt_kind       TEXT NOT NULL,
        dimension         TEXT NOT NULL,
        template          TEXT NOT NULL,
        rubric_sha256     TEXT NOT NULL,
        temperature       REAL NOT NULL,
        repetition        INTEGER NOT NULL,
        prompt_tokens     INTEGER,
        completion_tokens INTEGER,
        cost_usd          REAL,
        latency_s         REAL,
        attempts          INTEGER NOT NULL,
        created_utc       TEXT NOT NULL,
        raw_reply         TEXT,
        score             REAL,
        reason            TEXT,
        parse_error       TEXT,
        row_sha256        TEXT NOT NULL
    ) WITHOUT ROWID;
    """,
    # 2: calls that failed after all retries (not completed: a resume retries them).
    """
    CREATE TABLE failures (
        id           INTEGER PRIMARY KEY,
        call_key     TEXT NOT NULL,
        family       TEXT NOT NULL,
        image        TEXT NOT NULL,
        error        TEXT NOT NULL,
        attempts     INTEGER NOT NULL,
        created_utc  TEXT NOT NULL
    );
    CREATE INDEX failures_call_key ON failures(call_key);
    CREATE INDEX calls_image ON calls(image_sha256);
    """,
    # 3: claims of calls in flight: a run claims a call before making it, so two
    # runs over one store split the work; a claim expires unless renewed, and a
    # claim whose owner process is gone (same host) is taken over at once.
    """
    CREATE TABLE claims (
        key      BLOB PRIMARY KEY,
        owner    TEXT NOT NULL,
        expires  REAL NOT NULL
    ) WITHOUT ROWID;
    """,
    # 4: runs, prompts, questions, images; compact calls (see _compact).
    _compact,
)


def schema_state(db: sqlite3.Connection) -> tuple[int, list[str]]:
    """The schema version and the tables, read in one snapshot: another process creating the store between two
    separate reads would show its tables beside the version from before (a new store taken for a foreign one)."""
    db.execute("BEGIN")
    try:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return version, tables
