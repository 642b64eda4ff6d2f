"""``multicrop crop`` never writes over an original; a rerun replaces exactly the previous set; .part cleanup."""

import json
import os

import pytest
from PIL import Image

from multicrop.cli.main import main
from multicrop.datasets.examples import example_image

# partition: exactly k crops every time (direct writes fewer when it finds fewer distinct subjects)
FAST = ["--saliency", "spectral", "--no-faces", "--no-preview", "-s", "partition"]


@pytest.fixture(scope="module")
def pixels():
    return example_image(width=900, height=350)


def _save(path, pixels, mirror=False):
    Image.fromarray(pixels[:, ::-1].copy() if mirror else pixels).save(path, quality=90)
    return path


def _bytes(path):
    return path.read_bytes()


def test_img_and_img_1_in_one_folder_keep_the_users_img_1(tmp_path, pixels, capsys):
    a = _save(tmp_path / "IMG.jpg", pixels)
    b = _save(tmp_path / "IMG_1.jpg", pixels, mirror=True)
    before = _bytes(b)
    assert main(["crop", str(a), str(b), "-o", str(tmp_path), "-k", "2", *FAST]) == 0
    assert _bytes(b) == before  # the user's own IMG_1.jpg is untouched
    err = capsys.readouterr().err
    assert "IMG_1.jpg is an input of this run" in err and "IMG-2_*" in err
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["IMG-2.json", "IMG-2_1.jpg", "IMG-2_2.jpg", "IMG.jpg", "IMG_1.jpg", "IMG_1.json",
                     "IMG_1_1.jpg", "IMG_1_2.jpg"]
    rec = json.loads((tmp_path / "IMG-2.json").read_text())
    assert rec["stem"] == "IMG-2" and rec["source"] == str(a)
    # a rerun lands on the same names and still leaves IMG_1.jpg alone
    assert main(["crop", str(a), str(b), "-o", str(tmp_path), "-k", "2", *FAST]) == 0
    assert _bytes(b) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == names


def test_a_foreign_file_is_never_replaced(tmp_path, pixels, capsys):
    (tmp_path / "in").mkdir()
    src = _save(tmp_path / "in" / "p.jpg", pixels)
    out = tmp_path / "out"
    out.mkdir()
    (out / "p_1.jpg").write_bytes(b"my holiday photo")
    assert main(["crop", str(src), "-o", str(out), *FAST]) == 0
    assert (out / "p_1.jpg").read_bytes() == b"my holiday photo"
    assert "p_1.jpg exists and was not written by multicrop for this photo" in capsys.readouterr().err
    assert (out / "p-2_1.jpg").exists()


@pytest.mark.parametrize("link", ["hard", "symbolic"])
def test_a_link_to_an_input_is_never_written_through(tmp_path, pixels, link, capsys):
    src = _save(tmp_path / "p.jpg", pixels)
    out = tmp_path / "out"
    out.mkdir()
    (os.link if link == "hard" else os.symlink)(src, out / "p_1.jpg")
    before = _bytes(src)
    assert main(["crop", str(src), "-o", str(out), *FAST]) == 0
    assert _bytes(src) == before
    assert (out / "p_1.jpg").samefile(src)  # the link is still there, still the input
    why = "is an input of this run" if link == "hard" else "is a symbolic link"
    assert f"p_1.jpg {why}" in capsys.readouterr().err


def test_out_equal_to_the_input_folder(tmp_path, pixels):
    for name in ("a.jpg", "b.jpg"):
        _save(tmp_path / name, pixels)
    inputs = {p.name: _bytes(p) for p in tmp_path.iterdir()}
    assert main(["crop", str(tmp_path), "-o", str(tmp_path), *FAST]) == 0
    assert {n: _bytes(tmp_path / n) for n in inputs} == inputs
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.jpg", "a.json", "a_1.jpg", "a_2.jpg", "b.jpg", "b.json", "b_1.jpg", "b_2.jpg"]
    # a second run over the folder skips nothing and crops no crop: it names only photos it was given
    assert main(["crop", str(tmp_path / "a.jpg"), str(tmp_path / "b.jpg"), "-o", str(tmp_path), *FAST]) == 0
    assert {n: _bytes(tmp_path / n) for n in inputs} == inputs


def test_rerun_with_smaller_k_replaces_exactly_the_previous_set(tmp_path, pixels):
    src = _save(tmp_path / "p.jpg", pixels)
    out = tmp_path / "o"
    assert main(["crop", str(src), "-o", str(out), "-k", "4", "--width", "100", "--saliency", "spectral",
                 "--no-faces", "-s", "partition"]) == 0
    (out / "p_notes.txt").write_text("mine")
    (out / "p_9.jpg").write_bytes(b"not listed in p.json")
    assert main(["crop", str(src), "-o", str(out), "-k", "2", *FAST]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["p.json", "p_1.jpg", "p_2.jpg", "p_9.jpg", "p_notes.txt"]
    rec = json.loads((out / "p.json").read_text())
    assert [c["path"] for c in rec["crops"]] == ["p_1.jpg", "p_2.jpg"]
    assert rec["removed"] == ["p_1_w100.jpg", "p_2_w100.jpg", "p_3.jpg", "p_3_w100.jpg", "p_4.jpg",
                              "p_4_w100.jpg", "p_preview.jpg"]


def test_rerun_with_another_format_removes_the_old_format(tmp_path, pixels):
    src = _save(tmp_path / "p.jpg", pixels)
    out = tmp_path / "o"
    assert main(["crop", str(src), "-o", str(out), *FAST]) == 0
    assert main(["crop", str(src), "-o", str(out), "-f", "png", *FAST]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["p.json", "p_1.png", "p_2.png"]


def test_record_of_another_photo_is_not_ours_to_replace(tmp_path, pixels, capsys):
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    a = _save(tmp_path / "d1" / "x.jpg", pixels)
    b = _save(tmp_path / "d2" / "x.jpg", pixels, mirror=True)
    out = tmp_path / "o"
    assert main(["crop", str(a), "-o", str(out), *FAST]) == 0
    first = {p.name: _bytes(p) for p in out.iterdir()}
    assert main(["crop", str(b), "-o", str(out), *FAST]) == 0  # another run, another photo, same stem
    assert {n: _bytes(out / n) for n in first} == first
    assert json.loads((out / "x-2.json").read_text())["source"] == str(b)


def test_part_files_of_a_killed_run_are_removed_by_a_rerun(tmp_path, pixels):
    src = _save(tmp_path / "p.jpg", pixels)
    out = tmp_path / "o"
    out.mkdir()
    leftovers = [".p_1.jpg.abcd1234.part", ".p.json.k2j_x9zq.part", ".p_3_w400.jpg.zzzzzzzz.part",
                 ".p_preview.jpg.a1b2c3d4.part"]
    for name in leftovers:
        (out / name).write_bytes(b"half a crop")
    (out / ".other_1.jpg.abcd1234.part").write_bytes(b"another photo's")
    (out / ".p_1.jpg.keep").write_bytes(b"not a temporary")
    assert main(["crop", str(src), "-o", str(out), *FAST]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        ".other_1.jpg.abcd1234.part", ".p_1.jpg.keep", "p.json", "p_1.jpg", "p_2.jpg"]


def test_dry_run_writes_nothing_and_prints_boxes(tmp_path, pixels, capsys):
    src = _save(tmp_path / "p.jpg", pixels)
    out = tmp_path / "never"
    assert main(["crop", str(src), "-o", str(out), "--dry-run", "-k", "3", *FAST]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["dry_run"] is True and len(rec["crops"]) == 3
    assert all({"x", "y", "w", "h"} <= set(c["box"]) and isinstance(c["score"], float) for c in rec["crops"])
    assert not out.exists()
