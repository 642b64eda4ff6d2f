"""Rank correlations against the human mean, and their vectorised bootstrap.

Point estimates delegate to :mod:`scipy.stats`.  The bootstrap helpers compute
the same statistics for many resamples at once without a Python loop per
resample: a resample is represented by its *counts* (how often each image was
drawn), ranks inside a resample are derived from the tie groups of the full
sample, and the correlation is a count-weighted Pearson correlation of those
ranks.  This is exactly Spearman's rho (average ranks for ties) and Kendall's
tau-b of the expanded resample; the tests check both against scipy.
"""

from __future__ import annotations

import numpy as np
from scipy import stats as _st

from ..errors import InvalidParameterError

__all__ = [
    "spearman",
    "kendall_tau_b",
    "correlation",
    "resample_counts",
    "resampled_ranks",
    "resampled_rank_correlation",
    "bootstrap_spearman",
    "bootstrap_kendall_tau_b",
    "bootstrap_metric",
    "METRICS",
]

METRICS = ("spearman", "kendall")


def _pair(x, y) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise InvalidParameterError(
            f"x and y must be 1-D arrays of equal length, got shapes {x.shape} and {y.shape}"
        )
    if x.size < 3:
        raise InvalidParameterError(f"need at least 3 paired values, got {x.size}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InvalidParameterError("x and y must be finite (drop NaN rows before correlating)")
    return x, y


def _constant(x, y) -> bool:
    return bool(np.ptp(x) == 0 or np.ptp(y) == 0)


def spearman(x, y) -> float:
    """Spearman's rank correlation (scipy's ``spearmanr``).

    NaN (without a warning) when either input is constant.

    Examples
    --------
    >>> round(spearman([1, 2, 3, 4], [1, 3, 2, 4]), 6)
    0.8
    """
    x, y = _pair(x, y)
    if _constant(x, y):
        return float("nan")
    return float(_st.spearmanr(x, y).statistic)


def kendall_tau_b(x, y) -> float:
    """Kendall's tau-b, the tie-aware variant (scipy's ``kendalltau``).

    NaN (without a warning) when either input is constant.

    Examples
    --------
    >>> round(kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]), 4)
    0.6667
    """
    x, y = _pair(x, y)
    if _constant(x, y):
        return float("nan")
    return float(_st.kendalltau(x, y, variant="b").statistic)


def correlation(x, y, *, metric: str = "spearman") -> float:
    """Dispatch to :func:`spearman` or :func:`kendall_tau_b` by name."""
    if metric == "spearman":
        return spearman(x, y)
    if metric == "kendall":
        return kendall_tau_b(x, y)
    raise InvalidParameterError(f"metric must be one of {METRICS}, got {metric!r}")


def resample_counts(n: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Draw bootstrap resamples of ``n`` items as a count matrix.

    Indices are drawn with ``rng.integers(0, n, (n_resamples, n))`` (so a naive
    loop over the same indices reproduces every resample) and turned into
    counts.

    Parameters
    ----------
    n : int
        Number of items (images).
    n_resamples : int
        Number of resamples ``B``.
    rng : numpy.random.Generator
        Source of randomness; pass one explicitly for reproducible results.

    Returns
    -------
    counts : ndarray of int32, shape (B, n)
        ``counts[b, i]`` is how often item ``i`` occurs in resample ``b``; each
        row sums to ``n``.

    Examples
    --------
    >>> c = resample_counts(5, 3, np.random.default_rng(0))
    >>> c.shape, c.sum(axis=1).tolist()
    ((3, 5), [5, 5, 5])
    """
    if int(n) < 1:
        raise InvalidParameterError(f"n must be >= 1, got {n!r}")
    if int(n_resamples) < 1:
        raise InvalidParameterError(f"n_resamples must be >= 1, got {n_resamples!r}")
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError(
            f"rng must be a numpy.random.Generator (e.g. np.random.default_rng(0)), got {type(rng).__name__}"
        )
    idx = rng.integers(0, n, size=(n_resamples, n))
    idx += (np.arange(n_resamples) * n)[:, None]
    return np.bincount(idx.ravel(), minlength=n_resamples * n).reshape(n_resamples, n).astype(np.int32)


def _tie_groups(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order, starts, group) of the tie groups of ``x`` in sorted order."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    new = np.r_[True, xs[1:] != xs[:-1]]
    starts = np.flatnonzero(new)
    group = np.empty(x.size, dtype=np.intp)
    group[order] = np.cumsum(new) - 1
    return order, starts, group


def resampled_ranks(x, counts: np.ndarray) -> np.ndarray:
    """Average ranks of each item inside each resample.

    Parameters
    ----------
    x : array_like, shape (n,)
        Values on the full sample.
    counts : ndarray, shape (B, n)
        Resample counts from :func:`resample_counts`.

    Returns
    -------
    ranks : ndarray, shape (B, n)
        ``ranks[b, i]`` is the rank (1-based, ties averaged) that every copy of
        item ``i`` receives in resample ``b``; meaningless where
        ``counts[b, i] == 0``.
    """
    x = np.asarray(x, dtype=float)
    order, starts, group = _tie_groups(x)
    gw = counts[:, order].astype(np.int32, copy=False)
    if starts.size < x.size:  # ties: pool the counts of each tie group
        gw = np.add.reduceat(gw, starts, axis=1)
    # rank = below + (gw + 1) / 2, so 2 * rank = 2 * cumsum - gw + 1: exact in int32
    twice = np.cumsum(gw, axis=1, dtype=np.int32)
    twice *= 2
    twice -= gw
    twice += 1
    rank = twice[:, group].astype(np.float64)
    rank *= 0.5
    return rank


def resampled_rank_correlation(
    rx: np.ndarray, ry: np.ndarray, weights: np.ndarray, *, ryy: np.ndarray | None = None,
    rxx: np.ndarray | None = None,
) -> np.ndarray:
    """Spearman's rho in every resample, from resampled ranks: their weighted Pearson correlation.

    Ranks of a resample of size N always have mean (N + 1) / 2, so only the
    raw second moments are needed.

    Parameters
    ----------
    rx, ry : ndarray, shape (B, n)
        Resampled ranks (:func:`resampled_ranks`) of the two variables.
    weights : ndarray, shape (B, n)
        The resample counts as floats.
    ryy, rxx : ndarray, shape (B,), optional
        Precomputed ``sum(weights * r * r)`` per resample of ``ry`` / ``rx``
        (a caller correlating one variable with many passes it once).

    Returns
    -------
    ndarray, shape (B,)
        NaN where a resample leaves a variable constant.
    """
    w = weights
    tot = w.sum(axis=1)
    nm2 = tot * ((tot + 1.0) / 2.0) ** 2
    sxy = np.einsum("bi,bi,bi->b", w, rx, ry) - nm2
    if rxx is None:
        rxx = np.einsum("bi,bi,bi->b", w, rx, rx)
    sxx = rxx - nm2
    if ryy is None:
        ryy = np.einsum("bi,bi,bi->b", w, ry, ry)
    syy = ryy - nm2
    with np.errstate(invalid="ignore", divide="ignore"):
        return sxy / np.sqrt(sxx * syy)


def bootstrap_spearman(x, y, counts: np.ndarray) -> np.ndarray:
    """Spearman's rho of ``x`` and ``y`` in every resample; shape (B,).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x, y = rng.normal(size=50), rng.normal(size=50)
    >>> c = resample_counts(50, 1, np.random.default_rng(2))
    >>> idx = np.repeat(np.arange(50), c[0])
    >>> bool(np.isclose(bootstrap_spearman(x, y, c)[0], spearman(x[idx], y[idx])))
    True
    """
    return resampled_rank_correlation(resampled_ranks(x, counts), resampled_ranks(y, counts),
                                      counts.astype(np.float64))


def _sign_matrix(x: np.ndarray) -> np.ndarray:
    return np.sign(x[:, None] - x[None, :]).astype(np.float32)


def _weighted_tie_pairs(x: np.ndarray, counts: np.ndarray) -> np.ndarray:
    order, starts, _ = _tie_groups(x)
    gw = np.add.reduceat(counts[:, order], starts, axis=1).astype(float)
    return (gw * (gw - 1.0) / 2.0).sum(axis=1)


def bootstrap_kendall_tau_b(x, y, counts: np.ndarray, *, chunk: int = 2000) -> np.ndarray:
    """Kendall's tau-b of ``x`` and ``y`` in every resample; shape (B,).

    Uses ``C - D = w^T S w / 2`` with ``S_ij = sign(x_i - x_j) sign(y_i - y_j)``
    (copies of one item are tied in both variables and contribute nothing) and
    tie counts from the resampled tie-group sizes.  The products are exact
    small integers, so float32 matrix products lose nothing.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    s = _sign_matrix(x) * _sign_matrix(y)
    w = counts.astype(np.float32)
    cd = np.empty(counts.shape[0])
    for lo in range(0, counts.shape[0], chunk):
        blk = w[lo : lo + chunk]
        cd[lo : lo + chunk] = 0.5 * np.einsum("bi,bi->b", blk @ s, blk, dtype=np.float64)
    n = counts.sum(axis=1).astype(float)
    n0 = n * (n - 1.0) / 2.0
    n1 = _weighted_tie_pairs(x, counts)
    n2 = _weighted_tie_pairs(y, counts)
    with np.errstate(invalid="ignore", divide="ignore"):
        return cd / np.sqrt((n0 - n1) * (n0 - n2))


def bootstrap_metric(human, predictions, counts: np.ndarray, *, metric: str = "spearman") -> np.ndarray:
    """Bootstrap a rank correlation for several predictions on shared resamples.

    Parameters
    ----------
    human : array_like, shape (n,)
        Human mean score per image.
    predictions : array_like, shape (M, n)
        One row per arm (judge, panel mean, fused prediction...).
    counts : ndarray, shape (B, n)
        Resample counts from :func:`resample_counts`; sharing them across arms
        makes the comparisons paired.
    metric : {"spearman", "kendall"}

    Returns
    -------
    ndarray, shape (B, M)
    """
    preds = np.atleast_2d(np.asarray(predictions, dtype=float))
    human = np.asarray(human, dtype=float)
    if preds.shape[1] != human.size or counts.shape[1] != human.size:
        raise InvalidParameterError(
            f"predictions {preds.shape} and counts {counts.shape} must have n={human.size} columns"
        )
    out = np.empty((counts.shape[0], preds.shape[0]))
    if metric == "spearman":
        w = counts.astype(np.float64)
        rh = resampled_ranks(human, counts)
        rhh = np.einsum("bi,bi,bi->b", w, rh, rh)
        for m, p in enumerate(preds):
            out[:, m] = resampled_rank_correlation(resampled_ranks(p, counts), rh, w, ryy=rhh)
    elif metric == "kendall":
        for m, p in enumerate(preds):
            out[:, m] = bootstrap_kendall_tau_b(p, human, counts)
    else:
        raise InvalidParameterError(f"metric must be one of {METRICS}, got {metric!r}")
    return out
