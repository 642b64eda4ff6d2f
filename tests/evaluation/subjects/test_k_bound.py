"""benchmarks/bench_k_bound.py: the crops it keeps as clean and the exact search for distinct ones."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from multicrop.crop.direct.rules import NoSlicedBody
from multicrop.evaluation.subjects.metrics import SubjectRules, measure_photo
from multicrop.geometry import Box
from multicrop.ratios import Ratio

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import bench_k_bound as kb  # noqa: E402

RATIOS = (Ratio(2, 3), Ratio(3, 2))
RULES = SubjectRules()


def _boxes(B: np.ndarray) -> list[Box]:
    return [Box(float(x0), float(y0), float(x1 - x0), float(y1 - y0)) for x0, y0, x1, y1 in B]


def test_candidates_keep_the_pools_minimum_long_side_and_lie_in_the_frame():
    B = kb.candidate_boxes(300, 200, RATIOS, 60, 0.02)
    w, h = B[:, 2] - B[:, 0], B[:, 3] - B[:, 1]
    assert len(B) > 100
    assert (np.maximum(w, h) >= 60).all()
    assert (B[:, :2] >= 0).all() and (B[:, 2] <= 300).all() and (B[:, 3] <= 200).all()
    assert np.all(np.isclose(w / h, 2 / 3, atol=0.03) | np.isclose(w / h, 1.5, atol=0.03))


def test_clean_crops_agree_with_the_benchmarks_own_verdicts():
    # Two people and a dog on a 300 x 200 frame; every crop the search calls clean under the metric's
    # reading is neither cut nor empty when the benchmark itself measures it, and every other crop is.
    # The search reads the metric's version 1: a person cut at a portrait line is a cut there.
    shape = (200, 300)
    masks = np.zeros((3, *shape), bool)
    masks[0, 20:180, 20:70] = True
    masks[1, 30:190, 120:170] = True
    masks[2, 140:190, 220:290] = True
    cats = [1, 1, 18]
    B = kb.candidate_boxes(300, 200, RATIOS, 60, 0.05)
    lo, hi, inclusive, whole = kb.readings_of(RULES, NoSlicedBody())["metric"]
    ok = kb.clean_crops(masks, cats, [False] * 3, B, rules=RULES, lo=lo, hi=hi, inclusive=inclusive, whole=whole)
    assert 0 < ok.sum() < len(B)
    for box, clean in zip(_boxes(B), ok):
        m = measure_photo(masks, cats, [box])
        assert clean == (not (m.subject_cut or m.empty or m.crops[0].portraits)), box


def test_a_subject_whole_is_stricter_than_not_empty():
    shape = (200, 300)
    masks = np.zeros((1, *shape), bool)
    masks[0, 20:180, 100:200] = True
    B = kb.candidate_boxes(300, 200, RATIOS, 60, 0.05)
    args = dict(rules=RULES, lo=RULES.slice_min, hi=RULES.slice_max, inclusive=True)
    loose = kb.clean_crops(masks, [61], [False], B, **args)  # a table: no cut class, half of it is enough
    strict = kb.clean_crops(masks, [61], [False], B, whole=RULES.whole, **args)
    assert (strict <= loose).all() and strict.sum() < loose.sum()


@pytest.mark.parametrize(("boxes", "iou", "k", "expected"), [
    ([], 0.6, 3, 0),
    ([(0, 0, 10, 10)], 0.6, 3, 1),
    ([(0, 0, 10, 10), (1, 0, 11, 10)], 0.6, 3, 1),           # IoU 0.82: one distinct crop
    ([(0, 0, 10, 10), (20, 0, 30, 10)], 0.6, 3, 2),
    ([(0, 0, 10, 10), (20, 0, 30, 10), (1, 0, 11, 10)], 0.6, 3, 2),
    ([(0, 0, 10, 10), (20, 0, 30, 10), (40, 0, 50, 10)], 0.6, 3, 3),
    ([(0, 0, 10, 10), (20, 0, 30, 10), (40, 0, 50, 10)], 0.6, 2, 2),
    # two near-duplicate pairs far apart: four compatible pairs, no three pairwise distinct
    ([(0, 0, 10, 10), (1, 0, 11, 10), (20, 0, 30, 10), (21, 0, 31, 10)], 0.6, 3, 2),
])
def test_most_distinct_is_exact(boxes, iou, k, expected):
    assert kb.most_distinct(np.array(boxes, int).reshape(-1, 4), iou, k) == expected


def test_most_distinct_refuses_a_k_it_cannot_search():
    B = np.array([(0, 0, 10, 10), (20, 0, 30, 10), (40, 0, 50, 10), (60, 0, 70, 10)])
    with pytest.raises(ValueError, match="up to 3"):
        kb.most_distinct(B, 0.6, 4)


def test_by_content_two_framings_of_the_same_things_are_one():
    far = np.array([(0, 0, 10, 10), (20, 0, 30, 10), (40, 0, 50, 10)])
    same = np.array([[True, False]] * 3)
    assert kb.most_distinct(far, 0.6, 3) == 3
    assert kb.most_distinct(far, 0.6, 3, same) == 1
    # a wide view of both things and a zoom to each are three distinct slides, however they overlap
    nested = np.array([(0, 0, 60, 40), (0, 0, 20, 20), (40, 0, 60, 20)])
    held = np.array([[True, True], [True, False], [False, True]])
    assert kb.most_distinct(nested, 0.6, 3, held) == 3
    assert kb.most_distinct(nested, 0.6, 3, np.array([[True, True], [True, False], [True, False]])) == 2
