"""benchmarks/bench_featured_bound.py: the crops it searches, the shares it reads, the subjects it counts."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from multicrop.evaluation.subjects.metrics import held_shares
from multicrop.geometry import Box
from multicrop.ratios import Ratio

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import bench_featured_bound as fb  # noqa: E402

RATIOS = (Ratio(2, 3), Ratio(3, 2))


def test_candidates_have_the_ratios_lie_in_the_frame_and_cover_at_most_zoom_max():
    B = fb.candidate_boxes(300, 200, RATIOS, 0.6, 0.02)
    w, h = B[:, 2] - B[:, 0], B[:, 3] - B[:, 1]
    assert len(B) > 100
    assert (B[:, 0] >= 0).all() and (B[:, 1] >= 0).all() and (B[:, 2] <= 300).all() and (B[:, 3] <= 200).all()
    assert (w * h <= 0.6 * 300 * 200).all()
    aspect = w / h
    assert np.all(np.isclose(aspect, 2 / 3, atol=0.02) | np.isclose(aspect, 1.5, atol=0.02))


def test_held_shares_agree_with_the_benchmarks_own_count():
    rng = np.random.default_rng(3)
    masks = rng.random((3, 40, 60)) > 0.7
    B = fb.candidate_boxes(60, 40, RATIOS, 0.6, 0.05)
    boxes = [Box(x0, y0, x1 - x0, y1 - y0) for x0, y0, x1, y1 in B]
    assert fb.held(masks, B) == pytest.approx(held_shares(masks, boxes))


def _rect(shape, x0, x1, y0=10, y1=190):
    m = np.zeros(shape, bool)
    m[y0:y1, x0:x1] = True
    return m


def test_two_people_apart_are_featurable_under_every_reading():
    shape = (200, 300)
    masks = np.stack([_rect(shape, 30, 80), _rect(shape, 200, 250)])
    n, found = fb.featurable(masks, [1, 1], [False, False], RATIOS, step=0.01)
    assert n == 2 and set(found.values()) == {2}


def test_three_people_in_a_row_are_featurable_as_far_as_each_reading_allows_slivers():
    shape = (200, 300)
    # Full-height people, each overlapping the next by a tenth: only 2:3 crops of at most 133 px
    # width hold one, so featuring one means holding its neighbours whole, leaving them out, or
    # taking a sliver of them.
    masks = np.stack([_rect(shape, 40, 89), _rect(shape, 85, 135), _rect(shape, 131, 181)])
    n, found = fb.featurable(masks, [1, 1, 1], [False] * 3, RATIOS, step=1 / 300)
    assert n == 3
    assert found[("metric", "90 %")] == found[("metric", "99 %")] == 3
    assert found[("no sliver", "90 %")] == found[("no sliver", "99 %")] == 3   # neighbours held 90-92 %
    # direct's rule: the right one alone (from where the middle one ends), and the middle one with
    # the left one out and the right one whole, each held by 90-93 %; none held by 99 %
    assert found[("direct", "90 %")] == 2 and found[("direct", "99 %")] == 0
    # crowd outlines are no subjects; objects outside the cut classes neither count nor block
    assert fb.featurable(masks, [1, 1, 1], [True] * 3, RATIOS, step=0.02)[0] == 0
    n, found = fb.featurable(masks, [1, 61, 1], [False] * 3, RATIOS, step=1 / 300)
    assert n == 2 and found[("direct", "99 %")] == 2
