"""Hostile cases where data could be lost: we delete only what we wrote; the label page checks, then writes."""

from __future__ import annotations

import json
import os

from multicrop.cli.main import main

FAST = ["--saliency", "spectral", "--no-faces", "--no-preview", "-k", "2", "-s", "partition"]


def _crop(*args):
    return main(["crop", *FAST, *map(str, args)])


def test_a_forged_record_never_deletes_a_kept_file(tmp_path, hb):
    src = hb.good_photo(tmp_path / "in" / "good.png")
    out = tmp_path / "out"
    assert _crop(src, "-o", out) == 0
    assert sorted(os.listdir(out)) == ["good.json", "good_1.png", "good_2.png"]
    keep = out / "good_3.png"
    keep.write_bytes(b"the user's own file")
    rec = json.loads((out / "good.json").read_text())
    rec["crops"].append({"path": "good_3.png", "resized": {}})  # a hand-edited record claims the user's file
    rec["preview"] = "notes.txt"
    (out / "notes.txt").write_text("mine")
    (out / "good.json").write_text(json.dumps(rec))
    assert _crop(src, "-o", out) == 0
    assert keep.read_bytes() == b"the user's own file"
    assert (out / "notes.txt").read_text() == "mine"
    assert {"good_1.png", "good_2.png", "good.json"} <= set(os.listdir(out))


def test_an_edited_crop_is_not_replaced(tmp_path, hb):
    src = hb.good_photo(tmp_path / "in" / "good.png")
    out = tmp_path / "out"
    assert _crop(src, "-o", out) == 0
    (out / "good_1.png").write_bytes(b"retouched by hand")
    assert _crop(src, "-o", out) == 0
    assert (out / "good_1.png").read_bytes() == b"retouched by hand"
    assert (out / "good-2_1.png").is_file()  # the new set moved aside


def test_output_folder_equal_to_the_input_folder_is_not_re_ingested(tmp_path, hb):
    folder = tmp_path / "photos"
    hb.good_photo(folder / "good.png")
    assert _crop(folder, "-o", folder) == 0
    first = sorted(os.listdir(folder))
    assert first == ["good.json", "good.png", "good_1.png", "good_2.png"]
    assert _crop(folder, "-o", folder) == 0
    assert sorted(os.listdir(folder)) == first  # no good_1_1.png
    assert _crop(str(folder / "*.png"), "-o", folder) == 0
    assert sorted(os.listdir(folder)) == first
