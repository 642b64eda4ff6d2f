"""Settings of the judge protocol and of the holistic probe: every default lives here.

:class:`JudgesReportConfig` drives :func:`~multicrop.evaluation.judges.report.evaluate_judges`,
:class:`ProbeConfig` drives :func:`~multicrop.evaluation.judges.probe.probe_headroom`;
the command line (:mod:`multicrop.cli.eval_judges`) reads its defaults from
these classes.  Defaults are the paper's (Jadhav, Beriwala & Kim 2026).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import InvalidParameterError
from ...hashing import canonical_json
from ...serialize import Serializable, serialized

__all__ = ["IMAGE_KEYS", "PROBE_LOW", "PROBE_HIGH", "JudgesReportConfig", "ProbeConfig", "check_image_key"]

#: how judge-table images are matched to rating images
#: (:func:`~multicrop.evaluation.judges.align.match_images`)
IMAGE_KEYS = ("auto", "exact", "name", "stem")

#: headroom of the best probe model on the paper's two datasets (Jadhav et
#: al. 2026, §5.5: "the best probe model captured 62.0% of EVA's noise
#: ceiling versus 84.6% on PARA"); §7: "the boundary between 62% and 85%
#: headroom is unknown"
PROBE_LOW = 0.620
PROBE_HIGH = 0.846

def _check(rules) -> None:
    """Raise for the first ``(name, value, ok, allowed)`` rule that fails."""
    for name, value, ok, allowed in rules:
        if not ok:
            raise InvalidParameterError(f"{name} must be {allowed}, got {value!r}")


def check_image_key(image_key: str) -> None:
    """Raise :class:`~multicrop.errors.InvalidParameterError` unless ``image_key`` is one of :data:`IMAGE_KEYS`."""
    if image_key not in IMAGE_KEYS:
        raise InvalidParameterError(f"image_key must be one of {IMAGE_KEYS}, got {image_key!r}")


@dataclass(frozen=True)
class JudgesReportConfig(Serializable):
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

    Raises
    ------
    InvalidParameterError
        A setting out of range, an unknown combiner or image key.

    Examples
    --------
    >>> JudgesReportConfig(n_resamples=100).to_dict()["n_resamples"]
    100
    >>> JudgesReportConfig().robustness_arms
    ('H+P_gb',)
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
    n_jobs: int = field(default=1, metadata=serialized(skip=True))  # changes no result: not canonical

    def __post_init__(self) -> None:
        _check([
            ("n_resamples", self.n_resamples, self.n_resamples >= 100, ">= 100"),
            ("n_folds", self.n_folds, self.n_folds >= 2, ">= 2"),
            ("n_partitions", self.n_partitions, self.n_partitions >= 0, ">= 0"),
            ("n_splits", self.n_splits, self.n_splits >= 1, ">= 1"),
            ("confidence", self.confidence, 0 < self.confidence < 1, "in (0, 1)"),
            ("top_fraction", self.top_fraction, 0 < self.top_fraction <= 0.5, "in (0, 0.5]"),
            ("n_jobs", self.n_jobs, self.n_jobs >= 1, ">= 1"),
        ])
        from ...fusion.combiners import COMBINERS  # scikit-learn: imported only where combiners are used

        for c in self.combiners:
            COMBINERS.get(c)
        check_image_key(self.image_key)
        if not self.combiners:
            raise InvalidParameterError("combiners must name at least one combiner, got ()")
        if self.robustness_arms is None:
            object.__setattr__(self, "robustness_arms", (f"H+P_{self.combiners[0]}",))

    def to_json(self) -> str:
        """Canonical JSON (:func:`multicrop.hashing.canonical_json`) of :meth:`to_dict`."""
        return canonical_json(self.to_dict())


@dataclass(frozen=True)
class ProbeConfig(Serializable):
    """Settings of the cheap holistic probe (Jadhav et al. 2026, §5.5, §7).

    The settings it shares with the protocol (seed, resamples, splits,
    confidence, image key) take :class:`JudgesReportConfig`'s defaults.

    Parameters
    ----------
    repetitions : int
        Holistic repetitions used per family (the paper's probe uses 5).
    low, high : float
        Headroom at most ``low`` -> ``"panel"``; at least ``high`` ->
        ``"single"``; otherwise ``"uncertain"``.  Defaults are the paper's two
        datasets (:data:`PROBE_LOW`, :data:`PROBE_HIGH`).
    seed : int
        Seed of rater splits and bootstrap resamples.
    n_splits : int
        Random rater split-halves behind the noise ceiling.
    n_resamples : int
        Bootstrap resamples of the CI of the best rho.
    confidence : float
        Level of that CI.
    image_key : {"auto", "exact", "name", "stem"}
        How judge-table images meet rating image ids.

    Raises
    ------
    InvalidParameterError
        A setting out of range.

    Examples
    --------
    >>> ProbeConfig().n_resamples == JudgesReportConfig.n_resamples
    True
    >>> ProbeConfig(low=0.9, high=0.5)
    Traceback (most recent call last):
    ...
    multicrop.errors.InvalidParameterError: need 0 < low <= high < 1, got low=0.9, high=0.5
    """

    repetitions: int = 5
    low: float = PROBE_LOW
    high: float = PROBE_HIGH
    seed: int = JudgesReportConfig.seed
    n_splits: int = JudgesReportConfig.n_splits
    n_resamples: int = JudgesReportConfig.n_resamples
    confidence: float = JudgesReportConfig.confidence
    image_key: str = JudgesReportConfig.image_key

    def __post_init__(self) -> None:
        _check([
            ("repetitions", self.repetitions, int(self.repetitions) >= 1, ">= 1"),
            ("confidence", self.confidence, 0 < self.confidence < 1, "in (0, 1)"),
        ])
        if not 0 < self.low <= self.high < 1:
            raise InvalidParameterError(f"need 0 < low <= high < 1, got low={self.low!r}, high={self.high!r}")
