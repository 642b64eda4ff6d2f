"""Masks of detected things from the saliency inside their boxes (:mod:`multicrop.crop.masks`)."""

from __future__ import annotations

import numpy as np
import pytest

from multicrop.crop.masks import MASK_KINDS, TRUST_CUT, BoxMask, box_mask, box_masks, otsu_threshold
from multicrop.errors import InvalidParameterError
from multicrop.geometry import Box


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.logical_and(a, b).sum() / np.logical_or(a, b).sum())


def _box_pixels(shape, box: Box) -> np.ndarray:
    m = np.zeros(shape, bool)
    m[int(box.y):int(box.y2), int(box.x):int(box.x2)] = True
    return m


def _scene(rng=None):
    """A blurred L-shaped thing (a giraffe seen as neck and body) on faint noise, in a loose box."""
    rng = rng or np.random.default_rng(0)
    thing = np.zeros((120, 160), bool)
    thing[30:90, 50:70] = True  # neck
    thing[70:95, 50:110] = True  # body
    sal = np.where(thing, 0.85, 0.05) + rng.normal(0, 0.02, thing.shape)
    import cv2

    sal = cv2.GaussianBlur(sal.astype(np.float32), (5, 5), 0)
    return np.clip(sal, 0, 1).astype(np.float32), thing, Box(40, 22, 80, 82)


@pytest.mark.parametrize("threshold", ["peak", "otsu"])
def test_mask_beats_the_loose_box(threshold):
    sal, thing, box = _scene()
    m = box_mask(sal, box, threshold=threshold)
    assert m.from_saliency and m.fallback == ""
    assert m.good() and m.trust >= TRUST_CUT
    got = m.mask > 0.5
    assert _iou(got, thing) > 0.85 > _iou(_box_pixels(sal.shape, box), thing) + 0.3
    assert not got[~_box_pixels(sal.shape, box)].any()  # zero outside the box
    assert m.mask.dtype == np.float32 and set(np.unique(m.mask)) <= {0.0, 1.0}


def test_flat_map_falls_back_to_the_box():
    sal = np.full((60, 80), 0.6, np.float32)
    m = box_mask(sal, Box(10, 10, 40, 30))
    assert m.fallback == "flat" and m.trust == 0.0 and not m.good(0.0)
    np.testing.assert_array_equal(m.mask > 0, _box_pixels(sal.shape, Box(10, 10, 40, 30)))
    assert m.fill == pytest.approx(1.0)


def test_noise_without_a_thing_falls_back():
    sal = np.random.default_rng(1).uniform(0.4, 0.6, (60, 80)).astype(np.float32)
    m = box_mask(sal, Box(10, 10, 40, 30))
    assert not m.from_saliency and m.fill == pytest.approx(1.0)


def test_weak_saliency_falls_back():
    sal = np.zeros((60, 80), np.float32)
    sal[20:30, 20:30] = 0.1  # under min_peak: the model does not see the thing
    m = box_mask(sal, Box(10, 10, 40, 30))
    assert m.fallback == "weak" and m.fill == pytest.approx(1.0)
    assert box_mask(sal, Box(10, 10, 40, 30), min_peak=0.05).from_saliency


def test_thing_filling_its_box_keeps_the_box():
    sal = np.zeros((60, 80), np.float32)
    sal[10:40, 10:50] = 0.9
    assert box_mask(sal, Box(10, 10, 41, 30)).fallback == "fills box"  # 1200 of 1230 pixels
    assert box_mask(sal, Box(10, 10, 40, 30)).fallback == "flat"  # one level: nothing to split


def test_speck_falls_back():
    sal = np.zeros((100, 100), np.float32)
    sal[50:52, 50:52] = 1.0
    assert box_mask(sal, Box(10, 10, 80, 80)).fallback == "speck"


def test_holes_are_filled_and_specks_dropped():
    sal = np.zeros((80, 80), np.float32)
    sal[20:60, 20:60] = 0.9
    sal[35:45, 35:45] = 0.0  # a dark patch of the thing
    sal[12, 12] = 0.8  # a speck far lighter than the thing
    m = box_mask(sal, Box(10, 10, 60, 60))
    assert m.mask[40, 40] == 1.0 and m.mask[12, 12] == 0.0
    assert int(m.mask.sum()) == 1600
    assert box_mask(sal, Box(10, 10, 60, 60), fill_holes=False).mask[40, 40] == 0.0


def test_box_at_the_image_edge_is_clipped():
    sal = np.zeros((60, 80), np.float32)
    sal[0:25, 60:80] = 0.9  # a thing cut by the top-right corner
    m = box_mask(sal, Box(50, -10, 45, 45))
    assert m.box == Box(50, 0, 30, 35)
    assert m.from_saliency and int(m.mask.sum()) == 25 * 20
    assert m.mask.shape == sal.shape


@pytest.mark.parametrize("box, reason", [(Box(10, 10, 0, 20), "empty"), (Box(10, 10, 20, 0), "empty"),
                                         (Box(200, 200, 10, 10), "empty"), (Box(-30, 5, 10, 10), "empty"),
                                         (Box(10, 10, 5, 30), "small")])
def test_degenerate_boxes(box, reason):
    sal = np.zeros((60, 80), np.float32)
    sal[10:40, 10:40] = 0.9
    m = box_mask(sal, box)
    assert m.fallback == reason and m.trust == 0.0
    assert m.mask.shape == sal.shape
    if reason == "empty":
        assert m.mask.sum() == 0 and m.fill == 0.0


def test_exclude_leaves_pixels_out():
    sal = np.zeros((60, 80), np.float32)
    sal[10:50, 10:40] = 0.9
    person = np.zeros(sal.shape, bool)
    person[10:30, 10:40] = True
    m = box_mask(sal, Box(5, 5, 40, 50), exclude=person)
    assert m.from_saliency and not (m.mask[person] > 0).any() and int(m.mask.sum()) == 20 * 30


def test_overlapping_boxes_share_no_pixel():
    sal = np.zeros((60, 100), np.float32)
    sal[15:45, 10:45] = 0.9
    sal[15:45, 50:85] = 0.85
    boxes = [Box(5, 10, 50, 40), Box(40, 10, 50, 40)]  # each box takes in part of the other thing
    for rule in ("smaller", "nearest"):
        a, b = box_masks(sal, boxes, overlap=rule)
        assert float((a.mask * b.mask).sum()) == 0.0
        assert int(a.mask.sum()) == 30 * 35 and int(b.mask.sum()) == 30 * 35
    a, b = box_masks(sal, boxes, overlap="both")
    assert float((a.mask * b.mask).sum()) > 0


def test_smaller_box_in_front_keeps_its_pixels():
    sal = np.zeros((80, 120), np.float32)
    sal[10:70, 10:110] = 0.7  # a bus
    sal[40:70, 50:70] = 0.95  # a dog in front of it
    bus, dog = box_masks(sal, [Box(5, 5, 110, 70), Box(48, 38, 24, 34)])
    assert dog.from_saliency and dog.mask[55, 60] == 1.0 and bus.mask[55, 60] == 0.0
    assert bus.mask[20, 20] == 1.0


def test_a_mask_left_with_nothing_falls_back():
    sal = np.zeros((60, 80), np.float32)
    sal[20:40, 20:40] = 0.9
    big, small = box_masks(sal, [Box(15, 15, 30, 30), Box(18, 18, 24, 24)], overlap="smaller")
    assert small.from_saliency and big.fallback == "taken"


def test_batch_equals_single_without_overlap():
    sal, thing, box = _scene()
    (m,) = box_masks(sal, [box])
    np.testing.assert_array_equal(m.mask, box_mask(sal, box).mask)
    assert box_masks(sal, []) == ()


def test_otsu_threshold_splits_two_levels():
    v = np.r_[np.full(100, 0.1), np.full(50, 0.8)]
    t, eta = otsu_threshold(v)
    assert 0.1 < t <= 0.8 and eta == pytest.approx(1.0)
    assert otsu_threshold(np.full(10, 0.5))[1] == 0.0
    assert otsu_threshold(np.array([]))[1] == 0.0
    # A uniform ramp: between-class over total variance is 3/4 (a known closed form).
    assert otsu_threshold(np.linspace(0, 1, 100001))[1] == pytest.approx(0.75, abs=0.01)


@pytest.mark.parametrize("kwargs", [{"floor": 1.5}, {"min_part": -0.1}, {"min_fill": 0.9, "max_fill": 0.5},
                                    {"min_side": -1}, {"grow": 0.9}, {"threshold": "mean"}, {"min_peak": True}])
def test_bad_options_raise(kwargs):
    with pytest.raises(InvalidParameterError):
        box_mask(np.zeros((10, 10), np.float32), Box(0, 0, 10, 10), **kwargs)


def test_bad_inputs_raise():
    with pytest.raises(InvalidParameterError, match="2-D"):
        box_mask(np.zeros((10, 10, 3), np.float32), Box(0, 0, 5, 5))
    with pytest.raises(InvalidParameterError, match=r"\[0, 1\]"):
        box_mask(np.full((10, 10), 2.0, np.float32), Box(0, 0, 5, 5))
    with pytest.raises(InvalidParameterError, match="exclude"):
        box_mask(np.zeros((10, 10), np.float32), Box(0, 0, 5, 5), exclude=np.zeros((5, 5), bool))
    with pytest.raises(InvalidParameterError, match="overlap"):
        box_masks(np.zeros((10, 10), np.float32), [Box(0, 0, 5, 5)], overlap="bigger")


def test_recommendation_constants():
    assert set(MASK_KINDS) <= {"animal", "vehicle", "object"} and 0 < TRUST_CUT < 1
    assert isinstance(box_mask(np.zeros((10, 10), np.float32), Box(0, 0, 5, 5)), BoxMask)
