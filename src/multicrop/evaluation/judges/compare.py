"""Paired bootstrap comparisons of the arms (Jadhav et al. 2026, §4, Appendix F).

All comparisons use the arms' shared resamples (:class:`~multicrop.evaluation.judges.arms.ArmScores`),
so a difference is resampled as a pair.  :func:`compare_arms` sets every
panel arm against the best single judge and the panel mean;
:func:`compare_members` sets each single judge against the panel mean with
max-T adjusted p-values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...stats.bootstrap import delta_result, max_statistic_pvalues, one_sided_p
from ...stats.multiple import bh_adjust
from .arms import METRICS, SINGLE, Arm, ArmScores

__all__ = ["compare_arms", "compare_members"]


def _arm_rows(scores: ArmScores, metric: str, others: Sequence[str], members: Sequence[str], *, best: str,
              confidence: float) -> list[dict]:
    o, b = scores.observed[metric], scores.resampled[metric]
    col = scores.column
    best_boot_max = np.nanmax(b[:, [col(a) for a in members]], axis=1)
    rows = []
    for arm in others:
        for comp in (best, "panel_mean"):
            if arm == comp:
                continue
            d = b[:, col(arm)] - b[:, col(comp)]
            r = delta_result(o[col(arm)] - o[col(comp)], d, confidence=confidence)
            p_max = one_sided_p(b[:, col(arm)] - best_boot_max) if comp == best else math.nan
            rows.append({"arm": arm, "comparator": "best_single" if comp == best else "panel_mean",
                         "comparator_arm": comp, "metric": metric, "delta": r.estimate,
                         "ci_low": r.ci_low, "ci_high": r.ci_high, "p": r.p, "p_max": p_max})
    return rows


def compare_arms(arms: Sequence[Arm], scores: ArmScores, *, best: str, confidence: float) -> pd.DataFrame:
    """Every arm that is not a single judge against the best member and the panel mean.

    Returns
    -------
    DataFrame
        ``arm, comparator, comparator_arm, metric, delta, ci_low, ci_high, p,
        p_max, p_bh, group``: ``p`` one-sided (arm better), ``p_max`` against
        the best member re-selected in every resample, ``p_bh``
        Benjamini–Hochberg across the rows of one metric and ``group``
        (``protocol``: the paper's arms; ``baseline``: the baselines and
        ablations of :mod:`~multicrop.evaluation.judges.baselines`, corrected
        among themselves so they leave the protocol's p-values unchanged).
    """
    from .baselines import BASELINE

    members = [a.name for a in arms if a.kind == SINGLE]
    # Baselines and ablations are corrected among themselves, so adding them
    # leaves the p_bh of the protocol's own arms as they were.
    groups = ([a.name for a in arms if a.kind not in (SINGLE, BASELINE)], [a.name for a in arms if a.kind == BASELINE])
    frames = []
    for group, others in zip(("protocol", "baseline"), groups):
        if not others and frames:
            continue
        rows = [row for metric in METRICS
                for row in _arm_rows(scores, metric, others, members, best=best, confidence=confidence)]
        comparisons = pd.DataFrame(rows, columns=["arm", "comparator", "comparator_arm", "metric", "delta",
                                                  "ci_low", "ci_high", "p", "p_max"])
        comparisons["p_bh"] = np.nan
        comparisons["group"] = group
        for metric in METRICS:
            sel = comparisons["metric"] == metric
            if sel.any():
                comparisons.loc[sel, "p_bh"] = bh_adjust(comparisons.loc[sel, "p"].to_numpy())
        frames.append(comparisons)
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def compare_members(arms: Sequence[Arm], scores: ArmScores, *, best: str, confidence: float) -> pd.DataFrame:
    """Each single judge against the panel mean.

    Returns
    -------
    DataFrame
        ``member, metric, value, delta_vs_panel_mean, ci_low, ci_high, p,
        p_maxT, is_best``; ``p_maxT`` is the single-step max-T p-value over
        all members.
    """
    members = [a.name for a in arms if a.kind == SINGLE]
    mem_idx = [scores.column(a) for a in members]
    panel = scores.column("panel_mean")
    rows = []
    for metric in METRICS:
        o, b = scores.observed[metric], scores.resampled[metric]
        d_obs = o[mem_idx] - o[panel]
        d_boot = b[:, mem_idx] - b[:, [panel]]
        pmax = max_statistic_pvalues(d_obs, d_boot)
        for k, a in enumerate(members):
            r = delta_result(d_obs[k], d_boot[:, k], confidence=confidence)
            rows.append({"member": a, "metric": metric, "value": o[mem_idx[k]], "delta_vs_panel_mean": r.estimate,
                         "ci_low": r.ci_low, "ci_high": r.ci_high, "p": r.p, "p_maxT": pmax[k],
                         "is_best": a == best})
    return pd.DataFrame(rows)
