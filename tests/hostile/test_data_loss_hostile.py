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


# -- the label page: check whole, then write; a label only over a label --------------------------------------
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from multicrop.errors import DatasetError, InvalidParameterError  # noqa: E402
from multicrop.web.labels import LabelFolder  # noqa: E402

BOX = {"x": 10, "y": 20, "w": 60, "h": 90, "ratio": "2:3"}


def _folder(tmp_path, *names):
    for n in names:
        Image.new("RGB", (300, 200), (90, 120, 150)).save(tmp_path / n)
    return LabelFolder(tmp_path)


def test_a_nan_box_is_refused_before_any_write(tmp_path):
    lf = _folder(tmp_path, "y.jpg")
    lf.save("y", [BOX], {"title": "first"})
    before = {p.name: p.read_bytes() for p in tmp_path.glob("*.json")}
    for bad in ({**BOX, "x": float("nan")}, {**BOX, "w": float("inf")}):
        with pytest.raises(InvalidParameterError, match=r"boxes\[1\]: x, y, w and h must be finite"):
            lf.save("y", [bad], {"title": "second"})
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.json")} == before
    assert lf.load("y")["metadata"]["title"] == "first"


def test_a_box_whose_size_is_not_its_ratio_is_refused_not_reshaped(tmp_path):
    lf = _folder(tmp_path, "y.jpg")
    with pytest.raises(InvalidParameterError, match=r"boxes\[1\]: a 150x50 box is not 2:3"):
        lf.save("y", [{"x": 0, "y": 0, "w": 150, "h": 50, "ratio": "2:3"}], {})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["y.jpg"]
    saved = lf.save("y", [{"x": 0, "y": 0, "w": 60.4, "h": 90, "ratio": "2:3"}], {})  # rounding is fine
    assert saved["boxes"][0]["w"] == 60.4


def test_a_metadata_suffix_and_a_shared_stem_are_not_offered(tmp_path):
    lf = _folder(tmp_path, "y.jpg", "y_metadata.jpg", "x.jpg", "x.png")
    assert lf.names == ["y"]
    assert set(lf.skipped) == {"y_metadata.jpg", "x.jpg", "x.png"}
    assert "suffix is reserved" in lf.skipped["y_metadata.jpg"] and "share one label x.json" in lf.skipped["x.png"]
    lf.save("y", [BOX], {"title": "kept"})
    assert json.loads((tmp_path / "y_metadata.json").read_text())["title"] == "kept"


def test_a_label_is_written_only_over_a_label(tmp_path):
    lf = _folder(tmp_path, "c.jpg")
    record = json.dumps({"stem": "c", "crops": [], "source": "c.jpg"})
    (tmp_path / "c.json").write_text(record)  # a crop record lying in the label folder
    with pytest.raises(DatasetError, match=r"c\.json: exists and is not a label of c\.jpg"):
        lf.save("c", [BOX], {})
    assert (tmp_path / "c.json").read_text() == record
    assert not (tmp_path / "c_metadata.json").exists()  # nothing written: the check comes first
    (tmp_path / "c.json").unlink()
    (tmp_path / "c_metadata.json").write_text('{"shapes": []}')
    with pytest.raises(DatasetError, match=r"c_metadata\.json: exists and is not a metadata file"):
        lf.save("c", [BOX], {})
    assert not (tmp_path / "c.json").exists()


def test_download_refuses_a_box_not_of_its_ratio():
    import types

    from multicrop.web.download import edited_crops

    result = types.SimpleNamespace(size=(900, 400), crops=())
    with pytest.raises(InvalidParameterError, match=r"boxes\[1\]: a 300x100 box is not 2:3"):
        edited_crops(result, [{"x": 0, "y": 0, "w": 300, "h": 100, "ratio": "2:3"}])
    (crop,) = edited_crops(result, [{"x": 0, "y": 0, "w": 200, "h": 300, "ratio": "2:3"}])
    assert (crop.box.w, crop.box.h) == (200, 300)
