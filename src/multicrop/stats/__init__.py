"""Statistics for judge evaluation: rank correlations, paired bootstrap,
multiple testing, noise ceiling, partial correlation and simulations.

Every function that draws random numbers takes an explicit ``rng``.
"""

from .bootstrap import delta_result, max_statistic_pvalues, one_sided_p, paired_bootstrap, percentile_ci, two_sided_p
from .ceiling import headroom, noise_ceiling, spearman_brown
from .correlation import (
    bootstrap_kendall_tau_b,
    bootstrap_metric,
    bootstrap_spearman,
    correlation,
    kendall_tau_b,
    resample_counts,
    resampled_rank_correlation,
    resampled_ranks,
    spearman,
)
from .multiple import bh_adjust
from .partial import bootstrap_partial_difference, partial_correlation
from .results import NoiseCeiling, StatResult

__all__ = [
    "NoiseCeiling",
    "StatResult",
    "bh_adjust",
    "bootstrap_kendall_tau_b",
    "bootstrap_metric",
    "bootstrap_partial_difference",
    "bootstrap_spearman",
    "correlation",
    "delta_result",
    "headroom",
    "kendall_tau_b",
    "max_statistic_pvalues",
    "noise_ceiling",
    "one_sided_p",
    "two_sided_p",
    "paired_bootstrap",
    "partial_correlation",
    "percentile_ci",
    "resample_counts",
    "resampled_rank_correlation",
    "resampled_ranks",
    "spearman",
    "spearman_brown",
]
