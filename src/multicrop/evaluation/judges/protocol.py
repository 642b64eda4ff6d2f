"""The steps of the judge protocol that :func:`~multicrop.evaluation.judges.report.evaluate_judges` runs.

Alignment (:func:`match_images` and the feature blocks of the images that
have both human ratings and judge scores), the arms and their paired
bootstrap comparisons, the noise ceiling, the multitrait-multimethod (MTMM)
matrix, robustness over fold partitions and label transfer.  The metric
:func:`precision_at_top` and the seeded random streams are shared with the
probe (:mod:`multicrop.evaluation.judges.probe`).

scikit-learn is imported only inside the functions that fit combiners.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ...datasets.ratings import DIMENSION_ATTRIBUTES, Ratings
from ...errors import DatasetError, InvalidParameterError
from ...fusion.features import (
    BLOCKS,
    DIMENSIONS,
    JudgeTable,
    build_features,
    calls_per_image,
    panel_mean,
    validate_judge_table,
)
from ...schema import DIMENSION, HOLISTIC
from ...stats.bootstrap import delta_result, max_statistic_pvalues, one_sided_p
from ...stats.ceiling import noise_ceiling
from ...stats.correlation import bootstrap_metric, correlation, resample_counts
from ...stats.multiple import bh_adjust
from ...stats.partial import bootstrap_partial_difference, partial_correlation
from ...stats.results import NoiseCeiling

if TYPE_CHECKING:
    from .report import JudgesReportConfig

__all__ = ["IMAGE_KEYS", "match_images", "precision_at_top"]

#: how judge-table images are matched to rating images
IMAGE_KEYS = ("auto", "exact", "name", "stem")

#: stream ids for independent random streams derived from the seed
_STREAM_BOOT, _STREAM_CEIL, _STREAM_MTMM, _STREAM_TRANSFER, _STREAM_PROBE = range(5)


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), stream])


def _finite_or_low(v: float) -> float:
    return v if math.isfinite(v) else -math.inf


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
    from ...fusion.combiners import COMBINERS, out_of_fold_predict

    return out_of_fold_predict(COMBINERS.create(comb, random_state=cfg.seed), block.to_numpy(), y,
                               n_folds=cfg.n_folds, seed=seed)


# ---------------------------------------------------------------- arms and comparisons


def _fit_arms(blocks, y, families, cfg, say) -> tuple[dict[str, np.ndarray], dict[str, str], dict[str, int]]:
    """Every arm's prediction of the human mean (combiners out of fold), its kind and number of features."""
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
    return preds, kinds, nfeat


def _bootstrap_arms(preds, y, cfg, say) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Spearman and Kendall correlation of every arm (in ``preds`` order) with ``y``, observed and on
    shared paired resamples of the images: ``(obs, boot)``, ``boot[metric]`` of shape (n_resamples, n_arms)."""
    M = np.vstack(list(preds.values()))
    say("bootstrap over images", 0.3)
    counts = resample_counts(len(y), cfg.n_resamples, _rng(cfg.seed, _STREAM_BOOT))
    obs = {m: np.array([correlation(p, y, metric=m) for p in M]) for m in ("spearman", "kendall")}
    boot = {}
    for j, m in enumerate(("spearman", "kendall")):
        say(f"bootstrap {m}", 0.3 + 0.15 * j)
        boot[m] = bootstrap_metric(y, M, counts, metric=m)
    return obs, boot


def _best_member(obs, names, kinds) -> str:
    """The single judge with the highest observed Spearman rho."""
    members = [i for i, a in enumerate(names) if kinds[a] == "single"]
    if np.isnan(obs["spearman"][members]).all():
        raise DatasetError("every single judge gives a constant score; rank correlations are undefined")
    return names[members[int(np.nanargmax(obs["spearman"][members]))]]


def _arms_table(preds, kinds, nfeat, calls, obs, y, cfg) -> pd.DataFrame:
    names = list(preds)
    return pd.DataFrame({
        "arm": names,
        "kind": [kinds[a] for a in names],
        "n_features": [nfeat[a] for a in names],
        "calls_per_image": [calls[a.rsplit("_", 1)[0]] if kinds[a] == "fused" else calls[a] for a in names],
        "rho": obs["spearman"],
        "tau_b": obs["kendall"],
        "precision_top": [precision_at_top(preds[a], y, fraction=cfg.top_fraction) for a in names],
    })


def _comparisons(obs, boot, names, kinds, best, cfg) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Paired bootstrap comparisons: ``(comparisons, members)``.

    ``comparisons``: every other arm against the best member and the panel
    mean, BH-adjusted across the rows of one metric; ``members``: each single
    judge against the panel mean, with max-T adjusted p-values.
    """
    idx = {a: i for i, a in enumerate(names)}
    members = [a for a in names if kinds[a] == "single"]
    others = [a for a in names if kinds[a] != "single"]
    mem_idx = [idx[a] for a in members]
    rows, mrows = [], []
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
        d_obs = o[mem_idx] - o[idx["panel_mean"]]
        d_boot = b[:, mem_idx] - b[:, [idx["panel_mean"]]]
        pmax = max_statistic_pvalues(d_obs, d_boot)
        for k, a in enumerate(members):
            r = delta_result(d_obs[k], d_boot[:, k], confidence=cfg.confidence)
            mrows.append({"member": a, "metric": metric, "value": o[idx[a]], "delta_vs_panel_mean": r.estimate,
                          "ci_low": r.ci_low, "ci_high": r.ci_high, "p": r.p, "p_maxT": pmax[k],
                          "is_best": a == best})
    comparisons = pd.DataFrame(rows)
    comparisons["p_bh"] = np.nan
    for metric in ("spearman", "kendall"):
        sel = comparisons["metric"] == metric
        comparisons.loc[sel, "p_bh"] = bh_adjust(comparisons.loc[sel, "p"].to_numpy())
    return comparisons, pd.DataFrame(mrows)


def _ceiling(ratings: Ratings, images, cfg, notes: dict) -> NoiseCeiling | None:
    """The human noise ceiling on ``images``, or None (why goes into ``notes``)."""
    ceiling = None
    if ratings.raters is not None:
        rr = ratings.raters[ratings.raters["image"].isin(images)]
        try:
            ceiling = noise_ceiling(rr["image"].to_numpy(), rr["score"].to_numpy(dtype=float),
                                    n_splits=cfg.n_splits, rng=_rng(cfg.seed, _STREAM_CEIL))
        except InvalidParameterError as exc:
            notes["ceiling"] = str(exc)
    if ceiling is not None and not ceiling.ceiling > 0:
        notes["ceiling"] = (f"noise ceiling is {ceiling.ceiling:.3f} (raters' split halves do not agree: "
                            f"split-half rho {ceiling.split_half:.3f}); headroom is undefined")
    return ceiling


# ---------------------------------------------------------------- MTMM, robustness, transfer


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
    from ...fusion.combiners import COMBINERS

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
            model = COMBINERS.create(c, random_state=cfg.seed).fit(blocks[b].to_numpy(), y)
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
