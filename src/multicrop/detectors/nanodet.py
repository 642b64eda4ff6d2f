"""NanoDet COCO object detector: preprocessing and decoding of its raw outputs.

The network (``nanodet.onnx``, :mod:`multicrop.models`) takes one
``1 x 3 x 416 x 416`` image and returns, for each of the strides 8, 16 and 32
(feature maps of 52², 26² and 13² cells), two tensors per cell: 80 class
scores (already passed through a sigmoid) and 44 box values, four
distributions of 11 bins over the distances from the cell's centre to the
box's left, top, right and bottom sides (generalised focal loss, Li et al.
2020).  Decoding follows NanoDet's GFL head: a softmax over the 11 bins, the
expected bin ``sum_i p_i * i``, times the stride, measured from the cell's
centre ``((col + 0.5) * stride, (row + 0.5) * stride)``; then per-class
non-maximum suppression, and one name per object within a kind
(:data:`CROSS_CLASS_IOU`).

The image is shrunk (or enlarged) to fit 416 x 416 keeping its aspect ratio,
placed in the top-left corner, the rest filled with the mean colour (zero
after normalisation), and fed as NanoDet was trained: BGR, minus
the mean ``(103.53, 116.28, 123.675)``, divided by ``(57.375, 57.12, 58.395)``
(0-255 scale).  The TF.js conversion keeps that normalisation outside the
graph.  Measured on the 100 coco-subjects photos: fed RGB in ``[0, 1]``
instead (as the TF.js demo code does), it finds 66 % of the prominent people
instead of 85 % and 58 % of the prominent animals instead of 92 % (threshold
0.2, stretched input); stretching the photo to the square (as NanoDet's own
test pipeline does) instead of letterboxing it finds 75 % of the prominent
people instead of 84 %, at the same precision (threshold 0.3).

References
----------
RangiLyu, "NanoDet: Super fast and lightweight anchor-free object detection
model", https://github.com/RangiLyu/nanodet, 2020.
X. Li et al., "Generalized Focal Loss: Learning qualified and distributed
bounding boxes for dense object detection", NeurIPS 2020.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from ..geometry import Box
from ..models import MODELS, onnx_session
from .base import DETECTORS, Detector
from .boxes import nms
from .coco import CATEGORY_IDS, NAMES, kind_of
from .types import Detection

__all__ = ["NanoDet", "INPUT_SIZE", "STRIDES", "REG_BINS", "MIN_SCORE", "preprocess", "decode", "raw_outputs",
           "DECODE_VERSION"]

INPUT_SIZE = 416
STRIDES = (8, 16, 32)
#: Bins of each side's distance distribution (NanoDet's ``reg_max`` + 1).
REG_BINS = 11
NUM_CLASSES = 80
#: Version of the pre- and post-processing below and of MIN_SCORE (bump when the detections
#: of the same file change, a default threshold included).
DECODE_VERSION = "2"
#: Confidence threshold.  On the 100 coco-subjects photos (COCO's own
#: outlines; a box is found when a detection of its class overlaps it at IoU
#: 0.5) 0.3 finds 84 % of the 79 prominent people (at least 3 % of the
#: frame), 81 % of the 36 prominent animals and 67 % of the 21 prominent
#: vehicles (76 % under any vehicle name: trucks found as cars), and 69 % of
#: its detections of at least 3 % of the frame are right (58 % of all of
#: them: the wrong ones are mostly small objects).  0.25 finds 87 % of the
#: people at 61 % precision, 0.4 finds 75 % at 84 %.  Reproduce with
#: ``python benchmarks/bench_detectors.py --no-speed --labelled DIR``.
MIN_SCORE = 0.3
#: IoU above which a weaker box of the same class is suppressed (NanoDet's own test setting).
NMS_IOU = 0.6
#: IoU above which two boxes of different classes of one kind are taken for
#: one object named twice (a cat scored as cat and dog, a truck as truck and
#: car): only the best-scored name stays.  Kinds never suppress each other, so
#: a person is never lost to an animal's box.  On coco-subjects at MIN_SCORE
#: this raises the precision of the detections of at least 3 % of the frame
#: from 0.63 to 0.69 and finds every person, animal, vehicle and object it
#: found before under some name of its kind (one prominent vehicle and eight
#: prominent objects now carry a sibling's name).
CROSS_CLASS_IOU = 0.7
#: At most this many cells per stride enter NMS (NanoDet: ``nms_pre = 1000``).
PRE_NMS = 1000


_MEAN_BGR = np.array([103.53, 116.28, 123.675], np.float32)
_INV_STD_BGR = 1.0 / np.array([57.375, 57.12, 58.395], np.float32)


#: Index of each class's kind (person, animal, vehicle, object): the groups of the cross-class NMS.
_KIND_INDEX = np.array([("person", "animal", "vehicle", "object").index(kind_of(c)) for c in CATEGORY_IDS])


def preprocess(image: np.ndarray) -> tuple[np.ndarray, float]:
    """Network input of an ``(H, W, 3)`` uint8 RGB image, and the scale from image to input pixels.

    Returns
    -------
    x : ndarray of float32, shape (1, 3, 416, 416)
        BGR, normalised, the image letterboxed into the top-left corner.
    scale : float
        Input pixels per image pixel.
    """
    h, w = image.shape[:2]
    scale = INPUT_SIZE / max(h, w)
    nw, nh = max(1, min(INPUT_SIZE, round(w * scale))), max(1, min(INPUT_SIZE, round(h * scale)))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    small = cv2.resize(image, (nw, nh), interpolation=interp).astype(np.float32)
    x = np.zeros((INPUT_SIZE, INPUT_SIZE, 3), np.float32)  # the mean colour, after normalisation
    x[:nh, :nw] = (small[..., ::-1] - _MEAN_BGR) * _INV_STD_BGR
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None]), scale


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def decode(
    scores: dict[int, np.ndarray],
    distributions: dict[int, np.ndarray],
    *,
    min_score: float,
    input_size: int = INPUT_SIZE,
    nms_iou: float = NMS_IOU,
    cross_class_iou: float | None = CROSS_CLASS_IOU,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boxes, scores and class indices from NanoDet's raw outputs.

    Parameters
    ----------
    scores : dict of int to ndarray of shape (n*n, 80)
        Class scores in ``[0, 1]`` per stride (cells in row-major order).
    distributions : dict of int to ndarray of shape (n*n, 4 * REG_BINS)
        Box-side logits per stride (left, top, right, bottom; 11 bins each).
    min_score : float
        Cells whose class score is below this are dropped before NMS.
    input_size : int
        Side of the square network input, in pixels.
    nms_iou : float
        Per-class NMS overlap.
    cross_class_iou : float or None
        Overlap above which boxes of different classes suppress each other
        (``None``: never).

    Returns
    -------
    boxes : ndarray of shape (N, 4)
        Corners ``x1, y1, x2, y2`` in network-input pixels, clipped to it.
    scores : ndarray of shape (N,)
    classes : ndarray of int, shape (N,)
        Class index 0-79 (:data:`multicrop.detectors.coco.NAMES`).

    Examples
    --------
    A single confident cell at stride 32, row 2, column 3 (centre 112, 80)
    whose four distributions peak sharply at bin 1 (32 px each side):

    >>> s = {k: np.zeros(((416 // k) ** 2, 80), np.float32) for k in STRIDES}
    >>> d = {k: np.zeros(((416 // k) ** 2, 44), np.float32) for k in STRIDES}
    >>> s[32][2 * 13 + 3, 16] = 0.9
    >>> d[32][2 * 13 + 3] = np.tile(np.eye(11)[1] * 50, 4)
    >>> b, sc, c = decode(s, d, min_score=0.5)
    >>> b.round(1).tolist(), sc.round(2).tolist(), c.tolist()
    ([[80.0, 48.0, 144.0, 112.0]], [0.9], [16])
    """
    all_boxes, all_scores, all_classes = [], [], []
    for stride in STRIDES:
        n = int(np.ceil(input_size / stride))
        sc = np.asarray(scores[stride], np.float32).reshape(n * n, -1)
        best = sc.max(axis=1)
        cells = np.flatnonzero(best >= min_score)
        if cells.size > PRE_NMS:
            cells = cells[np.argsort(-best[cells], kind="stable")[:PRE_NMS]]
        if cells.size == 0:
            continue
        dist = np.asarray(distributions[stride], np.float32).reshape(n * n, 4, -1)[cells]
        bins = dist.shape[-1]
        side = (_softmax(dist, axis=2) * np.arange(bins, dtype=np.float32)).sum(axis=2) * stride
        cx = (cells % n + 0.5) * stride
        cy = (cells // n + 0.5) * stride
        corners = np.stack([cx - side[:, 0], cy - side[:, 1], cx + side[:, 2], cy + side[:, 3]], axis=1)
        corners = corners.clip(0, input_size)
        # Every class above the threshold in a cell is a candidate (multi-label, as mmdetection's multiclass_nms).
        ci, cls = np.nonzero(sc[cells] >= min_score)
        all_boxes.append(corners[ci])
        all_scores.append(sc[cells][ci, cls])
        all_classes.append(cls)
    if not all_boxes:
        return np.zeros((0, 4)), np.zeros(0), np.zeros(0, np.intp)
    boxes = np.concatenate(all_boxes).astype(np.float64)
    scs = np.concatenate(all_scores).astype(np.float64)
    classes = np.concatenate(all_classes).astype(np.intp)
    keep = nms(boxes, scs, iou=nms_iou, classes=classes)
    if cross_class_iou is not None:
        keep = keep[nms(boxes[keep], scs[keep], iou=cross_class_iou, classes=_KIND_INDEX[classes[keep]])]
    return boxes[keep], scs[keep], classes[keep]


def raw_outputs(
    image: np.ndarray, *, threads: int
) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray], float]:
    """Class scores and box distributions per stride of the network run on ``image``, and the input scale."""
    sess = onnx_session("nanodet", threads=threads)
    x, scale = preprocess(image)
    outs = sess.run(None, {sess.get_inputs()[0].name: x})
    scores: dict[int, np.ndarray] = {}
    dists: dict[int, np.ndarray] = {}
    for a in outs:
        a = a.reshape(a.shape[-2], a.shape[-1])
        stride = INPUT_SIZE // round(np.sqrt(a.shape[0]))
        (scores if a.shape[1] == NUM_CLASSES else dists)[stride] = a
    return scores, dists, scale


@DETECTORS.register
class NanoDet(Detector):
    name = "nanodet"
    models = ("nanodet",)
    version = f"nanodet-{DECODE_VERSION}-{MODELS['nanodet'].version}"
    description = "NanoDet COCO objects: 80 classes, people, animals, vehicles (onnxruntime; shipped weights)"
    kinds = ("person", "animal", "vehicle", "object")
    default_min_score = MIN_SCORE

    def __call__(self, image: np.ndarray, *, found: Sequence[Detection] = ()) -> tuple[Detection, ...]:
        h, w = image.shape[:2]
        scores, dists, scale = raw_outputs(image, threads=self.threads)
        boxes, scs, classes = decode(scores, dists, min_score=self.min_score)
        out = []
        for (x1, y1, x2, y2), score, c in zip(boxes / scale, scs, classes):
            box = Box.from_corners(float(x1), float(y1), float(x2), float(y2)).clip(w, h)
            if box.area <= 0:
                continue
            cid = CATEGORY_IDS[int(c)]
            out.append(Detection(kind=kind_of(cid), label=NAMES[int(c)], class_id=cid, box=box,
                                 score=float(min(score, 1.0)), detector=self.name))
        return tuple(out)
