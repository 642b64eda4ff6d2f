"""Subjects of a photo for direct selection: the salient blobs of its saliency map.

Strong subjects are connected components of the saliency at or above
``blob_level`` of its maximum (after a closing of ``blob_close`` of the long
side, so one subject is not split in two), with a peak of at least
``min_peak`` and a mass of at least ``min_blob_share`` of the largest.  *Weak*
subjects are those the saliency model barely marks (a thin rocket, a dark
figure on a dark ground): components above ``weak_floor`` of the maximum
that hold no strong subject, with a peak of at least ``weak_peak``, a mass
(pixels at or above ``blob_level`` of *their own* peak) between
``weak_share`` of the largest strong subject's and that subject's own mass,
at most ``max_weak`` of them (the heaviest).  Every weight is a field of
:class:`multicrop.crop.config.DirectConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from ..geometry import Box
from .config import DirectConfig

__all__ = ["Blob", "salient_blobs"]


@dataclass(frozen=True)
class Blob:
    """A salient subject: its bounding box, saliency mass, importance and label in the blob map."""

    box: Box
    mass: float
    importance: float
    label: int


def salient_blobs(saliency: np.ndarray, *, config: DirectConfig | None = None) -> tuple[list[Blob], np.ndarray]:
    """The salient subjects of ``saliency`` and the label map (0: background, else ``Blob.label``).

    Examples
    --------
    >>> sal = np.zeros((100, 200), np.float32); sal[20:60, 20:60] = 1; sal[30:50, 150:160] = 0.9
    >>> blobs, labels = salient_blobs(sal)
    >>> [(b.box.w, b.box.h) for b in blobs]
    [(40.0, 40.0), (10.0, 20.0)]
    """
    cfg = config or DirectConfig()
    s = np.asarray(saliency, dtype=np.float32)
    top = float(s.max()) if s.size else 0.0
    if top <= 0:
        return [], np.zeros(s.shape, np.int32)
    n, labels = _components(s >= cfg.blob_level * top, cfg.blob_close)
    if n <= 1:
        return [], np.zeros(s.shape, np.int32)
    flat = labels.ravel()
    mass = np.bincount(flat, weights=s.ravel(), minlength=n)
    peak = np.zeros(n)
    np.maximum.at(peak, flat, s.ravel())
    ids = [i for i in range(1, n) if peak[i] >= cfg.min_peak * top]
    biggest = max((mass[i] for i in ids), default=0.0)
    ids = [i for i in ids if mass[i] >= cfg.min_blob_share * biggest]
    found = sorted(((float(mass[i]), labels == i) for i in ids), key=lambda f: -f[0])
    if biggest > 0 and cfg.weak_peak < cfg.min_peak:
        weak = _weak_blobs(s, top, np.isin(labels, ids), biggest, cfg)
        found += sorted(weak, key=lambda f: -f[0])[: cfg.max_weak]
    found = found[: cfg.max_blobs]  # strong subjects first, then the weak ones
    out, label_map = [], np.zeros(s.shape, np.int32)
    for j, (m, where) in enumerate(found, start=1):
        ys, xs = np.nonzero(where)
        x, y = float(xs.min()), float(ys.min())
        box = Box(x, y, float(xs.max()) + 1 - x, float(ys.max()) + 1 - y)
        out.append(Blob(box, m, float((m / biggest) ** cfg.size_exponent), j))
        label_map[where] = j
    return out, label_map


def _components(mask: np.ndarray, close: float) -> tuple[int, np.ndarray]:
    """Connected components (8-connected) of ``mask`` after a closing of ``close`` of the long side."""
    m = mask.astype(np.uint8)
    r = int(round(close * max(m.shape)))
    if r >= 1:
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
        m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, kernel)
    n, labels = cv2.connectedComponents(m, connectivity=8)
    return n, labels


def _weak_blobs(s: np.ndarray, top: float, strong: np.ndarray, biggest: float,
                cfg: DirectConfig) -> list[tuple[float, np.ndarray]]:
    """Subjects the saliency barely marks, apart from the strong blobs (see ``DirectConfig.weak_*``)."""
    n, labels = _components(s >= cfg.weak_floor * top, cfg.blob_close)
    touched = np.unique(labels[strong])
    flat, sv = labels.ravel(), s.ravel()
    peak = np.zeros(n)
    np.maximum.at(peak, flat, sv)
    out = []
    for i in range(1, n):
        if i in touched or peak[i] < cfg.weak_peak * top:
            continue
        where = (labels == i) & (s >= cfg.blob_level * peak[i])
        m = float(s[where].sum())
        # A faint region heavier than the main subject is background haze, not a subject.
        if cfg.weak_share * biggest <= m <= biggest:
            out.append((m, where))
    return out
