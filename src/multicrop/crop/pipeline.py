"""``crop_photo``: one photo in, k distinct crops out (the one entry point).

photo -> io (reduced decode) -> saliency (+ faces) -> partition -> candidates
-> scoring -> select -> crops in source pixels.  :func:`crop_photo` runs these
as named steps: load and check the size, :func:`analyse`, then
``_select_by_partition`` or ``_select_topk`` (each scoring candidates through
``_Candidates``), then :func:`~multicrop.crop.select.to_source`.  Writing
files is :mod:`multicrop.crop.outputs`.

Examples
--------
>>> import numpy as np
>>> img = np.full((300, 900, 3), 40, np.uint8)
>>> img[100:200, 100:200] = 230; img[100:200, 700:800] = 230
>>> res = crop_photo(img, CropConfig(k=2, ratios="1:1", saliency="spectral", faces=False))
>>> [c.box.w == c.box.h for c in res.crops], res.partition.orientation
([True, True], 'vertical')
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import numpy as np

from .. import package_version
from ..errors import ImageTooSmallError
from ..geometry import Box
from ..io import DEFAULT_MAX_PIXELS, LoadedImage, load_image
from ..saliency import SALIENCY, compute_saliency
from ..serialize import to_data
from .candidates import candidate_boxes, subject_windows
from .config import CropConfig
from .partition import PARTITION_VERSION, Partition, partition_saliency
from .scoring import ScoredCrop, Scorer, ScoringContext, get_scorer
from .select import SELECT_VERSION, select_distinct, select_topk, to_source

__all__ = ["CropConfig", "CropResult", "crop_photo", "analyse", "best_partition", "pipeline_versions"]


@dataclass(frozen=True)
class CropResult:
    """The crops of one photo and how they were made.

    Attributes
    ----------
    crops : tuple of ScoredCrop
        ``k`` crops, boxes in source pixels (whole pixels, exact ratio within
        one pixel), ordered like the partition's regions (``partition``) or
        by score (``topk``).
    partition : Partition or None
        The saliency partition in analysis pixels (None for ``topk``).
    failure : str or None
        Why the partition is unusable (the crops are still the best found).
    size : (int, int)
        Source ``(width, height)`` after EXIF orientation.
    analysis_size : (int, int)
        ``(width, height)`` of the analysed copy.
    config : CropConfig
    versions : dict of str to str
        Package, scorer and saliency versions.
    faces : tuple of Box
        Detected faces in source pixels.
    source : str or None
        The file, if the photo came from one.
    timings : dict of str to float
        Seconds spent per stage.
    """

    crops: tuple[ScoredCrop, ...]
    partition: Partition | None
    failure: str | None
    size: tuple[int, int]
    analysis_size: tuple[int, int]
    config: CropConfig
    versions: dict[str, str]
    faces: tuple[Box, ...] = ()
    source: str | None = None
    timings: dict[str, float] = field(default_factory=dict, compare=False)
    image: LoadedImage | None = field(default=None, repr=False, compare=False)
    saliency: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def scale(self) -> tuple[float, float]:
        """Source pixels per analysis pixel, ``(sx, sy)``."""
        return (self.size[0] / self.analysis_size[0], self.size[1] / self.analysis_size[1])

    @property
    def partition_source(self) -> Partition | None:
        """The partition in source pixels."""
        return None if self.partition is None else self.partition.to_size(*self.size)

    @property
    def partition_regions_source(self) -> tuple[Box, ...]:
        """The partition's regions in source pixels (empty for ``topk``)."""
        p = self.partition_source
        return () if p is None else p.regions

    def to_dict(self) -> dict:
        """JSON-ready record (boxes in source pixels).

        Written out by hand rather than field by field: the record holds the
        partition in source pixels, ``k`` and rounded timings, and leaves out
        the image and saliency map the result carries for writing files.
        """
        return {
            "source": self.source,
            "size": list(self.size),
            "analysis_size": list(self.analysis_size),
            "k": len(self.crops),
            "crops": to_data(self.crops),
            "partition": to_data(self.partition_source),
            "failure": self.failure,
            "faces": to_data(self.faces),
            "config": self.config.to_dict(),
            "versions": dict(self.versions),
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
        }


def pipeline_versions(config: CropConfig | None = None) -> dict[str, str]:
    """Versions of every part that shapes a result of ``config`` (package, scorer, ...).

    Written into every output record; evaluation caches key on it.
    """
    cfg = config or CropConfig()
    return _versions(cfg, get_scorer(cfg))


def _versions(config: CropConfig, scorer) -> dict[str, str]:
    return {
        "multicrop": package_version(),
        "scorer": f"{scorer.name}/{scorer.version}",
        "partition": PARTITION_VERSION,
        "select": SELECT_VERSION,
        "saliency": f"{config.saliency}/{SALIENCY.get(config.saliency).version}",
        "faces": "yunet" if config.faces else "off",
    }


def analyse(image: np.ndarray, config: CropConfig, *, threads: int | None = None) -> tuple[np.ndarray, tuple[Box, ...]]:
    """Saliency of ``image`` as the pipeline sees it, and the faces found in it.

    The one place saliency and faces are combined: :func:`crop_photo` and the
    evaluation's peer methods (which run on our partitions) both call it.

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
        The analysis copy (``LoadedImage.analysis``).
    config : CropConfig
        ``saliency`` names the backend; with ``faces`` the faces found by
        YuNet are raised to full saliency so crops keep them whole.
    threads : int, optional
        Threads for the saliency model (default: this process's share of the
        CPUs); never changes the result.

    Returns
    -------
    saliency : ndarray of float32, shape (H, W)
    faces : tuple of Box
        Face boxes in ``image`` pixels (empty when ``config.faces`` is off).

    Examples
    --------
    >>> img = np.full((64, 96, 3), 40, np.uint8); img[20:40, 60:80] = 230
    >>> sal, faces = analyse(img, CropConfig(saliency="spectral", faces=False))
    >>> sal.shape, faces
    ((64, 96), ())
    """
    sal = compute_saliency(image, method=config.saliency, threads=threads)
    if not config.faces:
        return sal, ()
    from ..saliency.faces import add_faces, detect_faces

    found = detect_faces(image)
    return add_faces(sal, found), tuple(f.box for f in found)


def _check_fits(name: str, size: tuple[int, int], config: CropConfig) -> None:
    W, H = size
    m = config.min_crop_side
    if min(W, H) < m:
        raise ImageTooSmallError(f"{name}: {W}x{H} is smaller than the smallest crop side of {m} px")
    if config.k * m > max(W, H):
        raise ImageTooSmallError(
            f"{name}: a {W}x{H} image cannot hold k={config.k} crops of at least {m} px "
            f"(at most {max(W, H) // m})"
        )


class _Stopwatch:
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
class _Candidates:
    """Scores the candidate crops of a region: the pipeline's candidates -> scoring step.

    ``min_side`` is the smallest crop side in analysis pixels; ``bounds`` the
    whole analysis image (subject framings may reach past their region).
    """

    context: ScoringContext
    scorer: Scorer
    config: CropConfig
    bounds: Box
    min_side: float

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


def _select_by_partition(saliency: np.ndarray, candidates: _Candidates, name: str,
                         clock: _Stopwatch) -> _Selection:
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
    return _Selection(tuple(chosen), partition, failure)


def _select_topk(candidates: _Candidates) -> _Selection:
    """``topk``: the best crops of the whole image, non-maximum suppressed."""
    cfg = candidates.config
    chosen = select_topk(candidates.scored_in(candidates.bounds, windows=True), k=cfg.k, nms_iou=cfg.nms_iou)
    failure = None
    if len(chosen) < cfg.k:
        failure = f"only {len(chosen)} of k={cfg.k} crops remain after non-maximum suppression"
    return _Selection(tuple(chosen), None, failure)


def crop_photo(
    source: str | os.PathLike | np.ndarray | LoadedImage,
    config: CropConfig | None = None,
    *,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    threads: int | None = None,
) -> CropResult:
    """Find ``config.k`` distinct crops of a photo.

    Parameters
    ----------
    source : path, ndarray of shape (H, W[, C]), PIL image or LoadedImage
        The photo.
    config : CropConfig, optional
        Defaults to ``CropConfig()``.
    max_pixels : int
        Refuse photos with more pixels than this (decompression-bomb guard;
        :attr:`multicrop.crop.config.OutputConfig.max_pixels` on the command
        line).  Ignored for a ``LoadedImage``.
    threads : int, optional
        Threads for the saliency model (default: this process's share of the
        CPUs); never changes the result.

    Returns
    -------
    CropResult

    Raises
    ------
    ImageLoadError
        Missing, unreadable, truncated or corrupt file (or too large).
    ImageTooSmallError
        The image cannot hold ``k`` crops of ``config.min_crop_side`` pixels.
    UnknownNameError
        Unknown saliency backend or scorer.
    """
    cfg = config or CropConfig()
    clock = _Stopwatch()
    scorer = get_scorer(cfg)
    loaded = source if isinstance(source, LoadedImage) else load_image(
        source, max_side=cfg.analysis_max_side, max_pixels=max_pixels
    )
    name = str(loaded.path) if loaded.path is not None else "image"
    _check_fits(name, loaded.size, cfg)
    clock.lap("load")

    image = loaded.analysis
    h, w = image.shape[:2]
    sal, faces = analyse(image, cfg, threads=threads)
    clock.lap("saliency")

    sx, sy = loaded.size[0] / w, loaded.size[1] / h
    candidates = _Candidates(ScoringContext(image, sal, faces), scorer, cfg, Box(0, 0, w, h),
                             cfg.min_crop_side / max(sx, sy))
    if cfg.strategy == "partition":
        selection = _select_by_partition(sal, candidates, name, clock)
    else:
        selection = _select_topk(candidates)
    clock.lap("score")
    crops = tuple(to_source(c, scale=(sx, sy), size=loaded.size) for c in selection.crops)
    return CropResult(
        crops=crops,
        partition=selection.partition,
        failure=selection.failure,
        size=loaded.size,
        analysis_size=(w, h),
        config=cfg,
        versions=_versions(cfg, scorer),
        faces=tuple(f.scale(sx, sy) for f in faces),
        source=str(loaded.path) if loaded.path is not None else None,
        timings=clock.stop(),
        image=loaded,
        saliency=sal,
    )


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
