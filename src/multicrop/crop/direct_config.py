"""Settings of ``strategy="direct"``: the objective's weights and thresholds.

Kept apart from :mod:`multicrop.crop.config` (which re-exports
:class:`DirectConfig`) so each module stays short.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidParameterError
from ..serialize import Serializable
from .checks import check_int as _check_int
from .checks import check_positive_int as _check_positive_int
from .checks import check_range as _check_range

__all__ = ["DirectConfig"]


@dataclass(frozen=True)
class DirectConfig(Serializable):
    """Weights and thresholds of ``strategy="direct"`` (:mod:`multicrop.crop.direct`).

    The objective, maximised greedily one crop at a time: with ``s_b`` the
    share of salient blob ``b`` a candidate holds, ``cov_b`` the largest
    share of ``b`` held by a crop already chosen (times ``group_credit``
    when ``b`` was not that crop's main blob), ``imp_b`` the blob's
    importance and ``q`` the scorer's quality of the candidate framing its
    main blob (at least 0)::

        new    = imp_main * max(s_main - cov_main, 0)
                 + group_credit * sum_{b != main} imp_b * max(s_b - cov_b, 0)
        shared = sum_b imp_b * min(s_b, cov_b)
        gain   = q * new - shared_weight * shared - overlap_weight * max IoU(crop, chosen)
        q      = max(score + aspect_weight * aspect_fit + photo_orientation * same_orientation
                     - other_weight * sum_{b != main} imp_b * s_b, 0)

    Shared saliency costs far more than shared rectangle (``shared_weight``
    2.0 against ``overlap_weight`` 0.25): two crops of distinct subjects may
    overlap, two crops of one subject may not.  ``k="auto"`` stops when the
    best gain is below ``min_gain``; a fixed ``k`` stops when no candidate
    adds at least ``distinct_share`` of a new subject (and says so).

    Attributes
    ----------
    blob_level : float
        Salient blobs are connected components of saliency at or above this
        fraction of the maximum.
    blob_close : float
        Morphological closing radius, fraction of the long side, applied
        before labelling (joins the parts of one subject).
    min_peak : float
        A blob whose highest saliency is below this fraction of the maximum is noise.
    min_blob_share : float
        A blob whose mass is below this share of the largest blob's is noise.
    weak_floor, weak_peak, weak_share : float
        Weak subjects (a thin or low-contrast subject the saliency model
        barely marks): connected components of saliency at or above
        ``weak_floor`` of the maximum (after the same closing) that hold no
        blob found above, whose peak reaches ``weak_peak`` of the maximum and
        whose mass (pixels at or above ``blob_level`` of *their own* peak) is at
        least ``weak_share`` of the largest blob's.  ``weak_peak >= min_peak``
        finds none.  A weak blob heavier than the largest strong one is haze,
        not a subject.
    max_weak : int
        At most this many weak subjects (the heaviest); a star field or a
        textured ground otherwise yields a crop per speck.
    max_blobs : int
        At most this many blobs (the most massive) are subjects.
    size_exponent : float
        Importance of a blob: ``(mass / largest mass) ** size_exponent``.
    fills : tuple of float
        Blob framings: the blob spans these fractions of the crop.
    placements : tuple of float
        Blob framings: the blob's centre at these fractions of the crop
        along each axis (centre and thirds).
    window_scales : tuple of float
        Sliding windows over the whole image, relative to the largest box of the ratio.
    window_stride : float
        Their stride, fraction of the window.
    hold_share, whole_share : float
        A crop never holds a blob by a share in ``[hold_share, whole_share)``
        (it does not cut a blob it mostly holds), and holds at least
        ``whole_share`` of its own main blob.
    group_credit : float
        Weight of the new saliency of blobs other than the main one (a
        crop of two subjects counts less than two crops).
    other_weight : float
        Quality lost per unit of importance-weighted share of other blobs the
        crop holds (a crop shows one subject).
    aspect_weight, aspect_sigma : float
        Quality gained for a crop ratio near its main blob's own aspect:
        ``aspect_weight * exp(-log(ratio / blob aspect)**2 / (2 aspect_sigma**2))``
        (the orientation follows the subject's extent).
    min_crop_share : float
        No crop's long side is shorter than this share of the photo's long
        side (or than the longest crop of its ratio, in a panorama): 99 % of
        the 379 human crops of Carousel have a long side of at least 0.23 of
        their photo's, and a smaller crop is a fragment no one posts.
    photo_orientation : float
        Quality gained by a crop whose orientation is the photo's own
        (landscape crops of a landscape photo; 1:1 crops and square photos
        gain nothing): a subject near square, or a
        scene without one dominant direction, is framed the way the
        photographer held the camera.  On carousel-synth seed 1 (the tuning
        set) 0.2 with ``aspect_weight`` 0.15 raised orientation accuracy from
        0.604 to 0.671 and kIoU@0.5 from 0.386 to 0.426 (``k`` given).
    shared_weight : float
        Cost per unit of importance-weighted saliency already covered.
    overlap_weight : float
        Cost per unit of the largest IoU with a chosen crop.
    min_gain : float
        ``k="auto"``: stop when the best gain falls below this.
    distinct_share : float
        Fixed ``k``: a crop adding less new importance-weighted saliency
        than this is not a distinct subject.
    shortlist_slack, shortlist_iou : float
        ``select_direct(..., shortlist=n)``: an alternative to a chosen crop
        holds its subject at most ``shortlist_slack`` less fully and shares
        at most ``shortlist_slack`` more saliency with the other chosen
        crops; no two alternatives overlap by more than ``shortlist_iou``.
    """

    blob_level: float = 0.3
    blob_close: float = 0.01
    min_peak: float = 0.5
    min_blob_share: float = 0.01
    weak_floor: float = 0.05
    weak_peak: float = 0.2
    weak_share: float = 0.005
    max_weak: int = 2
    max_blobs: int = 12
    size_exponent: float = 0.25
    fills: tuple[float, ...] = (0.55, 0.62, 0.7, 0.78, 0.85, 0.92)
    placements: tuple[float, ...] = (1 / 3, 0.5, 2 / 3)
    window_scales: tuple[float, ...] = (1.0, 0.75, 0.55, 0.4, 0.3, 0.22)
    window_stride: float = 0.2
    hold_share: float = 0.5
    whole_share: float = 0.9
    group_credit: float = 0.25
    other_weight: float = 1.0
    aspect_weight: float = 0.15
    aspect_sigma: float = 0.5
    photo_orientation: float = 0.2
    min_crop_share: float = 0.2
    shared_weight: float = 2.0
    overlap_weight: float = 0.25
    min_gain: float = 0.15
    distinct_share: float = 0.05
    shortlist_slack: float = 0.05
    shortlist_iou: float = 0.8

    def __post_init__(self) -> None:
        for name in ("blob_level", "min_peak", "whole_share", "window_stride", "weak_floor", "weak_peak"):
            _check_range(self, name, 0, 1, lo_open=True)
        for name in ("min_blob_share", "hold_share", "group_credit", "distinct_share", "weak_share", "min_crop_share",
                     "shortlist_slack", "shortlist_iou"):
            _check_range(self, name, 0, 1)
        _check_range(self, "blob_close", 0, 0.25)
        _check_range(self, "aspect_sigma", 0, 10, lo_open=True)
        for name in ("size_exponent", "shared_weight", "overlap_weight", "min_gain", "other_weight",
                     "aspect_weight", "photo_orientation"):
            _check_range(self, name, 0, 1e6)
        _check_positive_int(self, "max_blobs")
        _check_int(self, "max_weak", minimum=0)
        if self.hold_share > self.whole_share:
            raise InvalidParameterError(
                f"hold_share must be <= whole_share ({self.whole_share}), got {self.hold_share!r}")
        for name in ("fills", "placements", "window_scales"):
            vals = tuple(float(v) for v in getattr(self, name))
            if not vals or any(not 0 < v <= 1 for v in vals):
                raise InvalidParameterError(f"{name} must be numbers in (0, 1], got {getattr(self, name)!r}")
            object.__setattr__(self, name, vals)
