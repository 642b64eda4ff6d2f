"""Single-crop peers run inside each of our saliency partitions: ``smartcrop`` and ``vips``.

The paper's protocol for single-crop models: each region of the partition
our pipeline chooses (:func:`~multicrop.evaluation.carousel.methods.partition_regions`)
gets the largest crop of its best-fitting ratio that the peer places.  Both
need the ``peers`` extra (``pip install 'multicrop[peers]'``).

References
----------
.. [1] R. Loya, A. Hamara, B. Estell, B. Kilpatrick and A. C. Freeman,
   "Carousel: A High-Resolution Dataset for Multi-Target Automatic Image
   Cropping", sections IV-A (partitioning) and IV-C (single-crop models on partitions).
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import MulticropError
from ...geometry import Box, fit_ratio_box
from .methods import METHODS, CarouselMethod, best_fit_ratio, partition_regions, pipeline_version

__all__ = ["PeerMethod", "SmartcropMethod", "VipsMethod", "locate_crop"]


#: Regions whose largest crop is smaller than this (analysis pixels) get a centred crop.
_MIN_PEER_SIDE = 16


class PeerMethod(CarouselMethod):
    """A single-crop peer run inside each saliency partition."""

    uses_partition = True
    extra = "peers"

    @property
    def version(self) -> str:  # peers run on our partitions, which change with the pipeline
        return pipeline_version("2")

    def _predict(self, image, k, ratios):
        loaded, part = partition_regions(image, k, ratios, threads=self.threads)
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


@METHODS.register
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


@METHODS.register
class VipsMethod(PeerMethod):
    name = "vips"
    description = "libvips smartcrop(interesting='attention') inside each of our saliency partitions"
    requires = ("pyvips",)

    def _crop(self, region, width, height):
        import pyvips

        # libvips's thread pool is process-wide; pyvips >= 3.2 sets it after
        # import (older ones read VIPS_CONCURRENCY when libvips starts and keep
        # their default here).  Only speed depends on it.
        if self.threads is not None and hasattr(pyvips, "concurrency_set"):
            pyvips.concurrency_set(self.threads)
        h, w = region.shape[:2]
        width, height = min(width, w), min(height, h)
        img = pyvips.Image.new_from_array(region)
        out, opts = img.smartcrop(width, height, interesting="attention", attention_x=True, attention_y=True)
        # libvips centres the crop on the attention point, clamped to the image.
        left = int(min(max(opts["attention_x"] - width // 2, 0), w - width))
        top = int(min(max(opts["attention_y"] - height // 2, 0), h - height))
        got = out.numpy()
        if not np.array_equal(got, region[top: top + height, left: left + width]):
            left, top = locate_crop(region, got)
        return Box(float(left), float(top), float(width), float(height))


def locate_crop(region: np.ndarray, crop: np.ndarray) -> tuple[int, int]:
    """``(left, top)`` of ``crop`` inside ``region``: the first exact copy in row-major order.

    :func:`cv2.matchTemplate` ranks every offset by the sum of squared
    differences; an exact copy sums to 0 and any other offset to at least 1,
    so the offsets within a small tolerance of the best are compared pixel
    for pixel, top row first.

    Parameters
    ----------
    region : ndarray of uint8, shape (H, W[, C])
    crop : ndarray of uint8, shape (h, w[, C]), h <= H, w <= W

    Raises
    ------
    MulticropError
        If ``crop`` is not a part of ``region``.

    Examples
    --------
    >>> region = np.arange(10 * 12 * 3, dtype=np.uint8).reshape(10, 12, 3)
    >>> locate_crop(region, region[3:8, 2:9])
    (2, 3)
    """
    import cv2  # where used, like the pipeline: a worker process limits threads before cv2 loads

    region, crop = np.ascontiguousarray(region), np.ascontiguousarray(crop)
    h, w = crop.shape[:2]
    if h > region.shape[0] or w > region.shape[1]:
        raise MulticropError(f"a {w}x{h} crop cannot be part of a {region.shape[1]}x{region.shape[0]} region")
    sqdiff = cv2.matchTemplate(region, crop, cv2.TM_SQDIFF)
    # matchTemplate sums in floating point: allow for its rounding, then check exactly.
    tolerance = 0.5 + 1e-6 * float(np.square(crop, dtype=np.float64).sum())
    for top, left in np.argwhere(sqdiff <= sqdiff.min() + tolerance):
        if np.array_equal(region[top: top + h, left: left + w], crop):
            return int(left), int(top)
    raise MulticropError("libvips returned a crop that is not part of the region")
