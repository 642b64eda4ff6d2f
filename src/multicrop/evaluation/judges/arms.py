"""The arms of the protocol, their correlations with the human mean and their shared resamples.

Arms
----
``member:<family>``  one family's holistic mean (a single judge)
``panel_mean``       unweighted mean of z-scored holistic verdicts
``<block>_<comb>``   out-of-fold combiner (``gb``, ``ridge``) on block
                     ``H``, ``P``, ``H+P`` or ``Hsplit`` (feature-count control)

:func:`fit_arms` gives every arm's prediction (an :class:`Arm`);
:func:`bootstrap_arms` their Spearman and Kendall correlations with the human
mean, observed and on shared paired resamples of the images
(:class:`ArmScores`); :func:`arms_table` the report's table.

scikit-learn is imported only inside :func:`out_of_fold`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...errors import DatasetError
from ...fusion.features import BLOCKS, panel_mean
from ...stats.correlation import bootstrap_metric, correlation, resample_counts
from .align import AlignedData
from .config import JudgesReportConfig
from .metrics import precision_at_top
from .streams import BOOTSTRAP, stream_rng

__all__ = [
    "SINGLE", "PANEL_MEAN", "FUSED", "METRICS", "Arm", "ArmScores", "Progress",
    "out_of_fold", "fit_arms", "bootstrap_arms", "best_member", "arms_table",
]

#: kinds of arm
SINGLE, PANEL_MEAN, FUSED = "single", "panel mean", "fused"
#: correlations every arm is scored with, in table order
METRICS = ("spearman", "kendall")

#: called with a step name and the fraction of work done
Progress = Callable[[str, float], None]


@dataclass(frozen=True, eq=False)
class Arm:
    """One way of predicting the human mean from judge scores.

    Attributes
    ----------
    name : str
        ``member:<family>``, ``panel_mean`` or ``<block>_<combiner>``.
    kind : {"single", "panel mean", "fused"}
    n_features : int
        Judge features the arm uses.
    prediction : ndarray, shape (n_images,)
        Its prediction of every aligned image (out of fold for fused arms).
    block, combiner : str or None
        Feature block and combiner of a fused arm.
    """

    name: str
    kind: str
    n_features: int
    prediction: np.ndarray
    block: str | None = None
    combiner: str | None = None

    @property
    def cost_key(self) -> str:
        """Key of this arm's cost in :func:`~multicrop.evaluation.judges.align.calls_per_arm`."""
        return self.block if self.kind == FUSED else self.name


@dataclass(frozen=True, eq=False)
class ArmScores:
    """Correlation of every arm with the human mean, observed and resampled.

    Attributes
    ----------
    names : tuple of str
        Arm names, in column order.
    observed : mapping of str to ndarray
        Metric (:data:`METRICS`) -> shape (n_arms,).
    resampled : mapping of str to ndarray
        Metric -> shape (n_resamples, n_arms), on resamples shared by all arms.
    """

    names: tuple[str, ...]
    observed: Mapping[str, np.ndarray]
    resampled: Mapping[str, np.ndarray]

    def column(self, name: str) -> int:
        """Column of arm ``name``."""
        return self.names.index(name)

    def rho(self, name: str) -> float:
        """Observed Spearman rho of arm ``name``."""
        return float(self.observed["spearman"][self.column(name)])


def out_of_fold(block: pd.DataFrame, y: np.ndarray, *, combiner: str, random_state: int, n_folds: int,
                seed: int) -> np.ndarray:
    """Out-of-fold prediction of ``y`` by a fresh registered ``combiner`` on ``block``'s features.

    ``seed`` picks the fold partition, ``random_state`` seeds the combiner.
    """
    from ...fusion.combiners import COMBINERS, out_of_fold_predict

    return out_of_fold_predict(COMBINERS.create(combiner, random_state=random_state), block.to_numpy(), y,
                               n_folds=n_folds, seed=seed)


def _member_arms(data: AlignedData, families: Sequence[str]) -> list[Arm]:
    return [Arm(f"member:{f}", SINGLE, 1, data.members[f"H:{f}"].to_numpy(dtype=float)) for f in families]


def _fused_arms(data: AlignedData, *, config: JudgesReportConfig, progress: Progress) -> list[Arm]:
    fused = [(b, c) for b in BLOCKS if b in data.blocks for c in config.combiners]
    arms = []
    for i, (b, c) in enumerate(fused):
        progress(f"out-of-fold {b} with {c}", 0.05 + 0.25 * i / max(1, len(fused)))
        pred = out_of_fold(data.blocks[b], data.y, combiner=c, random_state=config.seed, n_folds=config.n_folds,
                           seed=config.seed)
        arms.append(Arm(f"{b}_{c}", FUSED, data.blocks[b].shape[1], pred, block=b, combiner=c))
    return arms


def fit_arms(data: AlignedData, *, families: Sequence[str], config: JudgesReportConfig,
             progress: Progress) -> tuple[Arm, ...]:
    """Every arm's prediction of the human mean: members, the panel mean, then fused arms."""
    panel = Arm("panel_mean", PANEL_MEAN, len(families), panel_mean(data.members).to_numpy(dtype=float))
    return (*_member_arms(data, families), panel, *_fused_arms(data, config=config, progress=progress))


def bootstrap_arms(arms: Sequence[Arm], y: np.ndarray, *, seed: int, n_resamples: int,
                   progress: Progress) -> ArmScores:
    """Spearman and Kendall correlation of every arm with ``y``, observed and on shared paired resamples.

    The resamples are ``stream_rng(seed, BOOTSTRAP)``'s image counts
    (:func:`multicrop.stats.correlation.resample_counts`).
    """
    M = np.vstack([a.prediction for a in arms])
    progress("bootstrap over images", 0.3)
    counts = resample_counts(len(y), n_resamples, stream_rng(seed, BOOTSTRAP))
    observed = {m: np.array([correlation(p, y, metric=m) for p in M]) for m in METRICS}
    resampled = {}
    for j, m in enumerate(METRICS):
        progress(f"bootstrap {m}", 0.3 + 0.15 * j)
        resampled[m] = bootstrap_metric(y, M, counts, metric=m)
    return ArmScores(tuple(a.name for a in arms), observed, resampled)


def best_member(arms: Sequence[Arm], scores: ArmScores) -> str:
    """The single judge with the highest observed Spearman rho.

    Raises
    ------
    DatasetError
        Every single judge gives a constant score.
    """
    members = [i for i, a in enumerate(arms) if a.kind == SINGLE]
    rho = scores.observed["spearman"][members]
    if np.isnan(rho).all():
        raise DatasetError("every single judge gives a constant score; rank correlations are undefined")
    return arms[members[int(np.nanargmax(rho))]].name


def arms_table(arms: Sequence[Arm], scores: ArmScores, *, calls: Mapping[str, float], y: np.ndarray,
               top_fraction: float, confidence: float = 0.95) -> pd.DataFrame:
    """One row per arm: ``arm, kind, n_features, calls_per_image, n, rho, rho_ci_low, rho_ci_high, tau_b,
    tau_b_ci_low, tau_b_ci_high, precision_top``.

    ``n`` is the number of images; the intervals are percentile intervals at
    ``confidence`` of the arm's correlation on the shared bootstrap resamples
    (resamples where it is undefined are left out).
    """
    alpha = 100 * (1 - confidence) / 2

    def ci(metric: str) -> tuple[np.ndarray, np.ndarray]:
        r = scores.resampled[metric]
        if r.size == 0 or np.isnan(r).all():
            nan = np.full(len(arms), np.nan)
            return nan, nan
        with warnings.catch_warnings():  # an arm constant in every resample: NaN interval
            warnings.simplefilter("ignore", RuntimeWarning)
            lo, hi = np.nanpercentile(r, [alpha, 100 - alpha], axis=0)
        return lo, hi

    (rlo, rhi), (tlo, thi) = ci("spearman"), ci("kendall")
    return pd.DataFrame({
        "arm": [a.name for a in arms],
        "kind": [a.kind for a in arms],
        "n_features": [a.n_features for a in arms],
        "calls_per_image": [calls[a.cost_key] for a in arms],
        "n": len(y),
        "rho": scores.observed["spearman"],
        "rho_ci_low": rlo,
        "rho_ci_high": rhi,
        "tau_b": scores.observed["kendall"],
        "tau_b_ci_low": tlo,
        "tau_b_ci_high": thi,
        "precision_top": [precision_at_top(a.prediction, y, fraction=top_fraction) for a in arms],
    })
