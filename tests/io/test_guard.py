"""multicrop.io.guard: which names a photo may write, what a rerun removes."""

import json
import os
from pathlib import Path

from multicrop.hashing import hash_bytes

from multicrop.io.guard import file_id, plan_names, previous_files, remove_stale
from multicrop.io.parts import remove_parts


def _names(stem):
    return [f"{stem}_1.jpg", f"{stem}.json"]


def _record(out, stem, source, files):
    hashes = {f: hash_bytes((out / f).read_bytes()) for f in files
              if Path(f).name == f and (out / f).is_file()}
    rec = {"stem": stem, "source": str(source), "crops": [{"path": f, "resized": {}} for f in files],
           "preview": None, "written": hashes}
    (out / f"{stem}.json").write_text(json.dumps(rec))


def test_free_names_keep_the_stem(tmp_path):
    plan = plan_names(tmp_path, "a", _names, source=None)
    assert (plan.stem, plan.previous, plan.blocked) == ("a", frozenset(), None)


def test_previous_set_of_the_same_source_is_replaceable(tmp_path):
    src = tmp_path / "a.jpg"
    src.write_bytes(b"x")
    (tmp_path / "a_1.jpg").write_bytes(b"old crop")
    _record(tmp_path, "a", src, ["a_1.jpg", "a_2.jpg"])
    plan = plan_names(tmp_path, "a", _names, source=src)
    assert plan.stem == "a" and plan.previous == {"a.json", "a_1.jpg", "a_2.jpg"}


def test_a_record_is_a_claim_not_a_proof(tmp_path):
    """Only names of our naming rule whose bytes match the record's hash are this photo's."""
    src = tmp_path / "a.jpg"
    src.write_bytes(b"x")
    for name in ("a_1.jpg", "a_2.jpg", "keep.jpg"):
        (tmp_path / name).write_bytes(b"ours " + name.encode())
    _record(tmp_path, "a", src, ["a_1.jpg", "a_2.jpg", "keep.jpg"])
    (tmp_path / "a_2.jpg").write_bytes(b"edited by the user since")
    assert previous_files(tmp_path, "a", src) == {"a.json", "a_1.jpg"}
    rec = json.loads((tmp_path / "a.json").read_text())
    del rec["written"]  # a record from before the hashes, or forged: it claims nothing but itself
    (tmp_path / "a.json").write_text(json.dumps(rec))
    assert previous_files(tmp_path, "a", src) == {"a.json"}
    assert remove_stale(tmp_path, previous_files(tmp_path, "a", src) - {"a.json"}, []) == []
    assert sorted(os.listdir(tmp_path)) == ["a.jpg", "a.json", "a_1.jpg", "a_2.jpg", "keep.jpg"]


def test_a_record_of_another_source_is_foreign(tmp_path):
    other = tmp_path / "other.jpg"
    other.write_bytes(b"y")
    mine = tmp_path / "a.jpg"
    mine.write_bytes(b"x")
    _record(tmp_path, "a", other, ["a_1.jpg"])
    plan = plan_names(tmp_path, "a", _names, source=mine)
    assert plan.stem == "a-2" and "a.json exists" in plan.blocked


def test_record_cannot_point_outside_the_folder(tmp_path):
    src = tmp_path / "a.jpg"
    src.write_bytes(b"x")
    _record(tmp_path, "a", src, ["../etc/passwd", "/abs.jpg", ".hidden", "a_1.jpg"])
    assert previous_files(tmp_path, "a", src) == {"a.json", "a_1.jpg"}


def test_inputs_and_taken_stems_are_skipped(tmp_path):
    src = tmp_path / "a.jpg"
    src.write_bytes(b"x")
    os.link(src, tmp_path / "a_1.jpg")
    _record(tmp_path, "a", src, ["a_1.jpg"])  # even when the record lists it
    plan = plan_names(tmp_path, "a", _names, source=src, protected=frozenset({file_id(src)}), taken={"A-2"})
    assert plan.stem == "a-3" and plan.blocked == "a_1.jpg is an input of this run"


def test_remove_stale_spares_inputs_links_and_unlisted(tmp_path):
    src = tmp_path / "in.jpg"
    src.write_bytes(b"x")
    os.link(src, tmp_path / "p_3.jpg")
    os.symlink(src, tmp_path / "p_4.jpg")
    (tmp_path / "p_2.jpg").write_bytes(b"old")
    (tmp_path / "p_5.jpg").write_bytes(b"unlisted")
    removed = remove_stale(tmp_path, ["p_2.jpg", "p_3.jpg", "p_4.jpg", "p_1.jpg", "gone.jpg"], ["p_1.jpg"],
                           frozenset({file_id(src)}))
    assert removed == ["p_2.jpg"]
    assert sorted(os.listdir(tmp_path)) == ["in.jpg", "p_3.jpg", "p_4.jpg", "p_5.jpg"]


def test_remove_parts_only_this_stems_temporaries(tmp_path):
    for name in (".p_1.jpg.abcdefgh.part", ".p.json.a1b2c3d4.part", ".p_10_w200.webp.zzzzzzzz.part",
                 ".p_preview.jpg.qwertyui.part", ".pp_1.jpg.abcdefgh.part", ".p_1.jpg.short.part",
                 ".p_x.jpg.abcdefgh.part"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / ".p_1.jpg.dir12345.part").mkdir()
    assert remove_parts(tmp_path, "p") == [".p.json.a1b2c3d4.part", ".p_1.jpg.abcdefgh.part",
                                           ".p_10_w200.webp.zzzzzzzz.part", ".p_preview.jpg.qwertyui.part"]
    assert sorted(os.listdir(tmp_path)) == [".p_1.jpg.dir12345.part", ".p_1.jpg.short.part",
                                            ".p_x.jpg.abcdefgh.part", ".pp_1.jpg.abcdefgh.part"]


def test_a_record_too_deep_or_too_large_is_foreign_not_a_crash(tmp_path):
    """A ``<stem>.json`` nested past Python's recursion limit, or over the record limit, claims nothing: the
    photo's files take the next free stem (before, the deep one raised RecursionError out of the crop)."""
    src = tmp_path / "a.jpg"
    src.write_bytes(b"x")
    (tmp_path / "a.json").write_text("[" * 200_000 + "]" * 200_000)
    assert previous_files(tmp_path, "a", src) is None
    plan = plan_names(tmp_path, "a", _names, source=src)
    assert plan.stem == "a-2" and "a.json exists" in plan.blocked
    rec = {"stem": "a", "source": str(src), "crops": [], "preview": None, "written": {}, "pad": "x" * (2 << 20)}
    (tmp_path / "a.json").write_text(json.dumps(rec))
    assert previous_files(tmp_path, "a", src) is None
