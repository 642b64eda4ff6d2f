"""kIoU: hand-computed cases and properties (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multicrop.errors import InvalidParameterError
from multicrop.geometry import Box, iou
from multicrop.metrics import (
    KIOU_THRESHOLDS,
    image_kiou,
    kiou,
    kiou_range,
    match_boxes,
    summarize_kiou,
)


def test_thresholds():
    assert KIOU_THRESHOLDS == (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


def test_hand_computed_greedy_prefers_highest_iou():
    # gt0 = [0,10)x[0,10); p0 overlaps gt0 with IoU 0.9, p1 with IoU 80/120.
    gt = [Box(0, 0, 10, 10)]
    p0 = Box(0, 0, 9, 10)  # IoU 90/100 = 0.9
    p1 = Box(2, 0, 10, 10)  # IoU 80/120
    ms = match_boxes([p1, p0], gt, threshold=0.5)
    assert [(m.pred, m.gt) for m in ms] == [(1, 0)]
    assert ms[0].iou == pytest.approx(0.9)


def test_hand_computed_greedy_is_not_optimal_assignment():
    # Greedy takes (p0, g0) = 1 first; p1 is then left with g1 at IoU 0.25 < mu,
    # although p0->g1 (60/140) + p1->g0 (80/120) = 1.095 > 1.  The paper specifies greedy.
    g0, g1 = Box(0, 0, 10, 10), Box(4, 0, 10, 10)
    p0, p1 = Box(0, 0, 10, 10), Box(-2, 0, 10, 10)
    r = image_kiou([p0, p1], [g0, g1], threshold=0.4)
    assert [(m.pred, m.gt) for m in r.matches] == [(0, 0)]
    assert r.total == pytest.approx(1.0)


def test_duplicate_predictions_match_distinct_gt():
    g0, g1 = Box(0, 0, 10, 10), Box(1, 0, 10, 10)  # IoU(g0, g1) = 90/110
    p = Box(0, 0, 10, 10)
    r = image_kiou([p, p], [g0, g1], threshold=0.5)
    assert r.total == pytest.approx(1 + 90 / 110)
    assert {m.gt for m in r.matches} == {0, 1}


def test_unmatched_ground_truth_counts_zero():
    gt = [Box(0, 0, 10, 10), Box(100, 0, 10, 10), Box(200, 0, 10, 10)]
    r = image_kiou([Box(0, 0, 10, 8)], gt, threshold=0.5)
    assert r.total == pytest.approx(0.8) and r.n_gt == 3
    assert r.mean == pytest.approx(0.8 / 3)


def test_threshold_filters_pairs():
    gt = [Box(0, 0, 10, 10)]
    pred = [Box(0, 0, 10, 6)]  # IoU 0.6
    assert image_kiou(pred, gt, threshold=0.6).total == pytest.approx(0.6)
    assert image_kiou(pred, gt, threshold=0.65).total == 0.0


def test_dataset_average_is_box_weighted():
    gt = [[Box(0, 0, 10, 10)], [Box(0, 0, 10, 10), Box(50, 0, 10, 10), Box(90, 0, 10, 10)]]
    pred = [[Box(0, 0, 10, 10)], []]
    assert kiou(pred, gt, threshold=0.5) == pytest.approx(1 / 4)
    s = summarize_kiou(pred, gt)
    assert s.kiou_50 == pytest.approx(0.25)
    assert s.image_mean_50 == pytest.approx(0.5)  # (1 + 0) / 2 images
    assert (s.n_images, s.n_gt) == (2, 4)


def test_summary_serializes_its_fields_in_order():
    s = summarize_kiou([[Box(0, 0, 10, 10)], []], [[Box(0, 0, 10, 10)], [Box(50, 0, 10, 10)]])
    assert s.to_dict() == {"kiou_50_95": 0.5, "kiou_50": 0.5, "image_mean_50_95": 0.5, "image_mean_50": 0.5,
                           "n_images": 2, "n_gt": 2}
    assert list(s.to_dict()) == ["kiou_50_95", "kiou_50", "image_mean_50_95", "image_mean_50", "n_images", "n_gt"]
    assert type(s).from_dict(s.to_dict()) == s


def test_range_averages_thresholds():
    gt = [[Box(0, 0, 10, 10)]]
    pred = [[Box(0, 0, 10, 7)]]  # IoU 0.7: counted for mu <= 0.7 (5 of 10 thresholds)
    assert kiou_range(pred, gt) == pytest.approx(0.7 * 5 / 10)
    assert summarize_kiou(pred, gt).kiou_50_95 == pytest.approx(0.35)


def test_more_predictions_than_gt_do_not_hurt():
    gt = [Box(0, 0, 10, 10)]
    pred = [Box(0, 0, 10, 10), Box(50, 50, 5, 5), Box(0, 0, 10, 9)]
    assert image_kiou(pred, gt).total == 1.0


def test_errors():
    with pytest.raises(InvalidParameterError, match="same images"):
        kiou([[]], [])
    with pytest.raises(InvalidParameterError, match="no box"):
        kiou([[]], [[]])
    with pytest.raises(InvalidParameterError, match=r"threshold must be in \(0, 1\]"):
        match_boxes([], [], threshold=0)


coord = st.integers(min_value=0, max_value=200)
size = st.integers(min_value=1, max_value=100)
boxes = st.lists(st.builds(Box, coord, coord, size, size), min_size=1, max_size=5)
mu = st.sampled_from(KIOU_THRESHOLDS)


@given(boxes, mu)
def test_identical_sets_give_one(bs, t):
    assert image_kiou(bs, bs, threshold=t).mean == pytest.approx(1.0)


@given(boxes, mu)
def test_disjoint_sets_give_zero(bs, t):
    far = [b.translate(1000, 0) for b in bs]
    assert image_kiou(far, bs, threshold=t).total == 0.0


@given(boxes, boxes, mu, st.randoms(use_true_random=False))
def test_invariant_to_order(pred, gt, t, rnd):
    a = image_kiou(pred, gt, threshold=t).total
    p2, g2 = list(pred), list(gt)
    rnd.shuffle(p2)
    rnd.shuffle(g2)
    assert image_kiou(p2, g2, threshold=t).total == pytest.approx(a)


@given(boxes, boxes, mu, st.sampled_from([0.25, 0.5, 3.0, 7.5]))
def test_invariant_to_uniform_scaling(pred, gt, t, s):
    a = image_kiou(pred, gt, threshold=t)
    b = image_kiou([p.scale(s) for p in pred], [g.scale(s) for g in gt], threshold=t)
    # IoUs equal to a threshold may flip by rounding; compare away from ties.
    if all(abs(iou(p, g) - t) > 1e-9 for p in pred for g in gt):
        assert b.total == pytest.approx(a.total)


@settings(max_examples=50)
@given(boxes, boxes, mu)
def test_matching_is_one_to_one_and_bounded(pred, gt, t):
    ms = match_boxes(pred, gt, threshold=t)
    assert len({m.pred for m in ms}) == len(ms) == len({m.gt for m in ms})
    assert len(ms) <= min(len(pred), len(gt))
    assert all(m.iou >= t for m in ms)
    assert all(m.iou == pytest.approx(iou(pred[m.pred], gt[m.gt])) for m in ms)
    assert 0.0 <= image_kiou(pred, gt, threshold=t).mean <= 1.0
