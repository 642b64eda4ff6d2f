"""Warnings about degenerate designs: what the report's numbers cannot show.

Each check returns zero or more :class:`DesignWarning` (a code and one
sentence); :func:`design_warnings` runs them all.  The report writes them into
``summary.json`` (``warnings``), a *Warnings* section of ``index.html`` and,
from the command line, one ``warning:`` line each on stderr.

single_family
    One family: ``panel_mean`` *is* the best single member (Δ = 0, p = 1 rows
    are identities, not findings).
deterministic
    A family gave the same holistic score on every repetition of every image:
    repetitions and the ``Hsplit`` columns add no information.
few_images
    Too few images per held-out fold for out-of-fold fits and bootstrap
    intervals to mean much.
offline_calls
    A family whose backend is registered as offline (``needs_network`` false)
    is counted in "calls per image", which reads as API calls.
arms_skipped
    A block (and its arms) could not be built from this table: which, and why.
ratings_out_of_scale
    Rating rows outside their declared or inferred scale were left out
    (``skipped_ratings.csv`` lists them with their line and value).
proxy_dimensions
    A family's backend scores some dimensions from proxies (its
    ``proxy_dimensions``), e.g. the ``measured`` judge's distinctiveness and
    emotional impact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...fusion.features import JudgeTable
from ...schema import HOLISTIC
from ...serialize import Serializable
from .config import JudgesReportConfig

__all__ = ["DesignWarning", "design_warnings", "ratings_warnings", "skipped_arms_warnings", "MIN_IMAGES_PER_FOLD"]

#: Fewer held-out images per fold than this gives the ``few_images`` warning.
MIN_IMAGES_PER_FOLD = 20


@dataclass(frozen=True)
class DesignWarning(Serializable):
    """One warning: a stable ``code`` and a one-sentence ``message``."""

    code: str
    message: str


def _backend(family_name: str):
    """The registered backend class named like ``family_name``, or None (judge tables carry no backend column)."""
    from ...judges.backends import JUDGE_BACKENDS

    return JUDGE_BACKENDS.get(family_name) if family_name in JUDGE_BACKENDS.names() else None


def _deterministic(table: JudgeTable, families: Sequence[str]) -> list[str]:
    d = table.data
    h = d[(d["prompt_kind"] == HOLISTIC) & d["family"].isin(families)]
    out = []
    for fam, g in h.groupby("family", sort=True):
        reps = g.groupby("image")["score"]
        if reps.size().max() >= 2 and bool(np.all(reps.nunique() <= 1)):
            out.append(str(fam))
    return out


def design_warnings(table: JudgeTable, *, families: Sequence[str], n_images: int,
                    config: JudgesReportConfig) -> list[DesignWarning]:
    """Every warning that applies to this table and configuration, in a fixed order.

    Examples
    --------
    >>> import numpy as np
    >>> from multicrop.datasets.simulate import simulate_study
    >>> from multicrop.fusion.features import validate_judge_table
    >>> sim = simulate_study(40, n_families=1, rng=np.random.default_rng(0))
    >>> t = validate_judge_table(sim.judge_table)
    >>> [w.code for w in design_warnings(t, families=t.families, n_images=40, config=JudgesReportConfig())]
    ['single_family', 'few_images']
    """
    out: list[DesignWarning] = []
    if len(families) == 1:
        out.append(DesignWarning("single_family", (
            f"one family ({families[0]}): panel_mean is the best single member itself, so its comparison "
            "with the best member (delta 0, p 1) is an identity, not a finding; add a second family")))
    det = _deterministic(table, families)
    if det:
        out.append(DesignWarning("deterministic", (
            f"{', '.join(det)} gave the same holistic score on every repetition of every image (a deterministic "
            "judge): its repetitions and the Hsplit columns repeat one number and add no information")))
    per_fold = n_images / config.n_folds
    if per_fold < MIN_IMAGES_PER_FOLD:
        out.append(DesignWarning("few_images", (
            f"{n_images} images with {config.n_folds}-fold out-of-fold fits leave about {per_fold:.0f} held-out "
            f"images per fold (fewer than {MIN_IMAGES_PER_FOLD}): fused arms and all intervals are too unstable "
            "to read; use more images or fewer --folds")))
    offline = [f for f in families if (b := _backend(f)) is not None and not getattr(b, "needs_network", True)]
    if offline:
        out.append(DesignWarning("offline_calls", (
            f"{', '.join(offline)} runs offline (no API, no cost), yet its calls are counted in calls per image; "
            "read that column as judge calls, not paid API calls")))
    for f in families:
        b = _backend(f)
        proxies = tuple(getattr(b, "proxy_dimensions", ()) or ()) if b is not None else ()
        if proxies:
            out.append(DesignWarning("proxy_dimensions", (
                f"{f} scores {', '.join(proxies)} from proxies, not measures of them "
                "(see docs/measured-judge.md); do not read those columns as judgements")))
    return out


def ratings_warnings(skipped_reasons: Sequence[str], *, source: str) -> list[DesignWarning]:
    """A warning when rating rows were left out for lying outside their scale.

    >>> [w.code for w in ratings_warnings(["score 99 outside [1, 5]", "missing rater id"], source="r.csv")]
    ['ratings_out_of_scale']
    """
    outside = [r for r in skipped_reasons if "outside [" in r]
    if not outside:
        return []
    return [DesignWarning("ratings_out_of_scale", (
        f"{source}: {len(outside)} rating rows lie outside their scale (first: {outside[0]}) and were left out; "
        "skipped_ratings.csv lists them with their line"))]


#: notes of the protocol that say an arm or block was skipped
_SKIP_NOTES = ("H", "P", "Hsplit", "robustness")


def skipped_arms_warnings(notes: dict[str, str]) -> list[DesignWarning]:
    """One ``arms_skipped`` warning per skipped block (from the protocol's notes).

    >>> [w.message for w in skipped_arms_warnings({"P": "no dimension rows: P and H+P arms skipped", "x": "y"})]
    ['no dimension rows: P and H+P arms skipped']
    """
    return [DesignWarning("arms_skipped", notes[k]) for k in _SKIP_NOTES if k in notes]
