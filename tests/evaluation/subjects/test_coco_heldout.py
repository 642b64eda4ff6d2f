"""benchmarks/coco_heldout.py writes coco128-seg's other photos in the coco-subjects layout."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from multicrop.datasets.outlines import load_outlines

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import coco_heldout  # noqa: E402


def _coco128(root: Path, labels: dict[str, list[str]]) -> Path:
    (root / "images" / "train2017").mkdir(parents=True)
    (root / "labels" / "train2017").mkdir(parents=True)
    for stem, lines in labels.items():
        Image.fromarray(np.full((40, 60, 3), 100, np.uint8)).save(root / "images" / "train2017" / f"{stem}.jpg")
        (root / "labels" / "train2017" / f"{stem}.txt").write_text("\n".join(lines) + "\n")
    return root


def test_the_photos_not_in_the_development_set_come_with_coco_category_ids(tmp_path):
    square = "0.1 0.1 0.5 0.1 0.5 0.9 0.1 0.9"
    src = _coco128(tmp_path / "coco128-seg", {
        "000000000009": [f"0 {square}"],                            # in the development set: left out
        "000000000540": [f"0 {square}", f"11 {square}", f"79 {square}"],  # person, stop sign, toothbrush
        "000000000542": [f"24 {square}"],                           # backpack
    })
    dev = tmp_path / "dev"
    (dev / "images").mkdir(parents=True)
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(dev / "images" / "000000000009.jpg")
    ids = coco_heldout.build(src, tmp_path / "held", exclude=dev)
    assert ids == ["000000000540", "000000000542"]
    assert (tmp_path / "held" / "labels" / "000000000540.txt").read_text().split("\n")[:3] == [
        f"1 {square}", f"13 {square}", f"90 {square}"]  # COCO's ids skip 12 and end at 90
    classes = (tmp_path / "held" / "classes.txt").read_text().splitlines()
    assert classes[1:3] == ["1: person", "2: bicycle"] and "13: stop sign" in classes and classes[-1] == "90: toothbrush"
    photos = {p.id: p for p in load_outlines(tmp_path / "held")}
    assert sorted(photos) == ids and tuple(photos["000000000540"].categories) == (1, 13, 90)
    assert tuple(photos["000000000542"].categories) == (27,)


def test_a_class_index_outside_the_80_is_refused(tmp_path):
    src = _coco128(tmp_path / "c", {"000000000001": ["80 0.1 0.1 0.5 0.1 0.5 0.5"]})
    with pytest.raises(ValueError, match="class index 80 is not one of the 80 COCO classes"):
        coco_heldout.build(src, tmp_path / "out")
