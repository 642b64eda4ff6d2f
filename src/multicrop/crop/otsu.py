"""Otsu's threshold of values in ``[0, 1]``: a function on arrays, used by :mod:`multicrop.crop.masks`.

Kept apart from the masks (and re-exported there) because it knows nothing
of boxes or saliency: like ``skimage.filters.threshold_otsu`` it takes any
array of values.
"""

from __future__ import annotations

import numpy as np

__all__ = ["otsu_threshold"]


def otsu_threshold(values: np.ndarray, *, bins: int = 256) -> tuple[float, float]:
    """Otsu's threshold of values in ``[0, 1]`` and its separability.

    Parameters
    ----------
    values : ndarray of float
        Any shape; values in ``[0, 1]``.
    bins : int
        Histogram bins over ``[0, 1]``.

    Returns
    -------
    threshold : float
        The level ``t`` maximising the between-class variance of
        ``values < t`` and ``values >= t``.
    separability : float
        Between-class over total variance at ``t``, in ``[0, 1]`` (0: a
        constant; 1: two values).

    References
    ----------
    N. Otsu, "A threshold selection method from gray-level histograms",
    IEEE Trans. SMC 9(1), 1979.

    Examples
    --------
    >>> t, eta = otsu_threshold(np.array([0.1, 0.1, 0.9, 0.9]))
    >>> 0.1 < t <= 0.9, round(eta, 3)
    (True, 1.0)
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0:
        return 0.0, 0.0
    hist = np.bincount(np.minimum((v * bins).astype(np.int64), bins - 1), minlength=bins).astype(np.float64)
    p = hist / v.size
    centres = (np.arange(bins) + 0.5) / bins
    w0 = np.cumsum(p)  # share below and at each bin
    mu = np.cumsum(p * centres)
    mu_t = mu[-1]
    total = float(np.sum(p * (centres - mu_t) ** 2))
    w1 = 1.0 - w0
    with np.errstate(divide="ignore", invalid="ignore"):
        between = (mu_t * w0 - mu) ** 2 / (w0 * w1)
    between[~np.isfinite(between)] = 0.0
    between[-1] = 0.0
    k = int(np.argmax(between))
    if total <= 0 or between[k] <= 0:
        return float(v.max()), 0.0
    # The lower class holds bins 0..k: the threshold is the next bin's lower edge.
    return (k + 1) / bins, float(min(between[k] / total, 1.0))
