"""Small frozen result types returned by :mod:`multicrop.stats`.

Both serialise through :class:`multicrop.serialize.Serializable`: ``to_dict()``
writes NaN (no interval, no p-value) as ``None`` and ``from_dict()`` reads it
back as NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..serialize import Serializable

__all__ = ["StatResult", "NoiseCeiling"]


@dataclass(frozen=True)
class StatResult(Serializable):
    """A point estimate with a confidence interval and a p-value.

    Parameters
    ----------
    estimate : float
        The statistic on the full sample.
    ci_low, ci_high : float
        Bounds of the confidence interval (NaN when none was computed).
    p : float
        p-value of the test that goes with the statistic (NaN when none).
    n_resamples : int
        Bootstrap resamples behind the interval (0 for analytic results).

    Examples
    --------
    >>> StatResult(0.5, 0.4, 0.6).to_dict()
    {'estimate': 0.5, 'ci_low': 0.4, 'ci_high': 0.6, 'p': None, 'n_resamples': 0}
    >>> StatResult.from_dict({'estimate': 0.5, 'p': None}).p
    nan
    """

    estimate: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    p: float = math.nan
    n_resamples: int = 0


@dataclass(frozen=True)
class NoiseCeiling(Serializable):
    """Split-half noise ceiling of a human mean score.

    Attributes
    ----------
    ceiling : float
        Mean over splits of ``sqrt(R_full)``: the highest correlation with the
        human mean that a judge can be expected to reach.
    reliability : float
        Mean over splits of the Spearman–Brown-corrected reliability ``R_full``.
    split_half : float
        Mean over splits of the Spearman correlation between half-means.
    sd : float
        Standard deviation of the per-split ceiling (split-to-split variation).
    n_splits, n_images : int
        Number of random splits and of images with at least two raters.
    mean_raters : float
        Mean number of raters per image that entered the computation.
    """

    ceiling: float
    reliability: float
    split_half: float
    sd: float
    n_splits: int
    n_images: int
    mean_raters: float
