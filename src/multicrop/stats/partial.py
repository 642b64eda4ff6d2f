"""Partial correlation and the multitrait–multimethod (MTMM) comparison."""

from __future__ import annotations

import numpy as np
from scipy import stats as _st
from scipy.stats import rankdata

from ..errors import InvalidParameterError
from .bootstrap import delta_result
from .correlation import resample_counts, resampled_rank_correlation, resampled_ranks  # noqa: F401 (doctest)
from .results import StatResult

__all__ = ["partial_correlation", "partial_from_correlations", "bootstrap_partial_difference"]

_METHODS = ("spearman", "pearson")
_CACHE_PER_ROLE = 3  # resampled-rank matrices kept per role by bootstrap_partial_difference


def partial_from_correlations(rxy, rxz, ryz):
    """First-order partial correlation of x and y given z from pairwise r's."""
    rxy, rxz, ryz = (np.asarray(v, dtype=float) for v in (rxy, rxz, ryz))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rxy - rxz * ryz) / np.sqrt((1.0 - rxz**2) * (1.0 - ryz**2))


def _check(x, y, z, method):
    if method not in _METHODS:
        raise InvalidParameterError(f"method must be one of {_METHODS}, got {method!r}")
    arrs = [np.asarray(v, dtype=float) for v in (x, y, z)]
    if any(a.ndim != 1 or a.shape != arrs[0].shape for a in arrs):
        raise InvalidParameterError("x, y and covar must be 1-D arrays of equal length")
    if arrs[0].size < 4:
        raise InvalidParameterError(f"need at least 4 observations, got {arrs[0].size}")
    if not all(np.isfinite(a).all() for a in arrs):
        raise InvalidParameterError("x, y and covar must be finite")
    return arrs


def partial_correlation(x, y, covar, *, method: str = "spearman") -> StatResult:
    """Correlation of ``x`` and ``y`` with one covariate partialled out.

    Parameters
    ----------
    x, y, covar : array_like, shape (n,)
    method : {"spearman", "pearson"}
        ``"spearman"`` ranks the three variables (ties averaged) first.

    Returns
    -------
    StatResult
        ``estimate`` is the partial r (NaN if a variable is constant); ``p`` the two-sided t-test p-value
        (``n - 3`` degrees of freedom); ``ci_low``/``ci_high`` a 95 % Fisher-z
        interval with ``n - 1`` effective observations.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=500)
    >>> x, y = z + rng.normal(size=500), z + rng.normal(size=500)
    >>> abs(partial_correlation(x, y, z).estimate) < 0.1
    True
    """
    x, y, z = _check(x, y, covar, method)
    if min(np.ptp(x), np.ptp(y), np.ptp(z)) == 0:  # undefined for a constant variable
        return StatResult(float("nan"))
    if method == "spearman":
        x, y, z = rankdata(x), rankdata(y), rankdata(z)
    c = np.corrcoef(np.vstack([x, y, z]))
    r = float(np.clip(partial_from_correlations(c[0, 1], c[0, 2], c[1, 2]), -1.0, 1.0))
    n = x.size
    dof = n - 3
    if np.isclose(r * r, 1.0):
        p = 0.0
    else:
        t = r * np.sqrt(dof / (1.0 - r * r))
        p = float(2.0 * _st.t.sf(abs(t), dof))
    zr = np.arctanh(np.clip(r, -0.999999, 0.999999))
    se = 1.0 / np.sqrt(n - 1 - 3)
    crit = _st.norm.ppf(0.975)
    return StatResult(r, float(np.tanh(zr - crit * se)), float(np.tanh(zr + crit * se)), p)


def bootstrap_partial_difference(
    a, b, attribute, overall, counts: np.ndarray, *, confidence: float = 0.95, cache: dict | None = None
) -> StatResult:
    """Paired bootstrap of ``pcorr(a, attr | overall) - pcorr(b, attr | overall)``.

    Spearman partial correlations (ranks recomputed inside each resample).
    ``a`` is typically a dimension-prompt score and ``b`` the same model's
    holistic score; ``attribute`` the matching human attribute mean and
    ``overall`` the human overall mean.

    Parameters
    ----------
    a, b, attribute, overall : array_like, shape (n,)
    counts : ndarray, shape (B, n)
        Resample counts (:func:`~multicrop.stats.correlation.resample_counts`).
    confidence : float
    cache : dict, optional
        An empty dict to share across calls that use the same ``counts``:
        the resampled ranks of ``b``, ``attribute`` and ``overall`` (the last
        few values of each) are kept in it and reused, which makes a loop over
        MTMM cells several times faster.  Results do not depend on it.

    Returns
    -------
    StatResult
        Observed difference, percentile CI and the two-sided bootstrap p
        (:func:`~multicrop.stats.bootstrap.two_sided_p`): an MTMM cell can
        go either way, and a reversal (holistic above dimension) must be
        detectable after Benjamini–Hochberg, which a one-sided p (near 1 for
        a reversal) never allows.

    References
    ----------
    Jadhav et al. (2026), §5.1 and Appendix D (MTMM).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> ov, at = rng.normal(size=(2, 300))
    >>> dim, hol = at + rng.normal(size=300), ov + rng.normal(size=300)
    >>> c = resample_counts(300, 500, np.random.default_rng(1))
    >>> bootstrap_partial_difference(dim, hol, at, ov, c).ci_low > 0.3
    True
    """
    a, b, attr, ov = (np.asarray(v, dtype=float) for v in (a, b, attribute, overall))
    obs = partial_correlation(a, attr, ov).estimate - partial_correlation(b, attr, ov).estimate
    cache = {} if cache is None else cache
    w = cache.setdefault("w", counts.astype(np.float64))

    def ranks(v, role):
        # one entry per role (attribute, overall, holistic) and per value: a
        # caller looping over cells reuses them; roles keep the cache small
        key = v.tobytes()
        slot = cache.setdefault(role, {})
        if key not in slot:
            if len(slot) >= _CACHE_PER_ROLE:
                slot.pop(next(iter(slot)))
            r = resampled_ranks(v, counts)
            slot[key] = (r, np.einsum("bi,bi,bi->b", w, r, r))
        return slot[key]

    ra = resampled_ranks(a, counts)
    (rb, bb), (rt, tt), (ro, oo) = ranks(b, "b"), ranks(attr, "attribute"), ranks(ov, "overall")
    aa = np.einsum("bi,bi,bi->b", w, ra, ra)
    rho = resampled_rank_correlation
    r_to = rho(rt, ro, w, ryy=oo, rxx=tt)
    pa = partial_from_correlations(rho(ra, rt, w, ryy=tt, rxx=aa), rho(ra, ro, w, ryy=oo, rxx=aa), r_to)
    pb = partial_from_correlations(rho(rb, rt, w, ryy=tt, rxx=bb), rho(rb, ro, w, ryy=oo, rxx=bb), r_to)
    return delta_result(obs, pa - pb, confidence=confidence, alternative="two-sided")
