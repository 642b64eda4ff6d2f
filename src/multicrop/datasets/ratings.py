"""Human aesthetic ratings: EVA, PARA and a generic long CSV.

Every loader returns :class:`Ratings`: the per-rater table and per-image
means of the overall score and of each attribute.  Rows that cannot be used
(missing image or rater id, non-numeric, NaN or out-of-range score or
attribute, duplicate rater of one image, wrong number of fields) are skipped
and listed in :attr:`Ratings.skipped` with their file line number and reason;
they never enter a mean.  An empty attribute cell is a missing attribute (NaN)
for that rater only.  Columns that are not scores -- PARA's ``imgEmotion``
and ``semantic`` (category labels), ``sessionId``, ``isObjectEmphasis`` -- are
ignored, never a reason to skip a row; an attribute column in which no cell is
a number is treated as a category column and ignored too.  Both are noted once
in :attr:`Ratings.notes`.

Column names are matched case-insensitively, ignoring punctuation, against
known variants (``image_id``/``imageName``/``image``; ``user_id``/``userId``/
``rater``; ``score``/``aestheticScore``...).  Attributes get canonical names:

==============  =============================================================
canonical       accepted columns
==============  =============================================================
quality         quality, qualityScore
composition     composition, compositionScore (EVA: composition & depth)
colour          colour, color, colorScore, visual (EVA: light & colour)
light           light, lightScore
depth_of_field  dof, dofScore, depth_of_field
content         content, contentScore
semantic        semantic (EVA only: 1–4 score; in PARA ``semantic`` is the scene
                category and is ignored)
==============  =============================================================

Formats
-------
``eva``
    ``votes_filtered.csv``, ``=``-delimited:
    ``image_id=user_id=score=difficulty=visual=composition=quality=semantic=vote_time``;
    overall 0–10, attributes 1–4.  Some copies carry four more checkbox
    fields after ``vote_time``, with or without header names; fields beyond
    the header are ignored.
``para``
    ``PARA-Images.csv`` (one row per rater: ``sessionId, imageName, userId,
    aestheticScore, qualityScore, compositionScore, colorScore, dofScore,
    contentScore, lightScore, isObjectEmphasis, imgEmotion,
    difficultyOfJudgment, contentPreference, willingnessToShare, semantic``;
    scores 1–5), or a directory holding it;
    or ``PARA-GiaaTrain.csv``/``PARA-GiaaTest.csv`` (per-image
    ``*_mean`` columns, no raters, so no noise ceiling).
``csv``
    A long CSV with ``image, rater, score`` and any attribute columns.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DatasetError, InvalidParameterError
from ..registry import Registry
from ..serialize import Serializable

__all__ = [
    "ATTRIBUTES",
    "GENERIC_ATTRIBUTES",
    "DIMENSION_ATTRIBUTES",
    "RATINGS_FORMATS",
    "Ratings",
    "SkippedRow",
    "load_eva",
    "load_para",
    "load_ratings",
    "load_ratings_csv",
    "ratings_from_frame",
    "guess_format",
    "infer_scale",
    "STANDARD_SCALES",
]

ATTRIBUTES = ("quality", "composition", "colour", "light", "depth_of_field", "content", "semantic")

#: attributes looked for outside EVA: PARA's ``semantic`` is a scene category
#: (portrait, animal, ...), not a score
GENERIC_ATTRIBUTES = tuple(a for a in ATTRIBUTES if a != "semantic")

#: rubric dimension -> matching human attribute (distinctiveness and
#: emotional impact have no human counterpart in EVA or PARA)
DIMENSION_ATTRIBUTES = {"technical_quality": "quality", "composition": "composition", "colour_and_tone": "colour"}

_ALIASES = {
    "image": ("imageid", "imagename", "image", "img", "imgid", "imagefile", "filename", "file", "photo", "photoid"),
    "rater": ("userid", "raterid", "rater", "user", "workerid", "annotator", "annotatorid", "participant"),
    "score": ("score", "aestheticscore", "aestheticsscore", "aesthetic", "overall", "overallscore", "rating"),
    "quality": ("quality", "qualityscore"),
    "composition": ("composition", "compositionscore"),
    "colour": ("colour", "color", "colorscore", "colourscore", "visual"),
    "light": ("light", "lightscore"),
    "depth_of_field": ("dof", "dofscore", "depthoffield"),
    "content": ("content", "contentscore"),
    "semantic": ("semantic", "semanticscore"),
}


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


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


def _map_columns(columns, *, need_rater: bool, source: str, attributes=ATTRIBUTES) -> dict[str, str]:
    """canonical name -> original column (only ``attributes`` among the attributes)."""
    by_norm: dict[str, str] = {}
    for c in columns:
        by_norm.setdefault(_norm(c), c)
    found: dict[str, str] = {}
    for canon, variants in _ALIASES.items():
        if canon in ATTRIBUTES and canon not in attributes:
            continue
        for v in variants:
            if v in by_norm:
                found[canon] = by_norm[v]
                break
    required = ["image", "score"] + (["rater"] if need_rater else [])
    missing = [r for r in required if r not in found]
    if missing:
        wanted = "; ".join(f"{m}: one of {', '.join(_ALIASES[m])}" for m in missing)
        names = [str(c) for c in columns]
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        hint = guess_format(names)
        advice = f"; it looks like {hint} ratings: use --format {hint} (-f {hint})" if hint else ""
        raise DatasetError(f"{source}: no column for {wanted} (columns: {shown}){advice}")
    return found


def guess_format(columns) -> str | None:
    """The registered ratings format a header looks like, or None.

    Examples
    --------
    >>> guess_format(["sessionId", "imageName", "aestheticScore_mean", "qualityScore_mean"])
    'para'
    >>> guess_format(["image_id=user_id=score=difficulty=visual=composition=quality=semantic=vote_time"])
    'eva'
    >>> guess_format(["image", "rater", "score"]) is None
    True
    """
    normed = [_norm(str(c)) for c in columns]
    raw = [str(c) for c in columns]
    if any("=" in c and "imageid" in _norm(c.split("=")[0]) for c in raw) or {"imageid", "userid", "votetime"} <= set(
            normed):
        return "eva"
    if "imagename" in normed and any(n.startswith("aestheticscore") or n == "sessionid" for n in normed):
        return "para"
    return None


#: Rating scales people use; a column's scale is the smallest of these holding the bulk of its values.
STANDARD_SCALES = ((0, 1), (1, 5), (0, 5), (1, 7), (0, 7), (1, 9), (1, 10), (0, 10), (0, 100), (1, 100))

#: Values further than this many interquartile ranges beyond the quartiles are "far out" when inferring a scale.
FAR_OUT_IQR = 6.0


def infer_scale(values) -> tuple[float, float] | None:
    """The scale a score column was most likely given on, from its values; None when none fits.

    The bulk of the values lies within :data:`FAR_OUT_IQR` interquartile ranges
    of the quartiles; the scale is the smallest of :data:`STANDARD_SCALES` that
    holds the bulk.  A few wild values (99 on a 1-5 scale) do not move it.

    Examples
    --------
    >>> infer_scale([1, 2, 3, 4, 5, 3, 2, 4, 99, 99])
    (1.0, 5.0)
    >>> infer_scale([-0.3, 1.2, 0.4]) is None
    True
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size < 4:
        return None
    q1, q3 = np.quantile(v, [0.25, 0.75])
    spread = max(q3 - q1, 1e-9)
    bulk = v[(v >= q1 - FAR_OUT_IQR * spread) & (v <= q3 + FAR_OUT_IQR * spread)]
    lo, hi = float(bulk.min()), float(bulk.max())
    for a, b in STANDARD_SCALES:
        if a <= lo and hi <= b:
            return float(a), float(b)
    return None


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
        One row per rating; column names as in the module docstring.
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
    cols = _map_columns(frame.columns, need_rater=True, source=source, attributes=attributes)
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


def _read_text_table(path: Path, sep: str, *, extra_fields_ok: bool = False):
    """Read a delimited text file as strings, keeping every row's file line.

    Returns ``(frame, lines, skipped, notes)``.  Rows with fewer fields than
    the header -- or more, unless ``extra_fields_ok`` (trailing fields are
    then dropped, as in EVA copies with checkbox columns) -- are skipped rows
    with their real line number.  Blank lines are ignored.
    """
    if not path.is_file():
        raise DatasetError(f"ratings file {str(path)!r} does not exist")
    rows: list[list[str]] = []
    lines: list[int] = []
    skips: list[SkippedRow] = []
    n_extra = 0
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh, delimiter=sep, quoting=csv.QUOTE_MINIMAL)
            header = next((r for r in reader if r), None)
            if header is None:
                raise DatasetError(f"ratings file {str(path)!r} is empty")
            width = len(header)
            for fields in reader:
                line = reader.line_num  # last physical line of the record
                if not fields or fields == [""]:
                    continue
                if len(fields) == width or (extra_fields_ok and len(fields) > width):
                    n_extra += len(fields) > width
                    rows.append(fields[:width])
                    lines.append(line)
                else:
                    skips.append(SkippedRow(line, f"wrong number of fields ({len(fields)}, header has {width}): "
                                                  f"{sep.join(fields)!r}"))
    except (csv.Error, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read ratings file {str(path)!r}: {exc}") from exc
    notes = [f"{n_extra} row(s) carry fields beyond the {width} named in the header; the extra fields are ignored"] \
        if n_extra else []
    return pd.DataFrame(rows, columns=header, dtype=object), np.array(lines, dtype=int), tuple(skips), tuple(notes)


def load_eva(path) -> Ratings:
    """Load EVA's ``votes_filtered.csv`` (``=``-delimited, one row per vote).

    Overall score 0–10; attributes (``visual`` → colour, ``composition``,
    ``quality``, ``semantic``) 1–4.  ``difficulty`` and ``vote_time`` are
    ignored.

    Raises
    ------
    DatasetError
        Missing file or required columns, or no usable row.
    """
    path = Path(path)
    frame, lines, skips, notes = _read_text_table(path, "=", extra_fields_ok=True)
    return ratings_from_frame(frame, source=path.name, score_range=(0, 10), attribute_range=(1, 4), skipped=skips,
                              attributes=ATTRIBUTES, lines=lines, notes=notes)


def load_para(path) -> Ratings:
    """Load PARA ratings (``PARA-Images.csv`` per rater, or a GIAA split file).

    ``path`` may be the CSV or a directory containing ``PARA-Images.csv``
    (directly or under ``annotation/``).  Per-rater scores are checked against
    1–5.  GIAA files (``*_mean`` columns, no rater column) yield per-image
    means only (``raters`` is ``None``).
    """
    path = Path(path)
    if path.is_dir():
        for cand in (path / "PARA-Images.csv", path / "annotation" / "PARA-Images.csv"):
            if cand.is_file():
                path = cand
                break
        else:
            raise DatasetError(f"no PARA-Images.csv in directory {str(path)!r}")
    frame, lines, skips, notes = _read_text_table(path, ",")
    normed = {_norm(c) for c in frame.columns}
    has_rater = any(v in normed for v in _ALIASES["rater"])
    if has_rater:
        return ratings_from_frame(frame, source=path.name, score_range=(1, 5), attribute_range=(1, 5), skipped=skips,
                                  lines=lines, notes=notes)
    return _giaa(frame, source=path.name, skipped=skips, lines=lines, notes=notes)


def _giaa(frame: pd.DataFrame, *, source: str, skipped, lines, notes) -> Ratings:
    """Per-image means from ``*_mean`` columns (PARA GIAA files)."""
    means_cols = [c for c in frame.columns if _norm(c).endswith("mean")]
    stripped = frame.rename(columns={c: re.sub(r"[_ ]?mean$", "", c, flags=re.I) for c in means_cols})
    cols = _map_columns(stripped.columns, need_rater=False, source=source, attributes=GENERIC_ATTRIBUTES)
    attrs = tuple(a for a in GENERIC_ATTRIBUTES if a in cols)
    used = [cols["image"], cols["score"], *(cols[a] for a in attrs)]
    sub = stripped.loc[:, used].assign(_rater="mean").rename(columns={"_rater": "rater"})
    r = ratings_from_frame(sub, source=source, score_range=(1, 5), attribute_range=(1, 5), skipped=tuple(skipped),
                           lines=lines, notes=notes)
    unused = [str(c) for c in frame.columns if str(stripped.columns[frame.columns.get_loc(c)]) not in used]
    more = f" and {len(unused) - 8} more" if len(unused) > 8 else ""
    r_notes = [*r.notes, f"columns not used: {', '.join(unused[:8])}{more}"] if unused else list(r.notes)
    means = r.means.drop(columns="n_raters")
    means["n_raters"] = np.nan
    return Ratings(None, means, r.attributes, r.skipped, source, tuple(r_notes))


def load_ratings_csv(path, *, score_range=None, attribute_range=None) -> Ratings:
    """Load a generic long CSV: ``image, rater, score`` plus attribute columns.

    Attributes are those of :data:`GENERIC_ATTRIBUTES` (``semantic`` is an
    EVA column only).

    A file ``image,rater,score,quality`` with rows ``a,u,5,3``, ``a,v,7,``
    and ``b,u,nan,2`` gives ``means.loc["a", "quality"] == 3.0`` (the empty
    cell is a missing attribute) and skips line 4 with reason
    ``"score is NaN"``.
    """
    path = Path(path)
    frame, lines, skips, notes = _read_text_table(path, ",")
    return ratings_from_frame(
        frame, source=path.name, score_range=score_range, attribute_range=attribute_range, skipped=skips,
        lines=lines, notes=notes,
    )


class RatingsFormat:
    """Base of registered ratings formats: ``load(path) -> Ratings``."""

    name: str
    version = "1"
    description: str

    def load(self, path) -> Ratings:
        raise NotImplementedError


#: Registered ratings formats, by ``--format`` name.
RATINGS_FORMATS: Registry[type[RatingsFormat]] = Registry("ratings-format")


@RATINGS_FORMATS.register
class EvaFormat(RatingsFormat):
    name = "eva"
    description = "EVA votes_filtered.csv ('='-delimited; overall 0-10, attributes 1-4)"

    def load(self, path) -> Ratings:
        return load_eva(path)


@RATINGS_FORMATS.register
class ParaFormat(RatingsFormat):
    name = "para"
    description = "PARA-Images.csv (per rater, 1-5) or PARA-GiaaTrain/Test.csv (per-image means), or their directory"

    def load(self, path) -> Ratings:
        return load_para(path)


@RATINGS_FORMATS.register
class CsvFormat(RatingsFormat):
    name = "csv"
    description = "long CSV: image, rater, score and any attribute columns"

    def load(self, path) -> Ratings:
        return load_ratings_csv(path)


def load_ratings(path, format: str) -> Ratings:  # noqa: A002 - mirrors the CLI option
    """Load ratings with the format registered under ``format``."""
    return RATINGS_FORMATS.create(format).load(path)
