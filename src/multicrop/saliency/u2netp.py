"""U^2-Netp saliency with onnxruntime.

The weights (``u2netp.onnx``, 4.6 MB, Apache-2.0) ship inside multicrop
(:mod:`multicrop.models`), checked against their SHA-256 when first loaded,
and run through the shared :func:`multicrop.models.onnx_session`.
:func:`thread_count` and :data:`MAX_THREADS` are re-exported from
:mod:`multicrop.models.sessions`, where the one thread-count rule lives.
"""

from __future__ import annotations

import cv2
import numpy as np

from ..models import MAX_THREADS, onnx_session, thread_count

__all__ = ["u2netp_saliency", "thread_count", "VERSION", "INPUT_SIZE", "MAX_THREADS"]

VERSION = "u2netp-1"
INPUT_SIZE = 320
_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
_STD = np.array([0.229, 0.224, 0.225], np.float32)


def u2netp_saliency(image: np.ndarray, *, threads: int | None = None) -> np.ndarray:
    """U^2-Netp salient-object map of an RGB image.

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
    threads : int, optional
        onnxruntime intra-op threads (default :func:`thread_count`).

    Returns
    -------
    ndarray of float32, shape (H, W), values in [0, 1]

    References
    ----------
    X. Qin et al., "U^2-Net: Going deeper with nested U-structure for salient
    object detection", Pattern Recognition 106, 2020.
    """
    h, w = image.shape[:2]
    x = cv2.resize(image, (INPUT_SIZE, INPUT_SIZE), interpolation=cv2.INTER_AREA).astype(np.float32)
    x /= max(float(x.max()), 1e-6)
    x = (x - _MEAN) / _STD
    x = np.ascontiguousarray(x.transpose(2, 0, 1)[None])
    sess = onnx_session("u2netp", threads=thread_count() if threads is None else int(threads))
    out = sess.run(None, {sess.get_inputs()[0].name: x})[0][0, 0]
    lo, hi = float(out.min()), float(out.max())
    out = (out - lo) / (hi - lo) if hi > lo else np.zeros_like(out)
    return cv2.resize(out.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR).clip(0, 1)
