"""GAIC grid anchors and fixed-ratio sliding windows."""

import math

import pytest

from multicrop.crop.candidates import candidate_boxes, grid_anchors, sliding_windows
from multicrop.crop.config import CandidateConfig
from multicrop.geometry import Box, fit_ratio_box
from multicrop.ratios import Ratio


@pytest.mark.parametrize("region", [Box(0, 0, 1200, 800), Box(100, 50, 500, 700), Box(0, 0, 640, 640)])
@pytest.mark.parametrize("ratio", [Ratio(2, 3), Ratio(3, 2), Ratio(1, 1), Ratio(4, 5)])
def test_anchors_have_the_exact_ratio_and_lie_in_the_region(region, ratio):
    anchors = grid_anchors(region, ratio)
    for b in anchors:
        assert math.isclose(b.w / b.h, ratio.value, rel_tol=1e-9)
        assert region.contains(b, tol=1e-6)
        # an anchor's corners come from the first/last 4 of 12 bins; the snapped box shrinks
        # inside it; min_area is measured against the largest box of the ratio in the region
        assert b.area >= 0.5 * fit_ratio_box(region, ratio).area / 1.25 ** 2 - 1e-6


def test_anchor_count_for_a_matching_region():
    # every one of the 4^4 corner combinations with area >= 50% and a near-3:2 aspect
    anchors = grid_anchors(Box(0, 0, 1200, 800), Ratio(3, 2))
    assert 20 <= len(anchors) <= 256
    assert Box(0, 0, 1200, 800) in anchors


def test_very_wide_image_gives_no_anchor_but_windows():
    region = Box(0, 0, 4288, 613)
    assert grid_anchors(region, Ratio(2, 3)) == []
    boxes = candidate_boxes(region, Ratio(2, 3))
    assert boxes
    for b in boxes:
        assert math.isclose(b.w / b.h, 2 / 3, rel_tol=1e-9) and region.contains(b, tol=1e-6)
    assert min(b.x for b in boxes) == 0 and max(b.x2 for b in boxes) == pytest.approx(4288)


def test_windows_cover_the_region_at_each_scale():
    region = Box(10, 10, 300, 200)
    cfg = CandidateConfig(window_scales=(1.0, 0.5), window_stride=0.25)
    wins = sliding_windows(region, Ratio(1, 1), config=cfg)
    assert {round(b.w) for b in wins} == {200, 100}
    assert max(b.x2 for b in wins) == pytest.approx(310) and min(b.x for b in wins) == 10


def test_topk_windows_are_added_to_anchors():
    region = Box(0, 0, 1200, 800)
    assert len(candidate_boxes(region, Ratio(3, 2), windows=True)) > len(grid_anchors(region, Ratio(3, 2)))


def test_empty_region_gives_nothing():
    assert grid_anchors(Box(0, 0, 0, 10), Ratio(1, 1)) == []
    assert sliding_windows(Box(0, 0, 10, 0), Ratio(1, 1)) == []
