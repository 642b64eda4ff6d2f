"""The embedded composition scorer: saliency, borders, thirds, faces, exposure.

Every term is in ``[0, 1]`` and computed for all candidates at once from
summed-area tables; the weights live in
:class:`multicrop.crop.config.CompositionWeights`, the measurements shared
with the ``measured`` judge in :mod:`multicrop.measures`.

========== =================================================================
part       meaning
========== =================================================================
kept       share of the region's saliency inside the crop; given the
           region's subject, share of the subject's saliency instead
framing    given a subject: how close the subject's extent along the crop's
           limiting side is to ``fill_target`` of the crop (Gaussian,
           ``fill_sigma``): whole, with some margin, neither lost nor cramped
foreign    given a subject: share of the crop's saliency outside the subject
density    saliency per pixel of the crop relative to the region, d/(1+d)
border     highest mean saliency along one crop edge (edges lying on the
           image border are not counted: the photo itself ends there)
thirds     closeness of the saliency centroid to a rule-of-thirds point
face_cut   share of the faces touching the crop that its border cuts
headroom   faces inside the crop neither touching the top nor sunk low
sharpness  mean gradient in the crop relative to the whole image, halved, <= 1
exposure   1 - 2 |mean luminance - 0.5|
========== =================================================================

``score`` is the weighted sum of :data:`TERMS` (penalties subtracted).  Given
a subject, ``density`` and ``thirds`` are reported but not weighted:
``framing`` already says how tight the crop is, and a subject that fills most
of the frame is centred, the rule of thirds being for small subjects in a
scene.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...geometry import Box
from ...ratios import Ratio
from ...measures import THIRDS_POINTS, border_band, tone_departure
from ..config import CompositionWeights
from .base import ScoredCrop, ScoringContext

__all__ = ["CompositionScorer", "TERMS"]

#: ``(part, sign, weight)``: each part enters the score times its
#: :class:`CompositionWeights` field, in this order (penalties with sign -1).
TERMS: tuple[tuple[str, int, str], ...] = (
    ("kept", +1, "saliency_kept"),
    ("density", +1, "density"),
    ("border", -1, "border_cut"),
    ("thirds", +1, "thirds"),
    ("face_cut", -1, "face_cut"),
    ("headroom", +1, "face_headroom"),
    ("sharpness", +1, "sharpness"),
    ("exposure", +1, "exposure"),
    ("framing", +1, "framing"),
    ("foreign", -1, "foreign"),
)

#: Parts weighted only when the crop does not frame a subject (see the module notes).
UNFRAMED_ONLY = frozenset({"density", "thirds"})
#: Parts that exist only when the crop frames a subject.
FRAMED_ONLY = ("framing", "foreign")

# Fixed constants of the terms (not tuning: they define what a term measures).
EPS = 1e-9                # guards divisions by an empty saliency mass
PIXEL_CENTRE = 0.5        # a pixel's centre lies half a pixel from its index
FACE_TOUCHED = 0.02       # a crop holding more than this share of a face touches it
FACE_WHOLE = 0.98         # ... and from this share on it holds the face whole
FACE_SUNK = 0.75          # a face centred below this fraction of the crop's height is sunk
FACE_SUNK_RAMP = 0.25     # headroom credit falls linearly over this span above FACE_SUNK
SHARPNESS_SPAN = 2.0      # sharpness is 1 at this multiple of the image's mean gradient
MID_GREY = 0.5            # exposure: the key a crop is compared with, and the spread to 0
DECIMALS = 6              # parts and scores are rounded so records compare exactly


@dataclass(frozen=True)
class _Boxes:
    """Integer corners of the candidates (arrays of one value per box), their sizes and saliency."""

    x1: np.ndarray
    y1: np.ndarray
    x2: np.ndarray
    y2: np.ndarray
    bw: np.ndarray
    bh: np.ndarray
    area: np.ndarray
    mass: np.ndarray

    @classmethod
    def of(cls, ctx: ScoringContext, boxes: list[Box]) -> _Boxes:
        x1, y1, x2, y2 = ctx.int_corners(boxes)
        bw, bh = (x2 - x1).astype(np.float64), (y2 - y1).astype(np.float64)
        return cls(x1, y1, x2, y2, bw, bh, bw * bh, ctx.box_sums("saliency", x1, y1, x2, y2))


def _single_box(ctx: ScoringContext, box: Box) -> tuple[tuple[int, int, int, int], float]:
    """Integer corners of one box and its saliency."""
    corners = tuple(a[0] for a in ctx.int_corners([box]))
    mass = float(ctx.box_sums("saliency", *(np.array([v]) for v in corners))[0])
    return corners, mass


def _region_terms(ctx: ScoringContext, c: _Boxes, region: Box) -> dict[str, np.ndarray]:
    """``kept`` (share of the region's saliency) and ``density`` (relative to the region)."""
    (rx1, ry1, rx2, ry2), reg_mass = _single_box(ctx, region)
    reg_area = float((rx2 - rx1) * (ry2 - ry1))
    if reg_mass <= EPS:
        return {"kept": np.zeros_like(c.mass), "density": np.zeros_like(c.mass)}
    kept = np.clip(c.mass / (reg_mass + EPS), 0, 1)
    d = (c.mass / c.area) / (reg_mass / reg_area + EPS)
    return {"kept": kept, "density": d / (1 + d)}


def _subject_terms(ctx: ScoringContext, c: _Boxes, subject: Box, w: CompositionWeights) -> dict[str, np.ndarray]:
    """``kept`` (share of the subject's saliency), ``framing`` and ``foreign``."""
    (sx1, sy1, sx2, sy2), s_mass = _single_box(ctx, subject)
    ix1, iy1 = np.maximum(c.x1, sx1), np.maximum(c.y1, sy1)
    ix2, iy2 = np.maximum(np.minimum(c.x2, sx2), ix1), np.maximum(np.minimum(c.y2, sy2), iy1)
    own = ctx.box_sums("saliency", ix1, iy1, ix2, iy2)
    kept = np.clip(own / s_mass, 0, 1) if s_mass > EPS else np.zeros_like(c.mass)
    foreign = np.clip((c.mass - own) / (c.mass + EPS), 0, 1)
    fill = np.maximum((sx2 - sx1) / c.bw, (sy2 - sy1) / c.bh)
    framing = np.exp(-((fill - w.fill_target) ** 2) / (2 * w.fill_sigma ** 2))
    return {"kept": kept, "framing": framing, "foreign": foreign}


def _border_term(ctx: ScoringContext, c: _Boxes, band_fraction: float) -> np.ndarray:
    """Highest mean saliency in a band along one edge; edges on the image border count 0."""
    band = border_band(np.minimum(c.bw, c.bh), fraction=band_fraction)
    edges = []
    for ex1, ey1, ex2, ey2, on_border in (
        (c.x1, c.y1, c.x2, c.y1 + band, c.y1 == 0),
        (c.x1, c.y2 - band, c.x2, c.y2, c.y2 == ctx.height),
        (c.x1, c.y1, c.x1 + band, c.y2, c.x1 == 0),
        (c.x2 - band, c.y1, c.x2, c.y2, c.x2 == ctx.width),
    ):
        s = ctx.box_sums("saliency", ex1, ey1, ex2, ey2) / ((ex2 - ex1) * (ey2 - ey1))
        edges.append(np.where(on_border, 0.0, s))
    return np.clip(np.max(edges, axis=0), 0, 1)


def _thirds_term(ctx: ScoringContext, c: _Boxes, sigma: float) -> np.ndarray:
    """Gaussian (``sigma``, in crop fractions) of the saliency centroid's distance to the nearest power point."""
    points = np.array(THIRDS_POINTS)
    cx = ctx.box_sums("saliency_x", c.x1, c.y1, c.x2, c.y2) / (c.mass + EPS)
    cy = ctx.box_sums("saliency_y", c.x1, c.y1, c.x2, c.y2) / (c.mass + EPS)
    u, v = (cx + PIXEL_CENTRE - c.x1) / c.bw, (cy + PIXEL_CENTRE - c.y1) / c.bh
    dist2 = np.min((u[:, None] - points[None, :, 0]) ** 2 + (v[:, None] - points[None, :, 1]) ** 2, axis=1)
    return np.where(c.mass > EPS, np.exp(-dist2 / (2 * sigma ** 2)), 0.0)


def _face_terms(ctx: ScoringContext, c: _Boxes, min_headroom: float) -> dict[str, np.ndarray]:
    """``face_cut`` (share of touched faces the border cuts) and ``headroom`` of the faces held whole."""
    n = len(c.mass)
    if not ctx.faces:
        return {"face_cut": np.zeros(n), "headroom": np.ones(n)}
    F = np.array([f.corners() for f in ctx.faces], dtype=np.float64)
    iw = np.clip(np.minimum(c.x2[:, None], F[None, :, 2]) - np.maximum(c.x1[:, None], F[None, :, 0]), 0, None)
    ih = np.clip(np.minimum(c.y2[:, None], F[None, :, 3]) - np.maximum(c.y1[:, None], F[None, :, 1]), 0, None)
    share = iw * ih / np.maximum((F[:, 2] - F[:, 0]) * (F[:, 3] - F[:, 1]), EPS)[None, :]
    touching = share > FACE_TOUCHED
    cut = touching & (share < FACE_WHOLE)
    face_cut = cut.sum(1) / np.maximum(touching.sum(1), 1)
    inside = share >= FACE_WHOLE
    gap = (F[None, :, 1] - c.y1[:, None]) / c.bh[:, None]
    centre_v = ((F[None, :, 1] + F[None, :, 3]) / 2 - c.y1[:, None]) / c.bh[:, None]
    ok = np.clip(gap / min_headroom, 0, 1) * np.clip((FACE_SUNK - centre_v) / FACE_SUNK_RAMP, 0, 1)
    n_in = inside.sum(1)
    headroom = np.where(n_in > 0, (ok * inside).sum(1) / np.maximum(n_in, 1), 1.0)
    return {"face_cut": face_cut, "headroom": headroom}


def _sharpness_term(ctx: ScoringContext, c: _Boxes) -> np.ndarray:
    """Mean gradient magnitude in the crop over :data:`SHARPNESS_SPAN` times the image's, at most 1."""
    grad_all = float(ctx.sat("gradient")[-1, -1]) / (ctx.width * ctx.height)
    grad = ctx.box_sums("gradient", c.x1, c.y1, c.x2, c.y2) / c.area
    return np.clip(grad / (SHARPNESS_SPAN * grad_all + EPS), 0, 1)


def _exposure_term(ctx: ScoringContext, c: _Boxes) -> np.ndarray:
    """1 at a mean luminance of mid-grey, 0 at black or white."""
    luma = ctx.box_sums("luma", c.x1, c.y1, c.x2, c.y2) / c.area
    return 1 - tone_departure(luma, centre=MID_GREY, spread=MID_GREY)


class CompositionScorer:
    """Weighted sum of composition heuristics (no learned weights).

    Examples
    --------
    >>> img = np.full((60, 90, 3), 128, np.uint8)
    >>> sal = np.zeros((60, 90)); sal[20:40, 40:60] = 1
    >>> ctx = ScoringContext(img, sal)
    >>> tight, cutting = Box(30, 10, 40, 40), Box(50, 10, 40, 40)
    >>> a, b = CompositionScorer().score(ctx, [tight, cutting], ratio=Ratio(1, 1))
    >>> a.score > b.score, a.parts["kept"], b.parts["kept"]
    (True, 1.0, 0.5)
    """

    name = "composition"
    version = "composition-3"
    description = "Weighted composition heuristics: saliency kept, framing, thirds, border and face cuts"
    needs_image = True       # capability flags
    needs_saliency = True
    uses_subject = True      # score() accepts the region's subject box

    def __init__(self, *, weights: CompositionWeights | None = None) -> None:
        self.weights = weights or CompositionWeights()

    def parts(self, context: ScoringContext, boxes: list[Box], *, region: Box | None = None,
              subject: Box | None = None) -> dict[str, np.ndarray]:
        """Every part of :data:`TERMS` for ``boxes``, one array each (``framing`` and ``foreign`` given a subject)."""
        w = self.weights
        c = _Boxes.of(context, boxes)
        parts = _region_terms(context, c, region or Box(0, 0, context.width, context.height))
        parts["border"] = _border_term(context, c, w.border_band)
        parts["thirds"] = _thirds_term(context, c, w.thirds_sigma)
        parts.update(_face_terms(context, c, w.min_headroom))
        parts["sharpness"] = _sharpness_term(context, c)
        parts["exposure"] = _exposure_term(context, c)
        if subject is not None:
            parts.update(_subject_terms(context, c, subject, w))  # replaces the region's ``kept``
        return parts

    def total(self, parts: dict[str, np.ndarray], *, framed: bool) -> np.ndarray:
        """The weighted sum of ``parts`` in :data:`TERMS` order (absent parts count 0)."""
        total = np.zeros_like(parts["kept"])
        for part, sign, weight in TERMS:
            if part in parts and not (framed and part in UNFRAMED_ONLY):
                total = total + sign * getattr(self.weights, weight) * parts[part]
        return total

    def score(self, context: ScoringContext, boxes: list[Box], *, ratio: Ratio | None = None,
              region: Box | None = None, subject: Box | None = None) -> list[ScoredCrop]:
        """Score ``boxes`` (in the context's pixels) for a crop of ``region``.

        ``region`` (default: the whole image) is what the ``density`` term is
        relative to, and ``kept`` too unless ``subject`` is given: then
        ``kept`` is the share of the subject's saliency inside the crop (the
        crop may reach past the region to keep its subject whole), and the
        ``framing`` and ``foreign`` terms are added.
        """
        if not boxes:
            return []
        parts = self.parts(context, boxes, region=region, subject=subject)
        total = self.total(parts, framed=subject is not None)
        names = [p for p, _, _ in TERMS if p in parts]
        return [
            ScoredCrop(box, round(float(total[i]), DECIMALS),
                       {p: round(float(parts[p][i]), DECIMALS) for p in names}, ratio)
            for i, box in enumerate(boxes)
        ]
