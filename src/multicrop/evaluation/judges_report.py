"""The judge-panel protocol: is a panel of VLM judges worth its cost?

:func:`evaluate_judges` runs the protocol of Jadhav, Beriwala & Kim (2026)
on a judge table and human ratings and returns a :class:`JudgesReport`;
:func:`write_judges_report` writes its tables, figures and an HTML page.
:func:`probe_headroom` is the cheap holistic probe (§5.5, §7).

Arms
----
``member:<family>``  one family's holistic mean (a single judge)
``panel_mean``       unweighted mean of z-scored holistic verdicts
``<block>_<comb>``   out-of-fold combiner (``gb``, ``ridge``) on block
                     ``H``, ``P``, ``H+P`` or ``Hsplit`` (feature-count control)
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path, PurePosixPath, PureWindowsPath

import numpy as np
import pandas as pd

from ..datasets.ratings import DIMENSION_ATTRIBUTES, Ratings
from ..errors import DatasetError, InvalidParameterError, MulticropError
from ..fusion.features import (
    BLOCKS,
    DIMENSIONS,
    JudgeTable,
    build_features,
    calls_per_image,
    panel_mean,
    validate_judge_table,
)
from ..io import atomic_write_bytes
from ..io.tables import write_table
from ..judges.schema import DIMENSION, HOLISTIC
from ..stats.bootstrap import delta_result, max_statistic_pvalues, one_sided_p, percentile_ci
from ..stats.ceiling import headroom, noise_ceiling
from ..stats.correlation import bootstrap_metric, correlation, resample_counts
from ..stats.multiple import bh_adjust
from ..stats.partial import bootstrap_partial_difference, partial_correlation
from ..stats.results import NoiseCeiling, StatResult
from ..store.keys import canonical_json

__all__ = [
    "JudgesReportConfig",
    "JudgesReport",
    "ProbeResult",
    "evaluate_judges",
    "write_judges_report",
    "probe_headroom",
    "probe_verdict",
    "precision_at_top",
    "PROBE_LOW",
    "PROBE_HIGH",
    "match_images",
    "IMAGE_KEYS",
    "check_report_dir",
    "summary_jsonable",
]

#: how judge-table images are matched to rating images
IMAGE_KEYS = ("auto", "exact", "name", "stem")

Progress = Callable[[str, float], None]

#: stream ids for independent random streams derived from the seed
_STREAM_BOOT, _STREAM_CEIL, _STREAM_MTMM, _STREAM_TRANSFER, _STREAM_PROBE = range(5)


#: config fields that do not change any result and so stay out of the canonical config
_NOT_CANONICAL = frozenset({"n_jobs"})


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), stream])


@dataclass(frozen=True)
class JudgesReportConfig:
    """Every setting of the judge protocol, in one place.

    Defaults are the paper's: 10,000 paired resamples, 95 % percentile
    intervals, 5 folds, 20 fold partitions for robustness, top 10 %.

    Parameters
    ----------
    seed : int
        Seed of folds, rater splits and bootstrap resamples.
    n_resamples : int
        Paired bootstrap resamples over images.
    n_folds : int
        Folds of the out-of-fold combiner predictions.
    n_partitions : int
        Different fold partitions for the robustness check.
    n_splits : int
        Random rater split-halves behind the noise ceiling.
    confidence : float
        Level of the percentile intervals.
    top_fraction : float
        Fraction of images in the precision-at-top shortlist.
    combiners : tuple of str
        Registered combiner names to run on every block.
    robustness_arms : tuple of str, optional
        Arms re-run over ``n_partitions`` fold partitions; default (None):
        ``H+P`` with the first of ``combiners`` (``("H+P_gb",)`` by default).
    families : tuple of str or None
        Families to use (default: all in the judge table).
    image_key : {"auto", "exact", "name", "stem"}
        How judge-table images (often paths) meet rating image ids: as given,
        by file name, or by file name without extension; ``auto`` takes the
        one matching most images (the choice is recorded in the summary).
    n_jobs : int
        Worker processes for the robustness refits.  Results do not depend
        on it, so it is left out of :meth:`to_dict` / :meth:`to_json` (the
        canonical config written into every report).

    Examples
    --------
    >>> JudgesReportConfig(n_resamples=100).to_dict()["n_resamples"]
    100
    """

    seed: int = 0
    n_resamples: int = 10_000
    n_folds: int = 5
    n_partitions: int = 20
    n_splits: int = 200
    confidence: float = 0.95
    top_fraction: float = 0.10
    combiners: tuple[str, ...] = ("gb", "ridge")
    robustness_arms: tuple[str, ...] | None = None
    families: tuple[str, ...] | None = None
    image_key: str = "auto"
    n_jobs: int = 1

    def __post_init__(self) -> None:
        checks = [
            ("n_resamples", self.n_resamples, self.n_resamples >= 100, ">= 100"),
            ("n_folds", self.n_folds, self.n_folds >= 2, ">= 2"),
            ("n_partitions", self.n_partitions, self.n_partitions >= 0, ">= 0"),
            ("n_splits", self.n_splits, self.n_splits >= 1, ">= 1"),
            ("confidence", self.confidence, 0 < self.confidence < 1, "in (0, 1)"),
            ("top_fraction", self.top_fraction, 0 < self.top_fraction <= 0.5, "in (0, 0.5]"),
            ("n_jobs", self.n_jobs, self.n_jobs >= 1, ">= 1"),
        ]
        for name, value, ok, allowed in checks:
            if not ok:
                raise InvalidParameterError(f"{name} must be {allowed}, got {value!r}")
        from ..fusion.combiners import COMBINERS  # scikit-learn: imported only where combiners are used

        for c in self.combiners:
            COMBINERS.get(c)
        if self.image_key not in IMAGE_KEYS:
            raise InvalidParameterError(f"image_key must be one of {IMAGE_KEYS}, got {self.image_key!r}")
        if not self.combiners:
            raise InvalidParameterError("combiners must name at least one combiner, got ()")
        if self.robustness_arms is None:
            object.__setattr__(self, "robustness_arms", (f"H+P_{self.combiners[0]}",))

    def to_dict(self) -> dict:
        """Plain dict of the settings that shape results (tuples become lists; no ``n_jobs``)."""
        d = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items() if k not in _NOT_CANONICAL}

    def to_json(self) -> str:
        """Canonical JSON (:func:`multicrop.store.keys.canonical_json`)."""
        return canonical_json(self.to_dict())


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
        Margin over the best member across fold partitions, label transfer.
    ceiling : NoiseCeiling or None
    summary : dict
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


def _top_inclusion(v: np.ndarray, k: int) -> np.ndarray:
    """Probability that each item is among the top ``k`` when ties are broken at random.

    Items strictly above the k-th largest value are in (1), items below are
    out (0), and the ``g`` items tied at the boundary share the ``m`` places
    left (``m / g`` each).
    """
    kth = np.sort(v)[::-1][k - 1]
    above = v > kth
    tied = v == kth
    out = above.astype(float)
    out[tied] = (k - above.sum()) / tied.sum()
    return out


def precision_at_top(prediction, human, *, fraction: float = 0.10) -> float:
    """Share of the predicted top ``fraction`` that is in the human top ``fraction``.

    Both shortlists hold ``k = ceil(fraction * n)`` images.  Ties at a
    shortlist boundary are broken at random, independently on the two sides,
    and the *expected* precision is returned: ``sum_i P(i in predicted top) *
    P(i in human top) / k``, where a boundary tie group of ``g`` images
    competing for ``m`` places gives each of them ``m / g``.  The result
    therefore does not depend on the order of the images (integer judge
    verdicts tie a lot).

    Examples
    --------
    >>> precision_at_top([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [10, 9, 3, 4, 5, 6, 7, 8, 2, 1], fraction=0.2)
    0.0
    >>> precision_at_top(np.arange(10.0), np.arange(10.0), fraction=0.2)
    1.0
    >>> precision_at_top([3, 2, 2, 2, 1], [5, 4, 3, 2, 1], fraction=0.4)  # (1 + 1/3) / 2
    0.6666666666666666
    """
    p = np.asarray(prediction, dtype=float)
    h = np.asarray(human, dtype=float)
    if p.shape != h.shape or p.ndim != 1:
        raise InvalidParameterError("prediction and human must be 1-D arrays of equal length")
    if not 0 < fraction <= 1:
        raise InvalidParameterError(f"fraction must be in (0, 1], got {fraction!r}")
    if p.size == 0 or not (np.isfinite(p).all() and np.isfinite(h).all()):
        return math.nan
    k = max(1, math.ceil(fraction * p.size))
    return float(np.dot(_top_inclusion(p, k), _top_inclusion(h, k)) / k)


# ---------------------------------------------------------------- alignment


def _image_key(value: str, mode: str) -> str:
    if mode == "exact":
        return value
    path = PureWindowsPath(value) if "\\" in value else PurePosixPath(value)
    return path.name if mode == "name" else path.stem


def match_images(table: JudgeTable, ratings: Ratings, mode: str = "auto") -> tuple[JudgeTable, Ratings, str]:
    """Re-key judge-table and rating images so that they meet.

    Judge tables usually name images by path (``photos/123.jpg``) while
    rating files use ids (``123``).  ``mode`` ``"name"`` keys both sides by
    file name, ``"stem"`` by file name without extension; ``"auto"`` picks
    whichever of exact/name/stem matches most images without collisions.

    Returns
    -------
    (JudgeTable, Ratings, str)
        Re-keyed copies and the mode used.

    Raises
    ------
    DatasetError
        If a key collides (two images share one key) in an explicit mode.

    Examples
    --------
    >>> _image_key("photos/123.jpg", "stem"), _image_key("photos/123.jpg", "name")
    ('123', '123.jpg')
    """
    if mode not in IMAGE_KEYS:
        raise InvalidParameterError(f"image_key must be one of {IMAGE_KEYS}, got {mode!r}")
    j_imgs = pd.Index(table.calls["image"].unique())
    r_imgs = pd.Index(ratings.means.index)

    def keyed(m):
        jk = pd.Series([_image_key(str(v), m) for v in j_imgs], index=j_imgs)
        rk = pd.Series([_image_key(str(v), m) for v in r_imgs], index=r_imgs)
        return jk, rk

    def collisions(jk, rk):
        return [name for side in (jk, rk) for name in side[side.duplicated()].unique().tolist()]

    if mode == "auto":
        best, best_n = "exact", -1
        for m in ("exact", "name", "stem"):
            jk, rk = keyed(m)
            n = len(set(jk) & set(rk))
            if not collisions(jk, rk) and n > best_n:
                best, best_n = m, n
        mode = best
    if mode == "exact":
        return table, ratings, mode
    jk, rk = keyed(mode)
    clash = collisions(jk, rk)
    if clash:
        raise DatasetError(f"image_key={mode!r} maps several images to {clash[:3]}; use another image key")
    data = table.data.assign(image=table.data["image"].map(jk))
    calls = table.calls.assign(image=table.calls["image"].map(jk))
    new_table = replace(table, data=data, calls=calls)
    means = ratings.means.copy()
    means.index = means.index.map(rk)
    raters = ratings.raters
    if raters is not None:
        raters = raters.assign(image=raters["image"].map(rk))
    return new_table, replace(ratings, means=means.sort_index(), raters=raters), mode


def _align(table: JudgeTable, ratings: Ratings, families) -> tuple[dict[str, pd.DataFrame], pd.Series, dict]:
    blocks: dict[str, pd.DataFrame] = {}
    notes: dict[str, str] = {}
    for b in BLOCKS:
        try:
            blocks[b] = build_features(table, b, families=families)
        except InvalidParameterError as exc:
            if b != "Hsplit":
                raise
            notes["Hsplit"] = f"feature-count control skipped: {exc}"
    if blocks["H"].shape[1] == 0:
        raise DatasetError("judge table has no holistic rows; the protocol needs holistic verdicts")
    if blocks["P"].shape[1] == 0:
        notes["P"] = "no dimension rows: P and H+P arms skipped"
        del blocks["P"], blocks["H+P"]
    human = ratings.means["score"].dropna()
    images = human.index
    for b in blocks.values():
        images = images.intersection(b.dropna().index)
    images = images.sort_values()
    if len(images) < 10:
        raise DatasetError(
            f"only {len(images)} images have human ratings and complete judge scores; need at least 10"
        )
    counts = {
        "n_images": int(len(images)),
        "n_rated": int(len(human)),
        "n_scored": int(blocks["H"].shape[0]),
    }
    return {b: f.loc[images] for b, f in blocks.items()}, human.loc[images], {**counts, "notes": notes}


def _calls(table: JudgeTable, families: list[str], paid: list[str] = ()) -> dict[str, float]:
    """API calls per image of every arm; ``paid`` are families whose calls count
    towards the panel arms although none of their replies parsed."""
    c = calls_per_image(table)
    c = c[c["family"].isin([*families, *paid])]
    get = lambda kind: float(c.loc[c["prompt_kind"] == kind, "calls_per_image"].sum())  # noqa: E731
    per = {f: float(c.loc[(c["family"] == f) & (c["prompt_kind"] == HOLISTIC), "calls_per_image"].sum())
           for f in families}
    return {"H": get(HOLISTIC), "P": get(DIMENSION), "H+P": get(HOLISTIC) + get(DIMENSION),
            "Hsplit": get(HOLISTIC), **{f"member:{f}": v for f, v in per.items()}, "panel_mean": get(HOLISTIC)}


def _unparsed_families(table: JudgeTable) -> dict[str, int]:
    """Families with calls but not one parsed score -> their number of calls."""
    gone = sorted(set(table.calls["family"]) - set(table.data["family"]))
    return {f: int((table.calls["family"] == f).sum()) for f in gone}


def _oof(block: pd.DataFrame, y: np.ndarray, comb: str, cfg: JudgesReportConfig, seed: int) -> np.ndarray:
    from ..fusion.combiners import make_combiner, out_of_fold_predict

    return out_of_fold_predict(make_combiner(comb, random_state=cfg.seed), block.to_numpy(), y,
                               n_folds=cfg.n_folds, seed=seed)


# ---------------------------------------------------------------- protocol


def evaluate_judges(
    table: JudgeTable | pd.DataFrame,
    ratings: Ratings,
    config: JudgesReportConfig | None = None,
    *,
    transfer: tuple[JudgeTable, Ratings] | None = None,
    progress: Progress | None = None,
) -> JudgesReport:
    """Run the judge protocol: arms, comparisons, MTMM and robustness.

    Parameters
    ----------
    table : JudgeTable or DataFrame
        Judge scores (tidy schema, see :mod:`multicrop.fusion.features`).
    ratings : Ratings
        Human ratings (:mod:`multicrop.datasets.ratings`).
    config : JudgesReportConfig, optional
    transfer : (JudgeTable, Ratings), optional
        A second dataset: combiners fitted on all of this one are applied
        there (label transfer).
    progress : callable(str, float), optional
        Called with a step name and the fraction of work done.

    Returns
    -------
    JudgesReport

    References
    ----------
    Jadhav, Beriwala & Kim (2026), §3–§5 and Appendices D, F, G.

    Examples
    --------
    >>> from multicrop.stats.simulate import simulate_study
    >>> from multicrop.datasets.ratings import ratings_from_frame
    >>> sim = simulate_study(120, n_families=2, rng=np.random.default_rng(0))
    >>> cfg = JudgesReportConfig(n_resamples=200, n_partitions=2, n_splits=10, combiners=("ridge",),
    ...                          robustness_arms=("P_ridge",))
    >>> rep = evaluate_judges(sim.judge_table, ratings_from_frame(sim.ratings), cfg)
    >>> rep.summary["best_single"] in ("member:family0", "member:family1")
    True
    """
    cfg = config or JudgesReportConfig()
    if isinstance(table, pd.DataFrame):
        table = validate_judge_table(table)
    say = progress or (lambda step, frac: None)
    families = list(cfg.families) if cfg.families else table.families
    say("aligning judge scores and ratings", 0.0)
    table, ratings, key_mode = match_images(table, ratings, cfg.image_key)
    blocks, human_s, info = _align(table, ratings, families)
    images = human_s.index
    y = human_s.to_numpy(dtype=float)
    unparsed = _unparsed_families(table) if not cfg.families else {}
    if unparsed:
        info["notes"]["unparsed_families"] = (
            "families dropped because none of their replies parsed (their calls still count in calls per "
            "image): " + ", ".join(f"{f} ({n} calls)" for f, n in unparsed.items()))
    calls = _calls(table, families, list(unparsed))

    # --- arms
    preds: dict[str, np.ndarray] = {}
    kinds: dict[str, str] = {}
    nfeat: dict[str, int] = {}
    for f in families:
        preds[f"member:{f}"] = blocks["H"][f"H:{f}"].to_numpy(dtype=float)
        kinds[f"member:{f}"], nfeat[f"member:{f}"] = "single", 1
    preds["panel_mean"] = panel_mean(blocks["H"]).to_numpy(dtype=float)
    kinds["panel_mean"], nfeat["panel_mean"] = "panel mean", len(families)
    fused = [(b, c) for b in BLOCKS if b in blocks for c in cfg.combiners]
    for i, (b, c) in enumerate(fused):
        say(f"out-of-fold {b} with {c}", 0.05 + 0.25 * i / max(1, len(fused)))
        arm = f"{b}_{c}"
        preds[arm] = _oof(blocks[b], y, c, cfg, cfg.seed)
        kinds[arm], nfeat[arm] = "fused", blocks[b].shape[1]
    names = list(preds)
    members = [a for a in names if kinds[a] == "single"]
    others = [a for a in names if kinds[a] != "single"]
    M = np.vstack([preds[a] for a in names])

    # --- point estimates and shared paired resamples
    say("bootstrap over images", 0.3)
    counts = resample_counts(len(y), cfg.n_resamples, _rng(cfg.seed, _STREAM_BOOT))
    obs = {m: np.array([correlation(p, y, metric=m) for p in M]) for m in ("spearman", "kendall")}
    boot = {}
    for j, m in enumerate(("spearman", "kendall")):
        say(f"bootstrap {m}", 0.3 + 0.15 * j)
        boot[m] = bootstrap_metric(y, M, counts, metric=m)
    idx = {a: i for i, a in enumerate(names)}
    mem_idx = [idx[a] for a in members]
    if np.isnan(obs["spearman"][mem_idx]).all():
        raise DatasetError("every single judge gives a constant score; rank correlations are undefined")
    best = members[int(np.nanargmax(obs["spearman"][mem_idx]))]

    arms = pd.DataFrame({
        "arm": names,
        "kind": [kinds[a] for a in names],
        "n_features": [nfeat[a] for a in names],
        "calls_per_image": [calls[a.rsplit("_", 1)[0]] if kinds[a] == "fused" else calls[a] for a in names],
        "rho": obs["spearman"],
        "tau_b": obs["kendall"],
        "precision_top": [precision_at_top(preds[a], y, fraction=cfg.top_fraction) for a in names],
    })

    # --- comparisons against the best member and the panel mean
    rows = []
    for metric in ("spearman", "kendall"):
        o, b = obs[metric], boot[metric]
        best_boot_max = np.nanmax(b[:, mem_idx], axis=1)
        for arm in others:
            for comp in (best, "panel_mean"):
                if arm == comp:
                    continue
                d = b[:, idx[arm]] - b[:, idx[comp]]
                r = delta_result(o[idx[arm]] - o[idx[comp]], d, confidence=cfg.confidence)
                p_max = one_sided_p(b[:, idx[arm]] - best_boot_max) if comp == best else math.nan
                rows.append({"arm": arm, "comparator": "best_single" if comp == best else "panel_mean",
                             "comparator_arm": comp, "metric": metric, "delta": r.estimate,
                             "ci_low": r.ci_low, "ci_high": r.ci_high, "p": r.p, "p_max": p_max})
    comparisons = pd.DataFrame(rows)
    comparisons["p_bh"] = np.nan
    for metric in ("spearman", "kendall"):
        sel = comparisons["metric"] == metric
        comparisons.loc[sel, "p_bh"] = bh_adjust(comparisons.loc[sel, "p"].to_numpy())

    mrows = []
    for metric in ("spearman", "kendall"):
        o, b = obs[metric], boot[metric]
        d_obs = o[mem_idx] - o[idx["panel_mean"]]
        d_boot = b[:, mem_idx] - b[:, [idx["panel_mean"]]]
        pmax = max_statistic_pvalues(d_obs, d_boot)
        for k, a in enumerate(members):
            r = delta_result(d_obs[k], d_boot[:, k], confidence=cfg.confidence)
            mrows.append({"member": a, "metric": metric, "value": o[idx[a]], "delta_vs_panel_mean": r.estimate,
                          "ci_low": r.ci_low, "ci_high": r.ci_high, "p": r.p, "p_maxT": pmax[k],
                          "is_best": a == best})
    members_df = pd.DataFrame(mrows)

    # --- noise ceiling
    say("noise ceiling", 0.6)
    ceiling = None
    if ratings.raters is not None:
        rr = ratings.raters[ratings.raters["image"].isin(images)]
        try:
            ceiling = noise_ceiling(rr["image"].to_numpy(), rr["score"].to_numpy(dtype=float),
                                    n_splits=cfg.n_splits, rng=_rng(cfg.seed, _STREAM_CEIL))
        except InvalidParameterError as exc:
            info["notes"]["ceiling"] = str(exc)
    if ceiling is not None and not ceiling.ceiling > 0:
        info["notes"]["ceiling"] = (f"noise ceiling is {ceiling.ceiling:.3f} (raters' split halves do not agree: "
                                    f"split-half rho {ceiling.split_half:.3f}); headroom is undefined")
    if ratings.notes:
        info["notes"]["ratings"] = "; ".join(ratings.notes)

    # --- MTMM
    say("multitrait-multimethod matrix", 0.65)
    mtmm_matrix, mtmm = _mtmm(blocks, ratings, images, families, cfg)

    # --- robustness
    say("robustness over fold partitions", 0.75)
    robustness, t_info = _robustness(blocks, y, images, preds, best, cfg, transfer, families, say)
    if t_info.get("n_transfer_overlap"):
        info["notes"]["transfer"] = (f"{t_info['n_transfer_overlap']} images of the transfer set are also in this "
                                     "set and were dropped from it (they would be predicted in sample)")
    absent = [a for a in cfg.robustness_arms if a not in preds]
    if absent and cfg.n_partitions:
        info["notes"]["robustness"] = f"robustness arms {absent} are not among the arms run; skipped"

    best_rho = float(obs["spearman"][idx[best]])
    summary = {
        "n_images": info["n_images"], "n_rated": info["n_rated"], "n_scored": info["n_scored"],
        "n_ratings_skipped": len(ratings.skipped), "n_judge_rows_dropped": table.n_dropped,
        "families": families, "image_key": key_mode, "best_single": best, "best_single_rho": best_rho,
        "ceiling": ceiling.to_dict() if ceiling else None,
        "headroom": headroom(best_rho, ceiling.ceiling) if ceiling and ceiling.ceiling > 0 else None,
        "unparsed_families": unparsed,
        "notes": info["notes"], "config": cfg.to_dict(),
        **({"transfer": t_info} if t_info else {}),
    }
    say("done", 1.0)
    predictions = pd.DataFrame({"human": y, **preds}, index=pd.Index(images, name="image"))
    return JudgesReport(arms, comparisons, members_df, mtmm_matrix, mtmm, robustness, ceiling, summary,
                        cfg, ratings.skipped_frame(), predictions)


def _mtmm(blocks, ratings, images, families, cfg) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The MTMM matrix and its matched cells, from the aligned H and P blocks."""
    attrs = [a for a in ratings.attributes
             if ratings.means.loc[images, a].notna().all() and ratings.means.loc[images, a].nunique() > 1]
    if not attrs:
        return pd.DataFrame(), pd.DataFrame()
    hum = ratings.means.loc[images]
    overall = hum["score"].to_numpy(dtype=float)
    H = blocks["H"]
    P = blocks.get("P", pd.DataFrame(index=images))
    prompts = []
    for f in families:
        prompts.append((f, HOLISTIC, H[f"H:{f}"]))
        prompts += [(f, d, P[f"P:{f}:{d}"]) for d in DIMENSIONS if f"P:{f}:{d}" in P]
    mat = []
    partial: dict[tuple[str, str, str], float] = {}  # (family, prompt, attribute) -> partial rho
    for f, prompt, s in prompts:
        if s.isna().any():
            continue
        row = {"family": f, "prompt": prompt}
        for a in attrs:
            row[a] = partial[f, prompt, a] = partial_correlation(s.to_numpy(), hum[a].to_numpy(dtype=float),
                                                                 overall).estimate
        mat.append(row)
    matrix = pd.DataFrame(mat)
    counts = resample_counts(len(images), cfg.n_resamples, _rng(cfg.seed, _STREAM_MTMM))
    cells = []
    cache: dict = {}  # resampled ranks shared across cells
    for f in families:  # family outermost: its holistic ranks and the 3 attributes' stay cached
        for d, a in DIMENSION_ATTRIBUTES.items():
            col = f"P:{f}:{d}"
            if a not in attrs or col not in P or P[col].isna().any() or H[f"H:{f}"].isna().any():
                continue
            ds, hs, at = P[col].to_numpy(), H[f"H:{f}"].to_numpy(), hum[a].to_numpy(dtype=float)
            r = bootstrap_partial_difference(ds, hs, at, overall, counts, confidence=cfg.confidence, _cache=cache)
            cells.append({
                "family": f, "dimension": d, "attribute": a,
                "partial_dimension": partial[f, d, a],
                "partial_holistic": partial[f, HOLISTIC, a],
                "delta": r.estimate, "ci_low": r.ci_low, "ci_high": r.ci_high, "p": r.p,
                "raw_dimension": correlation(ds, at), "raw_holistic": correlation(hs, at),
            })
    mtmm = pd.DataFrame(cells)
    if len(mtmm):
        mtmm["p_bh"] = bh_adjust(mtmm["p"].to_numpy())
    return matrix, mtmm


def _partition_margin(args) -> float:
    block, y, comb, cfg, seed, best_rho, done = args
    pred = done if done is not None else _oof(block, y, comb, cfg, seed)
    return correlation(pred, y) - best_rho


def _robustness(blocks, y, images, preds, best, cfg, transfer, families, say) -> tuple[pd.DataFrame, dict]:
    rows = []
    best_rho = correlation(preds[best], y)
    arms = [a for a in cfg.robustness_arms if a in preds]
    jobs = []
    for a in arms:
        b, c = a.rsplit("_", 1)
        # partition 0 is the main analysis (seed), already fitted
        jobs += [(a, (blocks[b], y, c, cfg, cfg.seed + k, best_rho, preds[a] if k == 0 else None))
                 for k in range(cfg.n_partitions)]
    if jobs:
        if cfg.n_jobs > 1:
            from joblib import Parallel, delayed

            margins = Parallel(n_jobs=cfg.n_jobs)(delayed(_partition_margin)(j) for _, j in jobs)
        else:
            margins = []
            for i, (_, j) in enumerate(jobs):
                say("robustness over fold partitions", 0.75 + 0.2 * i / len(jobs))
                margins.append(_partition_margin(j))
        for a in arms:
            m = np.array([mg for (name, _), mg in zip(jobs, margins) if name == a])
            rows.append({"check": "fold_partitions", "arm": a, "estimate": float(m.mean()),
                         "sd": float(m.std(ddof=1)) if m.size > 1 else math.nan, "ci_low": float(m.min()),
                         "ci_high": float(m.max()), "p": math.nan,
                         "detail": f"margin over {best} across {m.size} partitions; {int((m < 0).sum())} negative; "
                                   "ci_low/ci_high are min/max"})
    for a, p in preds.items():
        rows.append({"check": "precision_top", "arm": a,
                     "estimate": precision_at_top(p, y, fraction=cfg.top_fraction), "sd": math.nan,
                     "ci_low": math.nan, "ci_high": math.nan, "p": math.nan,
                     "detail": f"expected share of predicted top {cfg.top_fraction:.0%} in human top "
                               f"{cfg.top_fraction:.0%} (boundary ties broken at random)"})
    t_info: dict = {}
    if transfer is not None:
        t_rows, t_info = _transfer(blocks, y, images, cfg, transfer, families)
        rows += t_rows
    return pd.DataFrame(rows, columns=["check", "arm", "estimate", "sd", "ci_low", "ci_high", "p", "detail"]), t_info


def _transfer(blocks, y, images, cfg, transfer, families) -> tuple[list[dict], dict]:
    from ..fusion.combiners import make_combiner

    t_table, t_ratings = transfer
    if isinstance(t_table, pd.DataFrame):
        t_table = validate_judge_table(t_table, source="transfer judge table")
    t_table, t_ratings, _ = match_images(t_table, t_ratings, cfg.image_key)
    missing = sorted(set(families) - set(t_table.families))
    if missing:
        raise DatasetError(f"transfer judge table lacks families {missing}")
    t_blocks, t_y, t_counts = _align(t_table, t_ratings, families)
    # an image in both sets would be predicted by a model fitted on it (in-sample)
    shared = t_y.index.intersection(pd.Index(images))
    if len(shared):
        keep = t_y.index.difference(shared)
        if len(keep) < 10:
            raise DatasetError(
                f"the transfer set shares {len(shared)} of its {len(t_y)} images with the main set; "
                f"{len(keep)} would be left after dropping them (need at least 10)"
            )
        t_y = t_y.loc[keep]
        t_blocks = {b: f.loc[keep] for b, f in t_blocks.items()}
    info = {"n_transfer_images": int(len(t_y)), "n_transfer_overlap": int(len(shared))}
    t_y = t_y.to_numpy(dtype=float)
    members = {f: t_blocks["H"][f"H:{f}"].to_numpy(dtype=float) for f in families}
    t_best = max(members, key=lambda f: _finite_or_low(correlation(members[f], t_y)))
    counts = resample_counts(len(t_y), cfg.n_resamples, _rng(cfg.seed, _STREAM_TRANSFER))
    rows = []
    for b in ("H+P", "P"):
        if b not in blocks or b not in t_blocks:
            continue
        absent = [c for c in blocks[b].columns if c not in t_blocks[b].columns]
        if absent:
            more = f" and {len(absent) - 5} more" if len(absent) > 5 else ""
            raise DatasetError(f"transfer judge table lacks the {b} feature columns "
                               f"{', '.join(map(str, absent[:5]))}{more} that the combiner was fitted on")
        for c in cfg.combiners:
            model = make_combiner(c, random_state=cfg.seed).fit(blocks[b].to_numpy(), y)
            pred = model.predict(t_blocks[b][list(blocks[b].columns)].to_numpy())
            bt = bootstrap_metric(t_y, np.vstack([pred, members[t_best]]), counts)
            r = delta_result(correlation(pred, t_y) - correlation(members[t_best], t_y), bt[:, 0] - bt[:, 1],
                             confidence=cfg.confidence)
            rows.append({"check": "label_transfer", "arm": f"{b}_{c}", "estimate": r.estimate, "sd": math.nan,
                         "ci_low": r.ci_low, "ci_high": r.ci_high, "p": r.p,
                         "detail": f"fitted here, applied to the transfer set: rho {correlation(pred, t_y):.3f} "
                                   f"minus its best single member:{t_best}; {info['n_transfer_images']} transfer "
                                   f"images ({info['n_transfer_overlap']} shared with this set dropped)"})
    return rows, info


# ---------------------------------------------------------------- probe


def _finite_or_low(v: float) -> float:
    return v if math.isfinite(v) else -math.inf


#: headroom of the best probe model on the paper's two datasets (Jadhav et
#: al. 2026, §5.5: "the best probe model captured 62.0% of EVA's noise
#: ceiling versus 84.6% on PARA"); §7: "the boundary between 62% and 85%
#: headroom is unknown"
PROBE_LOW = 0.620
PROBE_HIGH = 0.846


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
class ProbeResult:
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

    members: dict
    best: str
    best_rho: StatResult
    ceiling: NoiseCeiling
    headroom: float
    verdict: str
    advice: str
    repetitions: int
    repetitions_used: dict = field(default_factory=dict)

    @property
    def short_families(self) -> dict:
        """Families with fewer holistic repetitions than asked -> how many were used."""
        return {f: n for f, n in self.repetitions_used.items() if n < self.repetitions}

    def to_dict(self) -> dict:
        return {"members": self.members, "best": self.best, "best_rho": self.best_rho.to_dict(),
                "ceiling": self.ceiling.to_dict(), "headroom": self.headroom, "verdict": self.verdict,
                "advice": self.advice, "repetitions": self.repetitions, "repetitions_used": self.repetitions_used}


def probe_headroom(
    table: JudgeTable | pd.DataFrame,
    ratings: Ratings,
    *,
    repetitions: int = 5,
    low: float = PROBE_LOW,
    high: float = PROBE_HIGH,
    seed: int = 0,
    n_splits: int = 200,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    image_key: str = "auto",
) -> ProbeResult:
    """The cheap holistic probe: how much of the noise ceiling is already reached?

    Uses only holistic verdicts (the first ``repetitions`` of each family),
    takes the best family's Spearman rho and divides it by the human noise
    ceiling.  Large headroom (best judge far below the ceiling, as on EVA,
    62.0 %) is where dimension-scored fusion paid; small headroom (PARA,
    84.6 %) is where the best single model was as good.  Between the two the
    boundary is unknown.

    Parameters
    ----------
    repetitions : int
        Holistic repetitions used per family (the paper's probe uses 5); a
        family with fewer uses all it has, recorded in
        ``ProbeResult.repetitions_used``.
    low, high : float
        Headroom at most ``low`` -> ``"panel"``; at least ``high`` ->
        ``"single"``; otherwise ``"uncertain"`` (:func:`probe_verdict`).
        Defaults are the paper's two datasets, EVA 0.620 and PARA 0.846, so
        both fall inside their own band.
    n_splits : int
        Random rater split-halves behind the noise ceiling.
    n_resamples, confidence : int, float
        Bootstrap resamples and level of the percentile CI of the best rho
        (resamples where rho is undefined are left out).

    Raises
    ------
    DatasetError
        No per-rater ratings, fewer than 10 usable images, or a noise
        ceiling that is not positive (raters' split halves do not agree, so
        headroom is undefined).

    References
    ----------
    Jadhav et al. (2026), §5.5 and §7.

    Examples
    --------
    >>> from multicrop.stats.simulate import simulate_study
    >>> from multicrop.datasets.ratings import ratings_from_frame
    >>> sim = simulate_study(200, rng=np.random.default_rng(0))
    >>> res = probe_headroom(sim.judge_table, ratings_from_frame(sim.ratings), n_resamples=500, n_splits=20)
    >>> res.verdict
    'panel'
    """
    if isinstance(table, pd.DataFrame):
        table = validate_judge_table(table)
    if int(repetitions) < 1:
        raise InvalidParameterError(f"repetitions must be >= 1, got {repetitions!r}")
    if not 0 < confidence < 1:
        raise InvalidParameterError(f"confidence must be in (0, 1), got {confidence!r}")
    if not 0 < low <= high < 1:
        raise InvalidParameterError(f"need 0 < low <= high < 1, got low={low!r}, high={high!r}")
    if ratings.raters is None:
        raise DatasetError(f"{ratings.source} has no per-rater ratings; the probe needs them for the ceiling")
    table, ratings, _ = match_images(table, ratings, image_key)
    d = table.data[table.data["prompt_kind"] == HOLISTIC]
    keep = []
    used: dict[str, int] = {}
    for fam, sub in d.groupby("family", sort=True):
        reps = np.sort(sub["repetition"].unique())[: int(repetitions)]
        used[str(fam)] = int(reps.size)
        keep.append(sub[sub["repetition"].isin(reps)])
    if not keep:
        raise DatasetError("judge table has no holistic rows to probe")
    probe = pd.concat(keep).pivot_table(index="image", columns="family", values="score", aggfunc="mean")
    human = ratings.means["score"].dropna()
    images = human.index.intersection(probe.dropna().index).sort_values()
    if len(images) < 10:
        raise DatasetError(f"only {len(images)} images have both ratings and holistic scores; need at least 10")
    y = human.loc[images].to_numpy(dtype=float)
    rhos = {f: correlation(probe.loc[images, f].to_numpy(), y) for f in probe.columns}
    best = max(rhos, key=lambda f: _finite_or_low(rhos[f]))
    if not math.isfinite(rhos[best]):
        raise DatasetError("every judge gives a constant holistic score; rank correlations are undefined")
    counts = resample_counts(len(y), n_resamples, _rng(seed, _STREAM_PROBE))
    bt = bootstrap_metric(y, probe.loc[images, best].to_numpy()[None, :], counts)[:, 0]
    lo, hi = percentile_ci(bt, confidence=confidence)  # NaN resamples (constant scores) left out
    rr = ratings.raters[ratings.raters["image"].isin(images)]
    try:
        ceil = noise_ceiling(rr["image"].to_numpy(), rr["score"].to_numpy(dtype=float), n_splits=n_splits,
                             rng=_rng(seed, _STREAM_CEIL))
    except InvalidParameterError as exc:
        raise DatasetError(f"{ratings.source}: no noise ceiling: {exc}") from exc
    if not (math.isfinite(ceil.ceiling) and ceil.ceiling > 0):
        raise DatasetError(
            f"{ratings.source}: the noise ceiling is {ceil.ceiling:.3f} (raters' split halves do not agree: "
            f"split-half rho {ceil.split_half:.3f}), so headroom is undefined and the probe cannot advise"
        )
    head = headroom(rhos[best], ceil.ceiling)
    verdict, advice = probe_verdict(head, low=low, high=high)
    return ProbeResult({k: float(v) for k, v in sorted(rhos.items())}, str(best),
                       StatResult(float(rhos[best]), float(lo), float(hi), math.nan, n_resamples),
                       ceil, float(head), verdict, advice, int(repetitions),
                       {f: used[f] for f in sorted(rhos)})


# ---------------------------------------------------------------- writing


def check_report_dir(out_dir) -> Path:
    """Check, without creating anything, that ``out_dir`` can hold the report.

    Call it before any work: ``out_dir`` must be a writable directory, or
    not exist yet below a writable directory (:func:`write_judges_report`
    creates it).

    Raises
    ------
    MulticropError
        ``out_dir`` (or a parent) is an existing file, or is not writable.
    """
    out = Path(out_dir)
    probe = out
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        what = "is an existing file" if probe == out else f"is below {str(probe)!r}, an existing file"
        raise MulticropError(f"report directory {str(out)!r} {what}; give a directory with -o")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise MulticropError(f"cannot write the report to {str(out)!r}: {str(probe)!r} is not writable")
    return out


def summary_jsonable(report: JudgesReport) -> dict:
    """The report's summary as plain JSON values (non-finite numbers become null)."""
    return _jsonable(report.summary)


#: report tables, written as CSV with :func:`multicrop.io.tables.write_table` (a missing value is ``NaN``)
_TABLES = ("arms", "comparisons", "members", "mtmm_matrix", "mtmm", "robustness", "skipped_ratings", "predictions")


def write_judges_report(report: JudgesReport, out_dir) -> list[Path]:
    """Write the report's tables (CSV), summary (JSON), figures (PNG) and ``index.html``.

    The same report writes the same bytes (PNG metadata is stripped of the
    software version and timestamps).  Tables go through
    :func:`multicrop.io.tables.write_table` (floats as ``%.10g``, a missing
    value as ``NaN``), the rest through :func:`multicrop.io.atomic_write_bytes`;
    every file is written atomically (permissions follow the umask).

    Returns
    -------
    list of Path
        The files written, in a fixed order.

    Raises
    ------
    MulticropError
        ``out_dir`` is a file or a file cannot be written.
    """
    from .judges_figures import accuracy_vs_calls_png, forest_png, render_html

    out = check_report_dir(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MulticropError(f"cannot create report directory {str(out)!r}: {exc.strerror or exc}") from None
    blobs = {
        "summary.json": (json.dumps(summary_jsonable(report), indent=2, sort_keys=True) + "\n").encode(),
        "forest.png": forest_png(report),
        "accuracy_vs_calls.png": accuracy_vs_calls_png(report),
        "index.html": render_html(report).encode(),
    }
    written = []
    try:
        for name in _TABLES:
            df = getattr(report, name)
            write_table(df.reset_index() if name == "predictions" else df, out / f"{name}.csv", float_format="%.10g")
            written.append(out / f"{name}.csv")
        for name, data in blobs.items():
            atomic_write_bytes(out / name, data)
            written.append(out / name)
    except OSError as exc:
        raise MulticropError(f"cannot write the report to {str(out)!r}: {exc.strerror or exc}") from None
    return written


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, np.integer):
        return int(obj)
    return obj
