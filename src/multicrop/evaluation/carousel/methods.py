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

A new method is a :class:`CarouselMethod` subclass registered in
:data:`METHODS` (``METHODS.register(MyMethod)``); ``evaluate_carousel`` and
``multicrop eval carousel --method NAME`` then run it unchanged.

References
----------
.. [1] Carousel, sections IV-A and IV-C; ``../shared/papers/000_ab3aac417f9da011.txt``.
"""

from __future__ import annotations

import importlib
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InvalidParameterError, MulticropError
from ...geometry import Box, Ratio, fit_ratio_box, parse_ratios
from ...registry import Registry

__all__ = [
    "MethodResult",
    "CarouselMethod",
    "MissingDependencyError",
    "METHODS",
    "best_fit_ratio",
    "slice_regions",
]



class MissingDependencyError(MulticropError, ImportError):
    """An optional package a method needs is not installed."""


@dataclass(frozen=True)
class MethodResult:
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "boxes": [b.to_dict() for b in self.boxes],
            "failure": self.failure,
            "seconds": self.seconds,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MethodResult:
        return cls(
            boxes=tuple(Box.from_dict(b) for b in d["boxes"]),
            failure=d.get("failure"),
            seconds=float(d.get("seconds", 0.0)),
        )


class CarouselMethod:
    """Base class of a multi-crop method.

    Subclasses set the class attributes and implement :meth:`_predict`.

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

    def predict(self, image: Any, k: int, ratios: Sequence[Ratio] | str = "2:3,3:2") -> MethodResult:
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


def _analysis(image: Any):
    from ...crop.config import CropConfig
    from ...io import load_image

    cfg = CropConfig()
    return load_image(image if isinstance(image, np.ndarray) else Path(image),
                      max_side=cfg.analysis_max_side, max_pixels=cfg.max_pixels), cfg


def partition_regions(image: Any, k: int, ratios: Sequence[Ratio]):
    """Saliency partition of ``image`` with the pipeline's defaults.

    Returns ``(loaded, partition)``: the :class:`multicrop.io.LoadedImage`
    and the chosen :class:`multicrop.crop.partition.Partition`, in analysis pixels.
    """
    from ...crop.pipeline import analyse, best_partition

    loaded, cfg = _analysis(image)
    cfg = replace(cfg, k=k, ratios=tuple(ratios))
    sal, _ = analyse(loaded.analysis, cfg)
    return loaded, best_partition(sal, cfg)


def _pipeline_version(base: str) -> str:
    """``base`` plus a short hash of the pipeline's versions and default config.

    A result cache keyed on it is invalidated by any change to the scorer,
    the partitioner, the saliency model or a default weight.
    """
    from ...crop.config import CropConfig
    from ...crop.pipeline import pipeline_versions
    from ...hashing import content_hash

    cfg = CropConfig()
    digest = content_hash({"versions": pipeline_versions(cfg), "config": cfg.to_dict()})
    return f"{base}+{digest.split(':', 1)[1][:12]}"


# --------------------------------------------------------------------------- methods


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

    @property
    def version(self) -> str:  # results change with the pipeline's versions and weights
        return _pipeline_version("2")

    def _predict(self, image, k, ratios):
        import multicrop

        cfg = multicrop.CropConfig(k=k, ratios=tuple(ratios), strategy=self.strategy)
        result = multicrop.crop_photo(image, cfg)
        return [c.box for c in result.crops], result.failure


class PartitionMethod(PipelineMethod):
    name = "partition"
    description = "our pipeline: saliency partitions (Carousel IV-A), best crop per region by our scorer"
    uses_partition = True
    strategy = "partition"


class TopKMethod(PipelineMethod):
    name = "topk"
    description = "our pipeline: top-k candidates of the whole image with NMS, no partitions (VPN* protocol)"
    strategy = "topk"


#: Regions whose largest crop is smaller than this (analysis pixels) get a centred crop.
_MIN_PEER_SIDE = 16


class PeerMethod(CarouselMethod):
    """A single-crop peer run inside each saliency partition."""

    uses_partition = True
    extra = "peers"

    @property
    def version(self) -> str:  # peers run on our partitions, which change with the pipeline
        return _pipeline_version("2")

    def _predict(self, image, k, ratios):
        loaded, part = partition_regions(image, k, ratios)
        arr = loaded.analysis
        H, W = arr.shape[:2]
        sx, sy = loaded.size[0] / W, loaded.size[1] / H
        boxes = []
        for reg in part.regions:
            x1, y1 = max(int(math.floor(reg.x)), 0), max(int(math.floor(reg.y)), 0)
            x2, y2 = min(int(math.ceil(reg.x2)), W), min(int(math.ceil(reg.y2)), H)
            region = arr[y1:y2, x1:x2]
            ratio = best_fit_ratio(Box(0, 0, x2 - x1, y2 - y1), ratios)
            fit = fit_ratio_box(Box(0, 0, x2 - x1, y2 - y1), ratio)
            cw, ch = int(math.floor(fit.w)), int(math.floor(fit.h))
            if min(cw, ch) < _MIN_PEER_SIDE:
                # A degenerate region (the partition reports it as a failure):
                # the peer cannot work on a few pixels; keep the centred fit.
                b = fit
            else:
                b = self._crop(np.ascontiguousarray(region), cw, ch)
            boxes.append(b.translate(x1, y1).scale(sx, sy).clip(*loaded.size))
        return boxes, part.failure

    def _crop(self, region: np.ndarray, width: int, height: int) -> Box:
        """Best ``width x height`` crop of ``region`` (region pixels)."""
        raise NotImplementedError


class SmartcropMethod(PeerMethod):
    name = "smartcrop"
    description = "smartcrop.py (content-aware single crop) inside each of our saliency partitions"
    requires = ("smartcrop",)

    def _crop(self, region, width, height):
        import smartcrop
        from PIL import Image

        # smartcrop divides by a crop's area, which is 0 for candidates its
        # prescaling shrinks below a pixel; such candidates lose anyway.
        with np.errstate(divide="ignore", invalid="ignore"):
            res = smartcrop.SmartCrop().crop(Image.fromarray(region), width, height)
        c = res["top_crop"]
        return Box(float(c["x"]), float(c["y"]), float(c["width"]), float(c["height"]))


class VipsMethod(PeerMethod):
    name = "vips"
    description = "libvips smartcrop(interesting='attention') inside each of our saliency partitions"
    requires = ("pyvips",)

    def _crop(self, region, width, height):
        import pyvips

        h, w = region.shape[:2]
        width, height = min(width, w), min(height, h)
        img = pyvips.Image.new_from_array(region)
        out, opts = img.smartcrop(width, height, interesting="attention", attention_x=True, attention_y=True)
        # libvips centres the crop on the attention point, clamped to the image.
        left = int(min(max(opts["attention_x"] - width // 2, 0), w - width))
        top = int(min(max(opts["attention_y"] - height // 2, 0), h - height))
        got = out.numpy()
        if not np.array_equal(got, region[top: top + height, left: left + width]):
            left, top = _locate(region, got)
        return Box(float(left), float(top), float(width), float(height))


def _locate(region: np.ndarray, crop: np.ndarray) -> tuple[int, int]:
    """Offset of ``crop`` inside ``region`` (exhaustive; only used as a fallback)."""
    h, w = crop.shape[:2]
    for top in range(region.shape[0] - h + 1):
        for left in range(region.shape[1] - w + 1):
            if np.array_equal(region[top: top + h, left: left + w], crop):
                return left, top
    raise MulticropError("libvips returned a crop that is not part of the region")  # pragma: no cover


for _cls in (SlicesMethod, PartitionMethod, TopKMethod, SmartcropMethod, VipsMethod):
    METHODS.register(_cls)
del _cls
