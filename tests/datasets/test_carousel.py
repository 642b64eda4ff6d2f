"""The Carousel loader on the real label files and on hand-made broken copies."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest

from multicrop.datasets.carousel import (
    CarouselMetadata,
    box_ratio,
    load_carousel,
    load_item,
)
from multicrop.errors import DatasetError, InvalidParameterError
from multicrop.geometry import Box
from multicrop.ratios import Ratio


@pytest.fixture(scope="module")
def real(carousel_labels):
    return load_carousel(carousel_labels, require_images=False)


def test_real_counts(real):
    # Facts checked by hand against shared/data/carousel (170 of the 277 images).
    assert len(real) == 170
    assert real.skipped == ()
    assert sum(len(i.boxes) for i in real) == 379
    assert {k: sum(i.k == k for i in real) for k in (2, 3, 4)} == {2: 134, 3: 33, 4: 3}
    assert all(i.image_path is None for i in real)


def test_real_hard_failures(real):
    assert len(real.hard_failures) == 45
    assert real.unknown_hard_failures == ()
    assert len(real.subset("failures")) == 45
    assert len(real.subset("ok")) == 125
    assert len(real.subset("all")) == 170


def test_real_subcrops_mismatches(real):
    mism = {i.name: (i.k, len(i.boxes)) for i in real if i.k != len(i.boxes)}
    assert len(mism) == 6
    assert mism["1_Las_vegas_strip"] == (3, 2)
    assert mism["2021_WK_Vlaanderen_men_elite_podium"] == (2, 3)
    # Three of the six are hard failures.
    assert sum(real[n].hard_failure for n in mism) == 3
    for n in mism:
        assert any("subcrops=" in note for note in real[n].notes)


def test_real_label_contradicting_geometry(real):
    item = real["New_Mexico_Dance_Theater_The...cker_2014"]
    bad = [j for j, (lab, r) in enumerate(zip(item.labels, item.ratios)) if lab == "2x3" and r == Ratio(3, 2)]
    assert len(bad) == 1
    assert item.boxes[bad[0]].w > item.boxes[bad[0]].h  # geometry (landscape) wins
    contradicting = [i.name for i in real if any("contradicts" in n for n in i.notes)]
    assert contradicting == ["New_Mexico_Dance_Theater_The...cker_2014"]


def test_real_negative_coordinate_is_clipped(real):
    clipped = [i for i in real if any("clipped" in n for n in i.notes)]
    assert [i.name for i in clipped] == ["Hockey_players"]
    for item in real:
        for b in item.boxes:
            assert b.x >= 0 and b.y >= 0 and b.x2 <= item.width and b.y2 <= item.height


def test_real_orientations_and_overlaps(real):
    assert sum(len(i.orientations) == 2 for i in real) == 48
    pairs = overlapping = 0
    for item in real:
        for a, b in itertools.combinations(item.boxes, 2):
            pairs += 1
            overlapping += a.intersection(b) > 0
    assert (pairs, overlapping) == (251, 91)


def test_real_ratios_are_carousel_ratios(real):
    for item in real:
        for b, r in zip(item.boxes, item.ratios):
            assert r in (Ratio(2, 3), Ratio(3, 2))
            assert abs(b.aspect / r.value - 1) < 0.03


def test_real_metadata(real):
    item = real["090717-N-4234E-473"]
    assert item.metadata == CarouselMetadata(
        subcrops=2,
        title="090717-N-4234E-473",
        creator="DoD photo by Mass Communication Specialist 3rd Class Chad R. Erdmann, U.S. Navy",
        licence="CC0 1.0",
        url="https://www.rawpixel.com/image/8728453/photo-image-public-domain-ocean",
    )
    assert (item.width, item.height) == (2100, 1500)
    assert item.hard_failure
    assert item.boxes[0] == Box.from_corners(426.9230769230769, 41.75824175824175, 1073.076923076923, 1010.989010989011)


def test_missing_images_are_skipped_with_reasons(carousel_labels):
    ds = load_carousel(carousel_labels, require_images=True)
    assert len(ds) == 0 and len(ds.skipped) == 170
    assert all("image missing" in s.reason for s in ds.skipped)
    assert "0 images loaded" in ds.summary() and "170 skipped" in ds.summary()


def _write(root: Path, name: str, shapes, *, w=300, h=200, subcrops=None, image=True):
    d = root / "dataset"
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{name}.json").write_text(json.dumps({"shapes": shapes, "imageWidth": w, "imageHeight": h}))
    (d / f"{name}_metadata.json").write_text(json.dumps({"subcrops": subcrops or len(shapes)}))
    if image:
        (d / f"{name}.jpeg").write_bytes(b"not read by the loader")


def test_reversed_corners_and_mixed_orientation(tmp_path):
    shapes = [
        {"label": "3x2", "points": [[150, 100], [0, 0]]},
        {"label": "2x3", "points": [[200, 0], [300, 150]]},
    ]
    _write(tmp_path, "a", shapes)
    item = load_item(tmp_path, "a")
    assert item.boxes == (Box(0, 0, 150, 100), Box(200, 0, 100, 150))
    assert item.ratios == (Ratio(3, 2), Ratio(2, 3))
    assert item.orientations == {"portrait", "landscape"}
    assert item.image_path == tmp_path / "dataset" / "a.jpeg"
    assert item.notes == ()


def test_one_bad_item_does_not_stop_the_rest(tmp_path):
    good = [{"label": "3x2", "points": [[0, 0], [150, 100]]}]
    _write(tmp_path, "good", good)
    _write(tmp_path, "noimage", good, image=False)
    _write(tmp_path, "broken", good)
    (tmp_path / "dataset" / "broken.json").write_text("{not json")
    _write(tmp_path, "deep", good)
    (tmp_path / "dataset" / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    _write(tmp_path, "huge", good)
    (tmp_path / "dataset" / "huge.json").write_text('{"shapes": ' + "9" * 5000 + "}")  # past int()'s digit limit
    _write(tmp_path, "nometa", good)
    (tmp_path / "dataset" / "nometa_metadata.json").unlink()
    _write(tmp_path, "outside", [{"label": "3x2", "points": [[400, 0], [550, 100]]}])
    (tmp_path / "hard_failures.txt").write_text("good\nghost\n")
    ds = load_carousel(tmp_path)
    assert [i.name for i in ds] == ["good"]
    assert ds["good"].hard_failure
    reasons = {s.name: s.reason for s in ds.skipped}
    assert set(reasons) == {"noimage", "broken", "deep", "huge", "nometa", "outside"}
    assert "malformed JSON" in reasons["broken"] and "nested 100,000 deep" in reasons["deep"]
    assert "image missing" in reasons["noimage"]
    assert "nometa_metadata.json: missing" in reasons["nometa"]
    assert "no area" in reasons["outside"]
    assert ds.unknown_hard_failures == ("ghost",)
    assert "1 images loaded" in ds.summary() and "6 skipped" in ds.summary()


def test_partition_info_is_read(tmp_path):
    _write(tmp_path, "a", [{"label": "3x2", "points": [[0, 0], [150, 100]]}])
    p = tmp_path / "partitions" / "a"
    p.mkdir(parents=True)
    (p / "partition_info.json").write_text('{"orientation": "vertical"}')
    assert load_item(tmp_path, "a").partition_info["orientation"] == "vertical"


def test_not_a_carousel_dir(tmp_path):
    with pytest.raises(DatasetError, match="no 'dataset/' folder"):
        load_carousel(tmp_path)


def test_bad_subset(tmp_path):
    _write(tmp_path, "a", [{"label": "3x2", "points": [[0, 0], [150, 100]]}])
    with pytest.raises(InvalidParameterError, match="subset must be one of all, ok, failures"):
        load_carousel(tmp_path).subset("good")


def test_box_ratio_nearest():
    assert box_ratio(Box(0, 0, 200, 300)) == Ratio(2, 3)
    assert box_ratio(Box(0, 0, 147, 100)) == Ratio(3, 2)
    with pytest.raises(InvalidParameterError):
        box_ratio(Box(0, 0, 0, 3))


def test_copy_of_real_labels_keeps_quirks(tmp_path, carousel_labels):
    # A copy with a fake image for one item loads that item with its path.
    shutil.copytree(carousel_labels, tmp_path / "c")
    (tmp_path / "c" / "dataset" / "Hockey_players.jpg").write_bytes(b"x")
    ds = load_carousel(tmp_path / "c")
    assert [i.name for i in ds] == ["Hockey_players"]
    assert len(ds.skipped) == 169
