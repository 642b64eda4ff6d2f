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

Layout
------
This module holds the settings (:class:`JudgesReportConfig`), the result
(:class:`JudgesReport`), the orchestration and the writer; the steps live in
:mod:`multicrop.evaluation.judges.protocol` (alignment, arms, comparisons,
MTMM, robustness, transfer), the probe in
:mod:`multicrop.evaluation.judges.probe` and the figures and HTML in
:mod:`multicrop.evaluation.judges.figures`.  Every public name of those
modules is importable from here.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ...datasets.ratings import Ratings
from ...errors import InvalidParameterError, MulticropError
from ...fusion.features import JudgeTable, validate_judge_table
from ...io import atomic_write_bytes
from ...io.tables import write_table
from ...stats.ceiling import headroom
from ...stats.results import NoiseCeiling
from ...hashing import canonical_json
from .probe import PROBE_HIGH, PROBE_LOW, ProbeResult, probe_headroom, probe_verdict
from .protocol import (
    IMAGE_KEYS,
    _align,
    _arms_table,
    _best_member,
    _bootstrap_arms,
    _calls,
    _ceiling,
    _comparisons,
    _fit_arms,
    _mtmm,
    _robustness,
    _unparsed_families,
    match_images,
    precision_at_top,
)

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

Progress = Callable[[str, float], None]

#: config fields that do not change any result and so stay out of the canonical config
_NOT_CANONICAL = frozenset({"n_jobs"})


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
        from ...fusion.combiners import COMBINERS  # scikit-learn: imported only where combiners are used

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
        """Canonical JSON (:func:`multicrop.hashing.canonical_json`)."""
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


# ---------------------------------------------------------------- orchestration


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
    >>> from multicrop.datasets.simulate import simulate_study
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

    # --- arms, and their comparisons on shared paired resamples
    preds, kinds, nfeat = _fit_arms(blocks, y, families, cfg, say)
    names = list(preds)
    obs, boot = _bootstrap_arms(preds, y, cfg, say)
    best = _best_member(obs, names, kinds)
    arms = _arms_table(preds, kinds, nfeat, calls, obs, y, cfg)
    comparisons, members_df = _comparisons(obs, boot, names, kinds, best, cfg)

    # --- noise ceiling
    say("noise ceiling", 0.6)
    ceiling = _ceiling(ratings, images, cfg, info["notes"])
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

    best_rho = float(obs["spearman"][names.index(best)])
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
    from .figures import accuracy_vs_calls_png, forest_png, render_html

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
