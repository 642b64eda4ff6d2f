"""``direct``: k distinct crops chosen from one pool over the whole image, k found or given.

The Carousel paper ends by asking for a method that produces the multi-target
crops directly, without the partitioning pre-step, and that decides k by
itself (§V).  This module is that method; its weights are in
:class:`multicrop.crop.config.DirectConfig`.

Steps
-----
1. **Subjects** (:mod:`multicrop.crop.subjects`): salient blobs, strong
   ones and *weak* ones the saliency model barely marks (a thin rocket, a
   dark figure), each with its saliency mass.  A blob's *importance* is
   ``(mass / largest mass) ** size_exponent``: a tiny subject still counts
   (0.32 at 1/100 of the largest for 0.25).
2. **Pool.**  For every allowed ratio: fixed-ratio windows over the whole
   image at ``window_scales``, GAIC grid anchors of the whole image, and
   framings of every blob (the blob spans each of ``fills`` of the crop,
   its centre placed at the centre or on a third of the crop); no crop's
   long side is under ``min_crop_share`` of the photo's (or the longest
   crop of that ratio, in a panorama): no fragment worth no post.
3. **Validity (hard constraints).**  A crop must hold at least
   ``whole_share`` of its main blob (the blob whose mass it holds most), may
   hold no other blob by a share in ``[hold_share, whole_share)`` (it never
   cuts a blob it mostly holds), and never cuts a detected face (a face it
   touches is held whole).  Only when no crop of a blob passes is the
   constraint relaxed for that blob (a subject larger than any crop).
4. **Quality** ``q``: the scorer's score of the crop framing its main blob
   (the ``composition`` scorer: subject kept, framing near ``fill_target``,
   foreign saliency, border cuts, faces, thirds, exposure ...), plus a bonus
   for a ratio near the blob's own aspect (``aspect_weight``) and for the
   photo's own orientation (``photo_orientation``), minus other subjects
   held (``other_weight``), at least 0.
5. **Greedy selection.**  With ``cov_b`` the largest share of blob ``b`` held
   by a crop already chosen (times ``group_credit`` where ``b`` was not that
   crop's main blob: a subject seen in the corner of another's crop still
   deserves its own), ``s_b`` the share the candidate holds and
   ``imp_b`` its importance::

       new    = imp_main * max(s_main - cov_main, 0)
                + group_credit * sum_{b != main} imp_b * max(s_b - cov_b, 0)
       shared = sum_b imp_b * min(s_b, cov_b)
       gain   = q * new - shared_weight * shared - overlap_weight * max IoU(crop, chosen)

   Saliency two crops share costs ``shared_weight`` (2.0) per unit of
   importance; rectangles may overlap at a small cost (``overlap_weight``
   0.25 per unit of IoU): crops of distinct subjects overlap in 91 of the
   251 ground-truth pairs of Carousel.  The best gain is taken until
   ``k`` crops are chosen; with ``k="auto"`` until the best gain falls below
   ``min_gain`` (at least one crop, at most ``max_k``).  A fixed ``k`` stops
   early when no candidate adds a new subject (``new < distinct_share``),
   and the result says so in its notes; ``force_k`` then fills up with the
   best remaining crops (IoU at most ``nms_iou`` to those chosen).

References
----------
.. [1] R. Loya, A. Hamara, B. Estell, B. Kilpatrick and A. C. Freeman,
   "Carousel: A High-Resolution Dataset for Multi-Target Automatic Image
   Cropping", sections IV-C and V (future work).
.. [2] G. L. Nemhauser, L. A. Wolsey and M. L. Fisher, "An analysis of
   approximations for maximizing submodular set functions", 1978 (greedy).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..geometry import Box, Ratio, fit_ratio_box, iou_matrix
from ..measures import box_sums, summed_area_table
from .candidates import grid_anchors, sliding_windows
from .config import CropConfig, DirectConfig
from .scoring.base import ScoredCrop, Scorer, ScoringContext
from .subjects import Blob, salient_blobs

__all__ = ["DIRECT_VERSION", "Blob", "DirectSelection", "salient_blobs", "direct_pool", "select_direct"]

#: Part of every result's ``versions``: bump when direct selection changes.
#: direct-2: a blob held by a crop that frames another counts as covered at ``group_credit``.
#: direct-3: weak subjects (thin or low-contrast, barely marked by the saliency model) are blobs too;
#: a crop in the photo's own orientation gains ``photo_orientation``; no crop under ``min_crop_share``.
DIRECT_VERSION = "direct-3"


@dataclass(frozen=True)
class DirectSelection:
    """Chosen crops (analysis pixels, in selection order), their gains, the blobs and notes."""

    crops: tuple[ScoredCrop, ...]
    gains: tuple[float, ...]
    blobs: tuple[Blob, ...]
    n_distinct: int
    notes: tuple[str, ...]
    #: Per chosen crop, alternatives framing the same subject (the chosen crop
    #: first); see :func:`select_direct`'s ``shortlist``.
    shortlists: tuple[tuple[ScoredCrop, ...], ...] = ()


def _framings(blob: Box, ratio: float, bounds: Box, cfg: DirectConfig) -> list[Box]:
    """Crops of ``ratio`` in which ``blob`` spans each of ``cfg.fills``, centred or on a third."""
    largest = fit_ratio_box(bounds, ratio)
    cx, cy = blob.center
    out = []
    for f in cfg.fills:
        w = min(max(blob.w / f, blob.h * ratio / f), largest.w)
        h = w / ratio
        for px in cfg.placements:
            for py in cfg.placements:
                x = min(max(cx - px * w, bounds.x), bounds.x2 - w)
                y = min(max(cy - py * h, bounds.y), bounds.y2 - h)
                out.append(Box(float(x), float(y), float(w), float(h)))
    return out


def direct_pool(bounds: Box, blobs: list[Blob], ratios: tuple[Ratio, ...], config: CropConfig,
                min_side: float) -> list[tuple[Box, Ratio]]:
    """Every candidate ``(box, ratio)``: windows and anchors over ``bounds``, framings of each blob."""
    d, cand = config.direct, config.candidates
    windows = dataclasses.replace(cand, window_stride=d.window_stride, window_scales=d.window_scales)
    out: list[tuple[Box, Ratio]] = []
    for ratio in ratios:
        largest = fit_ratio_box(bounds, ratio.value)
        min_long = min(d.min_crop_share * max(bounds.w, bounds.h), max(largest.w, largest.h))
        boxes = sliding_windows(bounds, ratio, config=windows)
        boxes += grid_anchors(bounds, ratio, config=cand)
        for b in blobs:
            boxes += _framings(b.box, ratio.value, bounds, d)
        seen = set()
        for box in boxes:
            key = tuple(round(v, 1) for v in box.corners())
            if min(box.w, box.h) >= min_side - 1e-6 and max(box.w, box.h) >= min_long - 1e-6 and key not in seen:
                seen.add(key)
                out.append((box, ratio))
    return out


def _shares(ctx: ScoringContext, boxes: list[Box], sal: np.ndarray, labels: np.ndarray,
            blobs: list[Blob]) -> np.ndarray:
    """``shares[i, j]``: the share of blob j's saliency inside box i."""
    x1, y1, x2, y2 = ctx.int_corners(boxes)
    out = np.zeros((len(boxes), len(blobs)))
    for j, b in enumerate(blobs):
        sat = summed_area_table(np.where(labels == b.label, sal, 0.0))
        out[:, j] = box_sums(sat, x1, y1, x2, y2) / max(b.mass, 1e-9)
    return np.clip(out, 0, 1)


def _quality(ctx: ScoringContext, scorer: Scorer, pool: list[tuple[Box, Ratio]], main: np.ndarray,
             blobs: list[Blob]) -> tuple[list[ScoredCrop], np.ndarray]:
    """Each candidate scored as a framing of its main blob; ``face_cut`` parts as an array."""
    scored: list[ScoredCrop | None] = [None] * len(pool)
    groups: dict[tuple[int, Ratio], list[int]] = {}
    for i, (_, r) in enumerate(pool):
        groups.setdefault((int(main[i]), r), []).append(i)
    for (j, r), idx in groups.items():
        crops = scorer.score(ctx, [pool[i][0] for i in idx], ratio=r, subject=blobs[j].box)
        for i, c in zip(idx, crops):
            scored[i] = c
    face_cut = np.array([c.parts.get("face_cut", 0.0) for c in scored])  # type: ignore[union-attr]
    return scored, face_cut  # type: ignore[return-value]


def _aspect_fit(pool: list[tuple[Box, Ratio]], main: np.ndarray, blobs: list[Blob], sigma: float) -> np.ndarray:
    """How well each crop's ratio suits its main blob's own extent (1: the blob's aspect)."""
    blob_aspect = np.array([max(b.box.w, 1.0) / max(b.box.h, 1.0) for b in blobs])
    crop_aspect = np.array([r.value for _, r in pool])
    return np.exp(-np.log(crop_aspect / blob_aspect[main]) ** 2 / (2 * sigma ** 2))


def _valid(shares: np.ndarray, main: np.ndarray, face_cut: np.ndarray, d: DirectConfig) -> np.ndarray:
    """Hard constraints, relaxed per blob only where no candidate of that blob meets them."""
    n = len(shares)
    s_main = shares[np.arange(n), main]
    cuts = ((shares >= d.hold_share) & (shares < d.whole_share)).any(axis=1)
    ok = (s_main >= d.whole_share) & ~cuts & (face_cut <= 0)
    for j in range(shares.shape[1]):
        mine = main == j
        if mine.any() and not (ok & mine).any():
            # A subject no crop holds whole (larger than any crop): keep its most complete framings.
            best = s_main[mine].max()
            ok |= mine & (s_main >= best - 0.05) & (face_cut <= 0 if (mine & (face_cut <= 0)).any() else True)
    return ok


def select_direct(ctx: ScoringContext, scorer: Scorer, config: CropConfig, *, bounds: Box,
                  min_side: float, ratios: tuple[Ratio, ...] | None = None,
                  shortlist: int = 1) -> DirectSelection:
    """Choose distinct crops of the whole image greedily (see the module notes).

    Parameters
    ----------
    ctx : ScoringContext
        Image, saliency (faces raised) and faces, in analysis pixels.
    scorer : Scorer
        Rates each candidate as a framing of its main blob.
    config : CropConfig
        ``k`` (an integer or ``"auto"``), ``max_k``, ``force_k``,
        ``nms_iou`` and the weights in ``config.direct``.
    bounds : Box
        The whole analysis image.
    min_side : float
        Smallest crop side in analysis pixels.
    ratios : tuple of Ratio, optional
        Ratios to use (default ``config.ratios``).
    shortlist : int
        Alternatives kept per chosen crop (the crop itself first) for a
        judge to choose among: valid crops of the same main subject that
        hold it at least as fully and share no more saliency with the other
        chosen crops (both within ``shortlist_slack``), best quality first,
        no two with IoU above ``shortlist_iou``.

    Returns
    -------
    DirectSelection
    """
    d = config.direct
    auto = config.k == "auto"
    k = config.max_k if auto else int(config.k)
    blobs, labels = salient_blobs(ctx.saliency, config=d)
    notes: list[str] = []
    sal = ctx.saliency
    if not blobs:  # nothing stands out: one pseudo-subject, the central half of the image
        notes.append("no salient subject found; framed the centre")
        box = Box(bounds.x + bounds.w / 4, bounds.y + bounds.h / 4, bounds.w / 2, bounds.h / 2)
        labels = np.zeros(ctx.saliency.shape, np.int32)
        labels[int(box.y):int(math.ceil(box.y2)), int(box.x):int(math.ceil(box.x2))] = 1
        sal = np.ones(ctx.saliency.shape)
        blobs = [Blob(box, float((labels == 1).sum()), 1.0, 1)]
    pool = direct_pool(bounds, blobs, ratios or config.ratios, config, min_side)
    boxes = [b for b, _ in pool]
    shares = _shares(ctx, boxes, sal, labels, blobs)
    mass = np.array([b.mass for b in blobs])
    main = np.argmax(shares * mass[None, :], axis=1)
    scored, face_cut = _quality(ctx, scorer, pool, main, blobs)
    valid = _valid(shares, main, face_cut, d)
    imp = np.array([b.importance for b in blobs])
    onehot = np.zeros_like(shares)
    onehot[np.arange(len(pool)), main] = 1.0
    weight = onehot + d.group_credit * (1 - onehot)
    q = np.array([c.score for c in scored]) + d.aspect_weight * _aspect_fit(pool, main, blobs, d.aspect_sigma)
    if d.photo_orientation and bounds.w != bounds.h:
        # 1:1 crops and square photos have no orientation to share: neither gains.
        sign = 1.0 if bounds.w > bounds.h else -1.0
        q = q + d.photo_orientation * np.array([sign * (r.value - 1) > 0 for _, r in pool], float)
    q = np.maximum(q - d.other_weight * ((1 - onehot) * imp[None, :] * shares).sum(1), 0.0)

    covered = np.zeros(len(blobs))
    chosen: list[int] = []
    gains: list[float] = []
    iou_max = np.zeros(len(pool))
    while len(chosen) < k:
        new = (weight * imp[None, :] * np.maximum(shares - covered[None, :], 0)).sum(1)
        shared = (imp[None, :] * np.minimum(shares, covered[None, :])).sum(1)
        gain = q * new - d.shared_weight * shared - d.overlap_weight * iou_max
        gain = np.where(valid, gain, -np.inf)
        if chosen:
            gain[chosen] = -np.inf
        i = int(np.argmax(gain))
        if not math.isfinite(gain[i]):
            break
        distinct = new[i] >= d.distinct_share and gain[i] > 0
        if auto and chosen and gain[i] < d.min_gain:
            break
        if not auto and not distinct and chosen:
            break
        chosen.append(i)
        gains.append(float(gain[i]))
        covered = np.maximum(covered, shares[i] * weight[i])  # other blobs count group_credit
        iou_max = np.maximum(iou_max, iou_matrix(boxes, [boxes[i]])[:, 0])
    n_distinct = len(chosen)
    if not auto and n_distinct < k:
        notes.append(_short_note(n_distinct, k, force=config.force_k))
        if config.force_k:
            chosen += _fill(boxes, scored, chosen, k, config.nms_iou)
            gains += [0.0] * (len(chosen) - len(gains))
    # Crops added by force_k show no new subject: they are not offered alternatives.
    lists = tuple(tuple(scored[j] for j in _shortlist(i, chosen, boxes, shares, main, valid, q,
                                                      shortlist if n < n_distinct else 1, d))
                  for n, i in enumerate(chosen))
    return DirectSelection(tuple(scored[i] for i in chosen), tuple(gains), tuple(blobs), n_distinct,
                           tuple(notes), lists)


def _shortlist(i: int, chosen: list[int], boxes: list[Box], shares: np.ndarray, main: np.ndarray,
               valid: np.ndarray, q: np.ndarray, n: int, d: DirectConfig) -> list[int]:
    """Crop ``i`` and up to ``n - 1`` alternatives framing its subject as fully (see ``select_direct``)."""
    if n <= 1:
        return [i]
    m = main[i]
    others = [j for j in chosen if j != i]
    cover = shares[others].max(axis=0) if others else np.zeros(shares.shape[1])
    shared = np.minimum(shares, cover[None, :]).sum(1)
    slack = d.shortlist_slack
    ok = valid & (main == m) & (shares[:, m] >= shares[i, m] - slack) & (shared <= shared[i] + slack)
    kept = [i]
    for j in sorted(np.flatnonzero(ok), key=lambda j: -q[j]):
        if len(kept) >= n:
            break
        if j != i and iou_matrix([boxes[j]], [boxes[t] for t in kept]).max() <= d.shortlist_iou:
            kept.append(int(j))
    return kept


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _short_note(n: int, k: int, *, force: bool) -> str:
    """"this photo has 2 distinct subjects; wrote 2 crops, asked for 5" (or how force_k filled up)."""
    head = f"this photo has {_plural(n, 'distinct subject')}; "
    if force:
        return head + f"wrote {_plural(k, 'crop')} as asked (force_k), {k - n} showing no new subject"
    return head + f"wrote {_plural(n, 'crop')}, asked for {k}"


def _fill(boxes: list[Box], scored: list[ScoredCrop], chosen: list[int], k: int, nms_iou: float) -> list[int]:
    """``force_k``: the best-scoring remaining crops, IoU at most ``nms_iou`` with every crop kept."""
    kept = list(chosen)
    for i in sorted(range(len(boxes)), key=lambda i: -scored[i].score):
        if len(kept) >= k:
            break
        if i not in kept and all(iou_matrix([boxes[i]], [boxes[j]])[0, 0] <= nms_iou for j in kept):
            kept.append(i)
    if len(kept) < k:  # even suppression leaves too few: take the best remaining anyway
        kept += [i for i in sorted(range(len(boxes)), key=lambda i: -scored[i].score) if i not in kept][: k - len(kept)]
    return kept[len(chosen):]
