"""U^2-Netp saliency with onnxruntime.

The weights (``u2netp.onnx``, 4.6 MB, Apache-2.0) ship inside multicrop
(:mod:`multicrop.models`), checked against their SHA-256 when first loaded.
"""

from __future__ import annotations

import functools
import os

import cv2
import numpy as np

from ..models import model_path

__all__ = ["u2netp_saliency", "thread_count", "VERSION", "INPUT_SIZE", "MAX_THREADS"]

VERSION = "u2netp-1"
INPUT_SIZE = 320
_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
_STD = np.array([0.229, 0.224, 0.225], np.float32)


@functools.lru_cache(maxsize=4)
def _session(threads: int):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    # The arena keeps ~200 MB of activations after a run; without it peak and
    # steady memory drop and a 320x320 run is as fast (measured, 2 cores).
    opts.enable_cpu_mem_arena = False
    # Idle worker threads sleep instead of spinning: the stages after saliency
    # (and other processes on a small machine) get the cores back.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(model_path("u2netp")), sess_options=opts, providers=["CPUExecutionProvider"])


#: Most intra-op threads one process gives onnxruntime by default (a 320x320
#: U^2-Netp run gains little beyond this).
MAX_THREADS = 4


def thread_count(workers: int = 1) -> int:
    """Threads one process uses for onnxruntime (and, in evaluation workers, OpenMP and libvips).

    The one source of truth: ``MULTICROP_THREADS`` if set, else the CPUs
    shared out among ``workers`` processes, at most :data:`MAX_THREADS`.

    Examples
    --------
    >>> 1 <= thread_count() <= MAX_THREADS or "MULTICROP_THREADS" in os.environ
    True
    """
    env = os.environ.get("MULTICROP_THREADS")
    if env:
        return max(1, int(env))
    return max(1, min(MAX_THREADS, (os.cpu_count() or 1) // max(workers, 1)))


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
    sess = _session(thread_count() if threads is None else int(threads))
    out = sess.run(None, {sess.get_inputs()[0].name: x})[0][0, 0]
    lo, hi = float(out.min()), float(out.max())
    out = (out - lo) / (hi - lo) if hi > lo else np.zeros_like(out)
    return cv2.resize(out.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR).clip(0, 1)
