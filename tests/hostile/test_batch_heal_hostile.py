"""Batch result files that heal: damaged manifest parts, stale or foreign locks, killed drivers, outputs that vanish.

Every damaged part is quarantined (moved aside with one line, never deleted)
and its photos are redone; a lock whose holder is gone (or is an unrelated
process) never blocks a run; a killed driver leaves no worker behind; the
destination is never read as input; ``--verify-outputs`` notices deleted
crops.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from multicrop.batch import run_crop_batch
from multicrop.batch.lock import LOCK_NAME, process_start, run_lock
from multicrop.batch.manifest import latest_rows, read_manifest
from multicrop.crop.config import CropConfig, OutputConfig
from multicrop.errors import InvalidParameterError

FAST = CropConfig(saliency="spectral", faces=False, k=2)
QUIET = OutputConfig(preview=False)


@pytest.fixture(scope="module")
def done_once(tmp_path_factory, batch_builder):
    """A source of three photos and a finished batch over it (copied per test)."""
    return batch_builder.finished(tmp_path_factory.mktemp("heal"), crop=FAST, output=QUIET)


def _copy(done_once, tmp_path):
    import shutil

    src, out = done_once
    new_out = tmp_path / "out"
    shutil.copytree(out, new_out)
    return src, new_out


def _part(out: Path) -> Path:
    (part,) = sorted((out / "manifest.parquet").glob("part-*.parquet"))
    return part


def _foreign_parquet(target: Path, **columns):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns or {"x": [1, 2]}), target)


_DAMAGE = {
    "truncated_half": lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
    "truncated_tail": lambda p: p.write_bytes(p.read_bytes()[:-9]),
    "emptied": lambda p: p.write_bytes(b""),
    "random_bytes": lambda p: p.write_bytes(os.urandom(4096)),
    "text": lambda p: p.write_text("path,status\n/x.jpg,done\n"),
    "foreign_schema": lambda p: _foreign_parquet(p),
    "wrong_types": lambda p: _foreign_parquet(p, path=[1], status=[2], settings_hash=[3], run_id=[4], seq=[5]),
    "header_only": lambda p: p.write_bytes(b"PAR1"),
    "a_directory": lambda p: (p.unlink(), p.mkdir()),
}


@pytest.mark.parametrize("damage", sorted(_DAMAGE))
def test_a_damaged_manifest_part_is_quarantined_and_its_photos_redone(done_once, tmp_path, damage):
    src, out = _copy(done_once, tmp_path)
    part = _part(out)
    _DAMAGE[damage](part)
    notes = []
    s = run_crop_batch(src, out, crop=FAST, output=QUIET, workers=1, on_note=notes.append)
    assert (s.done, s.skipped, s.failed) == (3, 0, 0)
    assert len(s.quarantined) == 1 and part.name in s.quarantined[0] and notes == s.quarantined
    assert "\n" not in notes[0] and "redone" in notes[0]
    kept = list((out / "manifest.parquet.quarantine").iterdir())
    assert len(kept) == 1 and kept[0].name.startswith(part.name)  # moved aside, not deleted
    # the next run is clean: nothing more to quarantine, everything skipped
    s2 = run_crop_batch(src, out, crop=FAST, output=QUIET, workers=1)
    assert (s2.done, s2.skipped, s2.quarantined) == (0, 3, [])


def test_batch_failed_lists_failures_and_notes_a_damaged_part(done_once, tmp_path):
    from typer.testing import CliRunner

    from multicrop.cli.main import app

    src, out = _copy(done_once, tmp_path)
    (src_bad := tmp_path / "bad").mkdir()
    res = CliRunner().invoke(app, ["batch", "failed", str(out / "manifest.parquet")])
    assert res.exit_code == 0 and res.output == ""
    _DAMAGE["emptied"](_part(out))
    res = CliRunner().invoke(app, ["batch", "failed", str(out / "manifest.parquet")])
    assert res.exit_code == 0 and "is unreadable" in res.output
    assert src_bad.exists()


@pytest.mark.parametrize("what", ["file", "empty_file", "symlink_to_file"])
def test_a_plain_file_named_manifest_parquet_is_one_line(done_once, tmp_path, what):
    src, _ = done_once
    out = tmp_path / "out"
    out.mkdir()
    target = out / "manifest.parquet"
    if what == "symlink_to_file":
        (tmp_path / "f").write_text("x")
        target.symlink_to(tmp_path / "f")
    else:
        target.write_text("" if what == "empty_file" else "not a folder")
    with pytest.raises(InvalidParameterError, match="is a file, not a manifest folder"):
        run_crop_batch(src, out, crop=FAST, output=QUIET, workers=1)


def _holder_lock(folder: Path, content: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lock = folder / LOCK_NAME
    lock.write_text(content)
    return lock


# Contents are built inside the test: a pid in a parameter's id would differ between xdist workers.
_STALE_LOCKS = {
    "init-pid": lambda: "1",
    "parent-pid": lambda: str(os.getppid()),
    "no-host": lambda: json.dumps({"pid": 1, "host": None}),
    "garbage": lambda: "garbage",
    "empty": lambda: "",
    "own-pid-other-start": lambda: json.dumps({"pid": os.getpid(), "start": "1"}),
    "no-such-pid": lambda: json.dumps({"pid": 999_999_999}),
    "negative": lambda: "-5",
}


@pytest.mark.parametrize("stale", sorted(_STALE_LOCKS))
def test_a_lock_file_without_a_living_holder_never_blocks_a_run(tmp_path, stale):
    content = _STALE_LOCKS[stale]()
    folder = tmp_path / "manifest.parquet"
    _holder_lock(folder, content)
    with run_lock(folder):
        holder = json.loads((folder / LOCK_NAME).read_text())
        assert holder["pid"] == os.getpid() and holder["start"] == process_start(os.getpid())
    assert not (folder / LOCK_NAME).exists()


def test_a_lock_held_by_a_live_driver_names_it_and_says_how_to_recover(tmp_path):
    folder = tmp_path / "manifest.parquet"
    code = textwrap.dedent(f"""
        import sys, time
        from multicrop.batch.lock import run_lock
        with run_lock({str(folder)!r}):
            print("locked", flush=True)
            time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(InvalidParameterError) as err:
            with run_lock(folder):
                pass
        line = str(err.value)
        assert f"pid {proc.pid}" in line and "wait for it" in line and str(folder / LOCK_NAME) in line
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    with run_lock(folder):  # the holder was killed: the kernel released its lock
        pass


def test_destination_equal_to_the_source_is_refused(done_once, tmp_path):
    import shutil

    src = tmp_path / "src"
    shutil.copytree(done_once[0], src)
    with pytest.raises(InvalidParameterError, match="is the source folder itself"):
        run_crop_batch(src, src, crop=FAST, output=QUIET, workers=1)


def test_a_destination_inside_the_source_is_never_read_as_photos(done_once, tmp_path):
    import shutil

    src = tmp_path / "src"
    shutil.copytree(done_once[0], src)
    out = src / "crops"
    s1 = run_crop_batch(src, out, crop=FAST, output=QUIET, workers=1)
    assert (s1.total, s1.done, s1.excluded) == (3, 3, 0)
    notes = []
    s2 = run_crop_batch(src, out, crop=FAST, output=QUIET, workers=1, on_note=notes.append)
    assert (s2.total, s2.skipped, s2.done) == (3, 3, 0) and s2.excluded == 6  # two crops per photo
    assert notes and "not read" in notes[0]


def test_a_destination_inside_a_globs_folder_is_never_read_as_photos(done_once, tmp_path):
    import shutil

    src = tmp_path / "src"
    shutil.copytree(done_once[0], src)
    out = src / "crops"
    run_crop_batch(f"{src}/**/*.jpg", out, crop=FAST, output=QUIET, workers=1)
    s2 = run_crop_batch(f"{src}/**/*.jpg", out, crop=FAST, output=QUIET, workers=1)
    assert (s2.total, s2.skipped, s2.done, s2.excluded) == (3, 3, 0, 6)


def test_verify_outputs_redoes_photos_whose_crops_were_deleted(done_once, tmp_path):
    src, out = _copy(done_once, tmp_path)
    (out / "p1_2.jpg").unlink()
    (out / "p2.json").unlink()
    plain = run_crop_batch(src, out, crop=FAST, output=QUIET, workers=1)
    assert (plain.skipped, plain.done) == (3, 0)  # the quick check alone does not notice
    s = run_crop_batch(src, out, crop=FAST, output=QUIET, workers=1, verify_outputs=True)
    assert (s.skipped, s.done, s.redone_missing) == (1, 2, 2)
    assert (out / "p1_2.jpg").is_file()
    rows = latest_rows(read_manifest(out / "manifest.parquet"))
    for row in rows.values():  # each row says where its files are now (p2's crops, without their record,
        stem = out / row["stem"]  # are not multicrop's to replace: its new files move to another stem)
        assert all((stem.parent / n).is_file() for n in row["outputs"]) and stem.with_suffix(".json").is_file()
    again = run_crop_batch(src, out, crop=FAST, output=QUIET, workers=1, verify_outputs=True)
    assert (again.skipped, again.done, again.redone_missing) == (3, 0, 0)


_DRIVER = textwrap.dedent("""
    import sys, time
    from multicrop.batch.engines import Item, LocalEngine, dispatch

    def slow(i):
        time.sleep(600)

    if __name__ == "__main__":
        eng = LocalEngine(2)
        items = [Item(f"x{i}", (i,), lambda exc: {}) for i in range(4)]
        dispatch(eng, slow, items, on_result=lambda row: None)
""")


def _children(pid: int) -> set[int]:
    """Every descendant pid of ``pid`` (from /proc)."""
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(entry))
    out, todo = set(), [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads the process tree from /proc")
def test_after_kill_9_of_the_driver_no_pool_worker_or_resource_tracker_stays(tmp_path):
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        workers: set[int] = set()
        while time.monotonic() < deadline and len(workers) < 3:  # two workers and the resource tracker
            workers = _children(proc.pid)
            time.sleep(0.2)
        assert len(workers) >= 2, "the pool did not start"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.2)
    left = [p for p in workers if _alive(p)]
    for p in left:  # never leave them behind, even when the test fails
        os.kill(p, signal.SIGKILL)
    assert left == []


@pytest.mark.parametrize(("content", "pid"), [("1e999", None), ('{"pid": Infinity}', None),
                                              ('{"pid": 99999999999999999999}', None), ('{"pid": 4242}', 4242),
                                              ("[" * 5000, None)])
def test_a_lock_holder_past_any_pid_is_unknown_not_a_crash(tmp_path, content, pid):
    from multicrop.batch.lock import _read_holder

    lock = _holder_lock(tmp_path, content)
    assert _read_holder(lock).get("pid") == pid


def test_a_lock_holder_that_is_no_regular_file_is_unknown_and_never_blocks(tmp_path):
    import threading

    from multicrop.batch.lock import _read_holder

    fifo = tmp_path / LOCK_NAME
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(_read_holder(fifo)), daemon=True)
    reader.start()
    reader.join(60)  # a guard against a hung test, not a timing: the read returns at once or blocks for ever
    if reader.is_alive():
        with open(fifo, "w"):  # let the blocked reader go before failing
            pass
    assert got == [{}]
