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
known variants, and attributes get canonical names
(:mod:`multicrop.datasets.ratings_columns` lists them); the rows are checked
and averaged by :func:`~multicrop.datasets.ratings_table.ratings_from_frame`.
This module reads the three file formats into frames for it and keeps the
``ratings-format`` registry; the names listed in ``__all__`` (``Ratings``,
``ratings_from_frame``, ``infer_scale`` ...) are importable from here as well.

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
    A long CSV with ``image, rater, score`` and any attribute columns; without a
    rater column, one row per image holding its mean (``image, score``).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import DatasetError
from ..registry import Registry
from .ratings_columns import (
    ATTRIBUTES,
    COLUMN_ALIASES,
    DIMENSION_ATTRIBUTES,
    GENERIC_ATTRIBUTES,
    STANDARD_SCALES,
    column_key,
    guess_format,
    infer_scale,
    map_columns,
)
from .ratings_table import Ratings, SkippedRow, ratings_from_frame

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
    normed = {column_key(c) for c in frame.columns}
    has_rater = any(v in normed for v in COLUMN_ALIASES["rater"])
    if has_rater:
        return ratings_from_frame(frame, source=path.name, score_range=(1, 5), attribute_range=(1, 5), skipped=skips,
                                  lines=lines, notes=notes)
    return _giaa(frame, source=path.name, skipped=skips, lines=lines, notes=notes)


def _giaa(frame: pd.DataFrame, *, source: str, skipped, lines, notes) -> Ratings:
    """Per-image means from ``*_mean`` columns (PARA GIAA files)."""
    means_cols = [c for c in frame.columns if column_key(c).endswith("mean")]
    stripped = frame.rename(columns={c: re.sub(r"[_ ]?mean$", "", c, flags=re.I) for c in means_cols})
    cols = map_columns(stripped.columns, need_rater=False, source=source, attributes=GENERIC_ATTRIBUTES)
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
    normed = {column_key(c) for c in frame.columns}
    if (not normed & set(COLUMN_ALIASES["rater"]) and normed & set(COLUMN_ALIASES["image"])
            and normed & set(COLUMN_ALIASES["score"]) and guess_format(frame.columns) is None):
        # per-image means (image, score[, attributes]): one "rater" per image, no noise ceiling
        image_col = next(c for c in frame.columns if column_key(c) in COLUMN_ALIASES["image"])
        repeated = frame[image_col][frame[image_col].duplicated(keep=False)]
        if len(repeated):
            # A per-rater file that lost its rater column: taking one row as the image's mean would be silent.
            raise DatasetError(
                f"{path.name}: no rater column, but image {repeated.iloc[0]!r} has {int((repeated == repeated.iloc[0]).sum())} "
                f"rows ({repeated.nunique()} images repeat); name the rater column ({', '.join(COLUMN_ALIASES['rater'][:3])}, "
                "...) or give one row per image with its mean score")
        frame = frame.assign(rater="mean")
        notes = (*notes, "no rater column: each row is taken as one image's mean score")
    return ratings_from_frame(
        frame, source=path.name, score_range=score_range, attribute_range=attribute_range, skipped=skips,
        lines=lines, notes=tuple(notes),
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
