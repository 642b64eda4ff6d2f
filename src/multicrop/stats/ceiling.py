"""The human noise ceiling (split-half reliability) and headroom."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from ..errors import InvalidParameterError
from .results import NoiseCeiling

__all__ = ["noise_ceiling", "spearman_brown", "headroom"]


def spearman_brown(r, factor: float = 2.0):
    """Reliability of a test ``factor`` times as long: ``k r / (1 + (k - 1) r)``.

    Examples
    --------
    >>> round(spearman_brown(0.5), 4)
    0.6667
    """
    r = np.asarray(r, dtype=float)
    out = factor * r / (1.0 + (factor - 1.0) * r)
    return float(out) if out.ndim == 0 else out


def _rowwise_spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ra = rankdata(a, axis=1)
    rb = rankdata(b, axis=1)
    ra -= ra.mean(axis=1, keepdims=True)
    rb -= rb.mean(axis=1, keepdims=True)
    return (ra * rb).sum(axis=1) / np.sqrt((ra * ra).sum(axis=1) * (rb * rb).sum(axis=1))


def noise_ceiling(
    image,
    score,
    *,
    n_splits: int = 200,
    rng: np.random.Generator,
) -> NoiseCeiling:
    """Split-half noise ceiling of the per-image human mean.

    For each split, every image's raters are shuffled and cut in two halves
    (sizes ``k // 2`` and ``k - k // 2``); the Spearman correlation between the
    two half-means across images is corrected to the full rater count with
    Spearman–Brown (factor 2) and square-rooted.  The ceiling is the mean over
    splits.  Images with fewer than two ratings are left out.

    Parameters
    ----------
    image : array_like, shape (R,)
        Image id of each rating.
    score : array_like, shape (R,)
        The rating (finite).
    n_splits : int
        Number of random splits.
    rng : numpy.random.Generator
        Explicit source of randomness.

    Returns
    -------
    NoiseCeiling

    References
    ----------
    Jadhav et al. (2026), §4: "split-half reliability, corrected to the full
    rater count and square-rooted".

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q = np.repeat(rng.normal(size=300), 10)
    >>> img = np.repeat(np.arange(300), 10)
    >>> nc = noise_ceiling(img, q + rng.normal(size=q.size), n_splits=50, rng=rng)
    >>> 0.9 < nc.ceiling < 1.0
    True
    """
    if int(n_splits) < 1:
        raise InvalidParameterError(f"n_splits must be >= 1, got {n_splits!r}")
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError(
            f"rng must be a numpy.random.Generator, got {type(rng).__name__}"
        )
    score = np.asarray(score, dtype=float)
    codes, _ = pd.factorize(pd.Series(np.asarray(image)), sort=True)
    if codes.shape != score.shape:
        raise InvalidParameterError(
            f"image and score must have the same length, got {codes.shape} and {score.shape}"
        )
    if not np.isfinite(score).all():
        raise InvalidParameterError("score must be finite; drop bad ratings first")
    k = np.bincount(codes)
    keep = k[codes] >= 2
    codes, score = codes[keep], score[keep]
    used = np.flatnonzero(k >= 2)
    if used.size < 3:
        raise InvalidParameterError(
            f"need at least 3 images with two or more raters for a noise ceiling, got {used.size}"
        )
    remap = np.full(k.size, -1)
    remap[used] = np.arange(used.size)
    codes = remap[codes]
    n_img = used.size
    kk = np.bincount(codes, minlength=n_img)
    half = kk // 2
    start = np.r_[0, np.cumsum(kk)[:-1]]

    keys = rng.random((n_splits, codes.size))
    halves_a = np.empty((n_splits, n_img))
    halves_b = np.empty((n_splits, n_img))
    sc = score
    for s in range(n_splits):  # one sort per split; vectorised within
        order = np.lexsort((keys[s], codes))
        c = codes[order]
        pos = np.arange(c.size) - start[c]
        first = pos < half[c]
        v = sc[order]
        sa = np.bincount(c[first], weights=v[first], minlength=n_img) / half
        sb = np.bincount(c[~first], weights=v[~first], minlength=n_img) / (kk - half)
        halves_a[s], halves_b[s] = sa, sb
    with np.errstate(invalid="ignore", divide="ignore"):
        sh = _rowwise_spearman(halves_a, halves_b)
        rel = spearman_brown(sh, 2.0)
        ceil = np.sqrt(np.clip(rel, 0.0, None))
    return NoiseCeiling(
        ceiling=float(np.mean(ceil)),
        reliability=float(np.mean(rel)),
        split_half=float(np.mean(sh)),
        sd=float(np.std(ceil, ddof=1)) if n_splits > 1 else 0.0,
        n_splits=int(n_splits),
        n_images=int(n_img),
        mean_raters=float(kk.mean()),
    )


def headroom(best_single_rho: float, ceiling: float) -> float:
    """Fraction of the noise ceiling the best single judge already reaches.

    Examples
    --------
    >>> headroom(0.598, 0.947)
    0.6314...
    """
    if not ceiling > 0:
        raise InvalidParameterError(f"ceiling must be > 0, got {ceiling!r}")
    return float(best_single_rho) / float(ceiling)
