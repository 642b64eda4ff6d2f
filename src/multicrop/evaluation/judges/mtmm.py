"""The multitrait-multimethod (MTMM) check: does a dimension prompt measure its attribute?

Every prompt of every family (the holistic one and each dimension) is
correlated with every human attribute, with the human overall score
partialled out (Spearman partial correlation).  A *matched cell* sets a
dimension prompt against its family's holistic prompt on the human attribute
it names (:data:`multicrop.datasets.ratings.DIMENSION_ATTRIBUTES`), with a
paired bootstrap CI of the difference (Jadhav et al. 2026, §5.3, Appendix G).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...datasets.ratings import DIMENSION_ATTRIBUTES, Ratings
from ...fusion.features import DIMENSIONS
from ...schema import HOLISTIC
from ...stats.correlation import correlation, resample_counts
from ...stats.multiple import bh_adjust
from ...stats.partial import bootstrap_partial_difference, partial_correlation
from .align import AlignedData
from .streams import MTMM, stream_rng

__all__ = ["MtmmResult", "mtmm"]

#: (family, prompt, attribute) -> partial rho
_Partials = dict[tuple[str, str, str], float]


@dataclass(frozen=True, eq=False)
class MtmmResult:
    """The MTMM matrix and its matched cells.

    Attributes
    ----------
    matrix : DataFrame
        ``family, prompt`` and one column per human attribute: the partial
        correlation of that prompt with that attribute.
    cells : DataFrame
        ``family, dimension, attribute, partial_dimension, partial_holistic,
        delta, ci_low, ci_high, p, raw_dimension, raw_holistic, p_bh``; ``p``
        two-sided bootstrap, ``p_bh`` Benjamini–Hochberg across the cells.
    """

    matrix: pd.DataFrame
    cells: pd.DataFrame


def _attributes(ratings: Ratings, images: pd.Index) -> list[str]:
    """Human attributes rated on every image and not constant."""
    return [a for a in ratings.attributes
            if ratings.means.loc[images, a].notna().all() and ratings.means.loc[images, a].nunique() > 1]


def _prompts(data: AlignedData, families: Sequence[str]) -> list[tuple[str, str, pd.Series]]:
    """``(family, prompt, scores)`` of every holistic and dimension prompt, family by family."""
    H, P = data.blocks.get("H", pd.DataFrame(index=data.images)), data.blocks.get("P", pd.DataFrame(index=data.images))
    prompts = []
    for f in families:
        if f"H:{f}" in H:
            prompts.append((f, HOLISTIC, H[f"H:{f}"]))
        prompts += [(f, d, P[f"P:{f}:{d}"]) for d in DIMENSIONS if f"P:{f}:{d}" in P]
    return prompts


def _matrix(prompts, human: pd.DataFrame, attrs: Sequence[str], overall: np.ndarray) -> tuple[pd.DataFrame, _Partials]:
    rows = []
    partial: _Partials = {}
    for f, prompt, s in prompts:
        if s.isna().any():
            continue
        row = {"family": f, "prompt": prompt}
        for a in attrs:
            row[a] = partial[f, prompt, a] = partial_correlation(s.to_numpy(), human[a].to_numpy(dtype=float),
                                                                 overall).estimate
        rows.append(row)
    return pd.DataFrame(rows), partial


def _cells(data: AlignedData, human: pd.DataFrame, attrs: Sequence[str], overall: np.ndarray, partial: _Partials,
           *, families: Sequence[str], counts: np.ndarray, confidence: float) -> pd.DataFrame:
    H, P = data.blocks.get("H", pd.DataFrame(index=data.images)), data.blocks.get("P", pd.DataFrame(index=data.images))
    cells = []
    cache: dict = {}  # resampled ranks shared across cells
    for f in families:  # family outermost: its holistic ranks and the 3 attributes' stay cached
        for d, a in DIMENSION_ATTRIBUTES.items():
            col = f"P:{f}:{d}"
            if (a not in attrs or col not in P or f"H:{f}" not in H or P[col].isna().any()
                    or H[f"H:{f}"].isna().any()):
                continue
            ds, hs, at = P[col].to_numpy(), H[f"H:{f}"].to_numpy(), human[a].to_numpy(dtype=float)
            r = bootstrap_partial_difference(ds, hs, at, overall, counts, confidence=confidence, cache=cache)
            cells.append({
                "family": f, "dimension": d, "attribute": a,
                "partial_dimension": partial[f, d, a],
                "partial_holistic": partial[f, HOLISTIC, a],
                "delta": r.estimate, "ci_low": r.ci_low, "ci_high": r.ci_high, "p": r.p,
                "raw_dimension": correlation(ds, at), "raw_holistic": correlation(hs, at),
            })
    cells = pd.DataFrame(cells)
    if len(cells):
        cells["p_bh"] = bh_adjust(cells["p"].to_numpy())
    return cells


def mtmm(data: AlignedData, ratings: Ratings, *, families: Sequence[str], seed: int, n_resamples: int,
         confidence: float) -> MtmmResult:
    """The MTMM matrix and matched cells of the aligned H and P blocks.

    Matched cells share one set of image resamples,
    ``stream_rng(seed, MTMM)``.  Both tables are empty when no human
    attribute is usable (rated on every image and not constant).
    """
    attrs = _attributes(ratings, data.images)
    if not attrs:
        return MtmmResult(pd.DataFrame(), pd.DataFrame())
    human = ratings.means.loc[data.images]
    overall = human["score"].to_numpy(dtype=float)
    matrix, partial = _matrix(_prompts(data, families), human, attrs, overall)
    counts = resample_counts(data.n_images, n_resamples, stream_rng(seed, MTMM))
    cells = _cells(data, human, attrs, overall, partial, families=families, counts=counts, confidence=confidence)
    return MtmmResult(matrix, cells)
