"""Blob-cut share: how often a crop's border crosses a salient blob.

Issue 9 asks that a crop never cut a salient blob it mostly holds, measured
as "the share of crops whose border crosses a salient blob, from the
U^2-Netp mask".  The definition here is the evaluation's own, fixed, and
independent of any method's saliency settings, so it applies alike to our
methods and to peers that compute no saliency:

1. **Map.**  U^2-Netp (:func:`multicrop.saliency.u2netp.u2netp_saliency`) on
   the photo decoded with EXIF orientation applied and reduced to a long side
   of :data:`MAP_SIDE` pixels.  The map is min-max normalised, so its maximum
   is 1 (or the map is all zero).
2. **Blobs.**  Pixels with saliency at least :data:`BLOB_THRESHOLD` (0.5, half
   the map's maximum), split into 8-connected components; components smaller
   than :data:`BLOB_MIN_AREA` of the image (0.5 %) are ignored.
3. **Cut.**  A crop cuts a blob when it holds more than ``CUT_BAND[0]`` (10 %)
   and less than ``CUT_BAND[1]`` (90 %) of the blob's pixels: a crop that
   holds a blob whole or nearly (a sliver off at the edge) does not cut it,
   nor does one that only grazes it.  A pixel belongs to a crop when its
   centre lies inside the crop.
4. **Counts.**  Per image, the number of predicted crops that cut at least
   one blob; per table row, those counts summed over the row's images
   divided by the predicted crops summed over them (:attr:`BlobCut.share`).

The map is computed once per image and cached as an 8-bit PNG (threshold
0.5 becomes 128/255) under the evaluation's ``saliency/`` directory, keyed by
the SHA-256 of the image file and :data:`BLOB_VERSION`, so resumed runs, other
methods and the report reuse it; an in-process cache serves repeats.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import ImageLoadError
from ...geometry import Box
from ...hashing import hash_stream
from ...io import atomic_write_bytes
from ...saliency.u2netp import VERSION as U2NETP_VERSION

__all__ = [
    "BLOB_THRESHOLD",
    "BLOB_MIN_AREA",
    "CUT_BAND",
    "MAP_SIDE",
    "BLOB_VERSION",
    "BlobCut",
    "mask_blobs",
    "cutting_crops",
    "blob_cut",
    "blob_map",
]

#: Saliency level of a blob pixel (the U^2-Netp map is min-max normalised: half its maximum).
BLOB_THRESHOLD = 0.5
#: Blobs smaller than this share of the image are ignored.
BLOB_MIN_AREA = 0.005
#: A crop cuts a blob when the share of the blob it holds lies strictly inside this band.
CUT_BAND = (0.10, 0.90)
#: Long side of the analysis copy the map is computed on (and cached at), in pixels.
MAP_SIDE = 512
#: Part of every cache key: bump when the map or its storage changes.
BLOB_VERSION = f"blobcut-1+{U2NETP_VERSION}+side{MAP_SIDE}"


@dataclass(frozen=True)
class BlobCut:
    """Blob cuts of one image's predicted crops.

    Attributes
    ----------
    crops : int
        Predicted crops.
    cuts : int
        Crops that cut at least one blob.
    blobs : int
        Salient blobs in the image (after the minimum area).
    """

    crops: int
    cuts: int
    blobs: int

    @property
    def share(self) -> float:
        """Share of the crops that cut a blob (0 without crops)."""
        return self.cuts / self.crops if self.crops else 0.0


def mask_blobs(
    saliency: np.ndarray, *, threshold: float = BLOB_THRESHOLD, min_area: float = BLOB_MIN_AREA
) -> tuple[np.ndarray, int]:
    """Label the salient blobs of a map (the metric's own fixed threshold and minimum area, apart
    from :func:`multicrop.crop.subjects.salient_blobs`, which finds the subjects direct selection
    crops; both label with :func:`multicrop.crop.subjects.connected_components`).

    Parameters
    ----------
    saliency : ndarray of float, shape (H, W), values in [0, 1]
    threshold : float
        Blob pixels have ``saliency >= threshold``.
    min_area : float
        Components covering less than this share of the image are dropped.

    Returns
    -------
    labels : ndarray of int32, shape (H, W)
        0 outside blobs, 1..n inside.
    n : int
        Number of blobs kept.

    Examples
    --------
    >>> m = np.zeros((10, 10)); m[1:4, 1:4] = 1; m[6:9, 6:9] = 0.7; m[0, 9] = 1
    >>> labels, n = mask_blobs(m, min_area=0.05)
    >>> n, int((labels == 1).sum()), int((labels == 2).sum())
    (2, 9, 9)
    """
    from ...crop.blobs import connected_components

    mask = np.asarray(saliency) >= threshold
    n, labels = connected_components(mask)
    area = np.bincount(labels.ravel(), minlength=n)
    keep = np.zeros(n, np.int32)
    area_min = min_area * mask.size
    k = 0
    for i in range(1, n):
        if area[i] >= area_min:
            k += 1
            keep[i] = k
    return keep[labels], k


def _pixel_span(lo: float, hi: float, scale: float, n: int) -> tuple[int, int]:
    """Pixels ``[i0, i1)`` whose centres ``(i + 0.5) / scale`` lie in ``[lo, hi)``."""
    i0 = int(np.ceil(lo * scale - 0.5))
    i1 = int(np.ceil(hi * scale - 0.5))
    return min(max(i0, 0), n), min(max(i1, 0), n)


def cutting_crops(
    labels: np.ndarray, n: int, boxes: Sequence[Box], size: tuple[float, float], *,
    band: tuple[float, float] = CUT_BAND,
) -> tuple[bool, ...]:
    """For each box, whether it cuts a blob of ``labels``.

    Parameters
    ----------
    labels : ndarray of int, shape (h, w)
        Blob labels from :func:`mask_blobs` (may be a reduced copy of the image).
    n : int
        Number of blobs.
    boxes : sequence of Box
        Crops in source pixels.
    size : (width, height)
        Source image size the boxes refer to.
    band : (float, float)
        A box cuts a blob when the share of the blob's pixels it holds is
        strictly between ``band[0]`` and ``band[1]``.
    """
    h, w = labels.shape
    sx, sy = w / size[0], h / size[1]
    total = np.bincount(labels.ravel(), minlength=n + 1)[1:]
    out = []
    for b in boxes:
        x0, x1 = _pixel_span(b.x, b.x2, sx, w)
        y0, y1 = _pixel_span(b.y, b.y2, sy, h)
        inside = np.bincount(labels[y0:y1, x0:x1].ravel(), minlength=n + 1)[1:]
        share = inside / np.maximum(total, 1)
        out.append(bool(np.any((share > band[0]) & (share < band[1]))))
    return tuple(out)


def blob_cut(saliency: np.ndarray, boxes: Sequence[Box], size: tuple[float, float]) -> BlobCut:
    """Blob cuts of ``boxes`` (source pixels of an image of ``size``) on a saliency map of that image.

    Examples
    --------
    >>> m = np.zeros((100, 100)); m[20:60, 20:60] = 1
    >>> blob_cut(m, [Box(0, 0, 100, 100), Box(0, 0, 40, 100)], (200, 200))
    BlobCut(crops=2, cuts=1, blobs=1)
    """
    labels, n = mask_blobs(saliency)
    return BlobCut(len(boxes), sum(cutting_crops(labels, n, boxes, size)), n)


#: Maps kept in memory (uint8, by file hash), so repeats in one process skip the disk and the model.
_MEMORY: OrderedDict[str, np.ndarray] = OrderedDict()
_MEMORY_SIZE = 64


def _compute_map(path: str, threads: int | None) -> np.ndarray:
    from ...io import load_image
    from ...saliency.u2netp import u2netp_saliency

    image = load_image(Path(path), max_side=MAP_SIDE).analysis
    if image.ndim == 2:
        image = np.repeat(image[:, :, None], 3, axis=2)
    sal = u2netp_saliency(np.ascontiguousarray(image[:, :, :3]), threads=threads)
    return np.round(sal * 255).astype(np.uint8)


def _map_u8(key: str, path: str, cache_dir: str | Path | None, threads: int | None) -> np.ndarray:
    import cv2

    file = Path(cache_dir) / BLOB_VERSION / f"{key.split(':')[-1][:32]}.png" if cache_dir is not None else None
    m8 = _MEMORY.get(key)
    if m8 is None and file is not None and file.is_file():
        m8 = cv2.imread(str(file), cv2.IMREAD_GRAYSCALE)
    if m8 is None:
        m8 = _compute_map(path, threads)
    if file is not None and not file.is_file():
        ok, png = cv2.imencode(".png", m8)
        if ok:
            atomic_write_bytes(file, png.tobytes())
    _MEMORY[key] = m8
    _MEMORY.move_to_end(key)
    while len(_MEMORY) > _MEMORY_SIZE:
        _MEMORY.popitem(last=False)
    return m8


def blob_map(image_path: str | Path, *, cache_dir: str | Path | None = None, threads: int | None = None) -> np.ndarray:
    """The evaluation's U^2-Netp map of a photo (reduced to :data:`MAP_SIDE`), from the cache when there.

    Parameters
    ----------
    image_path : path
    cache_dir : path, optional
        Directory of cached maps (``<cache_dir>/<BLOB_VERSION>/<sha256>.png``).
    threads : int, optional
        onnxruntime threads when the map has to be computed.

    Returns
    -------
    ndarray of float32, shape (h, w), values in [0, 1] (multiples of 1/255)

    Raises
    ------
    ImageLoadError
        The image cannot be read.

    Notes
    -----
    The last maps used are also kept in memory, by file hash (each is still
    written to ``cache_dir`` when missing there).
    """
    try:
        with open(image_path, "rb") as fh:
            key = hash_stream(fh)
    except OSError as exc:
        raise ImageLoadError(f"cannot read {image_path}: {exc.strerror or exc}") from None
    m8 = _map_u8(key, str(image_path), cache_dir, threads)
    return m8.astype(np.float32) / 255.0
