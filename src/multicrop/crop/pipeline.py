"""``crop_photo``: one photo in, k distinct crops out (the one entry point).

photo -> io (reduced decode) -> analysis (saliency, detectors, subjects) ->
partition | direct -> candidates -> scoring -> select -> crops in source
pixels.  :func:`crop_photo` runs these as named steps: load and check the
size, :func:`analyse` (an :class:`~multicrop.crop.analysis.Analysis`, or the
one given as ``analysis=``), then the
strategy's selection (:func:`multicrop.crop.strategies.select_crops`:
``partition``, ``topk`` or ``direct``, each scoring candidates through
``Candidates``), then :func:`~multicrop.crop.select.to_source`.  Writing
files is :mod:`multicrop.crop.outputs`.

Examples
--------
>>> import numpy as np
>>> img = np.full((300, 900, 3), 40, np.uint8)
>>> img[100:200, 100:200] = 230; img[100:200, 700:800] = 230
>>> cfg = CropConfig(k=2, ratios="1:1", strategy="partition", saliency="spectral", faces=False)
>>> res = crop_photo(img, cfg)
>>> [c.box.w == c.box.h for c in res.crops], res.partition.orientation
([True, True], 'vertical')
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .. import package_version
from ..errors import ImageTooSmallError, InvalidParameterError
from ..geometry import Box
from ..io import DEFAULT_MAX_PIXELS, LoadedImage, load_image
from ..saliency import SALIENCY
from ..serialize import Serializable, computed, serialized
from .analysis import Analysis, analyse, detector_versions_of, with_focus
from .config import CropConfig
from .direct import DIRECT_VERSION
from .partition import PARTITION_VERSION, Partition
from .scoring import ScoredCrop, Scorer, ScoringContext, get_scorer
from .select import SELECT_VERSION, to_source
from .strategies import Candidates, Stopwatch, best_partition, select_crops
from .subjects import SubjectRecord

__all__ = ["Analysis", "CropConfig", "CropResult", "crop_photo", "analyse", "best_partition", "pipeline_versions"]


@dataclass(frozen=True)
class CropResult(Serializable):
    """The crops of one photo and how they were made.

    Its JSON record (:meth:`to_dict`, by :mod:`multicrop.serialize`'s rules)
    holds the boxes and the partition in source pixels, ``k`` and timings
    rounded to 0.1 ms, and leaves out the image, the saliency map and the
    shortlists the result carries for writing files and judging.

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
    subjects : tuple of dict
        The photo's subjects (kind, label, source, box in source pixels,
        confidence, importance, members), most important first.
    focus : Box or None
        The focus the user gave (source pixels).
    mains : tuple of int
        ``direct``: per crop, the index into ``subjects`` of its main subject (-1: a view of the scene, none).
    analysis_key : str
        :attr:`multicrop.crop.analysis.Analysis.key` of the analysis used.
    source : str or None
        The file, if the photo came from one.
    timings : dict of str to float
        Seconds spent per stage.
    k_requested : int or "auto"
        The ``k`` asked for (``len(crops)`` may be smaller with ``direct``).
    notes : tuple of str
        Plain statements about the result, e.g. "this photo has 2 distinct
        subjects; wrote 2 crops, asked for 5" (``direct``).
    shortlists : tuple of tuple of ScoredCrop
        Per crop, the alternatives a judge may choose among (source pixels,
        the crop itself first); only with ``crop_photo(..., shortlist=n)``.
    ranking : dict or None
        Set when a judge panel chose among the shortlists
        (:mod:`multicrop.ranking`): panel, calls, spend and scores; written
        into :meth:`to_dict` only then.
    """

    crops: tuple[ScoredCrop, ...]
    partition: Partition | None = field(metadata=serialized(skip=True))  # written in source pixels
    failure: str | None
    size: tuple[int, int]
    analysis_size: tuple[int, int]
    config: CropConfig
    versions: dict[str, str]
    faces: tuple[Box, ...] = ()
    subjects: tuple[dict, ...] = ()
    focus: Box | None = None
    mains: tuple[int, ...] = ()
    analysis_key: str = ""
    source: str | None = None
    k_requested: int | str | None = None
    notes: tuple[str, ...] = ()
    shortlists: tuple[tuple[ScoredCrop, ...], ...] = field(default=(), repr=False, compare=False,
                                                           metadata=serialized(skip=True))
    ranking: dict | None = field(default=None, metadata=serialized(omit_none=True))
    timings: dict[str, float] = field(default_factory=dict, compare=False, metadata=serialized(round=4))
    image: LoadedImage | None = field(default=None, repr=False, compare=False, metadata=serialized(skip=True))
    saliency: np.ndarray | None = field(default=None, repr=False, compare=False, metadata=serialized(skip=True))

    @property
    def scale(self) -> tuple[float, float]:
        """Source pixels per analysis pixel, ``(sx, sy)``."""
        return (self.size[0] / self.analysis_size[0], self.size[1] / self.analysis_size[1])

    @computed(key="partition")
    def partition_source(self) -> Partition | None:
        """The partition in source pixels."""
        return None if self.partition is None else self.partition.to_size(*self.size)

    @property
    def partition_regions_source(self) -> tuple[Box, ...]:
        """The partition's regions in source pixels (empty for ``topk``)."""
        p = self.partition_source
        return () if p is None else p.regions

    @computed()
    def k(self) -> int:
        """The number of crops (``k_requested`` is what was asked for)."""
        return len(self.crops)


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
        **({"direct": DIRECT_VERSION} if config.strategy == "direct" else {}),
        "saliency": f"{config.saliency}/{SALIENCY.get(config.saliency).version}",
        **detector_versions_of(config),
    }


def _focus_in_analysis(focus: Box, size: tuple[int, int], scale: tuple[float, float]) -> Box:
    """The focus (source pixels) in analysis pixels, checked to lie in the photo."""
    if not isinstance(focus, Box):
        raise InvalidParameterError(f"focus must be a Box (x, y, w, h in source pixels), got {focus!r}")
    W, H = size
    if focus.x < 0 or focus.y < 0 or focus.x + focus.w > W or focus.y + focus.h > H:
        raise InvalidParameterError(
            f"focus {focus.x:g},{focus.y:g},{focus.w:g},{focus.h:g} must lie inside the {W}x{H} photo")
    return focus.scale(1 / scale[0], 1 / scale[1])


def _check_fits(name: str, size: tuple[int, int], config: CropConfig) -> None:
    W, H = size
    m = config.min_crop_side
    if min(W, H) < m:
        raise ImageTooSmallError(f"{name}: {W}x{H} is smaller than the smallest crop side of {m} px")
    if config.min_k * m > max(W, H):
        raise ImageTooSmallError(
            f"{name}: a {W}x{H} image cannot hold k={config.k} crops of at least {m} px "
            f"(at most {max(W, H) // m})"
        )


def crop_photo(
    source: str | os.PathLike | np.ndarray | LoadedImage,
    config: CropConfig | None = None,
    *,
    max_pixels: int = DEFAULT_MAX_PIXELS,
    threads: int | None = None,
    shortlist: int = 1,
    analysis: Analysis | None = None,
    focus: Box | None = None,
    scorer: Scorer | None = None,
) -> CropResult:
    """Find ``config.k`` distinct crops of a photo (with ``direct``: as many as it has, up to k).

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
    shortlist : int
        Keep up to this many alternatives per crop in ``CropResult.shortlists``
        (``direct`` finds them; other strategies list each crop alone).  The
        crops themselves do not change.
    analysis : Analysis, optional
        The photo's analysis from :func:`analyse` on ``LoadedImage.analysis``
        with the same analysis settings (reused across k, ratios and
        strategies); default: analysed here.
    focus : Box, optional
        A point (``w = h = 0``) or region in source pixels that one crop
        must hold (``direct``); the record says it was given.
    scorer : Scorer, optional
        Rates the candidates instead of ``config.scorer`` (e.g. a
        :class:`~multicrop.crop.scoring.learned.LearnedScorer`); its name and
        version enter the record.

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
    if isinstance(shortlist, bool) or not isinstance(shortlist, int) or shortlist < 1:
        raise InvalidParameterError(f"shortlist must be a positive integer, got {shortlist!r}")
    cfg = config or CropConfig()
    clock = Stopwatch()
    scorer = get_scorer(cfg) if scorer is None else scorer
    loaded = source if isinstance(source, LoadedImage) else load_image(
        source, max_side=cfg.analysis_max_side, max_pixels=max_pixels
    )
    name = str(loaded.path) if loaded.path is not None else "image"
    _check_fits(name, loaded.size, cfg)
    clock.lap("load")

    image = loaded.analysis
    h, w = image.shape[:2]
    sx, sy = loaded.size[0] / w, loaded.size[1] / h
    if focus is not None and cfg.strategy != "direct":
        raise InvalidParameterError(f"focus needs strategy 'direct' (the one that chooses among subjects), "
                                    f"got strategy {cfg.strategy!r}")
    focus_a = None if focus is None else _focus_in_analysis(focus, loaded.size, (sx, sy))
    if analysis is None:
        analysis = analyse(image, cfg, threads=threads, focus=focus_a)
    else:
        if tuple(analysis.size) != (w, h):
            raise InvalidParameterError(
                f"analysis is of a {analysis.size[0]}x{analysis.size[1]} image, this photo's analysis copy is {w}x{h}")
        if focus_a != analysis.focus:
            analysis = with_focus(analysis, focus_a, cfg)
    sal, faces = analysis.saliency, analysis.faces
    clock.lap("saliency")

    candidates = Candidates(ScoringContext(image, sal, faces), scorer, cfg, Box(0, 0, w, h),
                             cfg.min_crop_side / max(sx, sy), subjects=analysis.subjects, scale=max(sx, sy))
    selection = select_crops(sal, candidates, name, clock, shortlist=shortlist)
    clock.lap("score")
    crops = tuple(to_source(c, scale=(sx, sy), size=loaded.size) for c in selection.crops)
    lists = selection.shortlists or tuple((c,) for c in selection.crops)
    shortlists = tuple(tuple(to_source(c, scale=(sx, sy), size=loaded.size) for c in alts) for alts in lists)
    return CropResult(
        crops=crops,
        partition=selection.partition,
        failure=selection.failure,
        size=loaded.size,
        analysis_size=(w, h),
        config=cfg,
        versions=_versions(cfg, scorer),
        faces=tuple(f.scale(sx, sy) for f in faces),
        subjects=tuple(SubjectRecord.of(s, sx, sy).to_dict() for s in analysis.subjects),
        focus=focus,
        mains=selection.mains,
        analysis_key=analysis.key,
        source=str(loaded.path) if loaded.path is not None else None,
        timings=clock.stop(),
        image=loaded,
        saliency=sal,
        k_requested=cfg.k,
        notes=selection.notes,
        shortlists=shortlists,
    )


