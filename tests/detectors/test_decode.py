"""NanoDet decoding, NMS and the COCO class table, on hand-made tensors (no model run)."""

from __future__ import annotations

import numpy as np
import pytest

from multicrop.detectors import coco, nanodet
from multicrop.detectors.boxes import iou_matrix, nms


def _empty():
    s = {k: np.zeros(((416 // k) ** 2, 80), np.float32) for k in nanodet.STRIDES}
    d = {k: np.zeros(((416 // k) ** 2, 44), np.float32) for k in nanodet.STRIDES}
    return s, d


def _peak(bins, distance_bins):
    """Logits of four distributions, each a sharp peak at its bin (softmax ~ one-hot)."""
    out = np.full((4, bins), -30.0, np.float32)
    for side, b in enumerate(distance_bins):
        out[side, b] = 30.0
    return out.reshape(-1)


@pytest.mark.parametrize("stride", nanodet.STRIDES)
def test_a_known_peak_decodes_to_the_known_box(stride):
    s, d = _empty()
    n = 416 // stride
    row, col = n // 2, n // 3
    cell = row * n + col
    s[stride][cell, 0] = 0.8  # person
    d[stride][cell] = _peak(11, (1, 2, 3, 4))  # left 1, top 2, right 3, bottom 4 strides
    boxes, scores, classes = nanodet.decode(s, d, min_score=0.3)
    cx, cy = (col + 0.5) * stride, (row + 0.5) * stride
    want = [cx - 1 * stride, cy - 2 * stride, cx + 3 * stride, cy + 4 * stride]
    np.testing.assert_allclose(boxes, [np.clip(want, 0, 416)], atol=1e-3)
    assert scores.tolist() == pytest.approx([0.8]) and classes.tolist() == [0]


def test_the_distance_is_the_expectation_of_the_softmax_not_its_argmax():
    s, d = _empty()
    s[16][0, 5] = 0.9
    # Two equal logits at bins 2 and 3: the expected distance is 2.5 bins (argmax would say 2).
    logits = np.full((4, 11), -30.0, np.float32)
    logits[:, 2] = logits[:, 3] = 10.0
    d[16][0] = logits.reshape(-1)
    (box,), _, _ = nanodet.decode(s, d, min_score=0.5)
    # Cell (0, 0) at stride 16: centre (8, 8); 2.5 * 16 = 40 px each side, clipped at the image's corner.
    np.testing.assert_allclose(box, [0, 0, 48, 48], atol=1e-3)


def test_cells_below_the_threshold_and_duplicates_of_a_class_are_dropped():
    s, d = _empty()
    n = 52
    for cell, score in ((10 * n + 10, 0.9), (10 * n + 11, 0.6), (30 * n + 30, 0.2)):
        s[8][cell, 2] = score
        d[8][cell] = _peak(11, (3, 3, 3, 3))
    boxes, scores, classes = nanodet.decode(s, d, min_score=0.3)
    # The neighbour (IoU 0.71 with the best) goes; the weak cell never enters.
    assert scores.tolist() == pytest.approx([0.9]) and classes.tolist() == [2]


def test_one_object_named_twice_keeps_its_best_name_but_kinds_never_suppress_each_other():
    s, d = _empty()
    s[32][40, 15] = 0.7  # cat (index 15)
    s[32][40, 16] = 0.5  # dog (index 16), same cell, same box
    d[32][40] = _peak(11, (1, 1, 1, 1))
    _, scores, classes = nanodet.decode(s, d, min_score=0.3, cross_class_iou=None)
    assert classes.tolist() == [15, 16] and scores.tolist() == pytest.approx([0.7, 0.5])  # per-class NMS only
    _, scores, classes = nanodet.decode(s, d, min_score=0.3)
    assert classes.tolist() == [15] and scores.tolist() == pytest.approx([0.7])
    # A person and a chair on the very same box: two kinds, both stay.
    s, d = _empty()
    s[32][40, 0] = 0.6
    s[32][40, 56] = 0.9
    d[32][40] = _peak(11, (1, 1, 1, 1))
    _, _, classes = nanodet.decode(s, d, min_score=0.3)
    assert classes.tolist() == [56, 0]
    assert [coco.NAMES[i] for i in (15, 16, 56)] == ["cat", "dog", "chair"]
    assert [coco.CATEGORY_IDS[i] for i in (15, 16, 56)] == [17, 18, 62]


def test_nms_against_hand_computed_overlaps():
    boxes = np.array([[0, 0, 10, 10], [5, 0, 15, 10], [0, 0, 10, 10.5], [20, 20, 30, 30]], float)
    iou = iou_matrix(boxes, boxes)
    assert iou[0, 1] == pytest.approx(50 / 150) and iou[0, 2] == pytest.approx(100 / 105)
    assert iou[0, 3] == 0.0
    scores = np.array([0.5, 0.9, 0.8, 0.1])
    assert nms(boxes, scores, iou=0.3).tolist() == [1, 3]  # 1 removes 0 (1/3) and 2 (~0.32)
    assert nms(boxes, scores, iou=0.5).tolist() == [1, 2, 3]  # 2 removes 0 (0.95)
    # Per class: box 2 (class 1) no longer removes box 0 (class 0); all four stay, best first.
    assert nms(boxes, scores, iou=0.5, classes=np.array([0, 0, 1, 1])).tolist() == [1, 2, 0, 3]


def test_coco_table_matches_cocos_numbering():
    assert len(coco.NAMES) == len(coco.CATEGORY_IDS) == 80
    assert list(coco.CATEGORY_IDS) == sorted(set(coco.CATEGORY_IDS))
    missing = sorted(set(range(1, 91)) - set(coco.CATEGORY_IDS))
    assert missing == [12, 26, 29, 30, 45, 66, 68, 69, 71, 83]  # the ids COCO dropped before release
    named = dict(zip(coco.CATEGORY_IDS, coco.NAMES))
    assert (named[1], named[25], named[27], named[90]) == ("person", "giraffe", "backpack", "toothbrush")
    kinds = {cid: coco.kind_of(cid) for cid in coco.CATEGORY_IDS}
    assert [c for c, k in kinds.items() if k == "animal"] == list(range(16, 26))
    assert [c for c, k in kinds.items() if k == "vehicle"] == list(range(2, 10))
    assert kinds[1] == "person" and kinds[10] == "object" and kinds[62] == "object"
