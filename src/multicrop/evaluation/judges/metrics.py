"""Metrics of the judge protocol shared by the report and the probe."""

from __future__ import annotations

import math

import numpy as np

from ...errors import InvalidParameterError

__all__ = ["precision_at_top", "finite_or_low"]


def finite_or_low(value: float) -> float:
    """``value``, or ``-inf`` when it is not finite: a sort key that never picks an undefined rho.

    Examples
    --------
    >>> max([0.2, float("nan"), 0.5], key=finite_or_low)
    0.5
    """
    return value if math.isfinite(value) else -math.inf


def _top_inclusion(v: np.ndarray, k: int) -> np.ndarray:
    """Probability that each item is among the top ``k`` when ties are broken at random.

    Items strictly above the k-th largest value are in (1), items below are
    out (0), and the ``g`` items tied at the boundary share the ``m`` places
    left (``m / g`` each).
    """
    kth = np.sort(v)[::-1][k - 1]
    above = v > kth
    tied = v == kth
    out = above.astype(float)
    out[tied] = (k - above.sum()) / tied.sum()
    return out


def precision_at_top(prediction, human, *, fraction: float = 0.10) -> float:
    """Share of the predicted top ``fraction`` that is in the human top ``fraction``.

    Both shortlists hold ``k = ceil(fraction * n)`` images.  Ties at a
    shortlist boundary are broken at random, independently on the two sides,
    and the *expected* precision is returned: ``sum_i P(i in predicted top) *
    P(i in human top) / k``, where a boundary tie group of ``g`` images
    competing for ``m`` places gives each of them ``m / g``.  The result
    therefore does not depend on the order of the images (integer judge
    verdicts tie a lot).

    Parameters
    ----------
    prediction, human : array_like, shape (n,)
        Scores of the same images.
    fraction : float
        Share of the images in each shortlist, in (0, 1].

    Returns
    -------
    float
        NaN when there are no images or a score is not finite.

    Raises
    ------
    InvalidParameterError
        Shapes differ or are not 1-D, or ``fraction`` is out of range.

    Examples
    --------
    >>> precision_at_top([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [10, 9, 3, 4, 5, 6, 7, 8, 2, 1], fraction=0.2)
    0.0
    >>> precision_at_top(np.arange(10.0), np.arange(10.0), fraction=0.2)
    1.0
    >>> precision_at_top([3, 2, 2, 2, 1], [5, 4, 3, 2, 1], fraction=0.4)  # (1 + 1/3) / 2
    0.6666666666666666
    """
    p = np.asarray(prediction, dtype=float)
    h = np.asarray(human, dtype=float)
    if p.shape != h.shape or p.ndim != 1:
        raise InvalidParameterError("prediction and human must be 1-D arrays of equal length")
    if not 0 < fraction <= 1:
        raise InvalidParameterError(f"fraction must be in (0, 1], got {fraction!r}")
    if p.size == 0 or not (np.isfinite(p).all() and np.isfinite(h).all()):
        return math.nan
    k = max(1, math.ceil(fraction * p.size))
    return float(np.dot(_top_inclusion(p, k), _top_inclusion(h, k)) / k)
