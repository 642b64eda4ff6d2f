"""The scoreboard's figures: ratios of per-photo counts, their bootstrap intervals, and the verdicts.

Every figure of the scoreboard is a ratio of sums over the photos of its
row: person-cut is cut crops over crops, covered is covered subjects over
prominent ones, kIoU@0.5 is matched IoU over labelled boxes, crops/photo is
crops over photos.  Its interval is the 95 % percentile interval of the same
ratio over photos resampled with replacement
(:func:`multicrop.stats.resample_counts`, :func:`multicrop.stats.percentile_ci`),
seeded per figure, so a figure's interval does not depend on which other
rows ran.

A new value is compared with the baseline's: ``up`` when it lies beyond the
baseline's interval on the better side, ``DOWN`` beyond it on the worse
side (for person-cut, a rise is ``DOWN``), ``moved`` for a figure with no
better side.  Inside the interval: no flag.

Examples
--------
>>> f = Figure("person-cut", "person_cut", "crops", better="lower", percent=True)
>>> est = estimate(f, {"a": {"person_cut": 1, "crops": 2}, "b": {"person_cut": 0, "crops": 2}})
>>> est.value, est.n
(0.25, 2)
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ...errors import InvalidParameterError
from ...stats import percentile_ci, resample_counts

__all__ = ["Figure", "Target", "Row", "ROWS", "Estimate", "Verdict", "estimate", "flag", "compare", "N_RESAMPLES"]

#: Resamples per interval.
N_RESAMPLES = 4000


@dataclass(frozen=True)
class Target:
    """A goal of issue 27: ``op`` is ``">="`` or ``"<="``."""

    op: str
    value: float

    def __post_init__(self) -> None:
        if self.op not in (">=", "<="):
            raise InvalidParameterError(f"Target.op must be '>=' or '<=', got {self.op!r}")

    def met(self, value: float) -> bool:
        if not np.isfinite(value):
            return False
        return value >= self.value - 1e-12 if self.op == ">=" else value <= self.value + 1e-12


@dataclass(frozen=True)
class Figure:
    """One figure: ``sum(num) / sum(den)`` over a row's photos.

    Attributes
    ----------
    name : str
    num, den : str
        Keys of the per-photo counts.
    better : {"higher", "lower"} or None
        Which way is an improvement (None: neither).
    percent : bool
        Shown as a percentage.
    target : Target or None
    """

    name: str
    num: str
    den: str
    better: str | None = None
    percent: bool = False
    target: Target | None = None

    def __post_init__(self) -> None:
        if self.better not in (None, "higher", "lower"):
            raise InvalidParameterError(f"Figure.better must be 'higher', 'lower' or None, got {self.better!r}")

    def show(self, value: float) -> str:
        if value is None or not np.isfinite(value):
            return "-"
        return f"{100 * value:.1f} %" if self.percent else f"{value:.3f}"

    def show_diff(self, diff: float) -> str:
        if diff is None or not np.isfinite(diff):
            return "-"
        return f"{100 * diff:+.1f}" if self.percent else f"{diff:+.3f}"

    def show_target(self) -> str:
        if self.target is None:
            return ""
        op = "≥" if self.target.op == ">=" else "≤"
        return f"{op} {self.show(self.target.value)}"


@dataclass(frozen=True)
class Row:
    """A scoreboard row: a data set cut and one way of cropping it, and its figures (``title`` may name
    ``{seed}``, the carousel-synth seed, and ``{coco}``, the photo folder's name, filled in by
    :func:`~multicrop.evaluation.scoreboard.render`)."""

    key: str
    title: str
    figures: tuple[Figure, ...]


def _pct(name, num, den, better, target=None):
    return Figure(name, num, den, better, True, target)


def _coco(key: str, title: str, targets: Mapping[str, Target], names: tuple[str, ...]) -> Row:
    all_ = {
        "crops/photo": Figure("crops/photo", "crops", "photos", "higher" if "multi" in key else None),
        "person-cut": _pct("person-cut", "person_cut", "crops", "lower"),
        "subject-cut": _pct("subject-cut", "subject_cut", "crops", "lower"),
        "empty": _pct("empty", "empty", "crops", "lower"),
        "portrait": _pct("portrait", "portrait", "crops", None),
        "person-cut v1": _pct("person-cut v1", "person_cut_v1", "crops", None),
        "covered": _pct("covered", "covered", "prominent", "higher"),
        "featured": _pct("featured", "featured", "prominent", "higher"),
    }
    import dataclasses

    return Row(key, title, tuple(dataclasses.replace(all_[n], target=targets.get(n)) for n in names))


def _kiou(key: str, title: str, targets: Mapping[str, Target], names: tuple[str, ...]) -> Row:
    import dataclasses

    all_ = {
        "kIoU@0.5": Figure("kIoU@0.5", "kiou_50", "gt", "higher"),
        "kIoU@0.5:0.95": Figure("kIoU@0.5:0.95", "kiou_50_95", "gt", "higher"),
        "k-exact": _pct("k-exact", "k_exact", "photos", "higher"),
        "crops/photo": Figure("crops/photo", "crops", "photos", None),
    }
    return Row(key, title, tuple(dataclasses.replace(all_[n], target=targets.get(n)) for n in names))


_COCO6 = ("crops/photo", "person-cut", "subject-cut", "empty", "portrait", "person-cut v1", "covered", "featured")

#: The rows, in the order printed; targets from issue 27 ("Targets").
ROWS: tuple[Row, ...] = (
    _coco("coco-multi k=auto", "{coco}, the multi-subject photos, direct, k auto", {
        "crops/photo": Target(">=", 2.0), "person-cut": Target("<=", 0.03), "subject-cut": Target("<=", 0.05),
        "empty": Target("<=", 0.03), "covered": Target(">=", 0.90), "featured": Target(">=", 0.55)}, _COCO6),
    _coco("coco-multi k=3", "{coco}, the multi-subject photos, direct, k = 3", {
        "crops/photo": Target(">=", 2.8), "person-cut": Target("<=", 0.05)},
        ("crops/photo", "person-cut", "subject-cut", "empty", "portrait", "person-cut v1")),
    _coco("coco-multi instagram k=3", "{coco}, the multi-subject photos, direct, k = 3, Instagram's 4:5, 1:1 "
          "or 1.91:1, one for every crop (the web page's default ratios)", {},
          ("crops/photo", "person-cut", "subject-cut", "empty", "portrait", "covered", "featured")),
    _coco("coco-multi instagram k=auto", "{coco}, the multi-subject photos, direct, k auto, Instagram's ratios, "
          "one for every crop (the web page's Crops: auto)", {},
          ("crops/photo", "person-cut", "subject-cut", "empty", "portrait", "covered", "featured")),
    _coco("coco-other k=auto", "{coco}, the other photos, direct, k auto", {"empty": Target("<=", 0.10)},
          ("empty", "crops/photo", "person-cut", "subject-cut", "covered", "featured")),
    _coco("coco-other k=auto with something outlined",
          "{coco}, the other photos whose frame holds an outlined object, k auto", {},
          ("empty", "crops/photo")),
    _kiou("synth k=auto", "carousel-synth seed {seed}, direct, k auto", {
        "kIoU@0.5": Target(">=", 0.47), "k-exact": Target(">=", 0.80)},
        ("kIoU@0.5", "kIoU@0.5:0.95", "k-exact", "crops/photo")),
    _kiou("synth k=given", "carousel-synth seed {seed}, direct, the labelled k", {"kIoU@0.5": Target(">=", 0.45)},
          ("kIoU@0.5", "kIoU@0.5:0.95")),
    _kiou("synth k=auto without the rocket", "carousel-synth, the scenes without its one thin subject, k auto", {},
          ("kIoU@0.5", "k-exact")),
    _kiou("synth k=given without the rocket", "carousel-synth, the scenes without its one thin subject, labelled k",
          {}, ("kIoU@0.5",)),
    _kiou("hard direct k=given", "carousel-synth-hard seed {seed}, direct, the labelled k",
          {"kIoU@0.5": Target(">=", 0.33)}, ("kIoU@0.5", "kIoU@0.5:0.95")),
    _kiou("hard partition k=given", "carousel-synth-hard seed {seed}, partition (the paper's baseline), labelled k", {},
          ("kIoU@0.5",)),
    _kiou("hard direct k=given failures", "carousel-synth-hard, the 45 hard-failure geometries, direct", {},
          ("kIoU@0.5",)),
    _kiou("hard partition k=given failures", "carousel-synth-hard, the 45 hard-failure geometries, partition", {},
          ("kIoU@0.5",)),
)


@dataclass(frozen=True)
class Estimate:
    """A figure over ``n`` photos: its value and 95 % bootstrap interval."""

    value: float
    low: float
    high: float
    n: int
    num: float
    den: float


def _seed(seed: int, row: str, figure: str) -> list[int]:
    return [int(seed), zlib.crc32(f"{row}\0{figure}".encode("utf-8"))]


def estimate(figure: Figure, photos: Mapping[str, Mapping[str, float]], *, row: str = "", seed: int = 0,
             n_resamples: int = N_RESAMPLES, confidence: float = 0.95) -> Estimate:
    """``figure`` over ``photos`` (id -> counts) with its percentile bootstrap interval over photos.

    The photos are taken in the order of their ids, and the random stream is
    seeded by ``(seed, row, figure name)``: the same rows give the same interval.
    An interval is NaN where the figure is (no denominator), and in a
    resample where the denominator is 0 that resample is left out.
    """
    ids = sorted(photos)
    num = np.array([float(photos[i][figure.num]) for i in ids])
    den = np.array([float(photos[i][figure.den]) for i in ids])
    total_den = den.sum()
    value = float(num.sum() / total_den) if total_den > 0 else float("nan")
    if not ids:
        return Estimate(value, float("nan"), float("nan"), 0, 0.0, 0.0)
    counts = resample_counts(len(ids), n_resamples, np.random.default_rng(_seed(seed, row, figure.name)))
    bn, bd = counts @ num, counts @ den
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = np.where(bd > 0, bn / np.where(bd > 0, bd, 1), np.nan)
    lo, hi = percentile_ci(boot, confidence=confidence)
    return Estimate(value, lo, hi, len(ids), float(num.sum()), float(total_den))


def flag(figure: Figure, value: float, base: Estimate | None, *, tol: float = 1e-9) -> str:
    """``"up"``, ``"DOWN"``, ``"moved"`` or ``""``: where ``value`` lies against the baseline's interval."""
    if base is None or not np.isfinite(value) or not (np.isfinite(base.low) and np.isfinite(base.high)):
        return ""
    if base.low - tol <= value <= base.high + tol:
        return ""
    above = value > base.high
    if figure.better is None:
        return "moved"
    return "up" if above == (figure.better == "higher") else "DOWN"


@dataclass(frozen=True)
class Verdict:
    """One figure of one row: the new estimate, the baseline's, their difference, the flag and the target."""

    row: Row
    figure: Figure
    new: Estimate
    base: Estimate | None
    flag: str

    @property
    def diff(self) -> float:
        return float("nan") if self.base is None else self.new.value - self.base.value

    @property
    def met(self) -> bool | None:
        return None if self.figure.target is None else self.figure.target.met(self.new.value)


def compare(new: Mapping[str, Mapping[str, Mapping[str, float]]],
            base: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None, *, seed: int = 0,
            n_resamples: int = N_RESAMPLES, rows: tuple[Row, ...] = ROWS) -> list[Verdict]:
    """Every figure of every row present in ``new`` (``new[row][photo] -> counts``), against ``base``.

    The baseline's interval is computed from its own per-photo counts, the same way, over the run's
    photos (a ``--limit`` run is compared on its own photos); a row holding a photo the baseline lacks
    (another photo folder, or one the baseline never saw) has no baseline, and neither has a figure the
    baseline has no counts for (one added since it was written).
    """
    out = []
    for row in rows:
        if row.key not in new:
            continue
        had = (base or {}).get(row.key, {})
        old = {p: had[p] for p in new[row.key]} if had and all(p in had for p in new[row.key]) else {}
        for fig in row.figures:
            est = estimate(fig, new[row.key], row=row.key, seed=seed, n_resamples=n_resamples)
            b = None
            if old and all(fig.num in c and fig.den in c for c in old.values()):
                b = estimate(fig, old, row=row.key, seed=seed, n_resamples=n_resamples)
            out.append(Verdict(row, fig, est, b, flag(fig, est.value, b)))
    return out
