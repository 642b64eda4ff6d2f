"""Cutting into regions: orientation, cut lines, failures, the orientation fallback."""

import numpy as np

from multicrop.crop.config import PartitionConfig
from multicrop.crop.cuts import Cuts, cut_regions, place_cut
from multicrop.crop.search import box_dims, smallest_box, window_sums
from multicrop.geometry import Box
from multicrop.measures import summed_area_table


def test_one_subject_gives_one_region_along_the_long_side():
    c = cut_regions((Box(10, 10, 5, 5),), width=100, height=40, config=PartitionConfig())
    assert c == Cuts((Box(0, 0, 100, 40),), "vertical", None, None)


def test_bisecting_cut_falls_back_to_the_other_orientation_or_is_reported():
    # more spread in x than in y, so the paper's rule cuts vertically, through both subjects;
    # they are apart in y, so horizontal cuts work (regions may be narrow here)
    subjects = (Box(0, 0, 150, 20), Box(100, 90, 150, 20))
    cfg = PartitionConfig(min_region_aspect=0)
    c = cut_regions(subjects, width=250, height=110, config=cfg)
    assert c == Cuts((Box(0, 0, 250, 55), Box(0, 55, 250, 55)), "horizontal", None, "orientation")
    off = cut_regions(subjects, width=250, height=110, config=PartitionConfig(min_region_aspect=0,
                                                                               orientation_fallback=False))
    assert off.orientation == "vertical" and off.fallback is None
    assert off.failure == "cut 1 at x=125 bisects a salient box (x 0..150)"


def test_too_narrow_region_is_a_failure():
    c = cut_regions((Box(0, 0, 5, 5), Box(10, 0, 5, 5)), width=20, height=100, config=PartitionConfig(
        orientation_fallback=False))
    assert c.orientation == "vertical" and c.failure.startswith("region 1 is ")


def test_cut_placement_prefers_the_middle_among_equal_lines():
    a, b = Box(0, 0, 10, 10), Box(30, 0, 10, 10)
    assert place_cut(np.zeros(40), a, b, vertical=True, centre_weight=0.25) == 20
    assert place_cut(None, a, Box(31, 0, 10, 10), vertical=True, centre_weight=0.25) == 20  # round half to even


def test_search_helpers():
    sat = summed_area_table(np.arange(12, dtype=np.float64).reshape(3, 4))
    assert window_sums(sat, 4, 3).tolist() == [[66.0]]
    assert box_dims(40, 2.0, 30, 100) == (30, 20)  # clipped to the map's width
    s = np.zeros((20, 20))
    s[5:10, 5:10] = 1
    assert smallest_box(s, ratio=1.0, target=25, max_area=16) is None  # the 5x5 blob needs area 25
    assert smallest_box(s, ratio=1.0, target=25, max_area=25) == Box(5, 5, 5, 5)
