"""Per-partition and top-k selection; placing crops in source pixels."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multicrop.errors import InvalidParameterError
from multicrop.geometry import Box, Ratio, iou
from multicrop.scoring import ScoredCrop
from multicrop.select import best_per_region, select_topk, to_source


def test_best_per_region_takes_the_maximum():
    a, b, c = (ScoredCrop(Box(i, 0, 1, 1), s) for i, s in enumerate([0.1, 0.9, 0.5]))
    assert best_per_region([[a, b], [c]]) == [b, c]
    with pytest.raises(InvalidParameterError, match="region 2"):
        best_per_region([[a], []])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 90), st.integers(0, 90), st.integers(5, 40), st.floats(0, 1)),
                min_size=1, max_size=25), st.integers(1, 5), st.floats(0.0, 0.8))
def test_topk_respects_nms_and_order(raw, k, thr):
    crops = [ScoredCrop(Box(x, y, w, w), s) for x, y, w, s in raw]
    out = select_topk(crops, k=k, nms_iou=thr)
    assert 1 <= len(out) <= k
    assert out[0].score == max(c.score for c in crops)
    assert [c.score for c in out] == sorted((c.score for c in out), reverse=True)
    for p, q in itertools.combinations(out, 2):
        assert iou(p.box, q.box) <= thr + 1e-12


@settings(max_examples=100, deadline=None)
@given(st.floats(0, 80), st.floats(0, 80), st.floats(5, 20), st.floats(1.0, 40.0),
       st.sampled_from([Ratio(2, 3), Ratio(3, 2), Ratio(1, 1), Ratio(1.91, 1)]))
def test_to_source_is_whole_exact_and_inside(x, y, w, scale, ratio):
    box = Box(x, y, w, w / ratio.value)
    size = (round(100 * scale), round(100 * scale))
    out = to_source(ScoredCrop(box, 1.0, {}, ratio), scale=(scale, scale), size=size).box
    assert all(float(v).is_integer() for v in out.corners())
    assert 0 <= out.x and 0 <= out.y and out.x2 <= size[0] and out.y2 <= size[1]
    assert abs(out.h - out.w / ratio.value) <= 1
