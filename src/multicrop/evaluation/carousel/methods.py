"""Multi-crop methods compared on Carousel, kept in one registry.

Every method answers ``predict(image, k, ratios) -> MethodResult``: ``k``
boxes in source pixels, a failure reason (or None) and the seconds it took.
A method never sees the ground truth; it is given the allowed ratios
(Carousel: 2:3 and 3:2) and chooses among them itself.

Built-in methods
----------------
``partition``
    Our pipeline, :func:`multicrop.crop_photo` with ``strategy="partition"``
    (saliency partitioning, Carousel §IV-A, then our scorer in each region).
``topk``
    Our pipeline with ``strategy="topk"``: the top k candidates of the whole
    image, no partitioning (the paper's VPN* protocol).
``direct``, ``direct-auto``
    Our pipeline with ``strategy="direct"`` (:mod:`multicrop.crop.direct`):
    distinct crops chosen from one pool over the whole image, no
    partitioning, with the metadata's k (``direct``; fewer when the photo
    shows fewer distinct subjects) or k decided by the method
    (``direct-auto``, the paper's §V request).
``direct-measured``
    ``direct-auto`` whose crops are then chosen by the offline ``measured``
    judge panel (the shipped ``panel.measured.toml``) among each crop's
    shortlist of 4 (:func:`multicrop.ranking.rank_crops`); its version
    includes the panel, the judge's version and the ranking's.
``smartcrop``, ``vips``
    Single-crop peers (smartcrop.py; libvips ``smartcrop`` with
    ``interesting="attention"``) run on OUR partitions, the paper's protocol
    for single-crop models: each is asked for the largest crop of a target
    ratio inside each region.  Both need the ``peers`` extra.
``slices``
    A floor: k equal slices along the long axis, each cropped centrally.

Ratio choice without ground truth.  Peers and ``slices`` take, in each
region, the allowed ratio whose largest fitting crop covers the most of the
region (the ratio nearest the region's aspect).  For the partition the peers
try every allowed ratio and keep the first partition without a failure,
preferring the one whose salient boxes are tightest.  ``partition`` and
``topk`` let the pipeline's scorer choose.

This module holds the base class, the registry and the methods of our own
pipeline and the floor; the peers are in
:mod:`multicrop.evaluation.carousel.peers` (registered when the package is
imported).  A new method is a :class:`CarouselMethod` subclass registered in
:data:`METHODS` (``METHODS.register(MyMethod)``); ``evaluate_carousel`` and
``multicrop eval carousel --method NAME`` then run it unchanged.

Threads are a parameter of the method (``METHODS.create(name, threads=n)``),
passed down to the saliency model (and to libvips for ``vips``); the
evaluation gives each worker process its share.  They never change a result.

References
----------
.. [1] R. Loya, A. Hamara, B. Estell, B. Kilpatrick and A. C. Freeman,
   "Carousel: A High-Resolution Dataset for Multi-Target Automatic Image
   Cropping", sections IV-A (partitioning) and IV-C (protocol).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InvalidParameterError, MulticropError
from ...geometry import Box, fit_ratio_box
from ...ratios import DEFAULT_RATIOS, Ratio, parse_ratios
from ...registry import Registry
from ...serialize import Serializable

__all__ = [
    "MethodResult",
    "CarouselMethod",
    "MissingDependencyError",
    "METHODS",
    "best_fit_ratio",
    "slice_regions",
    "partition_regions",
    "pipeline_version",
]


class MissingDependencyError(MulticropError, ImportError):
    """An optional package a method needs is not installed."""


@dataclass(frozen=True)
class MethodResult(Serializable):
    """What a method predicted for one image.

    Attributes
    ----------
    boxes : tuple of Box
        Predicted crops in source pixels.
    failure : str or None
        Why the method considers its own result unusable (e.g. a partition
        failure), or None.  The boxes are still evaluated.
    seconds : float
        Wall time of the prediction, image decoding included.
    """

    boxes: tuple[Box, ...]
    failure: str | None = None
    seconds: float = 0.0


class CarouselMethod:
    """Base class of a multi-crop method.

    Subclasses set the class attributes and implement :meth:`_predict`; a
    subclass with its own ``__init__`` accepts ``threads`` too and calls
    ``super().__init__(threads=threads)``.

    Parameters
    ----------
    threads : int, optional
        Threads the method may use (the saliency model's intra-op threads;
        libvips's for ``vips``); None leaves each library its default.  Never
        changes a result.

    Attributes
    ----------
    name : str
    description : str
    version : str
        Part of every result file: bump when results change.
    uses_partition : bool
        Capability flag: the method runs on saliency partitions.
    requires : tuple of str
        Import names of optional packages the method needs.
    extra : str or None
        The pip extra that provides them.
    """

    name: str = ""
    description: str = ""
    version: str = "1"
    uses_partition: bool = False
    requires: tuple[str, ...] = ()
    extra: str | None = None

    def __init__(self, *, threads: int | None = None) -> None:
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise InvalidParameterError(f"threads must be a positive integer or None, got {threads!r}")
        self.threads = threads

    def check_available(self) -> None:
        """Raise :class:`MissingDependencyError` if a required package is missing."""
        for mod in self.requires:
            try:
                importlib.import_module(mod)
            except ImportError as exc:
                hint = f"pip install 'multicrop[{self.extra}]'" if self.extra else f"pip install {mod}"
                raise MissingDependencyError(
                    f"method {self.name!r} needs the package {mod!r} ({exc}); install it with: {hint}"
                ) from None

    def predict(self, image: Any, k: int, ratios: Sequence[Ratio] | str = DEFAULT_RATIOS) -> MethodResult:
        """Predict ``k`` crops of ``image`` (a path or an RGB array), timed.

        Raises
        ------
        InvalidParameterError
            For a bad ``k`` or ratio list.
        MissingDependencyError
            If an optional package is missing.
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidParameterError(f"k must be an integer >= 1, got {k!r}")
        rs = parse_ratios(ratios)
        self.check_available()
        t0 = time.perf_counter()
        boxes, failure = self._predict(image, int(k), rs)
        return MethodResult(tuple(boxes), failure, time.perf_counter() - t0)

    def _predict(self, image: Any, k: int, ratios: tuple[Ratio, ...]) -> tuple[list[Box], str | None]:
        raise NotImplementedError

    def info(self) -> dict[str, Any]:
        """Name, version and flags, written into every report."""
        return {
            "name": self.name,
            "version": self.version,
            "description": self.description,
            "uses_partition": self.uses_partition,
        }


#: Registered method classes: ``METHODS.create("partition")``.
METHODS: Registry[type[CarouselMethod]] = Registry("carousel-method")


# --------------------------------------------------------------------------- helpers


def best_fit_ratio(region: Box, ratios: Sequence[Ratio]) -> Ratio:
    """The ratio whose largest box inside ``region`` has the largest area.

    Examples
    --------
    >>> str(best_fit_ratio(Box(0, 0, 100, 300), (Ratio(2, 3), Ratio(3, 2))))
    '2:3'
    """
    return max(ratios, key=lambda r: min(region.w, region.h * r.value) * min(region.h, region.w / r.value))


def slice_regions(width: float, height: float, k: int) -> tuple[Box, ...]:
    """``k`` equal slices of a ``width x height`` image along its long axis.

    Examples
    --------
    >>> slice_regions(300, 100, 3)
    (Box(x=0.0, y=0.0, w=100.0, h=100.0), Box(x=100.0, y=0.0, w=100.0, h=100.0), Box(x=200.0, y=0.0, w=100.0, h=100.0))
    """
    if width >= height:
        step = width / k
        return tuple(Box(i * step, 0.0, step, float(height)) for i in range(k))
    step = height / k
    return tuple(Box(0.0, i * step, float(width), step) for i in range(k))


def _image_size(image: Any) -> tuple[int, int]:
    """``(width, height)`` of a path (header only, EXIF-aware) or an array."""
    if isinstance(image, np.ndarray):
        if image.ndim < 2:
            raise InvalidParameterError(f"image array must be (H, W[, C]), got shape {image.shape}")
        return int(image.shape[1]), int(image.shape[0])
    from ...io import load_image

    # load_image validates the file; a tiny analysis copy keeps this cheap.
    return load_image(Path(image), max_side=16).size


def _analysis_copy(image: Any):
    """The analysis copy of ``image`` and the default config, as the pipeline loads it."""
    from ...crop.config import CropConfig
    from ...io import load_image

    cfg = CropConfig()  # the pixel limit is load_image's default (multicrop.io.DEFAULT_MAX_PIXELS)
    return load_image(image if isinstance(image, np.ndarray) else Path(image), max_side=cfg.analysis_max_side), cfg


def partition_regions(image: Any, k: int, ratios: Sequence[Ratio], *, threads: int | None = None):
    """Saliency partition of ``image`` with the pipeline's defaults.

    Returns ``(loaded, partition)``: the :class:`multicrop.io.LoadedImage`
    and the chosen :class:`multicrop.crop.partition.Partition`, in analysis
    pixels.  ``threads`` goes to the saliency model.
    """
    from ...crop.pipeline import analyse, best_partition

    loaded, cfg = _analysis_copy(image)
    cfg = replace(cfg, k=k, ratios=tuple(ratios))
    return loaded, best_partition(analyse(loaded.analysis, cfg, threads=threads).saliency, cfg)


def pipeline_version(base: str, *, strategy: str = "partition") -> str:
    """``base`` plus a short hash of the pipeline's versions and default config for ``strategy``.

    A result cache keyed on it is invalidated by any change to the scorer,
    the partitioner, the direct selection, the saliency model or a default weight.
    """
    from ...crop.config import CropConfig
    from ...crop.pipeline import pipeline_versions
    from ...hashing import content_hash

    cfg = CropConfig(strategy=strategy)
    digest = content_hash({"versions": pipeline_versions(cfg), "config": cfg.to_dict()})
    return f"{base}+{digest.split(':', 1)[1][:12]}"


# --------------------------------------------------------------------------- methods


@METHODS.register
class SlicesMethod(CarouselMethod):
    """k equal slices along the long axis, each cropped centrally (a floor)."""

    name = "slices"
    description = "k equal slices along the long axis, each cropped centrally at the best-fitting ratio"

    def _predict(self, image, k, ratios):
        w, h = _image_size(image)
        return [fit_ratio_box(reg, best_fit_ratio(reg, ratios)) for reg in slice_regions(w, h, k)], None


class PipelineMethod(CarouselMethod):
    """:func:`multicrop.crop_photo` with a fixed strategy."""

    strategy = "partition"
    auto_k = False

    @property
    def version(self) -> str:  # results change with the pipeline's versions and weights
        return pipeline_version("2", strategy=self.strategy)

    def _predict(self, image, k, ratios):
        from ...crop.config import CropConfig
        from ...crop.pipeline import crop_photo

        cfg = CropConfig(k="auto" if self.auto_k else k, ratios=tuple(ratios), strategy=self.strategy)
        result = crop_photo(image, cfg, threads=self.threads)
        return [c.box for c in result.crops], result.failure


@METHODS.register
class PartitionMethod(PipelineMethod):
    name = "partition"
    description = "our pipeline: saliency partitions (Carousel IV-A), best crop per region by our scorer"
    uses_partition = True
    strategy = "partition"


@METHODS.register
class TopKMethod(PipelineMethod):
    name = "topk"
    description = "our pipeline: top-k candidates of the whole image with NMS, no partitions (VPN* protocol)"
    strategy = "topk"


@METHODS.register
class DirectMethod(PipelineMethod):
    name = "direct"
    description = "our pipeline: distinct crops chosen directly from one pool over the whole image, k given"
    strategy = "direct"


@METHODS.register
class DirectAutoMethod(PipelineMethod):
    name = "direct-auto"
    description = "our pipeline: direct selection that decides k itself (the metadata's k is not used)"
    strategy = "direct"
    auto_k = True


@METHODS.register
class DirectMeasuredMethod(DirectAutoMethod):
    name = "direct-measured"
    description = ("our pipeline: direct selection with k decided by the method, each crop then chosen among its "
                   "shortlist of 4 by the offline measured judge panel (z-scored panel mean)")
    shortlist = 4

    @property
    def version(self) -> str:  # the pipeline's versions, the panel (and its judge's version), the ranking's
        from ...hashing import content_hash
        from ...ranking.settings import measured_panel_path
        from ...ranking.render import RENDER_MAX_SIDE
        from ...ranking.shortlists import RANKING_VERSION, load_ranking_panel

        panel = load_ranking_panel(measured_panel_path())
        digest = content_hash({"panel": panel.to_dict(), "judges": [f.identity() for f in panel.families],
                               "ranking": RANKING_VERSION, "shortlist": self.shortlist,
                               "render_max_side": RENDER_MAX_SIDE})
        return f"{pipeline_version('2', strategy=self.strategy)}+{digest.split(':', 1)[1][:12]}"

    def _predict(self, image, k, ratios):
        from ...crop.config import CropConfig
        from ...crop.pipeline import crop_photo
        from ...ranking.settings import measured_panel_path
        from ...ranking.shortlists import rank_crops

        cfg = CropConfig(k="auto", ratios=tuple(ratios), strategy=self.strategy)
        result = rank_crops(crop_photo(image, cfg, threads=self.threads, shortlist=self.shortlist),
                            measured_panel_path())
        return [c.box for c in result.crops], result.failure
