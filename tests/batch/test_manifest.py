from __future__ import annotations

import pyarrow.parquet as pq

from multicrop.batch.manifest import ManifestWriter, compact_manifest, latest_rows, new_run_id, read_manifest


def _row(path, status="done"):
    return {"path": path, "status": status, "settings_hash": "sha256:x", "boxes": [], "scores": [1.0]}


def test_writer_flushes_parts_by_row_count_and_only_whole_files_exist(tmp_path):
    folder = tmp_path / "m"
    w = ManifestWriter(folder, "run1", flush_rows=2, flush_s=1e9)
    for p in "abc":
        w.add(_row(p))
    assert len(list(folder.glob("part-*.parquet"))) == 1  # a, b flushed; c buffered
    assert [r["path"] for r in read_manifest(folder)] == ["a", "b"]
    w.close(compact=False)
    assert [r["path"] for r in read_manifest(folder)] == ["a", "b", "c"]
    assert not [p for p in folder.iterdir() if not p.name.startswith("part-")]


def test_latest_row_of_a_path_wins_and_compaction_keeps_it(tmp_path):
    folder = tmp_path / "m"
    with ManifestWriter(folder, "20260101T000000-aa", flush_rows=1) as w:
        w.add(_row("a", "failed"))
        w.add(_row("b"))
    with ManifestWriter(folder, "20260102T000000-bb", flush_rows=1) as w:
        w.add(_row("a", "done"))
    parts = list(folder.glob("part-*.parquet"))
    assert len(parts) == 1  # compacted on close
    rows = read_manifest(folder)
    assert {r["path"]: r["status"] for r in rows} == {"a": "done", "b": "done"}
    assert latest_rows(rows)["a"]["run_id"] == "20260102T000000-bb"
    assert pq.read_table(parts[0]).num_rows == 2
    assert compact_manifest(folder, "x") == parts[0]  # one part: nothing to do


def test_a_new_run_sorts_after_every_earlier_run_even_within_one_clock_tick(tmp_path):
    # Two runs started in the same second used to tie on the time part and be
    # ordered by their random suffix, so a rerun's rows could lose to the older run's.
    first = new_run_id()
    ids = [first]
    for _ in range(50):
        ids.append(new_run_id(ids))
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    # A clock that stepped back (or an id from a machine ahead in time) is still passed.
    ahead = "29990101T000000-0123abcd"  # the older whole-second form
    nxt = new_run_id([ahead, None])
    assert nxt > ahead and nxt.startswith("29990101T000000.000001-")
    # And the order holds through the manifest: the later run's row wins.
    for run, value in ((ahead, "old"), (nxt, "new")):
        with ManifestWriter(tmp_path, run) as w:
            w.add({"path": "a.jpg", "status": value})
    assert latest_rows(read_manifest(tmp_path))["a.jpg"]["status"] == "new"


def test_a_run_id_without_a_time_part_is_ignored_not_fatal():
    nxt = new_run_id(["manual-run", "", None])
    assert nxt[:8].isdigit() and "T" in nxt
