"""The cheap holistic headroom probe and its verdict bands (Jadhav et al. 2026, §5.5, §7).

:func:`probe_headroom` divides the best single judge's Spearman rho by the
human noise ceiling; :func:`probe_verdict` turns that headroom into advice.
It needs only holistic verdicts and never imports scikit-learn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...datasets.ratings import Ratings
from ...errors import DatasetError, InvalidParameterError
from ...fusion.features import JudgeTable, validate_judge_table
from ...schema import HOLISTIC
from ...serialize import Serializable
from ...stats.bootstrap import percentile_ci
from ...stats.ceiling import headroom, noise_ceiling
from ...stats.correlation import bootstrap_metric, correlation, resample_counts
from ...stats.results import NoiseCeiling, StatResult
from .align import MIN_IMAGES, match_images
from .config import PROBE_HIGH, PROBE_LOW, ProbeConfig
from .metrics import finite_or_low
from .streams import CEILING, PROBE, stream_rng

__all__ = ["PROBE_LOW", "PROBE_HIGH", "ProbeConfig", "ProbeResult", "probe_headroom", "probe_verdict"]


def probe_verdict(headroom: float, *, low: float = PROBE_LOW, high: float = PROBE_HIGH) -> tuple[str, str]:
    """Verdict and advice for a headroom, with bands that include the paper's datasets.

    ``headroom <= low`` (at most EVA's 62.0 %) -> ``"panel"``: dimension-
    scored fusion is worth piloting; ``headroom >= high`` (at least PARA's
    84.6 %) -> ``"single"``; in between -> ``"uncertain"``.

    Examples
    --------
    >>> probe_verdict(0.620)[0], probe_verdict(0.846)[0], probe_verdict(0.70)[0]
    ('panel', 'single', 'uncertain')
    """
    if not math.isfinite(headroom):
        raise InvalidParameterError(f"headroom must be finite, got {headroom!r}")
    if headroom <= 0:  # the judges do not agree with the raters at all: a percentage of the ceiling says nothing
        return "panel", ("no agreement: the best judge's rho with the raters is not above zero, so its share of the "
                         "noise ceiling means nothing; check that ratings and judges score the same way (higher is "
                         "better) and that the probe holds enough images before piloting fusion.")
    if headroom <= low:
        return "panel", (f"large headroom: the best judge reaches {headroom:.1%} of the noise ceiling, at or below "
                         f"EVA's {low:.1%}, where dimension-scored fusion paid; it is worth piloting.")
    if headroom >= high:
        return "single", (f"small headroom: the best judge already reaches {headroom:.1%} of the noise ceiling, at "
                          f"or above PARA's {high:.1%}, where fusion only reached parity; use the best single model.")
    return "uncertain", (f"the best judge reaches {headroom:.1%} of the noise ceiling, between the two datasets "
                         f"studied (EVA {low:.1%}, PARA {high:.1%}); the boundary is unknown, so pilot fusion on a "
                         "labelled sample before paying for it.")


@dataclass(frozen=True)
class ProbeResult(Serializable):
    """Outcome of the holistic headroom probe.

    Attributes
    ----------
    members : dict
        Family -> Spearman rho of its holistic mean over the probe repetitions.
    best : str
        Family with the highest rho.
    best_rho : StatResult
        Its rho with a bootstrap CI.
    ceiling : NoiseCeiling
    headroom : float
        ``best_rho / ceiling`` — the share of the ceiling already reached.
    verdict : str
        ``"panel"``, ``"single"`` or ``"uncertain"``.
    advice : str
        One sentence for the user.
    repetitions : int
        Holistic repetitions asked for per family.
    repetitions_used : dict
        Family -> holistic repetitions actually averaged (fewer than
        ``repetitions`` where the judge table has fewer).
    """

    members: dict[str, float]
    best: str
    best_rho: StatResult
    ceiling: NoiseCeiling
    headroom: float
    verdict: str
    advice: str
    repetitions: int
    repetitions_used: dict[str, int] = field(default_factory=dict)

    @property
    def short_families(self) -> dict:
        """Families with fewer holistic repetitions than asked -> how many were used."""
        return {f: n for f, n in self.repetitions_used.items() if n < self.repetitions}


def _holistic_means(table: JudgeTable, repetitions: int) -> tuple[pd.DataFrame, dict[str, int]]:
    """Per image and family, the mean of the first ``repetitions`` holistic verdicts; and how many each family had."""
    d = table.data[table.data["prompt_kind"] == HOLISTIC]
    keep = []
    used: dict[str, int] = {}
    for fam, sub in d.groupby("family", sort=True):
        reps = np.sort(sub["repetition"].unique())[: int(repetitions)]
        used[str(fam)] = int(reps.size)
        keep.append(sub[sub["repetition"].isin(reps)])
    if not keep:
        raise DatasetError("judge table has no holistic rows to probe")
    return pd.concat(keep).pivot_table(index="image", columns="family", values="score", aggfunc="mean"), used


def _probe_ceiling(ratings: Ratings, images: pd.Index, *, n_splits: int, seed: int) -> NoiseCeiling:
    """The noise ceiling on ``images``; an error when it is missing or not positive."""
    rr = ratings.raters[ratings.raters["image"].isin(images)]
    try:
        ceil = noise_ceiling(rr["image"].to_numpy(), rr["score"].to_numpy(dtype=float), n_splits=n_splits,
                             rng=stream_rng(seed, CEILING))
    except InvalidParameterError as exc:
        raise DatasetError(f"{ratings.source}: no noise ceiling: {exc}") from exc
    if not (math.isfinite(ceil.ceiling) and ceil.ceiling > 0):
        raise DatasetError(
            f"{ratings.source}: the noise ceiling is {ceil.ceiling:.3f} (raters' split halves do not agree: "
            f"split-half rho {ceil.split_half:.3f}), so headroom is undefined and the probe cannot advise"
        )
    return ceil


def probe_headroom(
    table: JudgeTable | pd.DataFrame,
    ratings: Ratings,
    *,
    repetitions: int = ProbeConfig.repetitions,
    low: float = ProbeConfig.low,
    high: float = ProbeConfig.high,
    seed: int = ProbeConfig.seed,
    n_splits: int = ProbeConfig.n_splits,
    n_resamples: int = ProbeConfig.n_resamples,
    confidence: float = ProbeConfig.confidence,
    image_key: str = ProbeConfig.image_key,
) -> ProbeResult:
    """The cheap holistic probe: how much of the noise ceiling is already reached?

    Uses only holistic verdicts (the first ``repetitions`` of each family),
    takes the best family's Spearman rho and divides it by the human noise
    ceiling.  Large headroom (best judge far below the ceiling, as on EVA,
    62.0 %) is where dimension-scored fusion paid; small headroom (PARA,
    84.6 %) is where the best single model was as good.  Between the two the
    boundary is unknown.  Options and their defaults are
    :class:`~multicrop.evaluation.judges.config.ProbeConfig`'s.

    Parameters
    ----------
    table : JudgeTable or DataFrame
        Judge scores; only holistic rows are used.
    ratings : Ratings
        Human ratings with per-rater rows.
    repetitions : int
        Holistic repetitions used per family (the paper's probe uses 5); a
        family with fewer uses all it has, recorded in
        ``ProbeResult.repetitions_used``.
    low, high : float
        Headroom at most ``low`` -> ``"panel"``; at least ``high`` ->
        ``"single"``; otherwise ``"uncertain"`` (:func:`probe_verdict`).
        Defaults are the paper's two datasets, EVA 0.620 and PARA 0.846, so
        both fall inside their own band.
    seed : int
        Seed of rater splits and resamples.
    n_splits : int
        Random rater split-halves behind the noise ceiling.
    n_resamples, confidence : int, float
        Bootstrap resamples and level of the percentile CI of the best rho
        (resamples where rho is undefined are left out).
    image_key : {"auto", "exact", "name", "stem"}
        How judge-table images meet rating image ids.

    Returns
    -------
    ProbeResult

    Raises
    ------
    InvalidParameterError
        An option out of range.
    DatasetError
        No per-rater ratings, fewer than 10 usable images, or a noise
        ceiling that is not positive (raters' split halves do not agree, so
        headroom is undefined).

    References
    ----------
    Jadhav et al. (2026), §5.5 and §7.

    Examples
    --------
    >>> from multicrop.datasets.simulate import simulate_study
    >>> from multicrop.datasets.ratings import ratings_from_frame
    >>> sim = simulate_study(200, rng=np.random.default_rng(0))
    >>> res = probe_headroom(sim.judge_table, ratings_from_frame(sim.ratings), n_resamples=500, n_splits=20)
    >>> res.verdict
    'panel'
    """
    if isinstance(table, pd.DataFrame):
        table = validate_judge_table(table)
    cfg = ProbeConfig(repetitions=repetitions, low=low, high=high, seed=seed, n_splits=n_splits,
                      n_resamples=n_resamples, confidence=confidence, image_key=image_key)
    if ratings.raters is None:
        raise DatasetError(f"{ratings.source} has no per-rater ratings; the probe needs them for the ceiling")
    table, ratings, _ = match_images(table, ratings, cfg.image_key)
    probe, used = _holistic_means(table, cfg.repetitions)
    human = ratings.means["score"].dropna()
    images = human.index.intersection(probe.dropna().index).sort_values()
    if len(images) < MIN_IMAGES:
        raise DatasetError(
            f"only {len(images)} images have both ratings and holistic scores; need at least {MIN_IMAGES}")
    y = human.loc[images].to_numpy(dtype=float)
    rhos = {f: correlation(probe.loc[images, f].to_numpy(), y) for f in probe.columns}
    best = max(rhos, key=lambda f: finite_or_low(rhos[f]))
    if not math.isfinite(rhos[best]):
        raise DatasetError("every judge gives a constant holistic score; rank correlations are undefined")
    counts = resample_counts(len(y), cfg.n_resamples, stream_rng(cfg.seed, PROBE))
    bt = bootstrap_metric(y, probe.loc[images, best].to_numpy()[None, :], counts)[:, 0]
    lo, hi = percentile_ci(bt, confidence=cfg.confidence)  # NaN resamples (constant scores) left out
    ceil = _probe_ceiling(ratings, images, n_splits=cfg.n_splits, seed=cfg.seed)
    head = headroom(rhos[best], ceil.ceiling)
    verdict, advice = probe_verdict(head, low=cfg.low, high=cfg.high)
    return ProbeResult({k: float(v) for k, v in sorted(rhos.items())}, str(best),
                       StatResult(float(rhos[best]), float(lo), float(hi), math.nan, cfg.n_resamples),
                       ceil, float(head), verdict, advice, int(cfg.repetitions),
                       {f: used[f] for f in sorted(rhos)})
