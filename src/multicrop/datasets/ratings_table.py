"""A ratings table checked row by row and averaged per image: :class:`Ratings`.

:func:`ratings_from_frame` turns one row per rating into :class:`Ratings`:
the per-rater table and per-image means of the overall score and of each
attribute.  Rows that cannot be used (missing image or rater id, non-numeric,
NaN or out-of-range score or attribute, duplicate rater of one image) are
skipped and listed in :attr:`Ratings.skipped` with their file line number and
reason; they never enter a mean.  An empty attribute cell is a missing
attribute (NaN) for that rater only.  Columns that are not scores are ignored,
never a reason to skip a row; an attribute column in which no cell is a
number is treated as a category column and ignored too.  Both are noted once
in :attr:`Ratings.notes`.  Column names are those of
:mod:`multicrop.datasets.ratings_columns`; the file formats that produce such
frames are in :mod:`multicrop.datasets.ratings`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DatasetError, InvalidParameterError
from ..serialize import Serializable
from .ratings_columns import ATTRIBUTES, GENERIC_ATTRIBUTES, infer_scale, map_columns

__all__ = ["Ratings", "SkippedRow", "ratings_from_frame"]


@dataclass(frozen=True)
class SkippedRow(Serializable):
    """A row that was not used: its 1-based line in the file and why.

    Examples
    --------
    >>> SkippedRow(4, "score is NaN").to_dict()
    {'line': 4, 'reason': 'score is NaN'}
    """

    line: int
    reason: str


@dataclass(frozen=True)
class Ratings:
    """Human ratings of a set of images.

    Attributes
    ----------
    raters : pandas.DataFrame or None
        One row per usable rating: ``image, rater, score`` and attribute
        columns.  ``None`` for per-image-only sources (PARA GIAA files).
    means : pandas.DataFrame
        Indexed by image (sorted): mean ``score``, mean of each attribute and
        ``n_raters``.
    attributes : tuple of str
        Canonical attribute columns present.
    skipped : tuple of SkippedRow
        Rows left out, with reasons.
    source : str
        File the ratings came from.
    notes : tuple of str
        Columns ignored (not scores, or category labels), each noted once.
    """

    raters: pd.DataFrame | None
    means: pd.DataFrame
    attributes: tuple[str, ...]
    skipped: tuple[SkippedRow, ...]
    source: str
    notes: tuple[str, ...] = ()

    def skipped_frame(self) -> pd.DataFrame:
        """The skipped rows as a frame (``line, reason``)."""
        return pd.DataFrame([s.to_dict() for s in self.skipped], columns=["line", "reason"])


def _check_range(name, value_range):
    if value_range is None:
        return None
    lo, hi = value_range
    if not lo < hi:
        raise InvalidParameterError(f"{name} must be (low, high) with low < high, got {value_range!r}")
    return float(lo), float(hi)


def ratings_from_frame(
    frame: pd.DataFrame,
    *,
    source: str = "ratings",
    score_range: tuple[float, float] | None = None,
    attribute_range: tuple[float, float] | None = None,
    first_line: int = 2,
    skipped: tuple[SkippedRow, ...] = (),
    attributes: tuple[str, ...] = GENERIC_ATTRIBUTES,
    lines=None,
    notes: tuple[str, ...] = (),
    infer: bool = True,
) -> Ratings:
    """Validate a per-rater frame and aggregate it.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per rating; column names as in
        :mod:`multicrop.datasets.ratings_columns`.
    source : str
        Name used in messages.
    score_range, attribute_range : (float, float), optional
        Inclusive allowed ranges; values outside are skipped rows.
    first_line : int
        File line number of the frame's first row (2 after a header), used
        when ``lines`` is not given.
    skipped : tuple of SkippedRow
        Rows already rejected by the parser, carried into the result.
    attributes : tuple of str
        Canonical attributes to look for (default: all but EVA's
        ``semantic``).
    lines : array_like of int, shape (len(frame),), optional
        File line number of every row (a parser that dropped rows knows them).
    notes : tuple of str
        Notes from the parser, carried into the result.
    infer : bool
        With no ``score_range``, infer the scale from the scores
        (:func:`infer_scale`) and skip rows far outside it, each listed with
        its line and value.

    Returns
    -------
    Ratings

    Raises
    ------
    DatasetError
        If required columns are missing or no usable row is left.

    Examples
    --------
    >>> df = pd.DataFrame({"image": ["a", "a", "b", "b", ""], "rater": ["u", "v", "u", "v", "u"],
    ...                    "score": ["5", "7", "x", "4", "3"]})
    >>> r = ratings_from_frame(df)
    >>> r.means["score"].to_dict(), [s.reason for s in r.skipped]
    ({'a': 6.0, 'b': 4.0}, ["non-numeric score 'x'", 'missing image id'])
    """
    score_range = _check_range("score_range", score_range)
    attribute_range = _check_range("attribute_range", attribute_range)
    cols = map_columns(frame.columns, need_rater=True, source=source, attributes=attributes)
    notes = list(notes)
    for a in [a for a in ATTRIBUTES if a in cols]:
        raw = frame[cols[a]].astype("string").fillna("").str.strip()
        filled = raw[raw != ""]
        if len(filled) and pd.to_numeric(filled, errors="coerce").isna().all():
            examples = ", ".join(repr(v) for v in sorted(filled.unique())[:3])
            notes.append(f"column {cols[a]!r} holds categories ({examples}), not scores; ignored")
            del cols[a]
    attrs = tuple(a for a in ATTRIBUTES if a in cols)
    unused = [str(c) for c in frame.columns if c not in set(cols.values()) and not str(c).startswith("_")]
    if unused:
        more = f" and {len(unused) - 8} more" if len(unused) > 8 else ""
        notes.append(f"columns not used: {', '.join(unused[:8])}{more}")
    n = len(frame)
    reason = np.full(n, "", dtype=object)

    def flag(mask, text):
        mask = np.asarray(mask, dtype=bool) & (reason == "")
        if isinstance(text, str):
            reason[mask] = text
        else:
            reason[mask] = np.asarray(text, dtype=object)[mask]

    def text(col):
        return frame[cols[col]].astype("string").fillna("").str.strip()

    image, rater = text("image"), text("rater")
    flag(image.to_numpy() == "", "missing image id")
    flag(rater.to_numpy() == "", "missing rater id")

    def numeric(col, rng_, allow_empty):
        raw = text(col)
        val = pd.to_numeric(raw, errors="coerce").astype(float).to_numpy()
        empty = raw.to_numpy() == ""
        if allow_empty:
            flag(~empty & np.isnan(val) & (raw.str.lower().to_numpy() != "nan"),
                 [f"non-numeric {col} {v!r}" for v in raw])
            flag(~empty & ~np.isfinite(val), f"{col} is NaN")
        else:
            flag(empty, f"missing {col}")
            flag(np.isnan(val) & (raw.str.lower().to_numpy() != "nan"), [f"non-numeric {col} {v!r}" for v in raw])
            flag(~np.isfinite(val), f"{col} is NaN")
        if rng_ is not None:
            lo, hi = rng_
            with np.errstate(invalid="ignore"):
                out = np.isfinite(val) & ((val < lo) | (val > hi))
            flag(out, [f"{col} {v:g} outside [{lo:g}, {hi:g}]" for v in val])
        return val

    out = pd.DataFrame({"image": image.to_numpy(dtype=object), "rater": rater.to_numpy(dtype=object)})
    if score_range is None and infer:
        raw_scores = pd.to_numeric(text("score"), errors="coerce").astype(float).to_numpy()
        inferred = infer_scale(raw_scores)
        if inferred is not None:
            n_out = int(np.sum(np.isfinite(raw_scores) & ((raw_scores < inferred[0]) | (raw_scores > inferred[1]))))
            if n_out:
                score_range = inferred
                notes.append(f"score scale inferred as [{inferred[0]:g}, {inferred[1]:g}] from the bulk of the "
                             f"ratings; {n_out} rows outside it skipped (see the skipped rows)")
    out["score"] = numeric("score", score_range, allow_empty=False)
    for a in attrs:
        out[a] = numeric(a, attribute_range, allow_empty=True)
    ok = reason == ""
    dup = out["image"].astype(str).str.cat(out["rater"].astype(str), sep="\x00").where(ok).duplicated() & ok
    flag(dup.to_numpy(), [f"duplicate rating of image {i!r} by rater {r!r}" for i, r in zip(out["image"], out["rater"])])
    ok = reason == ""
    lines = np.arange(n) + first_line if lines is None else np.asarray(lines, dtype=int)
    new_skips = tuple(SkippedRow(int(lines[i]), str(reason[i])) for i in np.flatnonzero(~ok))
    all_skips = tuple(sorted(skipped + new_skips, key=lambda s: s.line))
    out = out.loc[ok].reset_index(drop=True)
    if out.empty:
        raise DatasetError(f"{source}: no usable rating rows ({len(all_skips)} skipped)")
    means = out.groupby("image", sort=True)[["score", *attrs]].mean()
    means["n_raters"] = out.groupby("image", sort=True).size()
    means.index = means.index.astype(str)
    return Ratings(out, means, attrs, all_skips, source, tuple(notes))
