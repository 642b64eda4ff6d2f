"""``select_direct``: the main loop of direct selection over one measured pool."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...geometry import Box
from ...ratios import Ratio
from ..config import CropConfig
from ..scoring.base import Scorer, ScoringContext
from ..people import group_portraits
from ..subjects import Subject, find_subjects
from .zoom import close_ups, establishing, upper_bodies, zoom_levels
from .cover import before_held, every_body, shown_whole
from ..selector import greedy
from .measure import MaskTables, measure
from .notes import counted, fill_cut, named, one_slide_notes, plural, short_note, size_notes, unframed, why_short, zoom_notes
from .pool import direct_pool, pan_windows
from .shortlist import apart, shortlist_of
from .quality import details, main_subjects, quality, scored_framings, unframed_parts, valid
from .types import DirectSelection
from .views import closer_views, no_candidate, scene_views

__all__ = ["select_direct"]


def select_direct(ctx: ScoringContext, scorer: Scorer, config: CropConfig, *, bounds: Box,
                  min_side: float, ratios: tuple[Ratio, ...] | None = None, shortlist: int = 1,
                  subjects: tuple[Subject, ...] | None = None, scale: float = 1.0) -> DirectSelection:
    """Choose distinct crops of the whole image greedily (docs/cropping.md, "How direct chooses").

    Parameters
    ----------
    ctx : ScoringContext
        Image, saliency (faces raised) and faces, in analysis pixels.
    scorer : Scorer
        Rates each candidate as a framing of its main subject.
    config : CropConfig
        ``k`` (an integer or ``"auto"``), ``max_k``, ``force_k``, ``nms_iou``
        and the rules in ``config.selection``.
    bounds : Box
        The whole analysis image.
    min_side : float
        Smallest crop side in analysis pixels.
    ratios : tuple of Ratio, optional
        Ratios to use (default ``config.ratios``).
    shortlist : int
        Alternatives kept per chosen crop (the crop itself first) for a judge.
    subjects : tuple of Subject
        The photo's subjects (:class:`multicrop.crop.analysis.Analysis`);
        default: the salient blobs of ``ctx.saliency``.
    scale : float
        Source pixels per analysis pixel (the platform rule).

    Raises
    ------
    ImageTooSmallError
        When no candidate of the allowed ratios fits the photo.
    """
    sel = config.selection
    ratios = ratios or config.ratios
    auto = config.k == "auto"
    k = config.max_k if auto else int(config.k)
    if subjects is None:
        subjects = find_subjects(ctx.saliency, config=config.subjects)
    subs = [s for s in subjects if s.importance > 0]
    guards = [s for s in subjects if s.importance <= 0]
    if not subs:
        return scene_views(ctx, scorer, config, bounds=bounds, min_side=min_side, ratios=ratios, scale=scale,
                           guards=guards, n=1 if auto else k, closer=min(k, sel.objective.min_slides) - 1 if auto else 0)
    pool = direct_pool(bounds, subs, ratios, sel.pool, config.candidates, min_side, scale=scale,
                       extra=[t for s in subs for t in group_portraits(s)])
    if not pool:
        raise no_candidate(bounds, ratios, min_side)
    framings = len(pool)
    pool += pan_windows(bounds, subs, ratios, k, config.nms_iou, pool)  # for parts along a subject wider than any crop
    tables = MaskTables()
    bodies = [b for s in subs + guards for b in s.bodies]
    m = measure(ctx, pool, subs, bodies, bounds, tables, portrait_width=sel.no_sliced_body.portrait_width)
    main, whole = main_subjects(m, sel)
    scored = scored_framings(ctx, scorer, m, main, apart=framings)
    ok, cuts, portrait = valid(m, main, sel, apart=framings)
    q = quality(m, main, scored, sel, ratios)
    shares, imp = m.shares, np.array([s.importance for s in subs])
    onehot = np.zeros_like(shares)
    onehot[np.arange(len(pool)), main] = 1.0
    obj = sel.objective
    weight = onehot + obj.group_credit * (1 - onehot)
    focus = [j for j, s in enumerate(subs) if s.kind == "focus"]
    detail = details(subs, bounds, sel, auto)
    state = {"covered": np.zeros(len(subs)), "used": set(), "new": np.zeros(len(pool))}

    def gain(chosen: list[int], iou_max: np.ndarray) -> np.ndarray:
        covered = state["covered"]
        new = (weight * imp[None, :] * np.maximum(shares - covered[None, :], 0)).sum(1)
        shared = (imp[None, :] * np.minimum(shares, covered[None, :])).sum(1)
        g = q * new - obj.shared_weight * shared - obj.overlap_weight * iou_max
        allowed = ok & ~np.isin(main, list(state["used"])) & ~detail[main]
        if focus and not chosen:  # the user's subject is held by the first crop
            allowed &= whole[:, focus].all(axis=1)
            if not allowed.any():
                held = shares[:, focus].min(axis=1)
                allowed = ok & (held >= held.max() - 1e-6)
        state["new"] = new
        return np.where(allowed, g, -np.inf)

    def stop(i: int, g: float, chosen: list[int]) -> bool:
        state["gain"] = g
        if not chosen:
            return False
        if auto:
            return g < obj.min_gain
        return not (state["new"][i] >= obj.distinct_share and g > 0)

    chosen: list[int] = []
    gains: list[float] = []
    while len(chosen) < k:
        step = greedy(m.boxes, gain, k=1, start=chosen, stop=stop)
        if not step:
            break
        i = step[0]
        chosen.append(i)
        gains.append(state["gain"])
        state["used"].add(int(main[i]))
        state["covered"] = np.maximum(state["covered"], shares[i] * weight[i])
    fell_back = not chosen
    if fell_back:  # no candidate meets the hard rules: the largest part of the main subject, or its parts along it
        top = int(np.argmax(imp))
        chosen, gains, across = unframed_parts(m, main, top, whole, cuts, q, sel, k, config.nms_iou, cover=auto,
                                               among=np.arange(len(m)) < framings)
        main = main.copy()
        main[chosen] = top  # each part is of that subject, whatever else it holds whole
    out = _finish(ctx, scorer, config, m, scored, q, ok, cuts, portrait, main, whole, detail, chosen, gains,
                  shortlist, k, auto, focus, tables, subs, guards, scale, ratios, min_side, fell_back)
    if not fell_back:
        return out
    at = [next(n for n, c in enumerate(out.crops) if c is scored[i]) + 1 for i in chosen]  # slides may go before
    note = unframed(subs[top], ratios, bool(whole[:framings, top].any()), at, across=across)
    return replace(out, notes=(note,) + out.notes, unframed=True)


def _finish(ctx, scorer, config, m, scored, q, ok, cuts, portrait, main, whole, detail, chosen, gains, shortlist, k, auto,
            focus, tables, subs, guards, scale, ratios, min_side, fell_back: bool = False) -> DirectSelection:
    """Close-ups, ``force_k`` fills, shortlists and notes around the chosen crops (``fell_back``: those chosen
    are the largest part of a subject or its parts along it, whose note the caller puts first)."""
    sel = config.selection
    notes: list[str] = []
    mains = [int(main[i]) for i in chosen]
    parts = len(chosen) - len(set(mains))  # more parts of a subject wider than every crop (parts_along)
    n_distinct = len(chosen) - parts
    crops = [scored[i] for i in chosen]
    gains = list(gains)
    lists = [tuple(scored[j] for j in shortlist_of(i, chosen, m, main, ok, q, shortlist, sel)) for i in chosen]
    want = min(k, sel.objective.min_slides) if auto else k  # k auto still makes a carousel where it can
    closer = close_ups(ctx, scorer, sel, config.candidates, bounds=m.bounds, min_side=min_side, ratios=ratios,
                       subjects=subs, guards=guards, chosen=[m.boxes[i] for i in chosen], n=k - len(chosen),
                       tables=tables, scale=scale, portraits=not auto and sel.close_ups.portraits) if chosen else []

    def put(at: int, crop, j: int) -> None:  # one slide more at ``at``, with no gain and no alternatives
        crops.insert(at, crop)
        mains.insert(at, j)
        gains.insert(at, 0.0)
        lists.insert(at, (crop,))

    def after(j: int) -> int:  # right after the last crop of subject j
        return max((n + 1 for n, mm in enumerate(mains) if mm == j), default=len(crops))

    for crop, j, _ in closer:  # each close-up right after the crop of its subject: the carousel zooms in
        put(after(j), crop, j)
    uncut = ok & (cuts == 0) & (portrait == 0)  # the top-ups' candidates: no hard rule broken, no body cut at all
    ids = {id(scored[i]): i for i in chosen}  # then a slide for each body no slide holds whole (every_body)
    covers = every_body(m, uncut, whole, q, subs, detail, [c.box for c in crops],
                        [ids.get(id(c)) for c in crops], k, sel, keep_first=bool(focus))
    shown = {int(main[i]) for i in chosen}  # the objective's own subjects (a close-up's may be new)
    for at, i in covers:
        put(at, scored[i], int(main[i]))
    covers_i = [i for _, i in covers]
    new_subjects = len({int(main[i]) for i in covers_i} - shown)  # a distinct subject; the others are wider views
    n_distinct += new_subjects
    wider = len(covers_i) - new_subjects
    more = []  # k auto's top-up: portraits (its own close-ups are made above), then zooms
    if (auto and chosen and len(crops) < want and sel.close_ups.portraits
            and any(upper_bodies(b) for s in subs for b in s.bodies)):
        more = close_ups(ctx, scorer, sel, config.candidates, bounds=m.bounds, min_side=min_side, ratios=ratios,
                         subjects=subs, guards=guards, n=want - len(crops), tables=tables,
                         chosen=[c.box for c in crops], scale=scale, portraits=True, whole=False)
    for crop, j, _ in more:  # a portrait right after the crop of its person
        put(after(j), crop, j)
    closer += more
    zooms: list[int] = []
    uncut = uncut & ~((m.shares > sel.close_ups.sliver) & (m.shares < sel.no_half_salient.whole)).any(axis=1)  # none in part
    if chosen and len(crops) < want:  # zooms: no body cut, no subject held in part, a detected main subject
        clean = uncut & np.array([s.source == "detector" for s in subs])[main]
        zooms = zoom_levels(m, clean, q, main, [c.box for c in crops], mains, chosen + covers_i, want - len(crops),
                            sel.close_ups)
    for i in zooms:  # the wide view first: a zoom out goes before the first crop it holds (after a focus's), a zoom in
        at = before_held(m.C[i], [c.box for c in crops], sel.close_ups.inside, keep_first=bool(focus))
        put(after(int(main[i])) if at is None else at, scored[i], int(main[i]))
    wide = None  # a fixed k still short: the wide view of subjects shown one by one, first (after a focus's slide)
    if not auto and chosen and len(crops) < k:
        wide = establishing(m, uncut, q, whole, [c.box for c in crops],
                            [j for j in mains if j not in focus], chosen + covers_i + zooms, sel.close_ups)
    if wide is not None:
        put(1 if focus else 0, scored[wide], int(main[wide]))
    views = []  # k auto's last top-up: a closer view inside the one slide, as a photo with no subject gets (a zoom)
    if auto and chosen and len(crops) < want and sel.close_ups.enabled and sel.close_ups.zooms:
        views = closer_views(ctx, scorer, config, first=crops[0].box, shown=[c.box for c in crops], bounds=m.bounds,
                             min_side=min_side, ratios=ratios, n=want - len(crops), subjects=subs,
                             bodies=[b for s in subs + guards for b in s.bodies], hold=mains[0])
    for n, crop in enumerate(views):  # right after the slide it zooms into, best first; it has no main subject
        put(1 + n, crop, -1)
    fills: list[int] = []
    if not auto and len(crops) < k:
        why = (why_short(subs, mains) if chosen and not fell_back else  # force_k's note gives no why
               "no other part along it differs enough from these" if parts else "")
        notes.append(short_note(n_distinct, k, force=config.force_k, close=len(closer), zooms=len(zooms),
                                why=why, portraits=sum(p for *_, p in closer), wider=wider + (wide is not None),
                                parts=parts))
        if config.force_k:  # its crops show no new subject: they are not offered alternatives
            rank = np.empty(len(m))
            order = sorted(range(len(m)), key=lambda i: (not ok[i], -scored[i].score))
            rank[order] = -np.arange(len(m), dtype=np.float64)
            also = [c.box for c, *_ in closer] + [m.boxes[i] for i in zooms]
            need, slides = k - len(crops), chosen + covers_i + ([] if wide is None else [wide])
            fills = greedy(m.boxes, lambda c, iou: rank, k=need, start=slides, also=also, iou_limit=config.nms_iou)
            fills += greedy(m.boxes, lambda c, iou: rank, k=need - len(fills), start=slides + fills)
            crops += [scored[i] for i in fills]
            mains += [int(main[i]) for i in fills]
            lists += [(scored[i],) for i in fills]
            gains += [0.0] * len(fills)
    else:
        notes += zoom_notes(sum(p for *_, p in closer), len(closer), len(zooms), len(views),
                            wide=None if wide is None else 2 if focus else 1)
    if auto and sel.close_ups.enabled and sel.close_ups.share > 0:
        notes += one_slide_notes([c.box for c in crops], mains, subs, m.bounds.area, sel.close_ups)
    left = [j for j in np.flatnonzero(detail)
            if not shown_whole(j, chosen + covers_i + zooms + fills, closer + [(v, -1, False) for v in views], whole, subs,
                          sel)] if chosen else []
    if left:
        notes.append(f"{plural(len(left), 'small subject')} beside larger ones not framed: "
                     "k auto leaves details out; a fixed k frames them")
    if focus and crops:
        notes.append("the focus given is held by the first crop")
    for i in chosen + covers_i:
        at = next(n for n, c in enumerate(crops) if c is scored[i]) + 1
        s = subs[int(main[i])]
        who = counted(sel.no_sliced_body.cut_labels(m, i)) if cuts[i] > 0 else ""
        note = sel.no_sliced_body.note(at, cuts[i], portrait[i], named(s), who)
        if note:
            notes.append(note)
    notes += size_notes([c.box for c in crops], scale, m.bounds, sel.pool)
    for i in fills:  # a fill asked for by force_k may slice: it says so
        if cuts[i] > 0:
            at = next(n for n, c in enumerate(crops) if c is scored[i]) + 1
            notes.append(fill_cut(at, int(cuts[i]), counted(sel.no_sliced_body.cut_labels(m, i))))
    cut = sum(bool(cuts[i] > 0) for i in chosen + covers_i + fills)  # a cut at a portrait line is no slice
    lists = apart(lists, [c.box for c in crops], sel.close_ups.iou)
    return DirectSelection(tuple(crops), tuple(gains), tuple(subs), n_distinct, tuple(notes), tuple(lists),
                           tuple(mains), cut, topped=(len(more) + len(zooms) + len(views) if auto else 0)
                           + (wide is not None) + len(fills))
