"""Multiple-testing correction across related comparisons."""

from __future__ import annotations

import numpy as np
from scipy.stats import false_discovery_control

from ..errors import InvalidParameterError

__all__ = ["bh_adjust"]


def bh_adjust(pvalues) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (NaN entries stay NaN).

    The finite p-values form one family; the adjustment is
    :func:`scipy.stats.false_discovery_control` (``method="bh"``).

    Parameters
    ----------
    pvalues : array_like, shape (m,)
        p-values in [0, 1]; NaN marks a test that was not run.

    Returns
    -------
    ndarray, shape (m,)
        Adjusted p-values, NaN where the input was NaN.

    Raises
    ------
    InvalidParameterError
        ``pvalues`` is not 1-D or a finite entry lies outside [0, 1].

    References
    ----------
    Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery
    rate. *J. R. Stat. Soc. B* 57(1), 289–300.

    Examples
    --------
    >>> bh_adjust([0.01, 0.04, 0.03, float("nan")]).round(3).tolist()
    [0.03, 0.04, 0.04, nan]
    """
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1:
        raise InvalidParameterError(f"pvalues must be 1-D, got shape {p.shape}")
    ok = np.isfinite(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise InvalidParameterError(f"pvalues must lie in [0, 1], got {p[ok][(p[ok] < 0) | (p[ok] > 1)][:3].tolist()}")
    out = np.full(p.shape, np.nan)
    if ok.any():
        out[ok] = false_discovery_control(p[ok], method="bh")
    return out
