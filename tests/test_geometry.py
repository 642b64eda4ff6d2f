"""Boxes, ratios, IoU and snapping: exact values and properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multicrop.errors import InvalidParameterError
from multicrop.geometry import Box, fit_ratio_box, iou, iou_matrix, snap_box
from multicrop.ratios import Ratio, parse_ratio, parse_ratios

ratios = st.sampled_from([Ratio(2, 3), Ratio(3, 2), Ratio(1, 1), Ratio(4, 5), Ratio(1.91, 1), Ratio(9, 16)])
sizes = st.integers(min_value=20, max_value=5000)


@st.composite
def box_in(draw, width, height):
    x = draw(st.floats(0, width - 1))
    y = draw(st.floats(0, height - 1))
    w = draw(st.floats(1, width - x))
    h = draw(st.floats(1, height - y))
    return Box(x, y, w, h)


@settings(max_examples=200, deadline=None)
@given(width=sizes, height=sizes, ratio=ratios, data=st.data())
def test_snap_box_has_exact_ratio_and_lies_inside(width, height, ratio, data):
    box = data.draw(box_in(width, height))
    out = snap_box(box, ratio, width, height)
    assert all(float(v).is_integer() for v in out.corners())
    assert 0 <= out.x and 0 <= out.y and out.x2 <= width and out.y2 <= height
    # within one pixel of the exact ratio: the height matches w / r to the nearest pixel
    assert abs(out.h - out.w / ratio.value) <= 1


@settings(max_examples=200, deadline=None)
@given(width=sizes, height=sizes, ratio=ratios, data=st.data())
def test_fit_ratio_box_is_exact_and_inside(width, height, ratio, data):
    region = data.draw(box_in(width, height))
    out = fit_ratio_box(region, ratio)
    assert math.isclose(out.w / out.h, ratio.value, rel_tol=1e-9)
    assert region.contains(out, tol=1e-6)
    # it is the largest: it touches both sides of the region along one axis
    assert math.isclose(out.w, region.w, rel_tol=1e-9) or math.isclose(out.h, region.h, rel_tol=1e-9)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_iou_matrix_matches_pairwise_iou(data):
    a = data.draw(st.lists(box_in(100, 100), min_size=1, max_size=5))
    b = data.draw(st.lists(box_in(100, 100), min_size=1, max_size=5))
    m = iou_matrix(a, b)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            assert m[i, j] == pytest.approx(iou(x, y))
            assert 0 <= m[i, j] <= 1 + 1e-12
            assert iou(x, y) == pytest.approx(iou(y, x))


def test_iou_values():
    assert iou(Box(0, 0, 10, 10), Box(0, 0, 10, 10)) == 1.0
    assert iou(Box(0, 0, 10, 10), Box(10, 0, 10, 10)) == 0.0
    assert iou(Box(0, 0, 2, 2), Box(1, 1, 2, 2)) == pytest.approx(1 / 7)
    assert iou_matrix([], [Box(0, 0, 1, 1)]).shape == (0, 1)


def test_box_rejects_negative_and_non_finite():
    with pytest.raises(InvalidParameterError, match="w=-1"):
        Box(0, 0, -1, 2)
    with pytest.raises(InvalidParameterError, match="finite"):
        Box(0, float("nan"), 1, 1)


@pytest.mark.parametrize("coords, bad", [
    ((1, 2.5, np.float64(3), np.int64(4)), None),
    ((np.float32(1), np.uint8(2), True, 4), None),  # other numbers take the one-by-one checks, and pass
    ((1e308, 1e308, 1e308, 1.0), None),  # finite each, though their sum is not
    ((np.float32(3e38), np.float32(3e38), np.float32(3e38), 1), None),
    ((0, float("inf"), 1, 1), "Box.y must be a finite number, got inf"),
    ((0, 0, np.float64("nan"), 1), "Box.w must be a finite number, got np.float64(nan)"),
    ((0, 0, 1, "2"), "Box.h must be a finite number, got '2'"),
    ((0, 0, 1.0, -0.5), "Box width and height must be >= 0, got w=1.0, h=-0.5"),
])
def test_box_checks_each_coordinate_whatever_its_number_type(coords, bad):
    if bad is None:
        b = Box(*coords)
        assert (b.x, b.y, b.w, b.h) == coords
    else:
        with pytest.raises(InvalidParameterError) as err:
            Box(*coords)
        assert str(err.value) == bad


@pytest.mark.parametrize("text, expected", [("2:3", (2, 3)), ("3x2", (3, 2)), ("4/5", (4, 5)), ("1.91:1", (1.91, 1))])
def test_parse_ratio(text, expected):
    r = parse_ratio(text)
    assert (r.width, r.height) == expected


@pytest.mark.parametrize("text", ["", "wide", "2:", "0:3", "-1:2", "2:3:4"])
def test_parse_ratio_rejects(text):
    with pytest.raises(InvalidParameterError, match="ratio"):
        parse_ratio(text)


def test_parse_ratios_list_and_preset():
    assert [str(r) for r in parse_ratios("2:3, 3:2")] == ["2:3", "3:2"]
    assert [str(r) for r in parse_ratios("instagram")] == ["4:5", "1:1", "1.91:1"]
    with pytest.raises(InvalidParameterError, match="empty"):
        parse_ratios(",")


def test_snap_box_refuses_impossible():
    with pytest.raises(InvalidParameterError, match="fits"):
        snap_box(Box(0, 0, 1, 1), 1000.0, 10, 10)


def test_box_scale_round_trip():
    b = Box(10, 20, 30, 40)
    assert b.scale(2.5).scale(0.4) == Box(10.0, 20.0, 30.0, 40.0)
    assert Box.from_dict(b.to_dict()) == b
    assert np.isclose(Box(0, 0, 4, 2).aspect, 2.0)
