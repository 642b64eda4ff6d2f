"""``store verify`` checks what a call points to: a deleted prompt, question or image row is a mismatch.

A call row keeps its prompt text, question and image by reference; deleting
those rows leaves calls that still re-hash, so verification must follow the
references too (``store verify`` said "0 mismatches" after every prompt row
was deleted).
"""

from __future__ import annotations

import sqlite3

import pytest

from multicrop.cli import main as cli_main


@pytest.fixture
def store(tmp_path, hb):
    photo = hb.good_photo(tmp_path / "p.png")
    db = tmp_path / "s.sqlite"
    assert cli_main.main(["judge", str(photo), "--db", str(db), "--holistic-repetitions", "2",
                          "--dimension-repetitions", "1", "--json"]) == 0
    return db


def _edit(db, sql: str) -> None:
    con = sqlite3.connect(db)
    con.execute("PRAGMA foreign_keys = OFF")
    con.execute(sql)
    con.commit()
    con.close()


def _verify(db, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = cli_main.main(["store", "verify", str(db)])
    cap = capsys.readouterr()
    return code, cap.out + cap.err


def test_a_sound_store_verifies(store, capsys):
    code, text = _verify(store, capsys)
    assert code == 0, text


@pytest.mark.parametrize("sql, words", [
    ("DELETE FROM prompts", "fail verification"),
    ("UPDATE prompts SET text = text || ' (edited)'", "fail verification"),
    ("DELETE FROM questions", "fail verification"),
    ("DELETE FROM images", "fail verification"),
])
def test_rows_a_call_points_to_are_verified(store, capsys, sql, words):
    _edit(store, sql)
    code, text = _verify(store, capsys)
    assert code == 1 and words in text and "Traceback" not in text, text


def test_the_report_names_the_missing_prompt(store):
    from multicrop.judges.store import CallStore

    _edit(store, "DELETE FROM prompts")
    with CallStore(store, readonly=True) as s:
        rep = s.verify()
    assert not rep.ok and rep.mismatches
    assert all("missing from the prompts table" in problem for _, problem in rep.mismatches)
