"""Small defects with big effects: long names, concurrent writers' temp files, odd bytes, torn lines, edited stores."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from multicrop.io import atomic_write_text
from multicrop.io.parts import remove_parts
from multicrop.io.save import parse_temp_name, temp_name


@pytest.mark.parametrize("name", ["a.jpg", "x" * 200 + ".jpg", "x" * 236 + "_1.jpg", "y" * 255, "é" * 120 + ".png",
                                  "日本" * 40 + ".json", os.fsdecode(b"bad\xff\xfe" * 60 + b".jpg"),
                                  "dots.in.name.tar.gz", "~tilde~.jpg", "x" * 254 + "~"])
def test_temp_names_are_unique_carry_the_pid_and_fit_name_max(name):
    a, b = temp_name(name), temp_name(name)
    assert a != b and len(os.fsencode(a)) <= 255 and a.startswith(".") and a.endswith(".part")
    parsed = parse_temp_name(a)
    assert parsed is not None and parsed[2] == os.getpid()
    assert parsed[0] == name if not parsed[1] else name.startswith(parsed[0]) or os.fsencode(name).startswith(
        os.fsencode(parsed[0]))


@pytest.mark.parametrize("n", [1, 200, 240, 250, 255])
def test_a_legal_long_file_name_is_written_atomically(tmp_path, n):
    path = tmp_path / ("n" * (n - 5) + ".json" if n > 5 else "n.json")
    atomic_write_text(path, "{}")
    assert path.read_text() == "{}" and [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_live_writers_temporaries_are_kept_and_a_dead_ones_removed(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    live = tmp_path / f".x_1.jpg.{os.getppid()}-0123abcd.part"  # our parent runs
    mine = tmp_path / temp_name("x_2.jpg")
    gone = tmp_path / f".x.json.{dead_pid}-89abcdef.part"
    old_style = tmp_path / ".x_1.jpg.k3j4h5g6.part"
    other_stem = tmp_path / f".y_1.jpg.{dead_pid}-89abcdef.part"
    for p in (live, mine, gone, old_style, other_stem):
        p.write_bytes(b"partial")
    removed = remove_parts(tmp_path, "x")
    assert removed == sorted([gone.name, old_style.name])
    assert live.exists() and mine.exists() and other_stem.exists()


def test_a_shortened_temporary_of_a_dead_writer_is_removed_for_its_stem(tmp_path):
    stem = "s" * 240
    # The name is made by the writer itself, a process that has ended by the time we look (its pid may have
    # more digits than ours, so a name made here and edited would not be the name that writer made).
    code = f"from multicrop.io.save import temp_name; print(temp_name({stem + '_1.jpg'!r}))"
    name = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert len(name.encode()) <= 255
    (tmp_path / name).write_bytes(b"x")
    assert parse_temp_name(name)[1] is True
    assert remove_parts(tmp_path, stem) == [name]


@pytest.mark.parametrize("args", [["crop", "IMG", "-o", "OUT/" + "c" * 300], ["batch", "crop", "SRC", "-o", "OUT/" + "d" * 300]])
def test_a_300_character_output_component_is_one_line(tmp_path, hb, capsys, args):
    from multicrop.cli.main import main

    photo = hb.good_photo(tmp_path / "src" / "p.jpg")
    argv = [a.replace("IMG", str(photo)).replace("SRC", str(photo.parent)).replace("OUT", str(tmp_path))
            for a in args] + ["--no-progress"] * (args[0] == "batch")
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "File name too long" in err[0] and "characters" in err[0]


@pytest.mark.parametrize("raw", [b"bad\xff.jpg", b"\xc3(.jpg", b"\xed\xa0\x80.jpg"])
def test_a_file_name_with_undecodable_bytes_is_cropped_or_one_line(tmp_path, hb, raw):
    photo = hb.good_photo(tmp_path / "good.jpg")
    odd = os.path.join(os.fsencode(tmp_path), raw)
    os.rename(os.fsencode(photo), odd)
    proc = subprocess.run([sys.executable, "-m", "multicrop.cli.main", "crop", os.fsdecode(odd), "-o",
                           str(tmp_path / "out"), "--saliency", "spectral", "--no-faces", "-k", "2"],
                          capture_output=True)
    err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    assert b"Traceback" not in proc.stderr
    assert proc.returncode == 0 or len(err) == 1


def test_numpy_float_nan_tiff_via_cli_prints_no_runtime_warning(tmp_path):
    import numpy as np
    from PIL import Image

    arr = np.full((200, 300), np.nan, np.float32)
    arr[40:140, 50:150] = 0.8
    Image.fromarray(arr, "F").save(tmp_path / "nan.tif")
    proc = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", "multicrop.cli.main", "crop",
                           str(tmp_path / "nan.tif"), "-o", str(tmp_path / "out"), "--saliency", "spectral",
                           "--no-faces", "-k", "2"], capture_output=True, text=True)
    assert "RuntimeWarning" not in proc.stderr and proc.returncode == 0, proc.stderr


# --- results.jsonl ---------------------------------------------------------------------------------

def _prediction(name: str):
    from multicrop.evaluation.carousel.records import Prediction

    return Prediction(name=name, method="m", method_version="1", k=2, ratios="1:1", boxes=(), failure=None,
                      seconds=0.0)


@pytest.mark.parametrize("tail", [b'{"name": "torn', b"{", b'{"name": "x", "boxes": [[1, 2', b"\xe2\x82",
                                  b"not json at all", b" " * 10])
def test_a_torn_last_line_is_cut_and_the_next_record_starts_a_new_line(tmp_path, tail):
    from multicrop.evaluation.carousel.records import append_result, read_results

    path = tmp_path / "results.jsonl"
    path.write_bytes((_prediction("a").to_line() + "\n").encode() + tail)
    append_result(path, _prediction("b"))
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 3
    assert [p.name for p in read_results(path)] == ["a", "b"]


def test_a_torn_only_line_and_an_empty_file_heal(tmp_path):
    from multicrop.evaluation.carousel.records import append_result, heal_torn_tail, read_results

    path = tmp_path / "results.jsonl"
    path.write_bytes(b'{"na')
    assert heal_torn_tail(path) == 4 and path.read_bytes() == b""
    append_result(path, _prediction("c"))
    assert [p.name for p in read_results(path)] == ["c"] and heal_torn_tail(path) == 0
    assert heal_torn_tail(tmp_path / "missing.jsonl") == 0


# --- the judge store -------------------------------------------------------------------------------

def _store(tmp_path, n=3):
    from multicrop.judges.store import CallRecord, CallStore

    path = tmp_path / "runs.sqlite"
    with CallStore(path) as store:
        store.record([CallRecord.new(
            key_fields={"backend": "x", "model": "m", "repetition": i}, family="m", backend="x",
            model_requested="m", model_returned="m", image="a.jpg", image_sha256="sha256:00",
            prompt_kind="holistic", dimension="overall", template="holistic@1", rubric_sha256="sha256:11",
            temperature=0.3, repetition=i, prompt_tokens=10, completion_tokens=2, cost_usd=0.0, latency_s=0.01,
            attempts=1, raw_reply='{"score": 7}', score=7.0, reason="fine", parse_error=None) for i in range(n)])
    return path


@pytest.mark.parametrize("edit", ["UPDATE calls SET score = 10 WHERE rowid = 1",
                                  "UPDATE calls SET reason = 'edited' WHERE rowid = 2",
                                  "UPDATE calls SET prompt_tokens = 999 WHERE rowid = 1",
                                  "UPDATE calls SET raw_reply = '{\"score\": 1}' WHERE rowid = 3"])
def test_a_stored_record_edited_by_hand_is_never_reused_silently(tmp_path, edit):
    from multicrop.errors import StoreError
    from multicrop.judges.store import CallStore

    path = _store(tmp_path)
    with CallStore(path) as store:
        assert set(store.scores().values()) == {7.0}
    db = sqlite3.connect(path)
    db.execute(edit)
    db.commit()
    db.close()
    with CallStore(path) as store:
        with pytest.raises(StoreError, match="do not match their content hash"):
            store.scores()
        keys = sorted(store.completed_keys())
        with pytest.raises(StoreError, match="1 stored call"):
            store.scores(keys)  # the reused calls only: the edited one among them
        edited = {k for k in keys if k not in _clean(store, keys)}
        assert len(edited) == 1 and len(store.scores(set(keys) - edited)) == 2


def _clean(store, keys):
    from multicrop.errors import StoreError

    ok = set()
    for k in keys:
        try:
            store.scores([k])
            ok.add(k)
        except StoreError:
            pass
    return ok


def test_store_stats_on_a_store_the_user_may_only_read_opens_it_read_only(tmp_path, monkeypatch):
    from multicrop.judges.store import CallStore

    path = _store(tmp_path)
    before = path.read_bytes()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if mode & os.W_OK else real_access(p, mode))
    opened = []
    real_connect = sqlite3.connect

    def spy(database, *a, **kw):
        opened.append(str(database))
        return real_connect(database, *a, **kw)

    monkeypatch.setattr(sqlite3, "connect", spy)
    with CallStore(path, readonly=True) as store:
        assert store.stats().n_calls == 3
    assert opened and all("mode=ro" in u for u in opened)
    assert path.read_bytes() == before


def test_a_read_only_store_whose_folder_cannot_hold_sidecars_opens_immutable(tmp_path, monkeypatch):
    from multicrop.judges.store import CallStore

    path = _store(tmp_path)
    real_access, real_connect = os.access, sqlite3.connect
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if mode & os.W_OK else real_access(p, mode))
    opened = []

    def no_shm(database, *a, **kw):  # what SQLite says when it cannot create the -shm of a WAL store
        opened.append(str(database))
        if "immutable=1" not in str(database):
            raise sqlite3.OperationalError("unable to open database file")
        return real_connect(database, *a, **kw)

    monkeypatch.setattr(sqlite3, "connect", no_shm)
    with CallStore(path, readonly=True) as store:
        assert store.stats().n_calls == 3 and len(store.scores()) == 3
    assert opened[-1].endswith("mode=ro&immutable=1")


def test_batch_crop_summary_names_the_failed_files_and_how_to_list_them(tmp_path, hb):
    from multicrop.cli.main import main

    src = tmp_path / "src"
    hb.good_photo(src / "ok.jpg")
    for i in range(7):
        hb.write(src / f"bad{i}.jpg", b"\xff\xd8\xff broken")
    from typer.testing import CliRunner

    from multicrop.cli.main import app

    res = CliRunner().invoke(app, ["batch", "crop", str(src), "-o", str(tmp_path / "out"), "--saliency",
                                   "spectral", "--no-faces", "-k", "2", "-j", "1", "--no-progress"])
    assert res.exit_code == 1
    lines = res.output.strip().splitlines()
    assert "7 failed" in lines[0] and "first 5 of 7" in lines[1]
    assert sum(f"bad{i}.jpg" in res.output for i in range(7)) == 5
    assert lines[-1] == f"list all failed photos with: multicrop batch failed {tmp_path / 'out' / 'manifest.parquet'}"
    listed = CliRunner().invoke(app, ["batch", "failed", str(tmp_path / "out" / "manifest.parquet"), "--json"])
    rows = [json.loads(line) for line in listed.output.strip().splitlines()]
    assert len(rows) == 7 and all(r["error_kind"] == "ImageLoadError" for r in rows)
    assert main(["batch", "failed", str(tmp_path / "nope")]) == 1


def test_the_suite_runs_hypothesis_without_deadlines():
    from hypothesis import settings

    assert settings.default.deadline is None  # a deadline is a timed assertion: off for the whole suite
