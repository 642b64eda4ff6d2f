"""The embedded composition scorer: saliency, borders, thirds, faces, exposure.

Every term is in ``[0, 1]`` and computed for all candidates at once from
summed-area tables; the weights live in
:class:`multicrop.crop.config.CompositionWeights`.

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

Given a subject, ``density`` and ``thirds`` take the weights
``framed_density`` and ``framed_thirds`` instead: ``framing`` already says how
tight the crop is, and a subject that fills most of the frame is centred, the
rule of thirds being for small subjects in a scene.

``score = kept*w + density*w - border*w + thirds*w - face_cut*w
+ headroom*w + sharpness*w + exposure*w + framing*w - foreign*w``.
"""

from __future__ import annotations

import numpy as np

from ..config import CompositionWeights
from ...geometry import Box, Ratio
from .base import ScoredCrop, ScoringContext

__all__ = ["CompositionScorer"]

_THIRDS = np.array([(u, v) for u in (1 / 3, 2 / 3) for v in (1 / 3, 2 / 3)])


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
    version = "composition-2"
    description = "Weighted composition heuristics: saliency kept, framing, thirds, border and face cuts"
    needs_image = True       # capability flags
    needs_saliency = True
    uses_subject = True      # score() accepts the region's subject box

    def __init__(self, *, weights: CompositionWeights | None = None) -> None:
        self.weights = weights or CompositionWeights()

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
        w = self.weights
        ctx = context
        x1, y1, x2, y2 = ctx.int_corners(boxes)
        bw, bh = (x2 - x1).astype(np.float64), (y2 - y1).astype(np.float64)
        area = bw * bh
        region = region or Box(0, 0, ctx.width, ctx.height)
        rx1, ry1, rx2, ry2 = (a[0] for a in ctx.int_corners([region]))
        reg_mass = float(ctx.box_sums("saliency", *(np.array([v]) for v in (rx1, ry1, rx2, ry2)))[0])
        reg_area = float((rx2 - rx1) * (ry2 - ry1))
        eps = 1e-9

        mass = ctx.box_sums("saliency", x1, y1, x2, y2)
        kept = np.clip(mass / (reg_mass + eps), 0, 1) if reg_mass > eps else np.zeros_like(mass)
        d = (mass / area) / (reg_mass / reg_area + eps) if reg_mass > eps else np.zeros_like(mass)
        density = d / (1 + d)
        framing = np.zeros_like(mass)
        foreign = np.zeros_like(mass)
        if subject is not None:
            sx1, sy1, sx2, sy2 = (a[0] for a in ctx.int_corners([subject]))
            s_mass = float(ctx.box_sums("saliency", *(np.array([v]) for v in (sx1, sy1, sx2, sy2)))[0])
            ix1, iy1 = np.maximum(x1, sx1), np.maximum(y1, sy1)
            ix2, iy2 = np.maximum(np.minimum(x2, sx2), ix1), np.maximum(np.minimum(y2, sy2), iy1)
            own = ctx.box_sums("saliency", ix1, iy1, ix2, iy2)
            kept = np.clip(own / s_mass, 0, 1) if s_mass > eps else np.zeros_like(mass)
            foreign = np.clip((mass - own) / (mass + eps), 0, 1)
            fill = np.maximum((sx2 - sx1) / bw, (sy2 - sy1) / bh)
            framing = np.exp(-((fill - w.fill_target) ** 2) / (2 * w.fill_sigma ** 2))
        w_density = w.density if subject is None else w.framed_density
        w_thirds = w.thirds if subject is None else w.framed_thirds

        band = np.maximum(1, np.round(w.border_band * np.minimum(bw, bh))).astype(np.int64)
        edges = []
        for ex1, ey1, ex2, ey2, on_border in (
            (x1, y1, x2, y1 + band, y1 == 0),
            (x1, y2 - band, x2, y2, y2 == ctx.height),
            (x1, y1, x1 + band, y2, x1 == 0),
            (x2 - band, y1, x2, y2, x2 == ctx.width),
        ):
            s = ctx.box_sums("saliency", ex1, ey1, ex2, ey2) / ((ex2 - ex1) * (ey2 - ey1))
            edges.append(np.where(on_border, 0.0, s))
        border = np.clip(np.max(edges, axis=0), 0, 1)

        cx = ctx.box_sums("saliency_x", x1, y1, x2, y2) / (mass + eps)
        cy = ctx.box_sums("saliency_y", x1, y1, x2, y2) / (mass + eps)
        u, v = (cx + 0.5 - x1) / bw, (cy + 0.5 - y1) / bh
        dist2 = np.min((u[:, None] - _THIRDS[None, :, 0]) ** 2 + (v[:, None] - _THIRDS[None, :, 1]) ** 2, axis=1)
        thirds = np.where(mass > eps, np.exp(-dist2 / (2 * w.thirds_sigma ** 2)), 0.0)

        face_cut = np.zeros(len(boxes))
        headroom = np.ones(len(boxes))
        if ctx.faces:
            F = np.array([f.corners() for f in ctx.faces], dtype=np.float64)
            iw = np.clip(np.minimum(x2[:, None], F[None, :, 2]) - np.maximum(x1[:, None], F[None, :, 0]), 0, None)
            ih = np.clip(np.minimum(y2[:, None], F[None, :, 3]) - np.maximum(y1[:, None], F[None, :, 1]), 0, None)
            share = iw * ih / np.maximum((F[:, 2] - F[:, 0]) * (F[:, 3] - F[:, 1]), eps)[None, :]
            touching = share > 0.02
            cut = touching & (share < 0.98)
            face_cut = cut.sum(1) / np.maximum(touching.sum(1), 1)
            inside = share >= 0.98
            gap = (F[None, :, 1] - y1[:, None]) / bh[:, None]
            centre_v = ((F[None, :, 1] + F[None, :, 3]) / 2 - y1[:, None]) / bh[:, None]
            ok = np.clip(gap / w.min_headroom, 0, 1) * np.clip((0.75 - centre_v) / 0.25, 0, 1)
            n_in = inside.sum(1)
            headroom = np.where(n_in > 0, (ok * inside).sum(1) / np.maximum(n_in, 1), 1.0)

        grad_all = float(ctx.sat("gradient")[-1, -1]) / (ctx.width * ctx.height)
        grad = ctx.box_sums("gradient", x1, y1, x2, y2) / area
        sharpness = np.clip(grad / (2 * grad_all + eps), 0, 1)
        luma = ctx.box_sums("luma", x1, y1, x2, y2) / area
        exposure = 1 - np.clip(2 * np.abs(luma - 0.5), 0, 1)

        total = (
            w.saliency_kept * kept + w_density * density - w.border_cut * border + w_thirds * thirds
            - w.face_cut * face_cut + w.face_headroom * headroom + w.sharpness * sharpness
            + w.exposure * exposure + w.framing * framing - w.foreign * foreign
        )
        out = []
        for i, box in enumerate(boxes):
            parts = {
                "kept": round(float(kept[i]), 6), "density": round(float(density[i]), 6),
                "border": round(float(border[i]), 6), "thirds": round(float(thirds[i]), 6),
                "face_cut": round(float(face_cut[i]), 6), "headroom": round(float(headroom[i]), 6),
                "sharpness": round(float(sharpness[i]), 6), "exposure": round(float(exposure[i]), 6),
            }
            if subject is not None:
                parts["framing"] = round(float(framing[i]), 6)
                parts["foreign"] = round(float(foreign[i]), 6)
            out.append(ScoredCrop(box, round(float(total[i]), 6), parts, ratio))
        return out
