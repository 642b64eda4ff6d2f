"""The judge-panel protocol: is a panel of VLM judges worth its cost?

:func:`evaluate_judges` runs the protocol of Jadhav, Beriwala & Kim (2026)
on a judge table and human ratings and returns a
:class:`~multicrop.evaluation.judges.result.JudgesReport`;
:func:`write_judges_report` writes its tables, figures and an HTML page.

The steps, in the order they run, each in its module: alignment
(:mod:`~multicrop.evaluation.judges.align`), the arms and their shared
resamples (:mod:`~multicrop.evaluation.judges.arms`), paired comparisons
(:mod:`~multicrop.evaluation.judges.compare`), the noise ceiling
(:mod:`~multicrop.evaluation.judges.ceiling`), the MTMM check
(:mod:`~multicrop.evaluation.judges.mtmm`), robustness
(:mod:`~multicrop.evaluation.judges.robustness`) and label transfer
(:mod:`~multicrop.evaluation.judges.transfer`).  This module only calls them
in order, assembles the summary and writes the files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from ...datasets.ratings import Ratings
from ...errors import MulticropError
from ...fusion.features import JudgeTable, validate_judge_table
from ...io import atomic_write_bytes
from ...io.tables import write_table
from ...serialize import to_data
from ...stats.ceiling import headroom
from ...stats.results import NoiseCeiling
from .align import AlignedData, align, calls_per_arm, match_images, unparsed_families
from .baselines import Baselines, baseline_arms
from .arms import Arm, ArmScores, Progress, arms_table, best_member, bootstrap_arms, fit_arms
from .ceiling import human_ceiling
from .compare import compare_arms, compare_members
from .config import JudgesReportConfig
from .mtmm import mtmm
from .result import JudgesReport, summary_jsonable
from .robustness import fold_partitions, precision_checks, robustness_table
from .transfer import TransferInfo, label_transfer
from .warnings import design_warnings, ratings_warnings, skipped_arms_warnings

__all__ = ["evaluate_judges", "write_judges_report", "check_report_dir"]


# ---------------------------------------------------------------- orchestration


def _robustness(arms: tuple[Arm, ...], data: AlignedData, *, best: str, families: list[str],
                config: JudgesReportConfig, transfer: tuple[JudgeTable, Ratings] | None,
                progress: Progress) -> tuple[pd.DataFrame, TransferInfo | None, dict[str, str]]:
    """The robustness table (fold partitions, precision at the top, label transfer), the transfer
    counts and notes on what was dropped or skipped."""
    notes: dict[str, str] = {}
    checks = fold_partitions(arms, data, best=best, config=config, progress=progress)
    checks += precision_checks(arms, data.y, top_fraction=config.top_fraction)
    info = None
    if transfer is not None:
        t_checks, info = label_transfer(data, transfer, families=families, config=config)
        checks += t_checks
        if info.n_transfer_overlap:
            notes["transfer"] = (f"{info.n_transfer_overlap} images of the transfer set are also in this set and "
                                 "were dropped from it (they would be predicted in sample)")
    absent = [a for a in config.robustness_arms if a not in {arm.name for arm in arms}]
    if absent and config.n_partitions:
        notes["robustness"] = f"robustness arms {absent} are not among the arms run; skipped"
    return robustness_table(checks), info, notes


def _summary(table: JudgeTable, ratings: Ratings, data: AlignedData, scores: ArmScores, *, best: str,
             families: list[str], key_mode: str, ceiling: NoiseCeiling | None, unparsed: dict[str, int],
             notes: dict[str, str], config: JudgesReportConfig, transfer: TransferInfo | None) -> dict:
    best_rho = scores.rho(best)
    return {
        "n_images": data.n_images, "n_rated": data.n_rated, "n_scored": data.n_scored,
        "n_ratings_skipped": len(ratings.skipped), "n_judge_rows_dropped": table.n_dropped,
        "families": families, "image_key": key_mode, "best_single": best, "best_single_rho": best_rho,
        "ceiling": ceiling.to_dict() if ceiling else None,
        "headroom": headroom(best_rho, ceiling.ceiling) if ceiling and ceiling.ceiling > 0 else None,
        "unparsed_families": unparsed,
        "notes": notes, "config": config.to_dict(),
        **({"transfer": to_data(transfer)} if transfer is not None else {}),
    }


def evaluate_judges(
    table: JudgeTable | pd.DataFrame,
    ratings: Ratings,
    config: JudgesReportConfig | None = None,
    *,
    transfer: tuple[JudgeTable, Ratings] | None = None,
    progress: Progress | None = None,
    baselines: Baselines | None = None,
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
    baselines : Baselines, optional
        Embeddings and supervised IAA scores of the images, for the baseline
        arms (:mod:`multicrop.evaluation.judges.baselines`); the feature
        selection, tie-breaking and H+P label-budget arms need none.
    progress : callable(str, float), optional
        Called with a step name and the fraction of work done.

    Returns
    -------
    JudgesReport

    Raises
    ------
    DatasetError
        Too few images with both ratings and judge scores, no holistic rows,
        only constant judges, or a transfer set that does not fit.

    References
    ----------
    Jadhav, Beriwala & Kim (2026), §3–§5 and Appendices D, F, G.

    Examples
    --------
    >>> import numpy as np
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
    data = align(table, ratings, families=families)
    notes = dict(data.notes)
    unparsed = unparsed_families(table) if not cfg.families else {}
    if unparsed:
        notes["unparsed_families"] = (
            "families dropped because none of their replies parsed (their calls still count in calls per "
            "image): " + ", ".join(f"{f} ({n} calls)" for f, n in unparsed.items()))
    calls = calls_per_arm(table, families=families, paid=list(unparsed))

    arms = fit_arms(data, families=families, config=cfg, progress=say)
    say("baselines and ablations", 0.28)
    extra, b_notes = baseline_arms(data, families=families, baselines=baselines, n_folds=cfg.n_folds, seed=cfg.seed)
    arms = (*arms, *extra)
    notes.update({f"baseline {k}": v for k, v in b_notes.items()})
    for a in extra:  # calls per image of each extra arm: what it reads of the judge table
        calls[a.name] = (calls.get(f"member:{a.name.split(':', 1)[1]}", 0.0) if a.name.startswith("rounded:")
                         else calls["H+P"] if a.name.startswith(("select_", "H+P_ridge@")) else 0.0)
    scores = bootstrap_arms(arms, data.y, seed=cfg.seed, n_resamples=cfg.n_resamples, progress=say)
    best = best_member(arms, scores)
    arm_table = arms_table(arms, scores, calls=calls, y=data.y, top_fraction=cfg.top_fraction,
                           confidence=cfg.confidence)
    comparisons = compare_arms(arms, scores, best=best, confidence=cfg.confidence)
    members = compare_members(arms, scores, best=best, confidence=cfg.confidence)

    say("noise ceiling", 0.6)
    ceiling, ceiling_note = human_ceiling(ratings, data.images, n_splits=cfg.n_splits, seed=cfg.seed)
    if ceiling_note:
        notes["ceiling"] = ceiling_note
    if ratings.notes:
        notes["ratings"] = "; ".join(ratings.notes)

    say("multitrait-multimethod matrix", 0.65)
    mt = mtmm(data, ratings, families=families, seed=cfg.seed, n_resamples=cfg.n_resamples,
              confidence=cfg.confidence)

    say("robustness over fold partitions", 0.75)
    robustness, t_info, r_notes = _robustness(arms, data, best=best, families=families, config=cfg,
                                              transfer=transfer, progress=say)
    notes.update(r_notes)

    summary = _summary(table, ratings, data, scores, best=best, families=families, key_mode=key_mode,
                       ceiling=ceiling, unparsed=unparsed, notes=notes, config=cfg, transfer=t_info)
    summary["warnings"] = [w.to_dict() for w in (
        *design_warnings(table, families=families, n_images=data.n_images, config=cfg),
        *ratings_warnings([s.reason for s in ratings.skipped], source=ratings.source),
        *skipped_arms_warnings(notes))]
    say("done", 1.0)
    predictions = pd.DataFrame({"human": data.y, **{a.name: a.prediction for a in arms}},
                               index=pd.Index(data.images, name="image"))
    return JudgesReport(arm_table, comparisons, members, mt.matrix, mt.cells, robustness, ceiling, summary,
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
    from ...io.save import nearest_existing

    out = Path(out_dir)
    probe = nearest_existing(out)
    if not probe.is_dir():
        what = "is an existing file" if probe == out else f"is below {str(probe)!r}, an existing file"
        raise MulticropError(f"report directory {str(out)!r} {what}; give a directory with -o")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise MulticropError(f"cannot write the report to {str(out)!r}: {str(probe)!r} is not writable")
    return out


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
    from .figures import accuracy_vs_calls_png, forest_png, render_html  # matplotlib only when writing

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
