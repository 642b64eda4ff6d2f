"""What the columns of a ratings file mean: their names, the format a header looks like, a score's scale.

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

Everything here is a function of column names or of one column's values;
the loaders in :mod:`multicrop.datasets.ratings` and the validation in
:mod:`multicrop.datasets.ratings_table` use it.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import DatasetError

__all__ = [
    "ATTRIBUTES",
    "GENERIC_ATTRIBUTES",
    "DIMENSION_ATTRIBUTES",
    "COLUMN_ALIASES",
    "STANDARD_SCALES",
    "FAR_OUT_IQR",
    "column_key",
    "map_columns",
    "guess_format",
    "infer_scale",
]

ATTRIBUTES = ("quality", "composition", "colour", "light", "depth_of_field", "content", "semantic")

#: attributes looked for outside EVA: PARA's ``semantic`` is a scene category
#: (portrait, animal, ...), not a score
GENERIC_ATTRIBUTES = tuple(a for a in ATTRIBUTES if a != "semantic")

#: rubric dimension -> matching human attribute (distinctiveness and
#: emotional impact have no human counterpart in EVA or PARA)
DIMENSION_ATTRIBUTES = {"technical_quality": "quality", "composition": "composition", "colour_and_tone": "colour"}

#: canonical name -> the column names (as :func:`column_key` gives them) that mean it, in order of preference
COLUMN_ALIASES = {
    "image": ("imageid", "imagename", "imagelabel", "image", "img", "imgid", "imagefile", "filename", "file", "photo", "photoid"),
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


def column_key(name: str) -> str:
    """A column name as it is matched: lower case, letters and digits only.

    Examples
    --------
    >>> column_key("Image_ID"), column_key("aestheticScore_mean")
    ('imageid', 'aestheticscoremean')
    """
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


def map_columns(columns, *, need_rater: bool, source: str, attributes=ATTRIBUTES) -> dict[str, str]:
    """Canonical name -> original column, for the columns found (only ``attributes`` among the attributes).

    Parameters
    ----------
    columns : iterable of str
        The header.
    need_rater : bool
        Whether a rater column is required (besides image and score).
    source : str
        Name used in messages.
    attributes : tuple of str
        Canonical attributes to look for.

    Raises
    ------
    DatasetError
        If a required column is missing; the message lists the accepted names
        and, when the header looks like another format (:func:`guess_format`),
        the ``--format`` to use.

    Examples
    --------
    >>> map_columns(["imageName", "userId", "aestheticScore", "colorScore"], need_rater=True, source="x.csv")
    {'image': 'imageName', 'rater': 'userId', 'score': 'aestheticScore', 'colour': 'colorScore'}
    """
    by_norm: dict[str, str] = {}
    for c in columns:
        by_norm.setdefault(column_key(c), c)
    found: dict[str, str] = {}
    for canon, variants in COLUMN_ALIASES.items():
        if canon in ATTRIBUTES and canon not in attributes:
            continue
        for v in variants:
            if v in by_norm:
                found[canon] = by_norm[v]
                break
    required = ["image", "score"] + (["rater"] if need_rater else [])
    missing = [r for r in required if r not in found]
    if missing:
        wanted = "; ".join(f"{m}: one of {', '.join(COLUMN_ALIASES[m])}" for m in missing)
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
    normed = [column_key(str(c)) for c in columns]
    raw = [str(c) for c in columns]
    if any("=" in c and "imageid" in column_key(c.split("=")[0]) for c in raw) or {
            "imageid", "userid", "votetime"} <= set(normed):
        return "eva"
    if ({"imagename", "imagelabel"} & set(normed)) and any(n.startswith("aestheticscore") or n == "sessionid"
                                                         for n in normed):
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
