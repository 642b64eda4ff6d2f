"""Robustness checks: other fold partitions and precision at the top.

Each check is a :class:`Check` row of the report's robustness table
(:func:`robustness_table`); label transfer
(:mod:`multicrop.evaluation.judges.transfer`) adds its rows to the same
table.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...stats.correlation import correlation
from .align import AlignedData
from .arms import Arm, Progress, out_of_fold
from .config import JudgesReportConfig
from .metrics import precision_at_top

__all__ = ["Check", "PartitionJob", "partition_margin", "fold_partitions", "precision_checks", "robustness_table"]


@dataclass(frozen=True)
class Check:
    """One row of the robustness table.

    Attributes
    ----------
    check : str
        ``fold_partitions``, ``precision_top`` or ``label_transfer``.
    arm : str
    estimate, sd, ci_low, ci_high, p : float
        NaN where the check has none; :attr:`detail` says what the bounds are.
    detail : str
    """

    check: str
    arm: str
    estimate: float
    sd: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    p: float = math.nan
    detail: str = ""


def robustness_table(checks: Sequence[Check]) -> pd.DataFrame:
    """The checks as the report's table, one row each, columns in :class:`Check` field order."""
    columns = [f.name for f in dataclasses.fields(Check)]
    return pd.DataFrame([dataclasses.asdict(c) for c in checks], columns=columns)


@dataclass(frozen=True, eq=False)
class PartitionJob:
    """One refit of a fused arm on another fold partition (picklable, for worker processes).

    Attributes
    ----------
    arm : str
    block : DataFrame
        The arm's feature block.
    y : ndarray
        The human mean.
    combiner : str
    random_state, n_folds, seed : int
        Combiner seed, number of folds and seed of the fold partition.
    best_rho : float
        Spearman rho of the best single judge.
    done : ndarray or None
        The prediction when it is already known (partition 0 is the main analysis).
    """

    arm: str
    block: pd.DataFrame
    y: np.ndarray
    combiner: str
    random_state: int
    n_folds: int
    seed: int
    best_rho: float
    done: np.ndarray | None = None


def partition_margin(job: PartitionJob) -> float:
    """Spearman rho of the job's out-of-fold prediction minus the best single judge's."""
    pred = job.done if job.done is not None else out_of_fold(
        job.block, job.y, combiner=job.combiner, random_state=job.random_state, n_folds=job.n_folds, seed=job.seed)
    return correlation(pred, job.y) - job.best_rho


def _jobs(arms: Sequence[Arm], data: AlignedData, *, best: str, config: JudgesReportConfig) -> list[PartitionJob]:
    by_name = {a.name: a for a in arms}
    y = data.y
    best_rho = correlation(by_name[best].prediction, y)
    jobs = []
    for name in config.robustness_arms:
        arm = by_name.get(name)
        if arm is None:
            continue
        # partition k uses fold seed seed + k; partition 0 is the main analysis, already fitted
        jobs += [PartitionJob(name, data.blocks[arm.block], y, arm.combiner, config.seed, config.n_folds,
                              config.seed + k, best_rho, arm.prediction if k == 0 else None)
                 for k in range(config.n_partitions)]
    return jobs


def _margins(jobs: Sequence[PartitionJob], *, n_jobs: int, progress: Progress) -> list[float]:
    if n_jobs > 1:
        from joblib import Parallel, delayed

        return Parallel(n_jobs=n_jobs)(delayed(partition_margin)(j) for j in jobs)
    margins = []
    for i, job in enumerate(jobs):
        progress("robustness over fold partitions", 0.75 + 0.2 * i / len(jobs))
        margins.append(partition_margin(job))
    return margins


def fold_partitions(arms: Sequence[Arm], data: AlignedData, *, best: str, config: JudgesReportConfig,
                    progress: Progress) -> list[Check]:
    """Margin of each of ``config.robustness_arms`` over the best single judge across fold partitions.

    The estimate is the mean margin over ``config.n_partitions`` partitions
    (fold seeds ``seed``, ``seed + 1``, ...), with its SD, minimum and
    maximum (as ``ci_low`` / ``ci_high``).  Arms not among ``arms`` are
    skipped.
    """
    jobs = _jobs(arms, data, best=best, config=config)
    if not jobs:
        return []
    margins = _margins(jobs, n_jobs=config.n_jobs, progress=progress)
    checks = []
    for name in [a for a in config.robustness_arms if a in {arm.name for arm in arms}]:
        m = np.array([mg for j, mg in zip(jobs, margins) if j.arm == name])
        checks.append(Check(
            "fold_partitions", name, float(m.mean()), sd=float(m.std(ddof=1)) if m.size > 1 else math.nan,
            ci_low=float(m.min()), ci_high=float(m.max()),
            detail=f"margin over {best} across {m.size} partitions; {int((m < 0).sum())} negative; "
                   "ci_low/ci_high are min/max"))
    return checks


def precision_checks(arms: Sequence[Arm], y: np.ndarray, *, top_fraction: float) -> list[Check]:
    """Expected precision at the top of every arm (:func:`~multicrop.evaluation.judges.metrics.precision_at_top`)."""
    return [Check("precision_top", a.name, precision_at_top(a.prediction, y, fraction=top_fraction),
                  detail=f"expected share of predicted top {top_fraction:.0%} in human top "
                         f"{top_fraction:.0%} (boundary ties broken at random)")
            for a in arms]
