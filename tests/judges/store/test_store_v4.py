"""Schema v4: old stores migrate (keys unchanged, resume makes no call), the compact layout is
>= 3x smaller per call, credentials never reach the file, odd file names open the right file,
and a damaged file is reported as damage."""

import os
import sqlite3

import numpy as np
import pytest

from multicrop.errors import StoreError
from multicrop.judges.panel import default_panel
from multicrop.judges.runner import judge_images
from multicrop.judges.store import MIGRATIONS, CallStore
from multicrop.judges.types import ImageRef

_V2_COLUMNS = ("call_key, key_json, family, backend, model_requested, model_returned, image, image_sha256, "
               "prompt_kind, dimension, template, rubric_sha256, temperature, repetition, prompt_tokens, "
               "completion_tokens, cost_usd, latency_s, attempts, created_utc, raw_reply, score, reason, "
               "parse_error, row_sha256")


def _refs(n, seed=0):
    rng = np.random.default_rng(seed)
    return [ImageRef((rng.random((40, 48, 3)) * 255).astype(np.uint8), label=f"im{i}.jpg") for i in range(n)]


def _write_v2_store(path, records):
    """A store exactly as multicrop wrote it before schema v3 (migrations 1-2, the same rows)."""
    con = sqlite3.connect(path)
    for step in MIGRATIONS[:2]:
        con.executescript(step)
    con.executemany(f"INSERT INTO calls ({_V2_COLUMNS}) VALUES ({', '.join('?' * 25)})", [r.row() for r in records])
    con.execute("PRAGMA user_version = 2")
    con.commit()
    con.execute("VACUUM")
    con.close()


def _vacuumed_size(path):
    con = sqlite3.connect(path)
    con.execute("VACUUM")
    con.close()
    return path.stat().st_size


# The default panel plans 20 rows an image (5 holistic and 3 x 5 dimension repetitions); the measured judge is
# deterministic, so its repetitions collapse to one call per prompt: 6 calls an image (holistic + 5 dimensions).
ROWS, CALLS = 20, 6


def test_an_old_store_migrates_keeps_every_key_and_a_resume_makes_no_call(tmp_path):
    n = 17  # 17 images x 6 calls = 102 calls (enough that SQLite's pages do not dominate the bytes per call)
    images = _refs(n)
    fresh = tmp_path / "fresh.sqlite"
    with CallStore(fresh) as store:
        summary, plan = judge_images(images, default_panel(), store)
        records = list(store.iter_records())
    assert summary.performed == len(records) == n * CALLS
    old, empty_v2, empty_v4 = tmp_path / "old.sqlite", tmp_path / "e2.sqlite", tmp_path / "e4.sqlite"
    _write_v2_store(old, records)
    _write_v2_store(empty_v2, [])
    CallStore(empty_v4).close()
    v2_per_call = (old.stat().st_size - empty_v2.stat().st_size) / len(records)
    with CallStore(old) as store:
        assert store.schema_version == len(MIGRATIONS) == 4
        assert {r.call_key: r for r in store.iter_records()} == {r.call_key: r for r in records}
        assert store.verify().ok and store.runs() == []
        again, _ = judge_images(images, default_panel(), store)
        assert (again.performed, again.already_done) == (0, n * ROWS)
        detail = store.show(records[0].call_key[:20])
        assert detail.record == records[0] and detail.prompt is None and detail.run is None
    # Bytes per call (beyond the empty schema): the compact layout against the v2 layout of the same calls.
    v4_per_call = (_vacuumed_size(fresh) - _vacuumed_size(empty_v4)) / len(records)
    assert v2_per_call / v4_per_call >= 3.0, (v2_per_call, v4_per_call)


def test_runs_and_prompts_are_logged_once(tmp_path):
    db = tmp_path / "r.sqlite"
    with CallStore(db) as store:
        judge_images(_refs(2), default_panel(), store, command="multicrop judge a b --db r.sqlite")
        judge_images(_refs(3), default_panel(), store, command="multicrop judge a b c")
        runs = store.runs()
        assert [(r.status, r.performed, r.already_done, r.planned) for r in runs] == [
            ("finished", 2 * CALLS, 0, 2 * ROWS), ("finished", CALLS, 2 * ROWS, 3 * ROWS)]
        assert runs[0].command == "multicrop judge a b --db r.sqlite" and '"families"' in runs[0].panel_json
        detail = store.show(next(store.iter_records()).call_key)
        assert detail.run.id == 1 and "photograph" in detail.prompt
    con = sqlite3.connect(db)
    n_prompts, n_questions = con.execute("SELECT (SELECT count(*) FROM prompts), (SELECT count(*) FROM questions)").fetchone()
    per_run = dict(con.execute("SELECT run_id, count(*) FROM calls GROUP BY run_id").fetchall())
    con.close()
    assert n_prompts == 6 and n_questions == 6 and per_run == {1: 2 * CALLS, 2: CALLS}  # holistic + 5 dimensions


def test_show_refuses_unknown_and_ambiguous_calls(tmp_path):
    from collections import Counter

    with CallStore(tmp_path / "r.sqlite") as store:
        judge_images(_refs(1), default_panel(), store)
        keys = [r.call_key for r in store.iter_records()]
        # 6 keys: a first hex digit shared by two of them is likely, not certain; look for the longest shared prefix.
        assert len(keys) == CALLS
        digit = next(k[7:7 + n] for n in range(1, 64) for k in keys if sum(o.startswith(k[:7 + n]) for o in keys) > 1)
        with pytest.raises(StoreError, match="more than one"):
            store.show(digit)
        with pytest.raises(StoreError, match="no call"):
            store.show("sha256:" + ("0" if keys[0][7:] != "0" * 64 else "1") * 64)
        with pytest.raises(StoreError, match="not a call key"):
            store.show("zz-top")
        assert store.show(keys[3][7:]).record.call_key == keys[3]


@pytest.mark.parametrize("name", ["dir#1/runs.sqlite", "a#b.sqlite", "a?b.sqlite", "sp ace/r s.sqlite",
                                  "ünï cödé.sqlite", "100%.sqlite", "q?x=1#frag.sqlite", "file:x.sqlite"])
def test_odd_store_names_open_the_right_file_and_leave_no_stray_files(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    db = tmp_path / name
    with CallStore(db) as store:
        judge_images(_refs(1), default_panel(), store)
    with CallStore(db, readonly=True) as store:
        assert len(store) == CALLS and store.schema_version == 4 and store.verify().ok
    with CallStore(name, readonly=True) as store:  # relative, as typed
        assert len(store) == CALLS
    top = db.relative_to(tmp_path).parts[0]
    assert sorted(os.listdir(tmp_path)) == [top]


def test_damaged_pages_are_reported_as_damage(tmp_path):
    db = tmp_path / "r.sqlite"
    with CallStore(db) as store:
        judge_images(_refs(4), default_panel(), store)
    size = db.stat().st_size
    with open(db, "r+b") as fh:
        for page in range(2, size // 4096, 3):
            fh.seek(page * 4096 + 100)
            fh.write(b"\xff" * 3000)
    with CallStore(db, readonly=True) as store:
        rep = store.verify()
        assert not rep.ok and rep.damage and rep.n_checked == 0
        with pytest.raises(StoreError, match="damaged"):
            store.export(tmp_path / "out.csv")
    assert not (tmp_path / "out.csv").exists()


def test_redact_removes_user_info_from_urls_in_panels_and_command_lines():
    from multicrop.judges.store import redact, strip_userinfo

    assert strip_userinfo("https://u:p@h.example:8443/v1?x=1") == "https://h.example:8443/v1?x=1"
    assert strip_userinfo("not a url") == "not a url"
    argv = ["multicrop", "judge", "--base-url=http://al:pw@h/v1", "--base-url", "http://al:pw@h/v1", "a@b.jpg"]
    assert redact(argv) == ["multicrop", "judge", "--base-url=http://h/v1", "--base-url", "http://h/v1", "a@b.jpg"]
    doc = {"families": [{"options": {"base_url": "http://k:s@h/v1", "max_side": 64}}]}
    assert redact(doc) == {"families": [{"options": {"base_url": "http://h/v1", "max_side": 64}}]}
