"""``direct``: k distinct crops chosen from one pool over the whole image, k found or given.

The Carousel paper ends by asking for a method that produces the multi-target
crops directly, without the partitioning pre-step, and that decides k by
itself (§V).  This module is that method; its weights are in
:class:`multicrop.crop.config.DirectConfig`.

Steps
-----
1. **Subjects** (:mod:`multicrop.crop.subjects`): what the detectors name
   (people, animals, vehicles, objects; overlapping bodies joined into
   groups; unsure bodies kept as *guards*), salient blobs no detector names,
   and the user's focus, each a :class:`~multicrop.crop.subjects.Subject`
   with an importance in ``(0, 1]``.  Without detections, the salient blobs
   alone, as in direct-3.
2. **Pool.**  For every allowed ratio: fixed-ratio windows over the whole
   image at ``window_scales``, GAIC grid anchors of the whole image, and
   framings of every subject (:func:`multicrop.crop.candidates.subject_windows`:
   the subject spans each of ``fills`` of the crop, its centre at the centre
   or on a third); no crop's long side is under ``min_crop_share`` of the
   photo's, nor under ``platform_side`` source pixels where the photo allows.
3. **Validity (hard constraints).**  A crop holds its *main subject* (the
   most important one it holds whole) at ``body_whole`` (bodies) or
   ``whole_share``; it holds every person, animal and vehicle -- group
   members and guards included -- whole or by at most ``out_share`` (no
   slice, no sliver); it holds no salient subject by a share in
   ``[hold_share, whole_share)`` and never cuts a face.  Only for a body no
   crop frames so: a group's largest part sliced nowhere (``part_share``),
   else the fewest cuts, portrait lines first.
4. **Quality** ``q``: the scorer's score of the crop framing its main
   subject, plus ``aspect_weight`` for a ratio near the subject's aspect and
   ``photo_orientation`` for the photo's own orientation, headroom and lead
   room for people, minus ``wide_weight`` for a crop wider than half the
   photo and its subject's tightest framing, minus other subjects held
   (``other_weight``), at least 0.
5. **Greedy selection.**  With ``cov_b`` the largest share of subject ``b``
   held by a crop already chosen (times ``group_credit`` where ``b`` was not
   that crop's main subject), ``s_b`` the share the candidate holds and
   ``imp_b`` its importance::

       new    = imp_main * max(s_main - cov_main, 0)
                + group_credit * sum_{b != main} imp_b * max(s_b - cov_b, 0)
       shared = sum_b imp_b * min(s_b, cov_b)
       gain   = q * new - shared_weight * shared - overlap_weight * max IoU(crop, chosen)

   The best gain among valid crops whose main subject no chosen crop has
   is taken until ``k`` crops are chosen; with ``k="auto"`` until the best
   gain falls below ``min_gain`` (at least one crop, at most ``max_k``).  A
   focus is held by the first crop.  A fixed ``k`` stops early when no
   candidate adds a new subject (``new < distinct_share``), and the result
   says so in its notes; ``force_k`` then fills up with the best remaining
   crops (IoU at most ``nms_iou`` to those chosen).  A photo with no subject
   gets one view of the scene, and says so.

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
from .candidates import grid_anchors, sliding_windows, subject_windows
from .config import CropConfig, DirectConfig
from .scoring.base import ScoredCrop, Scorer, ScoringContext
from .subjects import Subject, facing, find_subjects, portrait_lines, salient_blobs

__all__ = ["DIRECT_VERSION", "DirectSelection", "salient_blobs", "direct_pool", "select_direct", "close_ups"]

#: Part of every result's ``versions``: bump when direct selection changes.
#: direct-2: a blob held by a crop that frames another counts as covered at ``group_credit``.
#: direct-3: weak subjects (thin or low-contrast, barely marked by the saliency model) are blobs too;
#: a crop in the photo's own orientation gains ``photo_orientation``; no crop under ``min_crop_share``.
#: direct-4: subjects from detectors (people, animals, vehicles, objects; overlapping bodies grouped),
#: saliency and the user's focus; no body sliced or left as a sliver, every crop with a main subject
#: of its own, headroom and lead room, crops of 1,080 px where the photo allows.
#: direct-5: close-ups of bodies the other crops show only wide; crowds are guards; no sliver of a body
#: (``out_share`` 0.01) and a body held whole means 99 % of it; a texture's salient fragments are no subjects.
#: direct-6: with ``k="auto"`` a subject far smaller than the largest (a salient one: smaller than a body
#: beside it) is a detail with no crop of its own; a close-up may hold a person beside it by 90 % of the mask.
DIRECT_VERSION = "direct-6"


@dataclass(frozen=True)
class DirectSelection:
    """Chosen crops (analysis pixels, in selection order, each close-up right after the crop of its
    subject), their gains, main subjects and notes."""

    crops: tuple[ScoredCrop, ...]
    gains: tuple[float, ...]
    subjects: tuple[Subject, ...]
    n_distinct: int
    notes: tuple[str, ...]
    #: Per chosen crop, alternatives framing the same subject (the chosen crop
    #: first); see :func:`select_direct`'s ``shortlist``.
    shortlists: tuple[tuple[ScoredCrop, ...], ...] = ()
    #: Per chosen crop, the index into ``subjects`` of its main subject (-1: none).
    mains: tuple[int, ...] = ()


def min_long_side(bounds: Box, ratio: Ratio, config: CropConfig, scale: float) -> float:
    """Shortest allowed long side (analysis pixels) of a crop of ``ratio``.

    At least ``min_crop_share`` of the photo's long side; and, where the
    photo is large enough that a crop of ``platform_side`` source pixels is
    at most ``platform_share`` of its long side, at least ``platform_side``
    (platforms show narrower crops upscaled).  Never more than the largest
    crop of the ratio.
    """
    d = config.direct
    largest = fit_ratio_box(bounds, ratio.value)
    long = max(bounds.w, bounds.h)
    need = d.min_crop_share * long
    if d.platform_side and long * scale * d.platform_share >= d.platform_side:
        need = max(need, d.platform_side / scale)
    return min(need, max(largest.w, largest.h))


def direct_pool(bounds: Box, subjects: tuple[Subject, ...] | list[Subject], ratios: tuple[Ratio, ...],
                config: CropConfig, min_side: float, *, scale: float = 1.0) -> list[tuple[Box, Ratio]]:
    """Every candidate ``(box, ratio)``: windows and anchors over ``bounds``, framings of each subject."""
    d, cand = config.direct, config.candidates
    windows = dataclasses.replace(cand, window_stride=d.window_stride, window_scales=d.window_scales)
    out: list[tuple[Box, Ratio]] = []
    for ratio in ratios:
        min_long = min_long_side(bounds, ratio, config, scale)
        boxes = sliding_windows(bounds, ratio, config=windows)
        boxes += grid_anchors(bounds, ratio, config=cand)
        for s in subjects:
            boxes += subject_windows(s.box, ratio, bounds=bounds, fills=d.fills, placements=d.placements)
        seen = set()
        for box in boxes:
            key = tuple(round(v, 1) for v in box.corners())
            if min(box.w, box.h) >= min_side - 1e-6 and max(box.w, box.h) >= min_long - 1e-6 and key not in seen:
                seen.add(key)
                out.append((box, ratio))
    return out


def _box_shares(C: np.ndarray, box: Box) -> np.ndarray:
    """Share of ``box``'s area inside each crop (corners ``C``, shape (n, 4))."""
    iw = np.clip(np.minimum(C[:, 2], box.x2) - np.maximum(C[:, 0], box.x), 0, None)
    ih = np.clip(np.minimum(C[:, 3], box.y2) - np.maximum(C[:, 1], box.y), 0, None)
    return iw * ih / max(box.area, 1e-9)


def _shares(ctx: ScoringContext, boxes: list[Box], subjects: list[Subject]) -> np.ndarray:
    """``shares[i, j]``: the share of subject j inside box i (its weight map, else its box or members' boxes)."""
    C = np.array([b.corners() for b in boxes], dtype=np.float64).reshape(-1, 4)
    x1, y1, x2, y2 = ctx.int_corners(boxes)
    out = np.zeros((len(boxes), len(subjects)))
    for j, s in enumerate(subjects):
        if s.weight is not None:
            total = float(s.weight.sum())
            out[:, j] = box_sums(summed_area_table(s.weight.astype(np.float64)), x1, y1, x2, y2) / max(total, 1e-9)
        elif s.members:
            areas = np.array([m.box.area for m in s.members])
            held = np.stack([_box_shares(C, m.box) for m in s.members], axis=1)
            out[:, j] = (held * areas[None, :]).sum(1) / max(areas.sum(), 1e-9)
        else:
            out[:, j] = _box_shares(C, s.box)
    return np.clip(out, 0, 1)


def _portrait_ok(C: np.ndarray, person: Subject, bounds: Box) -> np.ndarray:
    """Crops that cut ``person`` as a portrait: head and full width held, bottom edge on a portrait line."""
    b = person.box
    lines = portrait_lines(person) if person.kind == "person" else ()
    if not lines:
        return np.zeros(len(C), bool)
    head = (C[:, 1] <= b.y + 1e-6) | (C[:, 1] <= bounds.y + 0.5)
    width = (np.minimum(C[:, 2], b.x2) - np.maximum(C[:, 0], b.x)) / max(b.w, 1e-9) >= 0.9
    bottom = np.zeros(len(C), bool)
    for lo, hi in lines:
        bottom |= (C[:, 3] >= lo) & (C[:, 3] <= hi)
    return head & width & bottom


def _body_cuts(ctx: ScoringContext, boxes: list[Box], C: np.ndarray, bodies: list[Subject], bounds: Box,
               d: DirectConfig, sats: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per crop: bodies sliced (held by more than ``out_share`` and less than ``whole_share``, by mask
    where a body has one) and, of those, the ones cut at a portrait line (allowed only where nothing
    better exists).  ``sats`` keeps each mask's summed-area table (and total) between calls."""
    n = len(C)
    cut = np.zeros(n)
    portrait = np.zeros(n)
    x1, y1, x2, y2 = ctx.int_corners(boxes)
    sats = {} if sats is None else sats
    for body in bodies:
        if body.weight is not None:
            key = id(body.weight)
            if key not in sats:
                sats[key] = (summed_area_table(body.weight.astype(np.float64)), max(float(body.weight.sum()), 1e-9))
            table, total = sats[key]
            s = box_sums(table, x1, y1, x2, y2) / total
        else:
            s = _box_shares(C, body.box)
        if body.kind == "crowd":
            sliced = (s > d.crowd_share) & (s < 1 - d.crowd_share)
        else:
            sliced = (s > d.out_share) & (s < d.body_whole)
        ok = _portrait_ok(C, body, bounds) & sliced
        cut += sliced & ~ok
        portrait += ok
    return cut, portrait


def _quality(ctx: ScoringContext, scorer: Scorer, pool: list[tuple[Box, Ratio]], main: np.ndarray,
             subjects: list[Subject]) -> tuple[list[ScoredCrop], np.ndarray]:
    """Each candidate scored as a framing of its main subject; ``face_cut`` parts as an array."""
    scored: list[ScoredCrop | None] = [None] * len(pool)
    groups: dict[tuple[int, Ratio], list[int]] = {}
    for i, (_, r) in enumerate(pool):
        groups.setdefault((int(main[i]), r), []).append(i)
    for (j, r), idx in groups.items():
        crops = scorer.score(ctx, [pool[i][0] for i in idx], ratio=r, subject=subjects[j].box)
        for i, c in zip(idx, crops):
            scored[i] = c
    face_cut = np.array([c.parts.get("face_cut", 0.0) for c in scored])  # type: ignore[union-attr]
    return scored, face_cut  # type: ignore[return-value]


def _aspect_fit(pool: list[tuple[Box, Ratio]], main: np.ndarray, subjects: list[Subject], sigma: float) -> np.ndarray:
    """How well each crop's ratio suits its main subject's own extent (1: the subject's aspect)."""
    aspect = np.array([max(s.box.w, 1.0) / max(s.box.h, 1.0) for s in subjects])
    crop_aspect = np.array([r.value for _, r in pool])
    return np.exp(-np.log(crop_aspect / aspect[main]) ** 2 / (2 * sigma ** 2))


def _tightest(subjects: list[Subject], ratios: tuple[Ratio, ...], bounds: Box, fill: float) -> np.ndarray:
    """Per subject, the area (share of the photo) of its tightest framing in any of ``ratios``."""
    out = np.ones(len(subjects))
    for j, s in enumerate(subjects):
        for r in ratios:
            largest = fit_ratio_box(bounds, r.value)
            w = min(max(s.box.w, s.box.h * r.value) / fill, largest.w)
            out[j] = min(out[j], w * (w / r.value) / max(bounds.area, 1e-9))
    return out


def _people_terms(C: np.ndarray, main: np.ndarray, subjects: list[Subject], d: DirectConfig) -> np.ndarray:
    """Headroom and lead room of each crop's main subject (people only), as a quality change.

    Headroom: a head touching the crop's top edge (less than ``min_headroom``
    of the crop's height above the highest head, unless the photo ends
    there) loses ``headroom_weight``.  Lead room: a single person who faces
    left or right (:func:`multicrop.crop.subjects.facing`) gains up to
    ``lead_weight`` when more of the crop lies in front of them than behind.
    """
    out = np.zeros(len(C))
    h = C[:, 3] - C[:, 1]
    w = C[:, 2] - C[:, 0]
    for j, s in enumerate(subjects):
        mine = main == j
        if not mine.any() or s.kind != "person":
            continue
        top = min(m.box.y for m in (s.members or (s,)))
        room = (top - C[:, 1]) / np.maximum(h, 1e-9)
        cramped = (room < d.min_headroom) & (C[:, 1] > 0.5)
        out[mine] -= d.headroom_weight * cramped[mine]
        f = facing(s) if not s.members else 0.0
        if f:
            u = (s.box.center[0] - C[:, 0]) / np.maximum(w, 1e-9)
            out[mine] += d.lead_weight * np.clip(2 * f * (0.5 - u), -1, 1)[mine]
    return out


def _valid(shares: np.ndarray, main: np.ndarray, held: np.ndarray, cuts: np.ndarray, portrait: np.ndarray,
           face_cut: np.ndarray, subjects: list[Subject], d: DirectConfig) -> np.ndarray:
    """Hard constraints (module notes, step 3), relaxed per subject only where no candidate meets them."""
    n = len(shares)
    s_main = shares[np.arange(n), main]
    soft = np.array([not s.is_body for s in subjects])
    other_cut = ((shares >= d.hold_share) & (shares < d.whole_share) & soft[None, :]).any(axis=1)
    faces_ok = face_cut <= 0
    ok = held & ~other_cut & (cuts == 0) & (portrait == 0) & faces_ok
    for j in range(shares.shape[1]):
        mine = main == j
        if not mine.any() or (ok & mine).any() or not (subjects[j].is_body or subjects[j].kind == "focus"):
            continue
        # A subject no crop holds whole without cutting another (larger than any crop, or in a crowd).
        # A group: the largest part of it that a crop holds without slicing anyone (the people at the
        # photo's edges left out whole).  Else its most complete framings, the fewest bodies cut.
        clean = mine & (cuts == 0) & (portrait == 0) & faces_ok & ~other_cut & (s_main >= d.part_share)
        if len(subjects[j].members) > 1 and clean.any():
            ok |= clean & (s_main >= s_main[clean].max() - 0.05)
            continue
        best = s_main[mine].max()
        pool = mine & (s_main >= best - 0.05)
        if (pool & faces_ok).any():
            pool &= faces_ok
        fewest = cuts[pool].min()
        ok |= pool & (cuts == fewest)
    return ok


def select_direct(ctx: ScoringContext, scorer: Scorer, config: CropConfig, *, bounds: Box,
                  min_side: float, ratios: tuple[Ratio, ...] | None = None, shortlist: int = 1,
                  subjects: tuple[Subject, ...] | None = None, scale: float = 1.0) -> DirectSelection:
    """Choose distinct crops of the whole image greedily (see the module notes).

    Parameters
    ----------
    ctx : ScoringContext
        Image, saliency (faces raised) and faces, in analysis pixels.
    scorer : Scorer
        Rates each candidate as a framing of its main subject.
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
    subjects : tuple of Subject, optional
        The photo's subjects (:class:`multicrop.crop.analysis.Analysis`);
        default: the salient blobs of ``ctx.saliency``.
    scale : float
        Source pixels per analysis pixel (the ``platform_side`` rule).

    Returns
    -------
    DirectSelection
    """
    d = config.direct
    auto = config.k == "auto"
    k = config.max_k if auto else int(config.k)
    found = list(find_subjects(ctx.saliency, config=d) if subjects is None else subjects)
    subs = [s for s in found if s.importance > 0]
    guards = [s for s in found if s.importance <= 0]
    notes: list[str] = []
    if not subs:
        return _one_view(ctx, scorer, config, bounds=bounds, min_side=min_side, ratios=ratios, scale=scale,
                         guards=guards)
    pool = direct_pool(bounds, subs, ratios or config.ratios, config, min_side, scale=scale)
    boxes = [b for b, _ in pool]
    C = np.array([b.corners() for b in boxes], dtype=np.float64).reshape(-1, 4)
    shares = _shares(ctx, boxes, subs)
    imp = np.array([s.importance for s in subs])
    need = np.array([d.body_whole if s.bodies else d.whole_share for s in subs])
    whole = shares >= need[None, :] - 1e-9
    held = whole.any(axis=1)
    # The main subject: the most important one held whole; else the one held most.
    main = np.where(held, np.argmax(np.where(whole, imp[None, :] + 1e-3 * shares, -1.0), axis=1),
                    np.argmax(shares * imp[None, :], axis=1))
    bodies = [b for s in subs + guards for b in s.bodies]
    sats: dict = {}
    cuts, portrait = _body_cuts(ctx, boxes, C, bodies, bounds, d, sats)
    # A body of the main subject cut at a portrait line is the main subject's own framing.
    scored, face_cut = _quality(ctx, scorer, pool, main, subs)
    valid = _valid(shares, main, held, cuts, portrait, face_cut, subs, d)
    onehot = np.zeros_like(shares)
    onehot[np.arange(len(pool)), main] = 1.0
    weight = onehot + d.group_credit * (1 - onehot)
    q = np.array([c.score for c in scored]) + d.aspect_weight * _aspect_fit(pool, main, subs, d.aspect_sigma)
    if d.photo_orientation and bounds.w != bounds.h:
        # 1:1 crops and square photos have no orientation to share: neither gains.
        sign = 1.0 if bounds.w > bounds.h else -1.0
        q = q + d.photo_orientation * np.array([sign * (r.value - 1) > 0 for _, r in pool], float)
    q = q + _people_terms(C, main, subs, d)
    area = (C[:, 2] - C[:, 0]) * (C[:, 3] - C[:, 1]) / max(bounds.area, 1e-9)
    free = np.maximum(d.wide_share, _tightest(subs, ratios or config.ratios, bounds, max(d.fills)))[main]
    q = q - d.wide_weight * np.clip((area - free) / max(1 - d.wide_share, 1e-9), 0, 1)
    q = np.maximum(q - d.other_weight * ((1 - onehot) * imp[None, :] * shares).sum(1), 0.0)

    focus = [j for j, s in enumerate(subs) if s.kind == "focus"]
    # k auto, beside detected subjects: one far smaller than the largest is a detail, not a slide of its own
    # (a person, animal or vehicle only beside a larger detected one: a bright patch of sky does not count);
    # so is a thing no detector names beside a larger person, animal or vehicle (a tap beside a figure).
    box_area = np.array([s.box.area for s in subs]) / max(bounds.area, 1e-9)
    detected = np.array([s.source == "detector" for s in subs])
    body = np.array([s.is_body for s in subs])
    largest = np.where(body, box_area[detected].max(initial=0.0), box_area.max())
    salient = np.array([s.kind == "salient" for s in subs])
    detail = (((box_area < d.detail_area) & (box_area < d.detail_relative * largest))
              | (salient & (box_area < d.salient_detail * box_area[body].max(initial=0.0))))
    detail &= np.array([s.kind != "focus" for s in subs]) & (auto and bool(detected.any()))
    covered = np.zeros(len(subs))
    chosen: list[int] = []
    gains: list[float] = []
    used_main: set[int] = set()
    iou_max = np.zeros(len(pool))
    while len(chosen) < k:
        new = (weight * imp[None, :] * np.maximum(shares - covered[None, :], 0)).sum(1)
        shared = (imp[None, :] * np.minimum(shares, covered[None, :])).sum(1)
        gain = q * new - d.shared_weight * shared - d.overlap_weight * iou_max
        allowed = valid & ~np.isin(main, list(used_main)) & ~detail[main]
        if focus and not chosen:  # the user's subject is held by the first crop
            allowed &= whole[:, focus].all(axis=1)
            if not allowed.any():
                allowed = valid & (shares[:, focus].min(axis=1) >= shares[:, focus].min(axis=1).max() - 1e-6)
        gain = np.where(allowed, gain, -np.inf)
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
        used_main.add(int(main[i]))
        covered = np.maximum(covered, shares[i] * weight[i])  # other subjects count group_credit
        iou_max = np.maximum(iou_max, iou_matrix(boxes, [boxes[i]])[:, 0])
    n_distinct = len(chosen)
    mains = [int(main[i]) for i in chosen]
    crops = [scored[i] for i in chosen]
    lists = [tuple(scored[j] for j in _shortlist(i, chosen, boxes, shares, main, valid, q, shortlist, d))
             for i in chosen]
    closer = close_ups(ctx, scorer, config, bounds=bounds, min_side=min_side, ratios=ratios or config.ratios,
                       subjects=subs, guards=guards, chosen=[boxes[i] for i in chosen], n=k - len(chosen),
                       scale=scale, sats=sats) if chosen else []
    for crop, j in closer:  # each close-up right after the crop of its subject: the carousel zooms in
        at = max((n + 1 for n, m in enumerate(mains) if m == j), default=len(crops))
        crops.insert(at, crop)
        mains.insert(at, j)
        gains.insert(at, 0.0)
        lists.insert(at, (crop,))
    if not auto and len(crops) < k:
        notes.append(_short_note(n_distinct, k, force=config.force_k, close=len(closer)))
        if config.force_k:  # its crops show no new subject: they are not offered alternatives
            extra = _fill(boxes, scored, chosen, k - len(closer), config.nms_iou, valid,
                          also=[c.box for c, _ in closer])
            crops += [scored[i] for i in extra]
            mains += [int(main[i]) for i in extra]
            lists += [(scored[i],) for i in extra]
            gains += [0.0] * (len(crops) - len(gains))
    elif closer:
        notes.append(f"{_plural(len(closer), 'close-up')} of a subject another crop shows whole")
    left = [j for j in np.flatnonzero(detail) if not whole[chosen, j].any()] if chosen else []
    if left:
        notes.append(f"{_plural(len(left), 'small subject')} beside larger ones not framed: "
                     "k auto leaves details out; a fixed k frames them")
    if focus and crops:
        notes.append("the focus given is held by the first crop")
    notes += _cut_notes(crops, [(scored[i], int(main[i]), cuts[i], portrait[i]) for i in chosen], subs)
    notes += _size_notes([c.box for c in crops], scale, bounds, d)
    return DirectSelection(tuple(crops), tuple(gains), tuple(subs), n_distinct, tuple(notes), tuple(lists),
                           tuple(mains))


def close_ups(ctx: ScoringContext, scorer: Scorer, config: CropConfig, *, bounds: Box, min_side: float,
              ratios: tuple[Ratio, ...], subjects: list[Subject], guards: list[Subject], chosen: list[Box],
              n: int, scale: float = 1.0, sats: dict | None = None) -> list[tuple[ScoredCrop, int]]:
    """Up to ``n`` close-ups of bodies that the ``chosen`` crops show only in a wide view.

    A carousel zooms in: after one crop per distinct subject, each person,
    animal or vehicle covering at least ``zoom_min_area`` of the photo (a
    group's members one by one, largest first) that no chosen crop of at
    most ``zoom_share`` of the photo holds whole gets the best-scored framing
    of its own that holds it whole, covers at most ``zoom_share`` of the
    photo and ``zoom_shrink`` of every chosen crop holding it, overlaps every
    chosen crop by at most ``zoom_iou``, and slices no body and no face (the
    same rules as every crop; only an animal or vehicle of the same group
    standing behind it may show by up to ``zoom_sliver`` of what is seen of
    it, :func:`multicrop.crop.subjects.find_subjects`).  Returns ``(crop, index of the subject it
    belongs to)`` pairs in the order chosen.  ``sats``: the masks' summed-area tables, if already made.
    """
    d = config.direct
    if n <= 0 or d.zoom_share <= 0:
        return []
    sats = {} if sats is None else sats
    frame = max(bounds.area, 1e-9)
    units = [(m.box.area, m, j) for j, s in enumerate(subjects) for m in s.bodies if m.is_body]
    largest = max((a for a, _, _ in units), default=0.0)
    units = [u for u in units if u[0] >= max(d.zoom_min_area * frame, d.zoom_relative * largest)]
    units.sort(key=lambda u: -u[0])
    bodies = [b for s in subjects + guards for b in s.bodies]
    taken = list(chosen)
    out: list[tuple[ScoredCrop, int]] = []
    for _, unit, j in units:
        if len(out) >= n:
            break
        holding = [c for c in taken if _box_shares(np.array([c.corners()]), unit.box)[0] >= d.body_whole - 1e-9]
        if any(c.area <= d.zoom_share * frame for c in holding):
            continue
        limit = min([d.zoom_share * frame] + [d.zoom_shrink * c.area for c in holding])
        pool = []
        for ratio in ratios:
            min_long = min_long_side(bounds, ratio, config, scale)
            pool += [(b, ratio) for b in subject_windows(unit.box, ratio, bounds=bounds, fills=d.fills,
                                                           placements=d.placements)
                     if b.area <= limit and min(b.w, b.h) >= min_side - 1e-6 and max(b.w, b.h) >= min_long - 1e-6]
        if not pool:
            continue
        boxes = [b for b, _ in pool]
        C = np.array([b.corners() for b in boxes], dtype=np.float64).reshape(-1, 4)
        whole = _shares(ctx, boxes, [unit])[:, 0] >= d.body_whole - 1e-9
        # An animal or vehicle partly behind another of its group (its weight: what shows of its box)
        # may show by up to zoom_sliver in a close-up of one in front: a herd is framed so.  A person
        # beside it with a mask (an outline, not a loose box) counts as whole from zoom_mask_whole of it.
        behind = [b for b in subjects[j].bodies if b is not unit and b.weight is not None and b.kind != "person"]
        masked = [b for b in bodies if b.kind == "person" and b.weight is not None and b is not unit]
        rules = [(behind, dataclasses.replace(d, out_share=d.zoom_sliver)),
                 (masked, dataclasses.replace(d, body_whole=d.zoom_mask_whole)),
                 ([b for b in bodies if not any(b is m for m in behind + masked)], d)]
        cuts, portrait = np.zeros(len(boxes)), np.zeros(len(boxes))
        for group, rule in rules:
            if group:
                more = _body_cuts(ctx, boxes, C, group, bounds, rule, sats)
                cuts, portrait = cuts + more[0], portrait + more[1]
        apart = iou_matrix(boxes, taken).max(axis=1) <= d.zoom_iou
        ok = whole & (cuts == 0) & (portrait == 0) & apart
        if not ok.any():
            continue
        idx = np.flatnonzero(ok)
        best: ScoredCrop | None = None
        best_q = -np.inf
        for r in ratios:
            mine = [i for i in idx if pool[i][1] == r]
            if not mine:
                continue
            crops = scorer.score(ctx, [boxes[i] for i in mine], ratio=r, subject=unit.box)
            extra = _people_terms(C[mine], np.zeros(len(mine), int), [unit], d)
            for c, e in zip(crops, extra):
                if c.parts.get("face_cut", 0.0) <= 0 and c.score + e > best_q:
                    best, best_q = c, c.score + e
        if best is not None:
            out.append((best, j))
            taken.append(best.box)
    return out


def _one_view(ctx: ScoringContext, scorer: Scorer, config: CropConfig, *, bounds: Box, min_side: float,
              ratios: tuple[Ratio, ...] | None, scale: float, guards: list[Subject] = ()) -> DirectSelection:
    """No subject: the one best-composed view of the whole scene (largest windows), said in the notes.

    A view slicing none of the ``guards`` (bodies too unsure to be subjects) wins over any that does.
    """
    d = config.direct
    bodies = [b for g in guards for b in g.bodies]
    best: ScoredCrop | None = None
    best_key = None
    for ratio in ratios or config.ratios:
        boxes = [b for b in sliding_windows(bounds, ratio, scales=(1.0, 0.85), config=config.candidates)
                 if min(b.w, b.h) >= min_side - 1e-6]
        if not boxes:
            continue
        C = np.array([b.corners() for b in boxes], dtype=np.float64).reshape(-1, 4)
        cuts = _body_cuts(ctx, boxes, C, bodies, bounds, d)[0] if bodies else np.zeros(len(boxes))
        for c, cut in zip(scorer.score(ctx, boxes, ratio=ratio, region=bounds), cuts):
            key = (-cut, c.score)
            if best_key is None or key > best_key:
                best, best_key = c, key
    if best is None:
        return DirectSelection((), (), (), 0, ("no crop of the allowed ratios fits",), ())
    note = "no subject found (no person, animal or thing detected, nothing salient): one view of the scene"
    notes = [note] + _size_notes([best.box], scale, bounds, d)
    return DirectSelection((best,), (0.0,), (), 1, tuple(notes), ((best,),), (-1,))


def _size_notes(boxes: list[Box], scale: float, bounds: Box, d: DirectConfig) -> list[str]:
    """Say how many crops are narrower than ``platform_side`` source pixels (shown upscaled)."""
    if not d.platform_side or not boxes:
        return []
    small = sum(max(b.w, b.h) * scale < d.platform_side - 0.5 for b in boxes)
    if not small:
        return []
    long = max(bounds.w, bounds.h) * scale
    why = ("the photo is only " f"{long:.0f} px on its long side") if long * d.platform_share < d.platform_side \
        else "a tighter framing of the subject"
    return [f"{small} of {len(boxes)} crops under {d.platform_side} px on the long side ({why}); "
            "platforms show them upscaled"]


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


def _cut_notes(crops: list[ScoredCrop], picked: list[tuple[ScoredCrop, int, float, float]],
               subjects: list[Subject]) -> list[str]:
    """Why a crop cuts a body: only where no crop of the allowed ratios frames its subject without one."""
    out = []
    for crop, j, cut, portrait in picked:
        if cut <= 0 and portrait <= 0:
            continue
        at = next(n for n, c in enumerate(crops) if c is crop) + 1
        what = subjects[j].label or subjects[j].kind
        n = int(cut)
        how = ("cuts a person at a portrait line" if n <= 0 else
               "cuts through 1 person, animal or vehicle" if n == 1 else
               f"cuts through {n} people, animals or vehicles")
        out.append(f"crop {at} {how}: no candidate of the allowed ratios frames the {what} without a cut")
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _short_note(n: int, k: int, *, force: bool, close: int = 0) -> str:
    """"this photo has 2 distinct subjects; wrote 2 crops, asked for 5" (or how close-ups and force_k filled up)."""
    head = f"this photo has {_plural(n, 'distinct subject')}"
    head += f" and {_plural(close, 'close-up')} worth a crop; " if close else "; "
    if force:
        return head + f"wrote {_plural(k, 'crop')} as asked (force_k), {k - n - close} showing no new subject"
    return head + f"wrote {_plural(n + close, 'crop')}, asked for {k}"


def _fill(boxes: list[Box], scored: list[ScoredCrop], chosen: list[int], k: int, nms_iou: float,
          valid: np.ndarray, also: list[Box] = ()) -> list[int]:
    """``force_k``: the best-scoring remaining valid crops, IoU at most ``nms_iou`` with every crop kept
    (and with the boxes ``also`` kept: the close-ups)."""
    kept = list(chosen)
    order = sorted(range(len(boxes)), key=lambda i: (not valid[i], -scored[i].score))
    for i in order:
        if len(kept) >= k:
            break
        if i not in kept and all(iou_matrix([boxes[i]], [b])[0, 0] <= nms_iou
                                 for b in [boxes[j] for j in kept] + list(also)):
            kept.append(i)
    if len(kept) < k:  # even suppression leaves too few: take the best remaining anyway
        kept += [i for i in order if i not in kept][: k - len(kept)]
    return kept[len(chosen):]
