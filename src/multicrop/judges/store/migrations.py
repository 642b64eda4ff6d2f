"""Numbered schema migrations, applied in order when a store is opened.

``PRAGMA user_version`` holds the number of migrations applied.  Never edit a
migration that has shipped; append a new one.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS"]

MIGRATIONS: tuple[str, ...] = (
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
)
