"""Seamless panorama carousels: adjacent slides that tile one band of the photo exactly."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from multicrop.crop.seamless import seamless_layout
from multicrop.errors import InvalidParameterError
from multicrop.geometry import Box
from multicrop.ratios import parse_ratio


@dataclass(frozen=True)
class Thing:
    box: Box
    importance: float = 1.0
    name: str = "person"

    def describe(self) -> str:
        return self.name


def _map(shape, *boxes):
    sal = np.zeros(shape)
    for b in boxes:
        sal[int(b.y):int(b.y2), int(b.x):int(b.x2)] = 1.0
    return sal


def _tiles_exactly(lay, W, H):
    boxes = lay.boxes
    w, h = lay.slide_size
    assert all(b == Box(boxes[0].x + i * w, boxes[0].y, w, h) for i, b in enumerate(boxes))
    assert all(float(v).is_integer() for b in boxes for v in (b.x, b.y, b.w, b.h))
    assert lay.band == Box(boxes[0].x, boxes[0].y, len(boxes) * w, h)
    assert 0 <= lay.band.x and lay.band.x2 <= W and 0 <= lay.band.y and lay.band.y2 <= H
    assert abs(w / h - lay.ratio.value) * h <= 1.0  # within one pixel of the ratio
    # cutting the slides from an image and joining them gives the band back, pixel for pixel
    img = np.random.default_rng(0).integers(0, 255, (H, W, 3), dtype=np.uint8)
    joined = np.concatenate([img[int(b.y):int(b.y2), int(b.x):int(b.x2)] for b in boxes], axis=1)
    band = lay.band
    assert np.array_equal(joined, img[int(band.y):int(band.y2), int(band.x):int(band.x2)])


def test_slide_count_follows_the_photos_width_and_the_platform_limit():
    sal = np.ones((100, 600))
    # 12000x2000 at 4:5: 8 slides of 1500x1875 keep 93.75 % (7 full-height slides keep 93.3 %)
    lay = seamless_layout(sal, size=(12000, 2000), ratio="4:5")
    assert (lay.slides, lay.slide_size, lay.kept) == (8, (1500, 1875), 0.9375)
    _tiles_exactly(lay, 12000, 2000)
    capped = seamless_layout(sal, size=(12000, 2000), ratio="4:5", max_slides=5)
    assert (capped.slides, capped.slide_size) == (5, (1600, 2000))  # full height, the band centred
    assert capped.band.x == 2000
    _tiles_exactly(capped, 12000, 2000)
    assert seamless_layout(sal, size=(12000, 2000), ratio="1:1", slides=3).slide_size == (2000, 2000)
    wide = seamless_layout(sal, size=(12000, 2000), ratio="4:5", min_slide_width=2000)
    assert wide.slides == 7 and wide.slide_size == (1600, 2000)  # as wide as this photo's height allows


def test_seams_miss_a_subject_where_the_widest_layout_would_slice_it():
    # 6000x2000 at 4:5: the widest layout is 4 slides of 1500 px, seams at 1500, 3000, 4500;
    # a person at 2900..3200 (analysis 290..320 of 600) stands on the middle seam
    person = Box(290, 40, 30, 140)
    sal = _map((200, 600), person, Box(60, 80, 40, 60))
    plain = seamless_layout(sal, size=(6000, 2000), ratio="4:5")
    assert plain.slide_size == (1500, 1875) and any(b.x < 3000 < b.x2 or b.x == 3000 for b in plain.boxes)
    lay = seamless_layout(sal, size=(6000, 2000), ratio="4:5", subjects=[Thing(person)])
    _tiles_exactly(lay, 6000, 2000)
    seams = [b.x for b in lay.boxes[1:]]
    assert all(not 2909 < s < 3191 for s in seams), seams  # a seam may graze the box's outer 3 %
    assert lay.sliced == () and lay.notes == ()
    p = person.scale(10, 10)
    assert lay.band.x <= p.x and p.x2 <= lay.band.x2 and lay.band.y <= p.y and p.y2 <= lay.band.y2


def test_a_subject_no_layout_can_keep_whole_is_named_in_a_note():
    long_boat = Box(30, 90, 540, 40)  # 90 % of the width: every layout's seams cross it
    sal = _map((200, 600), long_boat)
    lay = seamless_layout(sal, size=(6000, 2000), ratio="4:5", subjects=[Thing(long_boat, name="boat")])
    _tiles_exactly(lay, 6000, 2000)
    assert lay.sliced == (0,)
    assert len(lay.notes) == 1 and "boat" in lay.notes[0] and "slide edge" in lay.notes[0]


def test_the_band_moves_up_or_down_to_hold_the_subjects():
    # a 6000x4000 photo at 1.91:1: the band is much lower than the photo; the subject sits low
    subject = Box(100, 300, 100, 60)
    sal = _map((400, 600), subject)
    lay = seamless_layout(sal, size=(6000, 4000), ratio="1.91:1", subjects=[subject])
    _tiles_exactly(lay, 6000, 4000)
    assert lay.band.h < 4000 and lay.band.y <= 3000 and lay.band.y2 >= 3600
    high = seamless_layout(_map((400, 600), Box(100, 20, 100, 60)), size=(6000, 4000), ratio="1.91:1")
    assert high.band.y <= 200 and high.band.y2 >= 800
    # Instagram's landscape slide is 1080x566 at platform width: 2 slides of 3000 px here
    assert lay.slides == 2 and lay.slide_size == (3000, 1571)


def test_a_photo_too_narrow_for_a_panorama_says_so():
    lay = seamless_layout(np.ones((100, 100)), size=(2000, 2000), ratio="3:2")
    assert lay.slides == 2 and lay.slide_size == (1000, 667) and lay.band.y in (666, 667) and lay.kept < 0.5
    assert any("not wide enough" in n for n in lay.notes)
    soft = seamless_layout(np.ones((50, 300)), size=(3000, 500), ratio="1:1", min_slide_width=1080)
    assert soft.slide_size == (500, 500) and soft.slides == 6
    assert any("500 px wide" in n for n in soft.notes)


@pytest.mark.parametrize("kwargs, word", [
    ({"size": (0, 10)}, "size"), ({"size": (100, 100), "ratio": "wide"}, "ratio"),
    ({"size": (100, 100), "slides": 0}, "slides"), ({"size": (100, 100), "max_shrink": 0}, "max_shrink"),
    ({"size": (100, 100), "min_slides": 3, "max_slides": 2}, "min_slides"),
    ({"size": (100, 100), "subjects": [(1, 2, 3, 4)]}, "subjects"),
])
def test_bad_arguments_name_the_parameter(kwargs, word):
    with pytest.raises(InvalidParameterError, match=word):
        seamless_layout(np.ones((10, 10)), **kwargs)


def test_to_dict_round_numbers():
    lay = seamless_layout(np.ones((10, 30)), size=(3000, 1000), ratio=parse_ratio("1:1"))
    d = lay.to_dict()
    assert d["slides"] == 3 and d["slide_size"] == [1000, 1000] and d["ratio"] == "1:1"
    assert [b["x"] for b in d["boxes"]] == [0, 1000, 2000] and d["notes"] == []
