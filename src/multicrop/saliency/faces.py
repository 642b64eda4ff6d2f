"""Face detection with YuNet (ONNX file shipped in :mod:`multicrop.models`).

Run by onnxruntime (:func:`multicrop.models.yunet.yunet_faces`, shared with
the ``yunet`` detector of :mod:`multicrop.detectors`).  Faces raise the saliency map so that
the partitioner and the scorer keep faces whole.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..geometry import Box
from ..models import thread_count
from ..models.yunet import yunet_faces
from ..serialize import Serializable

__all__ = ["Face", "detect_faces", "add_faces"]


@dataclass(frozen=True)
class Face(Serializable):
    """A detected face: ``box`` in the input image's pixels and a confidence."""

    box: Box
    score: float


def detect_faces(image: np.ndarray, *, score_threshold: float = 0.7, threads: int | None = None) -> list[Face]:
    """Faces in an RGB image, largest first.

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
    score_threshold : float
        Minimum YuNet confidence.
    threads : int, optional
        onnxruntime intra-op threads (default :func:`multicrop.models.thread_count`).
    """
    h, w = image.shape[:2]
    boxes, scores, _ = yunet_faces(image, threads=thread_count() if threads is None else threads,
                                   score_threshold=score_threshold)
    faces = []
    for (x1, y1, x2, y2), score in zip(boxes, scores):
        box = Box.from_corners(float(x1), float(y1), float(x2), float(y2)).clip(w, h)
        if box.area > 0:
            faces.append(Face(box, float(score)))
    return sorted(faces, key=lambda fc: -fc.box.area)


def add_faces(saliency: np.ndarray, faces: list[Face], *, weight: float = 1.0) -> np.ndarray:
    """Return a copy of ``saliency`` with each face box raised to at least ``weight``.

    The face box is grown by 20 % (hair, chin) before it is painted.
    """
    out = saliency.astype(np.float32, copy=True)
    h, w = out.shape
    for face in faces:
        b = face.box
        g = Box(b.x - 0.1 * b.w, b.y - 0.15 * b.h, 1.2 * b.w, 1.3 * b.h).clip(w, h).round()
        sl = out[int(g.y): int(g.y2), int(g.x): int(g.x2)]
        np.maximum(sl, weight, out=sl)
    return np.clip(out, 0, max(1.0, weight))
