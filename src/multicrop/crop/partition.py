"""Multi-region saliency partitioning (Carousel §IV-A).

For ``i = 1 .. k`` the partitioner finds the smallest box of the target ratio
whose saliency reaches a share of the saliency still left, lowering that share
step by step until such a box exists; it then zeroes the box's saliency and
repeats.  The variance of the boxes' centres picks the orientation (more
spread in x: vertical cuts), and the image is cut midway between adjacent
boxes into ``k`` regions.  Partitions that are too narrow, or cuts through a
salient box, are reported as a failure rather than hidden.

The "share" is taken of the remaining saliency divided by the number of boxes
still to find (``threshold * remaining / (k - i)``), so that with ``k`` equal
subjects each box settles on one subject instead of the first box swallowing
them all.

Our adaptations (``partition-2``; each a :class:`~multicrop.crop.config.PartitionConfig`
field):

* a box also zeroes the salient blobs it holds at least ``absorb_share`` of
  (grown by ``claim_margin``), so a large subject is not split over two boxes
  while a small one gets none (the paper's "strong disparity" failure);
* each box is shrunk to the saliency it claimed (``Partition.subjects``);
  orientation, cuts and the bisect check use these subjects;
* given the saliency map, a cut goes on the least salient line between two
  subjects (``cut_centre_weight`` prefers the middle);
* when the paper's orientation fails, the other is tried
  (``orientation_fallback``); a repair is recorded in ``Partition.fallback``.

The search for the smallest box lives in :mod:`multicrop.crop.search`, the
cutting into regions in :mod:`multicrop.crop.cuts`.

References
----------
R. Loya et al., "Carousel: A High-Resolution Dataset for Multi-Target
Automatic Image Cropping", §IV-A (building on Hamara et al., 2025).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from ..errors import InvalidParameterError
from ..geometry import Box
from ..ratios import Ratio, parse_ratio
from ..measures import summed_area_table
from ..serialize import Serializable
from .config import PartitionConfig
from .cuts import ORIENTATIONS, cut_regions
from .search import smallest_box
from .blobs import connected_components

__all__ = ["PARTITION_VERSION", "Partition", "partition_saliency", "partition_from_boxes"]

#: Part of every output (``versions["partition"]``); bump it when partitions change.
#: partition-2: blobs claimed with their box, subjects, least-salient cuts, orientation fallback.
PARTITION_VERSION = "partition-2"


@dataclass(frozen=True)
class Partition(Serializable):
    """The result of saliency partitioning.

    Attributes
    ----------
    boxes : tuple of Box
        The salient boxes, in the order they were found, in saliency-map pixels.
    regions : tuple of Box
        ``k`` integer boxes tiling the image, ordered left to right
        (``vertical`` cuts) or top to bottom (``horizontal`` cuts).
    orientation : {"vertical", "horizontal"}
        Direction of the cuts.
    failure : str or None
        Why the partition is unusable, or None.
    size : (int, int)
        ``(width, height)`` of the map the coordinates refer to.
    subjects : tuple of Box
        Each salient box shrunk to the saliency actually inside it (same
        order as ``boxes``; equal to ``boxes`` when not given).  Cuts are
        placed and checked against these.
    fallback : str or None
        Which fallback repaired a partition whose paper orientation failed
        (``"orientation"``: the other cut direction), or None.

    Examples
    --------
    >>> p = Partition((Box(1, 1, 2, 3),), (Box(0, 0, 10, 5),), "vertical", None, (10, 5))
    >>> p.to_dict()["size"], Partition.from_dict(p.to_dict()) == p
    ([10, 5], True)
    """

    boxes: tuple[Box, ...]
    regions: tuple[Box, ...]
    orientation: str
    failure: str | None = None
    size: tuple[int, int] = (0, 0)
    subjects: tuple[Box, ...] = ()
    fallback: str | None = None

    def __post_init__(self) -> None:
        if not self.subjects:
            object.__setattr__(self, "subjects", tuple(self.boxes))
        if self.orientation not in ORIENTATIONS:
            raise InvalidParameterError(
                f"orientation must be 'vertical' or 'horizontal', got {self.orientation!r}"
            )

    @property
    def k(self) -> int:
        """Number of regions."""
        return len(self.regions)

    def scale(self, sx: float, sy: float | None = None) -> Partition:
        """The same partition in another resolution (e.g. source pixels).

        Examples
        --------
        >>> p = Partition((Box(1, 1, 2, 3),), (Box(0, 0, 10, 5),), "vertical", None, (10, 5))
        >>> p.scale(2).regions
        (Box(x=0, y=0, w=20, h=10),)
        """
        sy = sx if sy is None else sy
        return Partition(
            boxes=tuple(b.scale(sx, sy) for b in self.boxes),
            regions=tuple(r.scale(sx, sy) for r in self.regions),
            orientation=self.orientation,
            failure=self.failure,
            size=(round(self.size[0] * sx), round(self.size[1] * sy)),
            subjects=tuple(b.scale(sx, sy) for b in self.subjects),
            fallback=self.fallback,
        )

    def to_size(self, width: int, height: int) -> Partition:
        """Scale to an image of ``width x height`` pixels."""
        return self.scale(width / self.size[0], height / self.size[1])


def _work_copy(saliency: np.ndarray, work_side: int) -> tuple[np.ndarray, float, float]:
    """The map reduced to a long side of ``work_side`` (float64), and the scale back to its pixels."""
    h, w = saliency.shape
    f = work_side / max(h, w)
    if f >= 1:
        return saliency.astype(np.float64), 1.0, 1.0
    ws, hs = max(1, round(w * f)), max(1, round(h * f))
    small = cv2.resize(saliency.astype(np.float32), (ws, hs), interpolation=cv2.INTER_AREA)
    return small.astype(np.float64), w / ws, h / hs


def _check_inputs(saliency: np.ndarray, k: int, ratio: Ratio | str | float) -> tuple[int, float]:
    """``k`` as an int and the ratio's value, or the error that names what is wrong."""
    if not isinstance(saliency, np.ndarray) or saliency.ndim != 2 or saliency.size == 0:
        raise InvalidParameterError(
            f"saliency must be a non-empty (H, W) array, got {getattr(saliency, 'shape', type(saliency))}"
        )
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidParameterError(f"k must be an integer >= 1, got {k!r}")
    ratio = parse_ratio(ratio) if isinstance(ratio, str) else ratio
    r = ratio.value if isinstance(ratio, Ratio) else float(ratio)
    if not math.isfinite(r) or r <= 0:
        raise InvalidParameterError(f"ratio must be positive, got {ratio!r}")
    if not np.all(np.isfinite(saliency)) or float(saliency.min()) < 0:
        raise InvalidParameterError("saliency must be finite and non-negative")
    H, W = saliency.shape
    if k > max(W, H):
        raise InvalidParameterError(f"k={int(k)} regions do not fit a {W}x{H} map")
    return int(k), r


def partition_saliency(
    saliency: np.ndarray,
    *,
    k: int,
    ratio: Ratio | str | float,
    config: PartitionConfig | None = None,
) -> Partition:
    """Split an image into ``k`` regions, one per salient subject.

    Parameters
    ----------
    saliency : ndarray of float, shape (H, W)
        Non-negative saliency map.
    k : int
        Number of regions (crops).
    ratio : Ratio, str or float
        Target crop ratio (width:height) of the salient boxes.
    config : PartitionConfig, optional
        Thresholds (defaults: :class:`multicrop.crop.config.PartitionConfig`).

    Returns
    -------
    Partition
        Boxes and regions in the pixels of ``saliency``; ``failure`` says why
        the partition is unusable (a region narrower than
        ``min_region_aspect``, a cut through a salient box), or is None.

    Raises
    ------
    InvalidParameterError
        For a map that is not 2-D, has negative or non-finite values, or a
        bad ``k``.

    Examples
    --------
    >>> s = np.zeros((60, 180)); s[20:40, 20:40] = 1; s[20:40, 140:160] = 1
    >>> p = partition_saliency(s, k=2, ratio="1:1")
    >>> p.orientation, [(b.x, b.x2) for b in p.regions], p.failure
    ('vertical', [(0, 90), (90, 180)], None)
    """
    cfg = config or PartitionConfig()
    k, r = _check_inputs(saliency, k, ratio)
    H, W = saliency.shape
    work, sx, sy = _work_copy(saliency, cfg.work_side)
    h, w = work.shape
    remaining = work.copy()
    total = float(remaining.sum())
    max_area = w * h / k  # the paper's rule: a box covers at most 1/k of the image
    boxes: list[Box] = []
    subjects: list[Box] = []
    empty = False
    for i in range(k):
        left = float(remaining.sum())
        if empty or total <= 0 or left <= 1e-6 * total:
            # Saliency exhausted: look for empty space instead, away from the boxes found.
            empty = True
            remaining = _empty_space(work.shape, boxes)
            left = float(remaining.sum())
        box = _find_box(remaining, r, left=left, boxes_to_find=k - i, max_area=max_area, cfg=cfg)
        boxes.append(box)
        if empty:  # empty space: the box is its own subject
            subjects.append(box)
            remaining[int(box.y): int(box.y2), int(box.x): int(box.x2)] = 0
            continue
        mask = _subject_mask(remaining, box, level=cfg.blob_level, absorb=cfg.absorb_share)
        subjects.append(_tight_box(np.where(mask, remaining, 0.0), box, trim=cfg.subject_trim))
        remaining[_grow_claim(mask, cfg.claim_margin)] = 0

    full_boxes = tuple(Box(b.x * sx, b.y * sy, b.w * sx, b.h * sy) for b in boxes)
    full_subjects = tuple(Box(b.x * sx, b.y * sy, b.w * sx, b.h * sy) for b in subjects)
    return partition_from_boxes(full_boxes, width=W, height=H, config=cfg, subjects=full_subjects,
                                saliency=saliency)


def _empty_space(shape: tuple[int, int], boxes: list[Box]) -> np.ndarray:
    """A map of ones with the boxes found so far zeroed: where empty space may still be claimed."""
    space = np.ones(shape, np.float64)
    for b in boxes:
        space[int(b.y): int(b.y2), int(b.x): int(b.x2)] = 0
    return space


def _find_box(remaining: np.ndarray, r: float, *, left: float, boxes_to_find: int, max_area: float,
              cfg: PartitionConfig) -> Box:
    """The smallest valid box whose saliency reaches a share of ``left / boxes_to_find``.

    The share starts at ``cfg.threshold`` and is lowered by ``threshold_step``
    down to ``min_threshold``; if even that fails, the smallest box allowed.
    """
    sat = summed_area_table(remaining)
    share = cfg.threshold
    box = None
    while box is None and share >= cfg.min_threshold - 1e-9:
        target = share * left / boxes_to_find
        box = smallest_box(remaining, ratio=r, target=target, max_area=max_area, sat=sat)
        share -= cfg.threshold_step
    if box is None:  # nothing valid reaches even the lowest share: take the smallest allowed
        box = smallest_box(remaining, ratio=r, target=0.0, sat=sat) or Box(0, 0, 1, 1)
    return box


def _grow_claim(mask: np.ndarray, margin: float) -> np.ndarray:
    """``mask`` dilated by ``margin`` of its long side (at least 1 px; unchanged for 0): a blob's soft edge."""
    if margin <= 0:
        return mask
    r_px = max(1, round(margin * max(mask.shape)))
    return cv2.dilate(mask.astype(np.uint8), np.ones((2 * r_px + 1, 2 * r_px + 1), np.uint8)) > 0


def _subject_mask(remaining: np.ndarray, box: Box, *, level: float, absorb: float) -> np.ndarray:
    """The pixels a found box claims: the box, plus every salient blob it holds enough of.

    A blob is a connected component of ``remaining >= level * max``; the box
    claims it when it holds at least ``absorb`` of the blob's saliency.  A
    subject larger than the box found for it (one subject holding most of the
    saliency) is thus zeroed as a whole, instead of its remnant drawing the
    next box away from a smaller subject.
    """
    h, w = remaining.shape
    mask = np.zeros((h, w), bool)
    x1, y1, x2, y2 = int(box.x), int(box.y), int(box.x2), int(box.y2)
    mask[y1:y2, x1:x2] = True
    top = float(remaining.max())
    if absorb >= 1 or top <= 0:
        return mask
    n, labels = connected_components(remaining >= level * top)
    if n <= 1:
        return mask
    flat = labels.ravel()
    mass = np.bincount(flat, weights=remaining.ravel(), minlength=n)
    inside = np.bincount(labels[y1:y2, x1:x2].ravel(), weights=remaining[y1:y2, x1:x2].ravel(), minlength=n)
    claim = (inside >= absorb * np.maximum(mass, 1e-12)) & (inside > 0)
    claim[0] = False
    if claim.any():
        mask |= claim[labels]
    return mask


def _tight_box(saliency: np.ndarray, box: Box, *, trim: float) -> Box:
    """Bounding box of ``saliency`` trimmed by ``trim`` of its mass on each side (``box`` if empty)."""
    mass = float(saliency.sum())
    if mass <= 0:
        return box
    spans = []
    for prof in (saliency.sum(axis=0), saliency.sum(axis=1)):
        c = np.cumsum(prof) / mass
        lo = int(np.searchsorted(c, trim, side="right"))
        hi = int(np.searchsorted(c, 1 - trim, side="left")) + 1
        spans.append((lo, max(hi, lo + 1)))
    (ax, bx), (ay, by) = spans
    return Box(ax, ay, bx - ax, by - ay)


def partition_from_boxes(
    boxes: tuple[Box, ...] | list[Box], *, width: int, height: int, config: PartitionConfig | None = None,
    subjects: tuple[Box, ...] | list[Box] | None = None, saliency: np.ndarray | None = None,
) -> Partition:
    """Cut a ``width x height`` image into one region per box (the last step of the partitioner).

    The orientation follows the variance of the subject centres (more spread
    in x: vertical cuts).  Each cut lies midway between adjacent subjects, or,
    given ``saliency``, on the least salient line between them.  When a cut
    bisects a subject or leaves a region too narrow and
    ``config.orientation_fallback`` is on, the other orientation is tried; if
    it succeeds it is used and ``fallback`` says so (see
    :func:`multicrop.crop.cuts.cut_regions`).  Useful on its own, e.g. to
    partition by ground-truth boxes.

    Parameters
    ----------
    boxes : sequence of Box
        The salient boxes (in image pixels).
    subjects : sequence of Box, optional
        The boxes shrunk to their saliency (default: ``boxes``).
    saliency : ndarray, shape (height, width), optional
        Map whose row/column sums place the cuts.

    Examples
    --------
    >>> p = partition_from_boxes([Box(0, 0, 40, 40), Box(30, 50, 40, 40)], width=100, height=100)
    >>> p.orientation, [r.h for r in p.regions], p.failure
    ('horizontal', [45, 55], None)
    >>> partition_from_boxes([Box(0, 0, 60, 40), Box(30, 10, 60, 40)], width=100, height=60).failure
    'cut 1 at x=45 bisects a salient box (x 0..60)'
    """
    cfg = config or PartitionConfig()
    boxes = tuple(boxes)
    if not boxes:
        raise InvalidParameterError("boxes must not be empty")
    subjects = tuple(boxes) if subjects is None else tuple(subjects)
    if len(subjects) != len(boxes):
        raise InvalidParameterError(
            f"subjects must hold one box per salient box ({len(boxes)}), got {len(subjects)}"
        )
    W, H = int(width), int(height)
    if saliency is not None and saliency.shape != (H, W):
        raise InvalidParameterError(f"saliency must have shape {(H, W)}, got {saliency.shape}")
    cuts = cut_regions(subjects, width=W, height=H, config=cfg, saliency=saliency)
    return Partition(boxes, cuts.regions, cuts.orientation, cuts.failure, (W, H), subjects, cuts.fallback)
