"""One panel score per rendered alternative: the z-scored panel mean or a fitted combiner.

The z-scored panel mean (the default)
    For each family, its holistic score of an alternative (the mean over the
    holistic repetitions) is standardised across **all alternatives of the
    photo** (mean 0, population standard deviation 1, as
    :func:`scipy.stats.zscore` does by default); the panel score of an
    alternative is the mean of its families' z-scores.  A family that gives
    every alternative the same score ranks nothing and is left out (no
    division by zero); when every family is constant, every alternative
    scores 0 and the composition scorer's choice stands.  This is
    :func:`multicrop.fusion.features.panel_mean`, the panel comparator of the
    judge evaluation.

A fitted combiner
    A scikit-learn regressor from :mod:`multicrop.fusion.combiners` (or any
    estimator with ``predict``), fitted on a feature block of
    :func:`multicrop.fusion.features.build_features`: ``H`` (columns
    ``H:<family>``) or ``H+P`` (``H:<family>`` then ``P:<family>:<dimension>``).
    A combiner fitted on a DataFrame is matched by its column names
    (``feature_names_in_``); one fitted on an array by its feature count.  Its
    prediction is the panel score.

Examples
--------
>>> import pandas as pd
>>> h = pd.DataFrame({"H:a": [6.0, 8.0], "H:b": [5.0, 5.0]}, index=["x", "y"])
>>> z_panel_mean(h).round(3).tolist()
[-1.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DatasetError, InvalidParameterError

__all__ = ["PANEL_MEAN", "z_panel_mean", "features", "combiner_scores", "combiner_info"]

#: The name the ``ranking`` record gives the default combination.
PANEL_MEAN = "z-scored panel mean"


def z_panel_mean(holistic: pd.DataFrame) -> pd.Series:
    """Mean over families of each family's holistic score z-scored across the rows.

    Parameters
    ----------
    holistic : pandas.DataFrame
        One row per alternative, one column per family (NaN where a family
        gave no parsed score).

    Returns
    -------
    pandas.Series
        The panel score of each row; NaN for a row no family scored.
    """
    from ..fusion.features import panel_mean

    if holistic.shape[1] == 0:
        return pd.Series(np.nan, index=holistic.index, name="panel_mean")
    out = panel_mean(holistic)
    no_score = holistic.isna().all(axis=1)
    return out.where(~no_score)


def features(table: pd.DataFrame, labels: Sequence[str], families: Sequence[str], block: str) -> pd.DataFrame:
    """Feature block ``block`` of the tidy judge ``table``, one row per label (in order), NaN where missing."""
    from ..fusion.features import build_features, validate_judge_table

    try:
        t = validate_judge_table(table, source="panel scores")
    except DatasetError:  # no finite score at all
        return pd.DataFrame(index=list(labels))
    fams = [f for f in families if f in t.families]
    return build_features(t, block, families=fams).reindex(list(labels))


def _expected_columns(families: Sequence[str], block: str) -> list[str]:
    from ..schema import DIMENSION_IDS

    cols = [f"H:{f}" for f in families]
    if block == "H+P":
        cols += [f"P:{f}:{d}" for f in families for d in DIMENSION_IDS]
    return cols


def _panel_columns(families: Sequence[str], *, has_holistic: bool, has_dimensions: bool) -> list[str]:
    """The feature columns a panel gives: ``H:`` with holistic prompts, ``P:`` with dimension prompts."""
    full = _expected_columns(families, "H+P")
    return [c for c in full if (has_holistic if c.startswith("H:") else has_dimensions)]


def _columns_for(combiner: Any, families: Sequence[str], *, has_dimensions: bool,
                 has_holistic: bool = True) -> tuple[str, list[str], bool]:
    """The block and columns ``combiner`` was fitted on, and whether it takes a DataFrame."""
    name = type(combiner).__name__
    if not hasattr(combiner, "predict"):
        raise InvalidParameterError(f"combiner: a fitted estimator with predict() is needed, got {name}")
    given = _panel_columns(families, has_holistic=has_holistic, has_dimensions=has_dimensions)
    gives = ", ".join(given) if given else "none"
    names = getattr(combiner, "feature_names_in_", None)
    if names is not None:
        cols = [str(c) for c in names]
        absent = [c for c in cols if c not in set(given)]
        if absent:
            known = set(_expected_columns(families, "H+P"))
            why = "".join(f" (the panel's {reps} is 0)" for prefix, reps, has in (
                ("H:", "holistic_repetitions", has_holistic), ("P:", "dimension_repetitions", has_dimensions))
                if not has and any(c in known and c.startswith(prefix) for c in absent))
            raise InvalidParameterError(
                f"combiner {name}: fitted on feature(s) {', '.join(absent[:5])} that this panel does not give"
                f"{why}; the panel gives {gives}")
        block = "H+P" if any(c.startswith("P:") for c in cols) else "H"
        return block, cols, True
    n = getattr(combiner, "n_features_in_", None)
    if n is None:
        raise InvalidParameterError(f"combiner {name}: not fitted (no n_features_in_); fit it first")
    if not has_holistic:
        raise InvalidParameterError(
            f"combiner {name}: fitted on an array of {n} features (block H or H+P, both start with the holistic "
            "scores), but the panel's holistic_repetitions is 0; set holistic_repetitions >= 1")
    for block in ("H", "H+P") if has_dimensions else ("H",):
        cols = _expected_columns(families, block)
        if len(cols) == n:
            return block, cols, False
    gives = f"{len(families)} (block H)" + (f" or {len(_expected_columns(families, 'H+P'))} (block H+P)"
                                           if has_dimensions else "; its dimension_repetitions is 0, so no block H+P")
    raise InvalidParameterError(
        f"combiner {name}: fitted on {n} features, but this panel of {len(families)} famil"
        f"{'y' if len(families) == 1 else 'ies'} gives {gives}")


def combiner_info(combiner: Any, families: Sequence[str], *, has_dimensions: bool,
                  has_holistic: bool = True) -> dict[str, Any]:
    """What the ``ranking`` record says about a combiner (checks that it matches the panel).

    Raises
    ------
    InvalidParameterError
        Not a fitted estimator, or fitted on features this panel does not give
        (``H:`` columns need ``holistic_repetitions`` >= 1, ``P:`` columns
        ``dimension_repetitions`` >= 1).
    """
    block, cols, _ = _columns_for(combiner, families, has_dimensions=has_dimensions, has_holistic=has_holistic)
    return {"name": getattr(combiner, "name", type(combiner).__name__),
            "version": str(getattr(combiner, "version", "")), "block": block, "features": cols}


def combiner_scores(combiner: Any, table: pd.DataFrame, labels: Sequence[str], families: Sequence[str], *,
                    has_dimensions: bool, has_holistic: bool = True) -> pd.Series:
    """The combiner's prediction for each label; NaN for a label missing a feature."""
    block, cols, as_frame = _columns_for(combiner, families, has_dimensions=has_dimensions,
                                         has_holistic=has_holistic)
    X = features(table, labels, families, block).reindex(columns=cols)
    ok = X.notna().all(axis=1).to_numpy()
    out = pd.Series(np.nan, index=list(labels), dtype=float)
    if ok.any():
        rows = X.loc[ok] if as_frame else X.loc[ok].to_numpy(dtype=float)
        out.loc[ok] = np.asarray(combiner.predict(rows), dtype=float)
    return out
