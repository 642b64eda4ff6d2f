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

from .config import PartitionConfig
from ..errors import InvalidParameterError
from ..geometry import Box, Ratio, parse_ratio

__all__ = ["PARTITION_VERSION", "Partition", "partition_saliency", "partition_from_boxes", "smallest_box", "summed_area_table"]

ORIENTATIONS = ("vertical", "horizontal")

#: Part of every output (``versions["partition"]``); bump it when partitions change.
#: partition-2: blobs claimed with their box, subjects, least-salient cuts, orientation fallback.
PARTITION_VERSION = "partition-2"


@dataclass(frozen=True)
class Partition:
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

    def to_dict(self) -> dict:
        return {
            "boxes": [b.to_dict() for b in self.boxes],
            "regions": [r.to_dict() for r in self.regions],
            "orientation": self.orientation,
            "failure": self.failure,
            "size": list(self.size),
            "subjects": [b.to_dict() for b in self.subjects],
            "fallback": self.fallback,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Partition:
        return cls(
            boxes=tuple(Box.from_dict(b) for b in d["boxes"]),
            regions=tuple(Box.from_dict(r) for r in d["regions"]),
            orientation=d["orientation"],
            failure=d.get("failure"),
            size=tuple(d.get("size", (0, 0))),
            subjects=tuple(Box.from_dict(b) for b in d.get("subjects", ())),
            fallback=d.get("fallback"),
        )


def summed_area_table(saliency: np.ndarray) -> np.ndarray:
    """Summed-area table with a zero first row and column, float64, shape (H+1, W+1).

    ``S[y2, x2] - S[y1, x2] - S[y2, x1] + S[y1, x1]`` is the sum over rows
    ``y1:y2`` and columns ``x1:x2``.

    Examples
    --------
    >>> S = summed_area_table(np.ones((2, 3)))
    >>> S.shape, float(S[2, 3])
    ((3, 4), 6.0)
    """
    h, w = saliency.shape
    out = np.zeros((h + 1, w + 1), np.float64)
    np.cumsum(np.cumsum(saliency, axis=0, dtype=np.float64), axis=1, out=out[1:, 1:])
    return out


def _window_sums(sat: np.ndarray, bw: int, bh: int) -> np.ndarray:
    """Sums of every ``bw x bh`` window; shape (H-bh+1, W-bw+1), index = top-left corner."""
    return sat[bh:, bw:] - sat[:-bh, bw:] - sat[bh:, :-bw] + sat[:-bh, :-bw]


def _box_dims(side: int, r: float, w: int, h: int) -> tuple[int, int]:
    """Width and height of the box whose long side is ``side`` (at least 1 px each)."""
    if r >= 1:
        bw, bh = side, max(1, round(side / r))
    else:
        bh, bw = side, max(1, round(side * r))
    return min(bw, w), min(bh, h)


def smallest_box(
    saliency: np.ndarray, *, ratio: Ratio | float, target: float, max_area: float | None = None,
    sat: np.ndarray | None = None,
) -> Box | None:
    """Smallest box of ``ratio`` whose saliency sum reaches ``target``.

    The best sum over all positions grows with the box size (a larger box at
    the same ratio contains a smaller one), so the smallest size is found by
    bisection over sizes, each size tested at every position at once through
    the summed-area table: ``O(HW log max(H, W))``, vectorised.  Among the
    positions of that size the one with the largest sum wins.

    Parameters
    ----------
    saliency : ndarray, shape (H, W)
    ratio : Ratio or float
        Width over height of the box.
    target : float
        Saliency sum to reach.
    max_area : float, optional
        Boxes larger than this (pixels) are not valid.

    Returns
    -------
    Box or None
        Integer box, or None when no valid box reaches ``target``.

    Examples
    --------
    >>> s = np.zeros((50, 80)); s[10:20, 30:40] = 1
    >>> smallest_box(s, ratio=1.0, target=100)
    Box(x=30, y=10, w=10, h=10)
    """
    r = ratio.value if isinstance(ratio, Ratio) else float(ratio)
    h, w = saliency.shape
    sat = summed_area_table(saliency) if sat is None else sat
    if r >= 1:
        max_long = min(w, math.floor(h * r)) if h * r < w else w
    else:
        max_long = min(h, math.floor(w / r)) if w / r < h else h
    max_long = max(1, max_long)

    def best(side: int) -> tuple[float, int, int, int, int]:
        bw, bh = _box_dims(side, r, w, h)
        sums = _window_sums(sat, bw, bh)
        top = float(sums.max())
        # Ties (a subject smaller than the box): take the middle of the tied positions.
        tied = np.flatnonzero(sums >= top - 1e-9 * max(abs(top), 1.0))
        y, x = divmod(int(tied[len(tied) // 2]), sums.shape[1])
        return top, x, y, bw, bh

    need = target - 1e-9 * max(abs(target), 1.0)

    lo, hi = 1, max_long
    if max_area is not None:
        hi = _largest_side_within(hi, max_area, r, w, h)
        if hi is None:
            return None
    if best(hi)[0] < need:
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if best(mid)[0] >= need:
            hi = mid
        else:
            lo = mid + 1
    _, x, y, bw, bh = best(lo)
    return Box(x, y, bw, bh)


def _largest_side_within(hi: int, max_area: float, r: float, w: int, h: int) -> int | None:
    """Largest long side ``<= hi`` whose box area is at most ``max_area`` (None if none)."""
    lo, ok = 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        bw, bh = _box_dims(mid, r, w, h)
        if bw * bh <= max_area:
            ok, lo = mid, mid + 1
        else:
            hi = mid - 1
    return ok


def _work_copy(saliency: np.ndarray, work_side: int) -> tuple[np.ndarray, float, float]:
    h, w = saliency.shape
    f = work_side / max(h, w)
    if f >= 1:
        return saliency.astype(np.float64), 1.0, 1.0
    ws, hs = max(1, round(w * f)), max(1, round(h * f))
    small = cv2.resize(saliency.astype(np.float32), (ws, hs), interpolation=cv2.INTER_AREA)
    return small.astype(np.float64), w / ws, h / hs


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
    if not isinstance(saliency, np.ndarray) or saliency.ndim != 2 or saliency.size == 0:
        raise InvalidParameterError(
            f"saliency must be a non-empty (H, W) array, got {getattr(saliency, 'shape', type(saliency))}"
        )
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidParameterError(f"k must be an integer >= 1, got {k!r}")
    k = int(k)
    ratio = parse_ratio(ratio) if isinstance(ratio, str) else ratio
    r = ratio.value if isinstance(ratio, Ratio) else float(ratio)
    if not math.isfinite(r) or r <= 0:
        raise InvalidParameterError(f"ratio must be positive, got {ratio!r}")
    if not np.all(np.isfinite(saliency)) or float(saliency.min()) < 0:
        raise InvalidParameterError("saliency must be finite and non-negative")
    H, W = saliency.shape
    long_axis = W if W >= H else H
    if k > long_axis:
        raise InvalidParameterError(f"k={k} regions do not fit a {W}x{H} map")

    work, sx, sy = _work_copy(saliency, cfg.work_side)
    h, w = work.shape
    remaining = work.copy()
    total = float(remaining.sum())
    max_area = cfg.max_box_area * w * h / k
    boxes: list[Box] = []
    subjects: list[Box] = []
    empty = False
    for i in range(k):
        left = float(remaining.sum())
        if empty or total <= 0 or left <= 1e-6 * total:
            # Saliency exhausted: look for empty space instead, away from the boxes found.
            empty = True
            remaining = np.ones_like(work)
            for b in boxes:
                remaining[int(b.y): int(b.y2), int(b.x): int(b.x2)] = 0
            left = float(remaining.sum())
        sat = summed_area_table(remaining)
        share = cfg.threshold
        box = None
        while box is None and share >= cfg.min_threshold - 1e-9:
            box = smallest_box(remaining, ratio=r, target=share * left / (k - i), max_area=max_area, sat=sat)
            share -= cfg.threshold_step
        if box is None:  # nothing valid reaches even the lowest share: take the smallest allowed
            box = smallest_box(remaining, ratio=r, target=0.0, sat=sat) or Box(0, 0, 1, 1)
        boxes.append(box)
        if empty:  # empty space: the box is its own subject
            subjects.append(box)
            remaining[int(box.y): int(box.y2), int(box.x): int(box.x2)] = 0
            continue
        mask = _subject_mask(remaining, box, level=cfg.blob_level, absorb=cfg.absorb_share)
        subjects.append(_tight_box(np.where(mask, remaining, 0.0), box, trim=cfg.subject_trim))
        if cfg.claim_margin > 0:  # the blob's soft edge goes with it
            r_px = max(1, round(cfg.claim_margin * max(h, w)))
            mask = cv2.dilate(mask.astype(np.uint8), np.ones((2 * r_px + 1, 2 * r_px + 1), np.uint8)) > 0
        remaining[mask] = 0

    full_boxes = tuple(Box(b.x * sx, b.y * sy, b.w * sx, b.h * sy) for b in boxes)
    full_subjects = tuple(Box(b.x * sx, b.y * sy, b.w * sx, b.h * sy) for b in subjects)
    return partition_from_boxes(full_boxes, width=W, height=H, config=cfg, subjects=full_subjects,
                                saliency=saliency)


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
    n, labels = cv2.connectedComponents((remaining >= level * top).astype(np.uint8), connectivity=8)
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


def _place_cut(profile: np.ndarray | None, a: Box, b: Box, vertical: bool, centre_weight: float) -> int:
    """Where to cut between adjacent subjects ``a`` and ``b`` (ordered along the axis).

    Without a saliency profile: midway between the facing edges (the paper).
    With one: the least salient line between the facing edges, or between the
    subjects' centres when they overlap, with a mild preference for the middle
    of that span (``centre_weight`` times the squared distance from the middle
    in half-spans, relative to the span's most salient line).
    """
    lo_a, hi_a = (a.x, a.x2) if vertical else (a.y, a.y2)
    lo_b, hi_b = (b.x, b.x2) if vertical else (b.y, b.y2)
    mid = (hi_a + lo_b) / 2
    if profile is None:
        return int(round(mid))
    if hi_a < lo_b:
        lo, hi = hi_a, lo_b
    else:
        lo, hi = (lo_a + hi_a) / 2, (lo_b + hi_b) / 2
        mid = (lo + hi) / 2
    i0 = max(1, int(math.ceil(lo)))
    i1 = min(len(profile) - 1, int(math.floor(hi)))
    if i1 < i0:
        return int(round(mid))
    cols = np.arange(i0, i1 + 1)
    seg = profile[i0: i1 + 1]
    half = max((hi - lo) / 2, 1.0)
    cost = seg / (float(seg.max()) + 1e-12) + centre_weight * ((cols - mid) / half) ** 2
    return int(cols[int(np.argmin(cost))])


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
    it succeeds it is used and ``fallback`` says so.  Useful on its own, e.g.
    to partition by ground-truth boxes.

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
    k = len(boxes)
    if k == 1:
        orientation = "vertical" if W >= H else "horizontal"
    else:
        cx = np.array([b.center[0] for b in subjects])
        cy = np.array([b.center[1] for b in subjects])
        orientation = "vertical" if cx.var() >= cy.var() else "horizontal"
    regions, failure = _cut(subjects, W, H, orientation == "vertical", cfg, saliency)
    fallback = None
    if failure is not None and k > 1 and cfg.orientation_fallback:
        other = "horizontal" if orientation == "vertical" else "vertical"
        regions2, failure2 = _cut(subjects, W, H, other == "vertical", cfg, saliency)
        if failure2 is None:
            regions, failure, orientation, fallback = regions2, None, other, "orientation"
    return Partition(boxes, regions, orientation, failure, (W, H), subjects, fallback)


def _cut(subjects: tuple[Box, ...], W: int, H: int, vertical: bool, cfg: PartitionConfig,
         saliency: np.ndarray | None) -> tuple[tuple[Box, ...], str | None]:
    """Regions cut along one axis between the subjects, and the failure (or None)."""
    k = len(subjects)
    extent = W if vertical else H
    lo_of = (lambda b: b.x) if vertical else (lambda b: b.y)
    hi_of = (lambda b: b.x2) if vertical else (lambda b: b.y2)
    order = sorted(subjects, key=lambda b: (b.center[0] if vertical else b.center[1]))
    profile = None
    if saliency is not None:
        profile = saliency.sum(axis=0 if vertical else 1, dtype=np.float64)
    cuts = [0]
    for a, b in zip(order, order[1:]):
        cuts.append(_place_cut(profile, a, b, vertical, cfg.cut_centre_weight))
    cuts.append(extent)
    failure = None
    # Keep cuts ordered and inside the image even when boxes overlap.
    for j in range(1, k):
        cuts[j] = min(max(cuts[j], cuts[j - 1] + 1), extent - (k - j))
    regions = tuple(
        Box(c0, 0, c1 - c0, H) if vertical else Box(0, c0, W, c1 - c0) for c0, c1 in zip(cuts, cuts[1:])
    )
    for j, c in enumerate(cuts[1:-1], start=1):
        for b in subjects:
            lo, hi = lo_of(b), hi_of(b)
            size = hi - lo
            if size > 0 and lo < c < hi and min(c - lo, hi - c) > cfg.bisect_tolerance * size:
                failure = (
                    f"cut {j} at {'x' if vertical else 'y'}={c} bisects a salient box "
                    f"({'x' if vertical else 'y'} {lo:.0f}..{hi:.0f})"
                )
                break
        if failure:
            break
    if failure is None:
        for j, reg in enumerate(regions, start=1):
            if min(reg.w, reg.h) < cfg.min_region_aspect * max(reg.w, reg.h):
                failure = (
                    f"region {j} is {reg.w:.0f}x{reg.h:.0f}, narrower than "
                    f"1:{1 / cfg.min_region_aspect:.3g}"
                )
                break
    return regions, failure
