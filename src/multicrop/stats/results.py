"""Small frozen result types returned by :mod:`multicrop.stats`."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

__all__ = ["StatResult", "NoiseCeiling"]


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@dataclass(frozen=True)
class StatResult:
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
    >>> StatResult(0.5, 0.4, 0.6, 0.01).to_dict()["estimate"]
    0.5
    """

    estimate: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    p: float = math.nan
    n_resamples: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain dict; non-finite floats become ``None`` (valid JSON)."""
        return {k: _clean(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StatResult:
        """Inverse of :meth:`to_dict`."""
        kw = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        for key in ("estimate", "ci_low", "ci_high", "p"):
            if key in kw and kw[key] is None:
                kw[key] = math.nan
        return cls(**kw)


@dataclass(frozen=True)
class NoiseCeiling:
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

    def to_dict(self) -> dict[str, Any]:
        """Plain dict; non-finite floats become ``None``."""
        return {k: _clean(v) for k, v in asdict(self).items()}
