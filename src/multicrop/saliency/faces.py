"""Face detection with YuNet (ONNX file shipped in :mod:`multicrop.models`).

Run by OpenCV's ``cv2.FaceDetectorYN``.  Faces raise the saliency map so that
the partitioner and the scorer keep faces whole.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from ..geometry import Box
from ..models import model_path
from ..serialize import Serializable

__all__ = ["Face", "detect_faces", "add_faces"]

_MAX_SIDE = 960


@dataclass(frozen=True)
class Face(Serializable):
    """A detected face: ``box`` in the input image's pixels and a confidence."""

    box: Box
    score: float


def _detector(width: int, height: int, score_threshold: float) -> cv2.FaceDetectorYN:
    """A YuNet detector for ``width x height`` inputs.

    OpenCV 5 warns on every creation that its new DNN engine ignores the
    (default CPU) target; that line is noise to users, so warnings are
    silenced while the detector is built and the log level restored after.
    """
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(min(level, cv2.utils.logging.LOG_LEVEL_ERROR))
    try:
        return cv2.FaceDetectorYN.create(str(model_path("yunet")), "", (width, height), score_threshold, 0.3, 5000)
    finally:
        cv2.utils.logging.setLogLevel(level)


def detect_faces(image: np.ndarray, *, score_threshold: float = 0.7) -> list[Face]:
    """Faces in an RGB image, largest first.

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
    score_threshold : float
        Minimum YuNet confidence.
    """
    h, w = image.shape[:2]
    f = min(1.0, _MAX_SIDE / max(h, w))
    small = image if f == 1.0 else cv2.resize(image, (max(1, round(w * f)), max(1, round(h * f))),
                                                interpolation=cv2.INTER_AREA)
    sh, sw = small.shape[:2]
    det = _detector(sw, sh, score_threshold)
    _, raw = det.detect(cv2.cvtColor(small, cv2.COLOR_RGB2BGR))
    faces = []
    for row in [] if raw is None else raw:
        x, y, bw, bh = (float(v) / f for v in row[:4])
        box = Box.from_corners(x, y, x + bw, y + bh).clip(w, h)
        if box.area > 0:
            faces.append(Face(box, float(row[14])))
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
