"""Crop every photo of an outlined folder with each method and measure the crops.

A method is a :class:`SubjectsMethod`: one of our strategies at one ``k``
(run through :func:`multicrop.crop_photo`, the library's one entry point,
so whatever the crop wing does by default is what is measured), or a
single-crop peer (``smartcrop``, ``vips``) asked once per photo for the
largest crop of the best-fitting ratio — one crop per photo, a floor that
never slices anything the whole frame holds and features nothing.

:func:`run_subjects` returns a :class:`SubjectsRun`: every photo's
:class:`PhotoResult` per method; :meth:`SubjectsRun.summary` adds them up
over the photos with at least two large objects (or all photos).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ...datasets.outlines import OutlinedPhoto, OutlineSet
from ...errors import InvalidParameterError, MulticropError
from ...geometry import Box
from ...ratios import DEFAULT_RATIOS, RATIO_PRESETS, Ratio, parse_ratio_spec, parse_ratios
from ...serialize import Serializable, computed, serialized
from .metrics import PhotoMeasures, SubjectRules, SubjectsSummary, measure_photo, summarise

__all__ = ["PEERS", "SubjectsMethod", "PhotoResult", "SubjectsRun", "methods_for", "run_subjects", "remeasure"]

#: Single-crop peers (names in :data:`multicrop.evaluation.carousel.methods.METHODS`).
PEERS: tuple[str, ...] = ("smartcrop", "vips")


@dataclass(frozen=True)
class SubjectsMethod(Serializable):
    """One way of cropping a photo: our strategy at one ``k``, or a peer.

    Attributes
    ----------
    strategy : str or None
        ``CropConfig.strategy`` (None for a peer).
    k : int or "auto" or None
    peer : str or None
        ``smartcrop`` or ``vips``.
    ratios : tuple of Ratio
        Default: the ``carousel`` preset (2:3, 3:2).
    one_ratio : bool or None
        Passed to :class:`~multicrop.crop.config.CropConfig` (None: its default for ``ratios``).
    """

    strategy: str | None = None
    k: int | str | None = None
    peer: str | None = None
    ratios: tuple[Ratio, ...] = RATIO_PRESETS["carousel"]
    one_ratio: bool | None = field(default=None, metadata=serialized(skip=True))  # written inside config

    def __post_init__(self) -> None:
        if (self.strategy is None) == (self.peer is None):
            raise InvalidParameterError("a method is a strategy or a peer: give exactly one of strategy, peer")
        if self.peer is not None and self.peer not in PEERS:
            raise InvalidParameterError(f"peer must be one of {', '.join(PEERS)}, got {self.peer!r}")
        object.__setattr__(self, "ratios", parse_ratios(self.ratios))

    @computed()
    def name(self) -> str:
        """``direct k=auto``, ``partition k=2``, ``smartcrop``."""
        return self.peer if self.peer is not None else f"{self.strategy} k={self.k}"

    def config(self):
        """The :class:`~multicrop.crop.config.CropConfig` of a strategy (validated)."""
        from ...crop.config import CropConfig

        if self.strategy is None:
            raise InvalidParameterError(f"{self.name} is a peer; it has no CropConfig")
        return CropConfig(strategy=self.strategy, k=self.k, ratios=self.ratios, one_ratio=self.one_ratio)

    @computed(key="config", omit_none=True)
    def crop_config(self):
        """:meth:`config` for a strategy, None for a peer (what the report writes under ``config``)."""
        return None if self.strategy is None else self.config()

    def crops(self, photo: OutlinedPhoto, *, threads: int | None = None) -> tuple[Box, ...]:
        """The method's crops of ``photo``, in the outlines' pixels.

        Raises
        ------
        MulticropError
            If the photo cannot be cropped, or is shown rotated (EXIF) so that
            the crops and the outlines do not share one pixel grid.
        """
        if self.peer is not None:
            from ..carousel.methods import METHODS

            # k=1: the peer's protocol hands it the whole frame as its one region.
            result = METHODS.create(self.peer, threads=threads).predict(str(photo.path), 1, self.ratios)
            boxes, size = result.boxes, None
        else:
            from ...crop.pipeline import crop_photo

            res = crop_photo(photo.path, self.config(), threads=threads)
            boxes, size = tuple(c.box for c in res.crops), res.size
        if size is not None and size != photo.size:
            raise MulticropError(f"the photo is {size[0]}x{size[1]} as shown but its outlines are for "
                                 f"{photo.size[0]}x{photo.size[1]} (EXIF orientation?)")
        return tuple(boxes)


@dataclass(frozen=True)
class PhotoResult:
    """One method on one photo.

    Attributes
    ----------
    photo : str
        The photo's id.
    method : str
    boxes : tuple of Box
    measures : PhotoMeasures or None
        None when the method failed on the photo.
    failure : str or None
    seconds : float
    """

    photo: str
    method: str
    boxes: tuple[Box, ...]
    measures: PhotoMeasures | None
    failure: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class SubjectsRun:
    """Every method's results on every photo of an outlined folder.

    Attributes
    ----------
    dataset : str
        The folder (or COCO file) read.
    format : str
    methods : tuple of SubjectsMethod
    rules : SubjectRules
    results : tuple of PhotoResult
        Photo by photo, methods in order.
    qualifying : tuple of str
        Ids of the photos with at least ``rules.photo_min_objects`` large objects.
    all_photos : bool
        Summaries count every photo, not only the qualifying ones.
    photos : dict of str to OutlinedPhoto
    """

    dataset: str
    format: str
    methods: tuple[SubjectsMethod, ...]
    rules: SubjectRules
    results: tuple[PhotoResult, ...]
    qualifying: tuple[str, ...]
    all_photos: bool = False
    photos: dict[str, OutlinedPhoto] = field(default_factory=dict, repr=False, compare=False)

    def counted(self, method: str) -> list[PhotoResult]:
        """The results of ``method`` on the photos the summary counts (failures included)."""
        keep = set(self.qualifying)
        return [r for r in self.results if r.method == method and (self.all_photos or r.photo in keep)]

    def summary(self, method: str) -> SubjectsSummary:
        """Shares of ``method`` over the counted photos (failed photos are left out and counted)."""
        rows = self.counted(method)
        return summarise([r.measures for r in rows if r.measures is not None],
                         failed=sum(r.measures is None for r in rows))


def methods_for(
    *,
    strategies: Sequence[str] = ("direct",),
    ks: Sequence[int | str] = ("auto",),
    peers: Sequence[str] = (),
    ratios: Sequence[Ratio] | str = DEFAULT_RATIOS,
    one_ratio: bool | None = None,
) -> tuple[SubjectsMethod, ...]:
    """Every strategy at every ``k``, then the peers.

    ``k="auto"`` is only offered to strategies that choose ``k`` themselves
    (``direct``); other pairs are left out, and a list that leaves nothing
    is an error.

    Raises
    ------
    InvalidParameterError
        For an unknown strategy or peer, or when no pair is valid.

    Examples
    --------
    >>> [m.name for m in methods_for(strategies=("direct", "partition"), ks=("auto", 2), peers=("vips",))]
    ['direct k=auto', 'direct k=2', 'partition k=2', 'vips']
    """
    spec = parse_ratio_spec(ratios)
    if one_ratio is None:  # the setting's own rule (one ratio for a platform preset such as instagram)
        one_ratio = spec.one_ratio
    rs = spec.ratios
    out: list[SubjectsMethod] = []
    skipped: list[str] = []
    for s in strategies:
        for k in ks:
            m = SubjectsMethod(strategy=s, k=k, ratios=rs, one_ratio=one_ratio)
            try:
                m.config()
            except InvalidParameterError as exc:
                if k == "auto" and "auto" in str(exc):
                    skipped.append(m.name)
                    continue
                raise
            out.append(m)
    out.extend(SubjectsMethod(peer=p, ratios=rs) for p in peers)
    if not out:
        raise InvalidParameterError(f"no method to run: {', '.join(skipped)} need an integer k")
    return tuple(out)


def run_subjects(
    outlines: OutlineSet,
    methods: Sequence[SubjectsMethod],
    *,
    rules: SubjectRules | None = None,
    all_photos: bool = False,
    limit: int | None = None,
    threads: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> SubjectsRun:
    """Crop each photo with each method and measure the crops against the outlines.

    Parameters
    ----------
    outlines : OutlineSet
    methods : sequence of SubjectsMethod
    rules : SubjectRules, optional
    all_photos : bool
        Crop and count every photo; by default only the photos with at least
        ``rules.photo_min_objects`` objects of ``rules.photo_object_min`` of
        the frame are cropped (the others are not measured at all).
    limit : int, optional
        Only the first ``limit`` photos that are cropped.
    threads : int, optional
        Threads for the saliency model and libvips; never changes a result.
    progress : callable, optional
        Called with each photo's id once it is done (cropped by every method, or left out).

    Returns
    -------
    SubjectsRun
    """
    rules = rules or SubjectRules()
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidParameterError(f"limit must be a positive integer, got {limit!r}")
    methods = tuple(methods)
    if not methods:
        raise InvalidParameterError("methods must name at least one method")
    for m in methods:
        if m.peer is not None:
            from ..carousel.methods import METHODS

            METHODS.create(m.peer).check_available()
    results: list[PhotoResult] = []
    qualifying: list[str] = []
    photos: dict[str, OutlinedPhoto] = {}
    for photo in outlines.photos:
        if limit is not None and len(photos) >= limit:
            break
        masks = photo.masks()
        cats = photo.categories
        crowd = tuple(o.crowd for o in photo.objects)
        probe = measure_photo(masks, cats, (), rules=rules, crowd=crowd)
        if probe.qualifies:
            qualifying.append(photo.id)
        elif not all_photos:
            if progress is not None:
                progress(photo.id)
            continue
        photos[photo.id] = photo
        for m in methods:
            t0 = time.perf_counter()
            try:
                boxes = m.crops(photo, threads=threads)
            except MulticropError as exc:
                results.append(PhotoResult(photo.id, m.name, (), None, str(exc), time.perf_counter() - t0))
                continue
            seconds = time.perf_counter() - t0
            results.append(PhotoResult(photo.id, m.name, boxes,
                                       measure_photo(masks, cats, boxes, rules=rules, crowd=crowd), None, seconds))
        if progress is not None:
            progress(photo.id)
    return SubjectsRun(str(outlines.root), outlines.format, methods, rules, tuple(results), tuple(qualifying),
                       all_photos, photos)


def remeasure(run: SubjectsRun, rules: SubjectRules) -> SubjectsRun:
    """The same crops counted under other rules (no photo is cropped again).

    The photo filter is applied again with ``rules`` too, but only among
    the photos ``run`` cropped: a photo it left out stays out.

    Examples
    --------
    Counting street objects as cut classes, or holding whole at 95 %::

        strict = remeasure(run, dataclasses.replace(run.rules, whole=0.95))
    """
    masks = {pid: (p.masks(), p.categories, tuple(o.crowd for o in p.objects)) for pid, p in run.photos.items()}
    results = []
    qualifying = []
    for pid, (m, cats, crowd) in masks.items():
        if measure_photo(m, cats, (), rules=rules, crowd=crowd).qualifies:
            qualifying.append(pid)
    for r in run.results:
        if r.measures is None:
            results.append(r)
            continue
        m, cats, crowd = masks[r.photo]
        results.append(PhotoResult(r.photo, r.method, r.boxes, measure_photo(m, cats, r.boxes, rules=rules,
                                                                             crowd=crowd), None, r.seconds))
    return SubjectsRun(run.dataset, run.format, run.methods, rules, tuple(results), tuple(sorted(qualifying)),
                       run.all_photos, run.photos)
