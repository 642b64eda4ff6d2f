"""Per-subject orientation accuracy."""

from __future__ import annotations

from multicrop.geometry import Box
from multicrop.metrics.orientation import orientation_matches


def test_counts_only_matched_pairs_and_compares_orientation():
    gt = [Box(0, 0, 20, 30), Box(100, 0, 30, 20), Box(300, 300, 10, 10)]
    preds = [Box(2, 0, 30, 20), Box(100, 0, 30, 20), Box(500, 500, 10, 10)]
    s = orientation_matches(preds, gt)
    assert (s.matched, s.correct, s.accuracy) == (2, 1, 0.5)


def test_matching_is_one_to_one_and_order_free():
    gt = [Box(0, 0, 20, 30)]
    preds = [Box(0, 0, 20, 30), Box(1, 0, 20, 30)]
    assert orientation_matches(preds, gt).matched == 1
    assert orientation_matches(preds[::-1], gt) == orientation_matches(preds, gt)


def test_nothing_matched_is_zero_not_an_error():
    s = orientation_matches([], [Box(0, 0, 5, 5)])
    assert (s.matched, s.accuracy) == (0, 0.0)
    assert orientation_matches([Box(0, 0, 5, 5)], [Box(50, 50, 5, 5)], min_iou=0.1).matched == 0
