"""Box arithmetic shared by the detectors: IoU and non-maximum suppression.

Boxes here are ``(N, 4)`` float arrays of corners ``x1, y1, x2, y2`` in pixels.

Examples
--------
>>> b = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60]], float)
>>> nms(b, np.array([0.9, 0.8, 0.7]), iou=0.5).tolist()
[0, 2]
>>> nms(b, np.array([0.9, 0.8, 0.7]), iou=0.5, classes=np.array([0, 1, 0])).tolist()
[0, 1, 2]
"""

from __future__ import annotations

import numpy as np

__all__ = ["iou_matrix", "nms"]


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Intersection over union of every box of ``a`` with every box of ``b``: shape ``(len(a), len(b))``."""
    a = np.asarray(a, np.float64).reshape(-1, 4)
    b = np.asarray(b, np.float64).reshape(-1, 4)
    ix = np.clip(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    iy = np.clip(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    inter = ix * iy
    area_a = (a[:, 2] - a[:, 0]).clip(0) * (a[:, 3] - a[:, 1]).clip(0)
    area_b = (b[:, 2] - b[:, 0]).clip(0) * (b[:, 3] - b[:, 1]).clip(0)
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def nms(boxes: np.ndarray, scores: np.ndarray, *, iou: float, classes: np.ndarray | None = None) -> np.ndarray:
    """Indices of the boxes kept by greedy non-maximum suppression, best score first.

    A box is dropped when a better-scored kept box overlaps it with IoU above
    ``iou``; with ``classes``, only boxes of the same class suppress each
    other (per-class NMS, as COCO detectors are evaluated).

    Parameters
    ----------
    boxes : ndarray of shape (N, 4)
        Corners ``x1, y1, x2, y2``.
    scores : ndarray of shape (N,)
    iou : float
        Overlap above which the weaker box goes.
    classes : ndarray of int, shape (N,), optional

    Returns
    -------
    ndarray of int
    """
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    scores = np.asarray(scores, np.float64).reshape(-1)
    if classes is not None:
        # Shifting each class to its own far-away region makes one pass per-class.
        classes = np.asarray(classes).reshape(-1)
        span = float(np.abs(boxes).max(initial=0.0)) * 2 + 1
        boxes = boxes + (classes.astype(np.float64) * span)[:, None]
    order = np.argsort(-scores, kind="stable")
    keep: list[int] = []
    overlaps = iou_matrix(boxes[order], boxes[order])
    alive = np.ones(len(order), bool)
    for i in range(len(order)):
        if not alive[i]:
            continue
        keep.append(int(order[i]))
        alive &= ~(overlaps[i] > iou)
        alive[: i + 1] = False
    return np.array(keep, dtype=np.intp)
