"""Salient blobs: connected components of the saliency map, strong and weak.

:func:`connected_components` is the one blob finder of the package (the
partitioner and the blob-cut metric use it too); :func:`salient_blobs` turns a
saliency map into :class:`Blob` values by the thresholds of
:class:`multicrop.crop.subject_config.BlobRules`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..geometry import Box
from .subject_config import SubjectConfig

__all__ = ["Blob", "connected_components", "salient_blobs"]


@dataclass(frozen=True)
class Blob:
    """A salient region: its bounding box, saliency mass, importance and label in the blob map.

    Salient blobs are connected components, so they never overlap and one
    label map holds them all; subjects that may overlap (people) are
    :class:`Subject` values with their own weight maps.
    """

    box: Box
    mass: float
    importance: float
    label: int



def connected_components(mask: np.ndarray, *, close: float = 0.0) -> tuple[int, np.ndarray]:
    """8-connected components of a boolean mask, after a closing of ``close`` of its long side.

    The one blob finder of the package (direct's subjects, the partitioner's
    claims, the blob-cut metric).

    Returns
    -------
    n : int
        Number of labels including the background 0.
    labels : ndarray of int32, shape of ``mask``

    Examples
    --------
    >>> m = np.zeros((10, 20), bool); m[2:5, 2:5] = True; m[2:5, 10:15] = True
    >>> connected_components(m)[0]
    3
    """
    import cv2  # imported when first used: importing the crop settings stays light

    m = np.asarray(mask).astype(np.uint8)
    r = int(round(close * max(m.shape))) if m.size else 0
    if r >= 1:
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
        m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, kernel)
    n, labels = cv2.connectedComponents(m, connectivity=8)
    return int(n), labels.astype(np.int32, copy=False)


def salient_blobs(saliency: np.ndarray, *, config: SubjectConfig | None = None) -> tuple[list[Blob], np.ndarray]:
    """The salient blobs of ``saliency``, strong ones first, and their label map (0: background).

    Strong blobs are components of the saliency at or above ``blobs.level`` of
    its maximum (after a closing of ``blobs.close``), with a peak of at least
    ``blobs.min_peak`` and a mass of at least ``blobs.min_share`` of the largest.
    *Weak* ones are those the saliency model barely marks (a thin rocket, a
    dark figure): components above ``blobs.weak_floor`` holding no strong blob,
    peak at least ``blobs.weak_peak``, mass (pixels at or above ``blobs.level`` of
    their own peak) between ``blobs.weak_share`` of the largest strong blob's and
    that blob's own (heavier is haze), at most ``blobs.max_weak``.

    Examples
    --------
    >>> sal = np.zeros((100, 200), np.float32); sal[20:60, 20:60] = 1; sal[30:50, 150:160] = 0.9
    >>> blobs, labels = salient_blobs(sal)
    >>> [(b.box.w, b.box.h) for b in blobs], int((labels == blobs[1].label).sum())
    ([(40.0, 40.0), (10.0, 20.0)], 200)
    """
    cfg = config or SubjectConfig()
    s = np.asarray(saliency, dtype=np.float32)
    top = float(s.max()) if s.size else 0.0
    none = ([], np.zeros(s.shape, np.int32))
    if top <= 0:
        return none
    n, labels = connected_components(s >= cfg.blobs.level * top, close=cfg.blobs.close)
    if n <= 1:
        return none
    flat = labels.ravel()
    mass = np.bincount(flat, weights=s.ravel(), minlength=n)
    peaked = _reaching(flat, s.ravel(), cfg.blobs.min_peak * top, n)
    ids = [i for i in range(1, n) if peaked[i]]
    biggest = max((mass[i] for i in ids), default=0.0)
    ids = [i for i in ids if mass[i] >= cfg.blobs.min_share * biggest]
    found = sorted(((float(mass[i]), labels == i) for i in ids), key=lambda f: -f[0])
    if biggest > 0 and cfg.blobs.weak_peak < cfg.blobs.min_peak:
        weak = _weak_blobs(s, top, np.isin(labels, ids), biggest, cfg)
        found += sorted(weak, key=lambda f: -f[0])[: cfg.blobs.max_weak]
    out, label_map = [], np.zeros(s.shape, np.int32)
    for j, (m, where) in enumerate(found[: cfg.blobs.max_blobs], start=1):
        ys, xs = np.nonzero(where)
        x, y = float(xs.min()), float(ys.min())
        box = Box(x, y, float(xs.max()) + 1 - x, float(ys.max()) + 1 - y)
        out.append(Blob(box, m, float((m / biggest) ** cfg.importance.size_exponent), j))
        label_map[where] = j
    return out, label_map


def _weak_blobs(s: np.ndarray, top: float, strong: np.ndarray, biggest: float,
                cfg: SubjectConfig) -> list[tuple[float, np.ndarray]]:
    """Subjects the saliency barely marks, apart from the strong blobs (see ``SubjectConfig.weak_*``)."""
    n, labels = connected_components(s >= cfg.blobs.weak_floor * top, close=cfg.blobs.close)
    touched = np.zeros(n, bool)  # a mask, not np.unique: that imports numpy.ma (~10 ms of start-up)
    touched[labels[strong]] = True
    peaked = _reaching(labels.ravel(), s.ravel(), cfg.blobs.weak_peak * top, n)
    out = []
    for i in range(1, n):
        if touched[i] or not peaked[i]:
            continue
        mine = labels == i
        where = mine & (s >= cfg.blobs.level * float(s[mine].max()))
        m = float(s[where].sum())
        # A faint region heavier than the main subject is background haze, not a subject.
        if cfg.blobs.weak_share * biggest <= m <= biggest:
            out.append((m, where))
    return out


def _reaching(flat: np.ndarray, values: np.ndarray, threshold: float, n: int) -> np.ndarray:
    """Per label ``0 .. n - 1`` of ``flat``: whether its peak value reaches ``threshold`` (some pixel does).

    The same answer as comparing each label's maximum, without a per-pixel ``np.maximum.at`` (about 40 ms
    on a 1024 px map).
    """
    return np.bincount(flat[values >= threshold], minlength=n) > 0

