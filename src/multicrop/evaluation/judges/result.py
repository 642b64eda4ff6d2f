"""What the judge protocol computed: :class:`JudgesReport`, and its summary as JSON data."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ...serialize import to_data
from ...stats.results import NoiseCeiling
from .config import JudgesReportConfig

__all__ = ["JudgesReport", "json_data", "summary_jsonable"]


@dataclass(frozen=True)
class JudgesReport:
    """Everything the protocol computed; tables are pandas frames.

    Attributes
    ----------
    arms : DataFrame
        One row per arm: ``arm, kind, n_features, calls_per_image, rho, tau_b,
        precision_top``.
    comparisons : DataFrame
        ``arm, comparator, metric, delta, ci_low, ci_high, p, p_max, p_bh``;
        ``p_max`` is against the best member re-selected in every resample;
        ``p_bh`` is Benjamini–Hochberg across the rows of one metric.
    members : DataFrame
        Each single judge against the panel mean with max-T adjusted p-values.
    mtmm_matrix : DataFrame
        Spearman partial correlation (human overall partialled out) of every
        prompt of every family with every human attribute.
    mtmm : DataFrame
        Matched cells: dimension prompt vs holistic prompt, with bootstrap
        CI of the difference, two-sided bootstrap p and BH-adjusted p.
    robustness : DataFrame
        Margin over the best member across fold partitions, precision at the
        top, label transfer.
    ceiling : NoiseCeiling or None
    summary : dict
        Counts, the best single judge, ceiling and headroom, notes and the
        canonical config.
    config : JudgesReportConfig
    skipped_ratings : DataFrame
        Rating rows left out, with their line and reason.
    predictions : DataFrame
        Human mean (``human``) and every arm's (out-of-fold) prediction, by image.
    """

    arms: pd.DataFrame
    comparisons: pd.DataFrame
    members: pd.DataFrame
    mtmm_matrix: pd.DataFrame
    mtmm: pd.DataFrame
    robustness: pd.DataFrame
    ceiling: NoiseCeiling | None
    summary: dict
    config: JudgesReportConfig = field(default_factory=JudgesReportConfig)
    skipped_ratings: pd.DataFrame = field(default_factory=pd.DataFrame)
    predictions: pd.DataFrame = field(default_factory=pd.DataFrame)


def _finite(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _finite(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_finite(v) for v in data]
    if isinstance(data, float):
        return float(data) if math.isfinite(data) else None
    return data


def json_data(value: Any) -> Any:
    """:func:`multicrop.serialize.to_data`, with infinities also written as ``null``.

    ``to_data`` writes NaN as null; the judge report promises valid JSON,
    which has no infinity either (a reliability of ``-inf`` from a split
    whose halves rank exactly opposite would otherwise print ``-Infinity``).

    Examples
    --------
    >>> json_data({"a": (1.0, float("-inf")), "b": float("nan")})
    {'a': [1.0, None], 'b': None}
    """
    return _finite(to_data(value))


def summary_jsonable(report: JudgesReport) -> dict:
    """The report's summary as plain JSON values (non-finite numbers become null)."""
    return json_data(report.summary)
