"""Multiple-testing correction across related comparisons."""

from __future__ import annotations

import numpy as np
from statsmodels.stats.multitest import multipletests

from ..errors import InvalidParameterError

__all__ = ["bh_adjust"]


def bh_adjust(pvalues) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (NaN entries stay NaN).

    statsmodels' ``multipletests`` defaults to Holm–Sidak, so the method is
    named explicitly (``"fdr_bh"``).

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
        raise InvalidParameterError("pvalues must lie in [0, 1]")
    out = np.full(p.shape, np.nan)
    if ok.any():
        out[ok] = multipletests(p[ok], method="fdr_bh")[1]
    return out
