"""The pipeline's candidates -> scoring -> select steps, one function per strategy.

:func:`select_crops` runs the strategy of a :class:`CropConfig` on one
photo's scored candidates (``Candidates``): ``partition`` (best crop per
saliency region, Carousel §IV-A), ``topk`` (NMS over the whole image) or
``direct`` (:mod:`multicrop.crop.direct`).  With ``one_ratio`` it runs once
per allowed ratio and keeps the set with the best total (a carousel whose
slides share one shape).  :func:`multicrop.crop.pipeline.crop_photo` is the
entry point; this module is its middle.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from ..errors import ImageTooSmallError
from ..geometry import Box
from .candidates import candidate_boxes, subject_windows
from .config import CropConfig
from .direct import select_direct
from .partition import Partition, partition_saliency
from .scoring import ScoredCrop, Scorer, ScoringContext
from .select import select_distinct, select_topk

__all__ = ["Candidates", "Stopwatch", "select_crops", "best_partition"]

class Stopwatch:
    """Seconds per stage: each :meth:`lap` records the time since the previous one."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.timings: dict[str, float] = {}

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = now - self.last
        self.last = now

    def stop(self) -> dict[str, float]:
        self.timings["total"] = time.perf_counter() - self.start
        return self.timings



@dataclass(frozen=True)
class Candidates:
    """Scores the candidate crops of a region: the pipeline's candidates -> scoring step.

    ``min_side`` is the smallest crop side in analysis pixels; ``bounds`` the
    whole analysis image (subject framings may reach past their region).
    """

    context: ScoringContext
    scorer: Scorer
    config: CropConfig
    bounds: Box
    min_side: float
    subjects: tuple | None = None  # direct: the Analysis's subjects (None: salient blobs of the map)
    scale: float = 1.0  # source pixels per analysis pixel

    def scored_in(self, region: Box, *, windows: bool, subject: Box | None = None) -> list[ScoredCrop]:
        cfg = self.config
        out: list[ScoredCrop] = []
        for ratio in cfg.ratios:
            boxes = candidate_boxes(region, ratio, config=cfg.candidates, windows=windows)
            if subject is not None:
                boxes = boxes + subject_windows(subject, ratio, bounds=self.bounds, config=cfg.candidates)
            boxes = [b for b in boxes if min(b.w, b.h) >= self.min_side]
            if subject is not None:
                out.extend(self.scorer.score(self.context, boxes, ratio=ratio, region=region, subject=subject))
            else:
                out.extend(self.scorer.score(self.context, boxes, ratio=ratio, region=region))
        return out


@dataclass(frozen=True)
class _Selection:
    """The chosen crops (analysis pixels), the partition they came from and what went wrong."""

    crops: tuple[ScoredCrop, ...]
    partition: Partition | None
    failure: str | None
    notes: tuple[str, ...] = ()
    total: float = 0.0
    shortlists: tuple[tuple[ScoredCrop, ...], ...] = ()
    mains: tuple[int, ...] = ()
    #: Crops that cut a person, animal or vehicle (``direct`` counts them; the others do not know).
    cut: int = 0
    #: Slides ``direct`` adds that do not choose the ratio (:attr:`DirectSelection.topped`).
    topped: int = 0
    #: ``direct`` framed the largest part of a subject (or its parts along it), no candidate meeting the hard rules.
    unframed: bool = False


def _select_by_partition(saliency: np.ndarray, candidates: Candidates, name: str,
                         clock: Stopwatch) -> _Selection:
    """``partition``: one crop per region of the best partition, distinct across regions."""
    cfg = candidates.config
    partition = best_partition(saliency, cfg)
    failure = partition.failure
    clock.lap("partition")
    framing = bool(getattr(candidates.scorer, "uses_subject", False))
    subjects = _region_subjects(partition) if framing else [None] * partition.k
    per_region = [candidates.scored_in(region, windows=False, subject=subj)
                  for region, subj in zip(partition.regions, subjects)]
    for i, region in enumerate(partition.regions):
        if per_region[i]:
            continue
        # No anchor of the minimum size fits: the region is too narrow.  Report it and
        # look in the region widened (about its centre) to the smallest crop size.
        bounds = candidates.bounds
        grown = _grow(region, candidates.min_side, bounds.w, bounds.h)
        per_region[i] = candidates.scored_in(grown, windows=True, subject=subjects[i])
        failure = failure or (
            f"region {i + 1} ({region.w:.0f}x{region.h:.0f} analysis px) is too small for a crop of "
            f"{cfg.min_crop_side} px; its crop reaches into the neighbouring regions"
        )
        if not per_region[i]:
            raise ImageTooSmallError(
                f"{name}: no crop of at least {cfg.min_crop_side} px fits partition {i + 1}; use a smaller k"
            )
    chosen, overlaps = select_distinct(per_region, max_iou=cfg.distinct_iou)
    if overlaps:
        failure = "; ".join(([failure] if failure else []) + overlaps)
    return _Selection(tuple(chosen), partition, failure, total=sum(c.score for c in chosen))


def _select_topk(candidates: Candidates) -> _Selection:
    """``topk``: the best crops of the whole image, non-maximum suppressed."""
    cfg = candidates.config
    chosen = select_topk(candidates.scored_in(candidates.bounds, windows=True), k=cfg.k, nms_iou=cfg.nms_iou)
    failure = None
    if len(chosen) < cfg.k:
        failure = f"only {len(chosen)} of k={cfg.k} crops remain after non-maximum suppression"
    return _Selection(tuple(chosen), None, failure, total=sum(c.score for c in chosen))


def _select_direct(candidates: Candidates, shortlist: int = 1) -> _Selection:
    """``direct``: distinct crops from one pool over the whole image (:mod:`multicrop.crop.direct`)."""
    sel = select_direct(candidates.context, candidates.scorer, candidates.config, bounds=candidates.bounds,
                        min_side=candidates.min_side, shortlist=shortlist,
                        subjects=candidates.subjects,
                        scale=candidates.scale)
    return _Selection(sel.crops, None, None, sel.notes, total=sum(sel.gains), shortlists=sel.shortlists,
                      mains=sel.mains, cut=sel.cut, topped=sel.topped, unframed=sel.unframed)


def select_crops(sal: np.ndarray, candidates: Candidates, name: str, clock: Stopwatch,
                 *, shortlist: int = 1) -> _Selection:
    """The strategy's selection; with ``one_ratio``, run per ratio and keep the best: no failure, then a
    ``direct`` set that met the hard rules (not only the largest part of a subject), then the most crops
    that slice no body (a crop slicing two people is no price for one more slide; k auto's top-up to
    ``objective.min_slides``, a fixed k's wide view and ``force_k``'s fills do not count), then the fewest
    that do, then the best total.

    ``shortlist`` > 1 keeps that many alternatives per crop (``direct`` only;
    the other strategies shortlist each crop alone).
    """
    cfg = candidates.config
    run = {"partition": lambda c: _select_by_partition(sal, c, name, clock),
           "topk": _select_topk, "direct": lambda c: _select_direct(c, shortlist)}[cfg.strategy]
    if not cfg.one_ratio or len(cfg.ratios) == 1:
        return run(candidates)
    def rank(s: _Selection) -> tuple:
        return s.failure is None, not s.unframed, len(s.crops) - s.topped - s.cut, -s.cut, s.total

    best: _Selection | None = None  # ratios is never empty (CropConfig validates it)
    refused: ImageTooSmallError | None = None
    for ratio in cfg.ratios:
        one = replace(candidates, config=cfg.replace(ratios=(ratio,), one_ratio=True))
        try:
            sel = run(one)
        except ImageTooSmallError as exc:  # no crop of this ratio fits: the others may
            refused = exc
            continue
        if best is None or rank(sel) > rank(best):
            best = sel
    if best is None:
        raise refused  # type: ignore[misc]
    ratio = best.crops[0].ratio if best is not None and best.crops else cfg.ratios[0]
    note = f"one ratio for every crop: {ratio} (best of {', '.join(str(r) for r in cfg.ratios)})"
    return replace(best, notes=best.notes + (note,))  # type: ignore[union-attr]



def _grow(region: Box, side: float, width: int, height: int) -> Box:
    """``region`` widened about its centre to at least ``side`` on both axes, inside the image."""
    w, h = min(max(region.w, side), width), min(max(region.h, side), height)
    cx, cy = region.center
    x = min(max(cx - w / 2, 0), width - w)
    y = min(max(cy - h / 2, 0), height - h)
    return Box(x, y, w, h)


def _region_subjects(partition: Partition) -> list[Box]:
    """The subject each region owns: subjects ordered along the cut axis, like the regions."""
    axis = 0 if partition.orientation == "vertical" else 1
    return sorted(partition.subjects, key=lambda b: b.center[axis])


def best_partition(saliency: np.ndarray, cfg: CropConfig) -> Partition:
    """Partition with each of ``cfg.ratios``; prefer no failure, then the tightest boxes.

    The partition :func:`crop_photo` uses; evaluation runs peer methods on it.
    """
    best: tuple[tuple[int, float], Partition] | None = None
    for ratio in cfg.ratios:
        p = partition_saliency(saliency, k=cfg.k, ratio=ratio, config=cfg.partition)
        key = (p.failure is not None, sum(b.area for b in p.boxes))
        if best is None or key < best[0]:
            best = (key, p)
    return best[1]  # type: ignore[index]  # ratios is never empty (CropConfig validates it)
