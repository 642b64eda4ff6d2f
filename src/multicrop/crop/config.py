"""The crop wing's settings, in two frozen, typed places.

:class:`CropConfig` holds everything that decides which crops a photo gets
(k, ratios, strategy, saliency method, ...) and nests the frozen
dataclasses with every weight and threshold of partitioning, candidate
generation and the composition scorer (:mod:`multicrop.crop.stage_config`),
of subjects (:mod:`multicrop.crop.subject_config`) and of ``direct``'s
selection (:mod:`multicrop.crop.direct.settings`).  Its canonical JSON
(:meth:`CropConfig.to_json`, sorted keys) is written into every record, so a
result says how it was made, and evaluation caches hash it.

:class:`OutputConfig` holds how files are read and written (format, quality,
preview, width copies, the pixel limit; :mod:`multicrop.crop.output_config`).  None of it changes a crop's box, so
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
from ..ratios import RatioSpec, parse_ratio_spec
from ..serialize import Serializable
from .checks import check_bool as _check_bool
from .checks import check_positive_int as _check_positive_int
from .checks import check_range as _check_range
from .direct.settings import SelectionConfig, split_legacy
from .output_config import OutputConfig
from .stage_config import CandidateConfig, CompositionWeights, PartitionConfig
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
#: The strategies that take ``k="auto"`` (the web page offers it with these only).
AUTO_K_STRATEGIES: tuple[str, ...] = ("direct",)


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
            if self.strategy not in AUTO_K_STRATEGIES:
                raise InvalidParameterError(
                    f"k='auto' needs strategy {' or '.join(map(repr, AUTO_K_STRATEGIES))}, got strategy "
                    f"{self.strategy!r}; give an integer k")
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
