"""The crop wing's settings, in two frozen, typed places.

:class:`CropConfig` holds everything that decides which crops a photo gets
(k, ratios, strategy, saliency method, ...) and nests four frozen
dataclasses with every weight and threshold of partitioning, candidate
generation and the composition scorer.  Its canonical JSON
(:meth:`CropConfig.to_json`, sorted keys) is written into every record, so a
result says how it was made, and evaluation caches hash it.

:class:`OutputConfig` holds how files are read and written (format, quality,
preview, width copies, the pixel limit).  None of it changes a crop's box, so
none of it enters a record's ``config`` or a hash.

Every default has one home: a field default here, or, for what the ground
floor uses too, a constant there (:data:`multicrop.io.DEFAULT_MAX_PIXELS`,
:data:`multicrop.io.DEFAULT_QUALITY`, :data:`multicrop.measures.BORDER_BAND`).
The command line reads its defaults from these classes.

Examples
--------
>>> cfg = CropConfig(k=3, ratios="2:3,3:2")
>>> cfg.k, [str(r) for r in cfg.ratios]
(3, ['2:3', '3:2'])
>>> CropConfig.from_dict(cfg.to_dict()) == cfg
True
>>> CropConfig(k=0)
Traceback (most recent call last):
...
multicrop.errors.InvalidParameterError: k must be an integer >= 1 or 'auto', got 0
>>> CropConfig.from_dict({"k": 2, "colour": 1})
Traceback (most recent call last):
...
multicrop.errors.InvalidParameterError: CropConfig: unknown key 'colour'; allowed: analysis_max_side, ...
>>> OutputConfig(format="PNG").suffix, OutputConfig().max_pixels
('.png', 300000000)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..defaults import DEFAULT_DETECTORS as _DETECTORS_DEFAULT
from ..errors import InvalidParameterError
from ..ratios import RATIO_PRESETS, Ratio
from ..hashing import canonical_json
from ..io.formats import DEFAULT_MAX_PIXELS
from ..io.save import DEFAULT_QUALITY, format_suffix
from ..measures import BORDER_BAND
from ..ratios import RatioSpec, parse_ratio_spec
from ..serialize import Serializable
from .checks import check_bool as _check_bool
from .checks import check_positive_int as _check_positive_int
from .checks import check_range as _check_range
from .direct.settings import SelectionConfig, split_legacy
from .subject_config import SubjectConfig

__all__ = [
    "STRATEGIES",
    "PartitionConfig",
    "CandidateConfig",
    "CompositionWeights",
    "SubjectConfig",
    "SelectionConfig",
    "AUTO_K",
    "DEFAULT_DETECTORS",
    "CropConfig",
    "OutputConfig",
]

#: Selection strategies: per-partition best crop, top-k over the whole image with NMS, or
#: direct multi-target selection (:mod:`multicrop.crop.direct`, the only one with ``k="auto"``).
STRATEGIES = ("partition", "topk", "direct")

#: Detectors run by default: COCO objects (NanoDet), faces (YuNet), people's pose and mask
#: (those of them this installation ships; :data:`multicrop.detectors.DEFAULT_DETECTORS`).
DEFAULT_DETECTORS = _DETECTORS_DEFAULT

#: ``k="auto"``: the ``direct`` strategy decides how many crops the photo supports.
AUTO_K = "auto"


@dataclass(frozen=True)
class PartitionConfig(Serializable):
    """Multi-region saliency partitioning (Carousel §IV-A).

    A valid salient box covers at most the image's area divided by ``k``
    (the paper's rule).  Three of our adaptations have a value that turns
    them off, for ablations against the paper: ``absorb_share=1``,
    ``claim_margin=0``, ``orientation_fallback=False``.

    Attributes
    ----------
    threshold : float
        First saliency share a box must reach, as a fraction of the remaining
        saliency divided among the boxes still to find.
    threshold_step : float
        Amount the share is lowered each time no valid box reaches it.
    min_threshold : float
        Lowest share tried before the search gives up on that box.
    work_side : int
        Long side, in pixels, of the copy of the saliency map the search runs on.
    min_region_aspect : float
        A region whose short side over long side is below this is a failure
        (1/3: narrower than 1:3).
    bisect_tolerance : float
        A cut that leaves more than this fraction of a salient box on its far
        side "bisects" the box, which is a failure.
    blob_level : float
        Salient blobs are the connected components of the remaining saliency
        at or above this fraction of its maximum.
    absorb_share : float
        A found box also claims (and zeroes) every blob of which it holds at
        least this share of saliency, so one large subject is not split over
        two boxes (1 turns this off: only the box is zeroed, as in the paper).
    claim_margin : float
        The pixels a box claims are grown by this fraction of the long side
        before they are zeroed, so the soft edge of a subject does not draw a
        later box (0: no growth).
    subject_trim : float
        Each salient box is shrunk to its subject: along each axis, the
        smallest span holding all but this share of the box's saliency on
        either side.  Cuts are placed and checked against the subjects.
    cut_centre_weight : float
        A cut goes on the least salient line between two subjects; this
        weight (relative to the most salient line of that span) prefers the
        middle of the span, so that ties and near-ties fall midway.
    orientation_fallback : bool
        When the cuts of the paper's orientation bisect a subject or leave a
        too narrow region, try the other orientation (recorded in
        ``Partition.fallback``); a failure is reported only if both fail.
    """

    threshold: float = 0.9
    threshold_step: float = 0.1
    min_threshold: float = 0.1
    work_side: int = 256
    min_region_aspect: float = 1 / 3
    bisect_tolerance: float = 0.15
    blob_level: float = 0.3
    absorb_share: float = 0.25
    claim_margin: float = 0.015
    subject_trim: float = 0.02
    cut_centre_weight: float = 0.25
    orientation_fallback: bool = True

    def __post_init__(self) -> None:
        _check_range(self, "threshold", 0, 1, lo_open=True)
        _check_range(self, "threshold_step", 0, 1, lo_open=True)
        _check_range(self, "min_threshold", 0, 1, lo_open=True)
        _check_range(self, "min_region_aspect", 0, 1)
        _check_range(self, "bisect_tolerance", 0, 0.5)
        _check_range(self, "subject_trim", 0, 0.25)
        _check_range(self, "blob_level", 0, 1, lo_open=True)
        _check_range(self, "claim_margin", 0, 0.25)
        _check_range(self, "absorb_share", 0, 1, lo_open=True)
        _check_range(self, "cut_centre_weight", 0, 100)
        _check_bool(self, "orientation_fallback")
        if not isinstance(self.work_side, int) or self.work_side < 16:
            raise InvalidParameterError(f"work_side must be an integer >= 16, got {self.work_side!r}")


@dataclass(frozen=True)
class CandidateConfig(Serializable):
    """Candidate crops: GAIC grid anchors, fixed-ratio sliding windows, subject framings.

    Attributes
    ----------
    bins : int
        Grid bins per axis (GAIC: 12).
    corner_bins : int
        Top-left corners lie in the first, bottom-right corners in the last
        ``corner_bins`` bins of each axis (GAIC: 4).
    min_area : float
        Smallest anchor area as a fraction of the largest box of the target
        ratio that fits the region (GAIC: 0.5, of the region).
    ratio_tolerance : float
        An anchor is kept when its aspect is within this factor of the target
        (then shrunk to the exact target ratio).
    window_scales : tuple of float
        Sizes of sliding windows relative to the largest box of the ratio that
        fits the region (used when the grid yields no anchor, and for ``topk``).
    window_stride : float
        Stride of sliding windows as a fraction of the window size.
    subject_fills : tuple of float
        ``partition``: besides the region's anchors, crops framing the
        region's subject, centred on it, are offered, sized so the subject
        spans each of these fractions of the crop along its limiting side.
    """

    bins: int = 12
    corner_bins: int = 4
    min_area: float = 0.5
    ratio_tolerance: float = 1.25
    window_scales: tuple[float, ...] = (1.0, 0.85, 0.7, 0.55)
    window_stride: float = 0.125
    subject_fills: tuple[float, ...] = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)

    def __post_init__(self) -> None:
        if not isinstance(self.bins, int) or self.bins < 2:
            raise InvalidParameterError(f"bins must be an integer >= 2, got {self.bins!r}")
        if not isinstance(self.corner_bins, int) or not 1 <= self.corner_bins <= self.bins // 2:
            raise InvalidParameterError(
                f"corner_bins must be an integer in [1, bins/2], got {self.corner_bins!r}"
            )
        _check_range(self, "min_area", 0, 1)
        _check_range(self, "ratio_tolerance", 1, 100)
        _check_range(self, "window_stride", 0, 1, lo_open=True)
        scales = tuple(float(s) for s in self.window_scales)
        if not scales or any(not 0 < s <= 1 for s in scales):
            raise InvalidParameterError(f"window_scales must be numbers in (0, 1], got {self.window_scales!r}")
        object.__setattr__(self, "window_scales", scales)
        fills = tuple(float(s) for s in self.subject_fills)
        if any(not 0 < s <= 1 for s in fills):
            raise InvalidParameterError(f"subject_fills must be numbers in (0, 1], got {self.subject_fills!r}")
        object.__setattr__(self, "subject_fills", fills)


@dataclass(frozen=True)
class CompositionWeights(Serializable):
    """Weights and thresholds of the embedded composition scorer.

    The score is a weighted sum of parts, each in ``[0, 1]``; penalties carry
    negative sign.  When the crop frames a region's subject, ``density`` and
    ``thirds`` are reported but not weighted: ``framing`` sets the tightness,
    and a subject filling most of the frame is centred (the thirds rule is
    for small subjects in a scene).  See
    :mod:`multicrop.crop.scoring.composition`.
    """

    saliency_kept: float = 1.0       # share of the region's saliency inside the crop
    density: float = 0.35            # saliency per pixel relative to the region (tight framing)
    border_cut: float = 1.0          # penalty: saliency on the crop's border band
    border_band: float = BORDER_BAND  # border band width, fraction of the crop's short side
    thirds: float = 0.25             # saliency centroid near a rule-of-thirds point
    thirds_sigma: float = 0.17       # tolerance of the thirds term, fraction of the crop
    face_cut: float = 2.0            # penalty: share of faces the crop border cuts
    face_headroom: float = 0.3       # faces neither touching the top nor sunk low
    min_headroom: float = 0.05       # headroom below this fraction of the height is cramped
    sharpness: float = 0.1           # mean gradient in the crop relative to the image
    exposure: float = 0.1            # mean luminance near mid-grey
    framing: float = 0.5             # partition: subject spans about fill_target of the crop
    fill_target: float = 0.7         # subject extent / crop side (limiting side) a photographer aims at
    fill_sigma: float = 0.15         # tolerance of the framing term
    foreign: float = 0.3             # partition: penalty for the share of saliency outside the subject

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            _check_range(self, f.name, 0, 1e6)
        _check_range(self, "border_band", 0, 0.5, lo_open=True)
        _check_range(self, "thirds_sigma", 0, 10, lo_open=True)
        _check_range(self, "fill_target", 0, 1, lo_open=True)
        _check_range(self, "fill_sigma", 0, 10, lo_open=True)


@dataclass(frozen=True)
class CropConfig(Serializable):
    """Everything that decides which crops a photo gets.

    Parameters
    ----------
    k : int or "auto"
        Number of crops per photo; ``"auto"`` (``direct`` only): as many as
        the photo has distinct subjects, between 1 and ``max_k``.  With a
        fixed ``k``, ``direct`` writes fewer crops when the photo has fewer
        distinct subjects, and says so in the result's ``notes``.
    max_k : int
        ``k="auto"``: at most this many crops.
    force_k : bool
        ``direct`` with a fixed ``k``: fill up to ``k`` with the best
        remaining crops even when they show no new subject.
    ratios : tuple of Ratio, str, or RatioSpec
        Allowed aspect ratios (``"2:3,3:2"``, a preset name such as
        ``"instagram"``, or a :class:`~multicrop.ratios.RatioSpec`); each crop
        may take any of them, the scorer chooses, unless ``one_ratio``.  Held
        as the tuple of ratios.
    one_ratio : bool or None
        Every crop of the photo takes the same ratio, the one whose crops
        score best (a carousel whose slides share one shape).  None: the
        ratio setting's own rule (:attr:`multicrop.ratios.RatioSpec.one_ratio`:
        true for a platform preset that requires it, e.g. ``instagram``),
        false for plain ratios.  :meth:`replace` with new ``ratios`` and no
        ``one_ratio`` takes the new setting's rule too.
    strategy : {"direct", "partition", "topk"}
        Default ``direct`` (fewer cut people and subjects than ``partition``
        on real photos, docs/cropping.md gives the figures).
        ``partition``: best crop in each saliency partition (Carousel §IV-A),
        kept for the paper's comparison.
        ``topk``: score candidates over the whole image and keep the top k
        with non-maximum suppression (the paper's VPN* protocol).
        ``direct``: one pool of candidates over the whole image, chosen
        greedily for quality and distinct subjects, k given or found
        (docs/cropping.md documents the objective and the rules).
    saliency : str
        Registered saliency backend (``multicrop saliency list``).
    faces : bool
        Run the face detector (YuNet) when ``detectors`` names it; false
        drops it (kept for the ``--no-faces`` option and older configs).
    detectors : tuple of str
        Registered detectors (:mod:`multicrop.detectors`) whose people,
        animals, vehicles, objects and faces become subjects; ``()`` for
        saliency alone.  Their versions enter every record.
    analysis_max_side : int
        Long side of the reduced copy analysed (crops are cut at full size).
    scorer : str
        Registered crop scorer.
    nms_iou : float
        ``topk``: largest IoU allowed between two selected crops.
    distinct_iou : float
        ``partition``: largest IoU allowed between the crops of two regions
        (a region's crop may reach past it towards its subject).  Separate
        from ``nms_iou`` because crops of distinct subjects may overlap
        (91 of the 251 ground-truth pairs of Carousel do).
    min_crop_side : int
        Smallest crop side in source pixels; photos that cannot hold k such
        crops are refused.
    partition, candidates, weights
        The nested settings of ``partition`` and the scorer
        (:class:`PartitionConfig`, :class:`CandidateConfig`,
        :class:`CompositionWeights`).
    subjects : SubjectConfig
        How detections and saliency become subjects (the only part of these
        settings an analysis depends on).
    selection : SelectionConfig
        ``direct``'s pool, rules, objective, close-ups and details.
    """

    k: int | str = 2
    ratios: tuple[Ratio, ...] | str | RatioSpec = RATIO_PRESETS["carousel"]
    strategy: str = "direct"
    max_k: int = 6
    force_k: bool = False
    one_ratio: bool | None = None
    saliency: str = "u2netp"
    faces: bool = True
    detectors: tuple[str, ...] = DEFAULT_DETECTORS
    analysis_max_side: int = 1024
    scorer: str = "composition"
    nms_iou: float = 0.3
    distinct_iou: float = 0.5
    min_crop_side: int = 64
    partition: PartitionConfig = field(default_factory=PartitionConfig)
    candidates: CandidateConfig = field(default_factory=CandidateConfig)
    weights: CompositionWeights = field(default_factory=CompositionWeights)
    subjects: SubjectConfig = field(default_factory=SubjectConfig)
    selection: SelectionConfig = field(default_factory=SelectionConfig)

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise InvalidParameterError(
                f"strategy must be one of {', '.join(STRATEGIES)}, got {self.strategy!r}"
            )
        if self.k == AUTO_K:
            if self.strategy != "direct":
                raise InvalidParameterError(
                    f"k='auto' needs strategy 'direct', got strategy {self.strategy!r}; give an integer k")
        elif isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise InvalidParameterError(f"k must be an integer >= 1 or 'auto', got {self.k!r}")
        try:
            spec = parse_ratio_spec(self.ratios)
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"ratios: {exc}") from None
        if self.one_ratio is None:
            object.__setattr__(self, "one_ratio", spec.one_ratio)
        object.__setattr__(self, "ratios", spec.ratios)
        _check_positive_int(self, "max_k")
        _check_bool(self, "force_k")
        _check_bool(self, "one_ratio")
        _check_bool(self, "faces")
        dets = (self.detectors,) if isinstance(self.detectors, str) else self.detectors
        if not isinstance(dets, (tuple, list)) or any(not isinstance(n, str) or not n for n in dets):
            raise InvalidParameterError(f"detectors must be a tuple of detector names, got {self.detectors!r}")
        if len(set(dets)) != len(dets):
            raise InvalidParameterError(f"detectors must not repeat a name, got {self.detectors!r}")
        object.__setattr__(self, "detectors", tuple(dets))
        for name in ("analysis_max_side", "min_crop_side"):
            _check_positive_int(self, name)
        if self.analysis_max_side < 64:
            raise InvalidParameterError(f"analysis_max_side must be >= 64, got {self.analysis_max_side!r}")
        _check_range(self, "nms_iou", 0, 1)
        _check_range(self, "distinct_iou", 0, 1)
        for name, cls in (("partition", PartitionConfig), ("candidates", CandidateConfig),
                          ("weights", CompositionWeights), ("subjects", SubjectConfig),
                          ("selection", SelectionConfig)):
            v = getattr(self, name)
            if not isinstance(v, cls):
                raise InvalidParameterError(f"{name} must be a {cls.__name__}, got {type(v).__name__}")

    @classmethod
    def from_dict(cls, data: Any) -> CropConfig:
        """Inverse of :meth:`to_dict`; unknown keys are an error.

        A flat ``direct`` object (records and ``-c`` files before the settings
        were split by stage) is read through
        :data:`multicrop.crop.direct.settings.LEGACY_KEYS`.
        """
        if isinstance(data, dict) and "direct" in data:
            data = dict(data)
            subjects, selection = split_legacy(data.pop("direct"))
            base = super().from_dict(data)
            return dataclasses.replace(base, subjects=base.subjects.set(**subjects),
                                       selection=base.selection.set(**selection))
        return super().from_dict(data)

    def replace(self, **changes: Any) -> CropConfig:
        """A copy with some fields changed (validated again).

        New ``ratios`` without ``one_ratio`` bring their setting's rule:
        ``replace(ratios="instagram")`` is one-ratio, ``replace(ratios="2:3,3:2")`` is not.

        Examples
        --------
        >>> CropConfig().replace(ratios="instagram").one_ratio
        True
        >>> CropConfig(ratios="instagram").replace(ratios="2:3,3:2").one_ratio
        False
        """
        if "ratios" in changes and "one_ratio" not in changes:
            changes["one_ratio"] = None
        return dataclasses.replace(self, **changes)

    @property
    def active_detectors(self) -> tuple[str, ...]:
        """The detectors run: ``detectors`` without YuNet when ``faces`` is off."""
        return tuple(n for n in self.detectors if self.faces or n != "yunet")

    @property
    def min_k(self) -> int:
        """The fewest crops this config asks for (1 for ``k="auto"``)."""
        return 1 if self.k == AUTO_K else int(self.k)

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, compact): what records hold and caches hash."""
        return canonical_json(self.to_dict())


@dataclass(frozen=True)
class OutputConfig(Serializable):
    """How a photo's files are read and written; nothing here changes a crop's box.

    Parameters
    ----------
    format : str or None
        Crop format (``jpg``, ``png``, ``webp``, ``tif``); None: the
        source's (``jpg`` for sources with no writer, e.g. HEIC and BMP).
    quality : int
        JPEG and WebP quality for crops whose source's own quality cannot be
        kept (JPEG crops of RGB JPEGs reuse the source's tables).
    widths : tuple of int
        Also write each crop downscaled to these widths (never upscaled).
    preview : bool
        Write ``<stem>_preview.png``.
    record : bool
        Write ``<stem>.json``.
    max_pixels : int
        Refuse photos with more pixels than this (decompression-bomb guard).
    """

    format: str | None = None
    quality: int = DEFAULT_QUALITY
    widths: tuple[int, ...] = ()
    preview: bool = True
    record: bool = True
    max_pixels: int = DEFAULT_MAX_PIXELS

    def __post_init__(self) -> None:
        if self.format is not None:
            if not isinstance(self.format, str):
                raise InvalidParameterError(f"format must be a string, got {self.format!r}")
            format_suffix(self.format)
        _check_positive_int(self, "quality")
        if self.quality > 100:
            raise InvalidParameterError(f"quality must be in [1, 100], got {self.quality!r}")
        widths = tuple(self.widths)
        for w in widths:
            if isinstance(w, bool) or not isinstance(w, int) or w < 1:
                raise InvalidParameterError(f"widths must be positive integers, got {w!r}")
        object.__setattr__(self, "widths", widths)
        _check_bool(self, "preview")
        _check_bool(self, "record")
        _check_positive_int(self, "max_pixels")

    @property
    def suffix(self) -> str | None:
        """The crops' file extension (``".png"``), or None for the source's."""
        return None if self.format is None else format_suffix(self.format)

    def replace(self, **changes: Any) -> OutputConfig:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)
