"""Per-partition and top-k selection; placing crops in source pixels."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multicrop.errors import InvalidParameterError
from multicrop.geometry import Box, iou
from multicrop.ratios import Ratio
from multicrop.crop.scoring import ScoredCrop
from multicrop.crop.select import select_distinct, select_topk, to_source


def test_select_distinct_takes_each_regions_best_when_they_do_not_overlap():
    a, b, c = (ScoredCrop(Box(20 * i, 0, 10, 10), s) for i, s in enumerate([0.1, 0.9, 0.5]))
    assert select_distinct([[a, b], [c]], max_iou=0.3) == ([b, c], [])
    with pytest.raises(InvalidParameterError, match="region 2"):
        select_distinct([[a], []], max_iou=0.3)


def test_select_distinct_avoids_near_duplicates_across_regions():
    # Both regions' best crop frames the same subject (a region's framings may reach past it):
    # the stronger region keeps it, the other takes its best distinct candidate.
    shared1, shared2 = ScoredCrop(Box(0, 0, 100, 100), 0.8), ScoredCrop(Box(5, 2, 100, 100), 0.9)
    own = ScoredCrop(Box(150, 0, 80, 80), 0.4)
    crops, overlaps = select_distinct([[shared1, own], [shared2]], max_iou=0.5)
    assert crops == [own, shared2] and overlaps == []
    # With no distinct candidate the best is taken anyway and the overlap reported.
    crops, overlaps = select_distinct([[shared1], [shared2]], max_iou=0.5)
    assert crops == [shared1, shared2]
    assert overlaps == [f"crop 1 overlaps crop 2, IoU {iou(shared1.box, shared2.box):.2f}"]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 90), st.integers(0, 90), st.integers(5, 40),
                                   st.floats(0, 1)), min_size=1, max_size=8), min_size=1, max_size=5),
       st.floats(0.0, 0.8))
def test_select_distinct_pairs_are_distinct_or_reported(regions, thr):
    scored = [[ScoredCrop(Box(x, y, w, w), s) for x, y, w, s in reg] for reg in regions]
    crops, overlaps = select_distinct(scored, max_iou=thr)
    assert len(crops) == len(scored) and all(c in reg for c, reg in zip(crops, scored))
    bad = [(i, j) for i, j in itertools.combinations(range(len(crops)), 2)
           if iou(crops[i].box, crops[j].box) > thr + 1e-12]
    # every overlapping pair involves a region whose overlap was reported
    reported = {int(m.split()[1]) - 1 for m in overlaps}
    assert all(i in reported or j in reported for i, j in bad)
    assert len(overlaps) <= len(bad)


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


def _nms(scored, k, thr):
    """Textbook greedy non-maximum suppression, written out: best first, keep what overlaps no kept one."""
    kept = []
    for c in sorted(scored, key=lambda c: -c.score):
        if all(iou(c.box, o.box) <= thr for o in kept):
            kept.append(c)
            if len(kept) == k:
                break
    return kept


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 90), st.integers(0, 90), st.integers(5, 40), st.sampled_from([0.1, 0.5, 0.9])),
                min_size=1, max_size=25), st.integers(1, 5), st.sampled_from([0.0, 0.3, 0.5, 0.8]))
def test_topk_is_textbook_nms_through_the_one_greedy_selector(raw, k, thr):
    # Scores drawn from three values make ties common: the first candidate of a tie wins, as in a stable sort.
    crops = [ScoredCrop(Box(x, y, w, w), s) for x, y, w, s in raw]
    assert [id(c) for c in select_topk(crops, k=k, nms_iou=thr)] == [id(c) for c in _nms(crops, k, thr)]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 90), st.integers(0, 90), st.integers(5, 40),
                                   st.sampled_from([0.2, 0.6])), min_size=1, max_size=6), min_size=1, max_size=4),
       st.sampled_from([0.0, 0.3, 0.6]))
def test_select_distinct_is_each_regions_nms_in_turn(regions, thr):
    # Written out: regions by their best score; each takes its best candidate distinct from those chosen,
    # else its best (the first on ties either way).
    scored = [[ScoredCrop(Box(x, y, w, w), s) for x, y, w, s in reg] for reg in regions]
    chosen = {}
    for i in sorted(range(len(scored)), key=lambda i: -max(c.score for c in scored[i])):
        ranked = sorted(scored[i], key=lambda c: -c.score)
        chosen[i] = next((c for c in ranked if all(iou(c.box, o.box) <= thr for o in chosen.values())), ranked[0])
    crops, _ = select_distinct(scored, max_iou=thr)
    assert [id(c) for c in crops] == [id(chosen[i]) for i in range(len(scored))]
