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
    share of subject ``b`` (:class:`multicrop.crop.subjects.Subject`) a candidate holds, ``cov_b`` the largest
    share of ``b`` held by a crop already chosen (times ``group_credit``
    when ``b`` was not that crop's main blob), ``imp_b`` the blob's
    importance and ``q`` the scorer's quality of the candidate framing its
    main subject (at least 0)::

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
    min_person_score, min_animal_score, min_vehicle_score, min_object_score : float
        A detection is a subject from this confidence on.  0.4 for people,
        animals and vehicles: below it a general detector's boxes are mostly
        fragments (a hand, a wheel) or look-alikes (a statue, a poster), and
        a false subject costs a crop of nothing; objects (a cup, a bag) need
        0.5, as a false one is worse than a missed one.
    guard_score : float
        A person, animal or vehicle detected with at least this confidence but
        under its kind's floor is a *guard*: not framed, never sliced (a
        half-hidden person scores low, and slicing one is the worst crop).
        0.3 is the general detector's own default floor.
    min_subject_area : float
        A detection covering less of the frame is background (a passer-by in
        the distance, a car down the street): not a subject (an animal or
        vehicle from ``guard_area`` on is still never sliced; small people
        are ``crowd_min``'s).  0.01: a figure of 1 % of the frame is too
        small to carry a slide.
    max_object_area : float
        An object (not a person, animal or vehicle) covering more of the frame
        is the setting (a dining table, a bed, a couch), not a subject.
    group_overlap, group_margin : float
        People, animals and vehicles whose boxes overlap by at least
        ``group_overlap`` of the smaller box, or stand so close that one's box
        grown by ``group_margin`` of its height takes in a slice of the other,
        form one group subject: a crop holding one with any margin would
        slice the other (a couple, a crowd).  An object overlapping a body by
        ``group_overlap`` joins it (a rider's horse, the bench someone sits on).
    body_whole : float
        A body counts as held whole from this share of its box (or mask) on:
        a detector's box fits the body closely, so holding 90 % of it can
        still cut off a head or the feet.
    vehicle_weight, object_weight : float
        Importance of a vehicle / an object relative to a person or animal of
        the same size (what people look at first).
    max_blob_area : float
        A salient blob covering more of the frame is background (sky, a wall),
        never a subject.
    saliency_outside, saliency_weight, min_blob_importance, min_blob_mean : float
        Beside detector subjects, a salient blob is a subject only when
        ``saliency_outside`` of its saliency lies outside every detector box,
        its importance among the blobs is at least ``min_blob_importance`` and
        its mean saliency at least ``min_blob_mean`` of the map's maximum (a
        thing the model marks as a whole, not a loose patch of texture or
        light: on coco-subjects 0.5 takes the empty crops from 14 % to 7 %);
        it then weighs ``saliency_weight`` of its importance.
    scene_share : float
        With no detector subject, salient blobs are subjects only when they
        hold at least this share of the saliency map's mass; less, and the
        saliency is a texture spread over the scene (grass, dunes, blinds, a
        stormy sky) whose blobs are arbitrary fragments: the photo gets one
        view.  On the 23 Debian photographs of carousel-synth-hard's
        backgrounds the blobs of the seven textures hold 10-24 % of the mass,
        those of the photos with a subject (a ladybird, a kite, a flower) 60-99 %.
    max_subjects : int
        At most this many subjects (the most important).
    out_share : float
        A body (person, animal, vehicle) a crop holds by more than this share
        and less than ``whole_share`` is sliced; a crop slicing one is refused
        (this also refuses slivers of a body at the crop's edge).  Only where
        no crop holds the main subject whole without slicing another do the
        fewest cuts win, a person cut at a portrait line
        (:func:`multicrop.crop.subjects.portrait_lines`) before any other.
    part_share : float
        A group no crop holds whole (wider than any crop of the ratios) is
        framed by the largest part of it a crop holds without slicing anyone,
        if that part is at least this share of the group; else by its most
        complete framings with the fewest bodies cut.
    min_headroom, headroom_weight : float
        A person's crop whose top lies less than ``min_headroom`` of its height
        above the highest head (the photo's own top edge excepted) loses
        ``headroom_weight``.
    lead_weight : float
        A person who faces left or right gains up to this much when more of
        the crop lies in the direction they look (lead room).
    wide_share, wide_weight : float
        A crop covering more than ``wide_share`` of the photo, and more than
        the tightest framing of its main subject needs, loses up to
        ``wide_weight`` (linearly to the whole photo): a slide that shows most
        of the photo adds no detail to the post, unless its subject fills it.
    platform_side, platform_share : int, float
        Crops of at least ``platform_side`` source pixels on the long side
        (the width platforms show, 1,080 px) wherever such a crop is at most
        ``platform_share`` of the photo's long side; narrower crops are said
        in the notes.  0 turns the rule off.
    zoom_share, zoom_min_area, zoom_shrink, zoom_iou : float
        Close-ups (:func:`multicrop.crop.direct.close_ups`): once every
        distinct subject has a crop, a person, animal or vehicle covering at
        least ``zoom_min_area`` of the photo (a group's members one by one)
        that no crop of at most ``zoom_share`` of the photo holds whole gets
        a crop of its own, of at most ``zoom_share`` of the photo and
        ``zoom_shrink`` of any crop already holding it, overlapping every
        crop by at most ``zoom_iou``.  ``zoom_share`` 0 turns close-ups off.
    zoom_relative : float
        A close-up's body is at least this share of the largest body's box
        (a passer-by behind the main subject gets none).
    zoom_sliver : float
        In a close-up, an animal or vehicle of the same group that stands
        behind the subject (its box ends higher in the frame; no mask) may
        show by up to this share of what is seen of it: a herd is framed so.
        On coco-subjects 0.1 adds one featured subject and no cut.
    behind_margin : float
        An animal or vehicle is behind another of its group when their boxes
        overlap and the other's ends lower in the frame by at least this
        share of its own height.  0.1: two overlapping boxes of one giraffe
        (a detector's fragment beside the whole) end nearly level, and with
        no margin the fragment got a close-up through the giraffe (one of the
        45 coco-subjects photos outside the 55; those keep every number).
    zoom_mask_whole : float
        In a close-up, a neighbour with a mask (a person: an outline, not a
        detector's loose box) counts as held whole from this share of its
        mask on (the benchmark's own "whole" is 90 %); other crops keep
        ``body_whole``.  On coco-subjects 0.9 gives the couple cutting a cake
        their close-up (featured 28 -> 30 of 76, no cut more); 0.9 for every
        crop instead cost covered 90.8 -> 88.2 %, one person cut and two
        subject cuts more.
    crowd_min, crowd_share : int, float
        At least ``crowd_min`` people, each under ``min_subject_area``, whose
        boxes grown by their height touch, are a crowd (a guard); no crop
        holds a share of a crowd's boxes between ``crowd_share`` and
        ``1 - crowd_share``.  ``crowd_min`` 0: no crowds.
    detail_area, detail_relative : float
        ``k="auto"`` in a photo with detected subjects: a subject whose box
        covers less than ``detail_area`` of the photo and less than
        ``detail_relative`` of the largest subject's box (for a person, animal
        or vehicle: of the largest detected one's, so an airplane over a
        bright island keeps its slide) is a detail of the scene (a range
        hood, a pan, a microwave beside the cooks): no crop of
        its own, said in the notes when no crop holds it; a fixed ``k`` still
        frames it, and so does a photo of salient subjects alone (a boat far
        out beside a headland may be the point of it).  On coco-subjects
        (k auto) the empty crops fall from 7 of 89 to 3 of 82 and no other
        count changes; applied to a fixed k as well it cost carousel-synth
        (k given) kIoU@0.5 0.437 -> 0.411, hence auto only.  ``detail_area``
        0 turns it off.
    salient_detail : float
        ``k="auto"``: a salient subject (a thing no detector names) whose box
        is smaller than this share of the largest detected person's,
        animal's or vehicle's is a detail beside it too (a tap beside a toy
        figure), whatever its size; larger ones keep
        their slide (an island under an airplane, a triumphal arch above a
        street).  On coco-subjects empty crops 3 -> 2 of 82 (the tap), no
        other count changed; on the other 45 photos nothing changed.  0 turns
        it off.
    guard_area : float
        An animal or vehicle detected with at least ``guard_score`` that
        covers from ``guard_area`` up to ``min_subject_area`` of the frame is
        a guard: too small for a slide, never sliced (a car down the street
        under the crop of a clock).  People that small are the crowds'
        business (``crowd_min``); guarding each lone one cost crops and no
        cut.  On coco-subjects subject-cut 8 -> 7 of 82 crops.  1 turns it off.
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
    fills: tuple[float, ...] = (0.55, 0.62, 0.7, 0.78, 0.85, 0.92, 0.97)
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
    min_person_score: float = 0.4
    min_animal_score: float = 0.4
    min_vehicle_score: float = 0.4
    min_object_score: float = 0.5
    guard_score: float = 0.3
    min_subject_area: float = 0.01
    max_object_area: float = 0.4
    group_overlap: float = 0.1
    group_margin: float = 0.0
    body_whole: float = 0.99
    vehicle_weight: float = 0.8
    object_weight: float = 0.5
    max_blob_area: float = 0.5
    saliency_outside: float = 0.5
    saliency_weight: float = 1.0
    min_blob_importance: float = 0.0
    min_blob_mean: float = 0.5
    scene_share: float = 0.3
    max_subjects: int = 16
    out_share: float = 0.01
    part_share: float = 0.4
    min_headroom: float = 0.03
    headroom_weight: float = 0.3
    lead_weight: float = 0.1
    wide_share: float = 0.5
    wide_weight: float = 1.0
    platform_side: int = 1080
    platform_share: float = 0.6
    zoom_share: float = 0.55
    zoom_min_area: float = 0.02
    zoom_shrink: float = 0.75
    zoom_iou: float = 0.6
    zoom_relative: float = 0.25
    zoom_sliver: float = 0.1
    zoom_mask_whole: float = 0.9
    behind_margin: float = 0.1
    crowd_min: int = 5
    crowd_share: float = 0.15
    detail_area: float = 0.02
    detail_relative: float = 0.25
    salient_detail: float = 1.0
    guard_area: float = 0.003

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
        for name in ("min_person_score", "min_animal_score", "min_vehicle_score", "min_object_score",
                     "guard_score", "min_subject_area", "max_object_area", "group_overlap", "group_margin",
                     "body_whole", "vehicle_weight", "object_weight", "max_blob_area", "saliency_outside",
                     "saliency_weight", "min_blob_importance", "min_blob_mean", "scene_share", "out_share", "part_share",
                     "min_headroom", "wide_share", "platform_share", "zoom_share", "zoom_min_area", "zoom_shrink",
                     "zoom_iou", "zoom_relative", "zoom_sliver", "zoom_mask_whole", "behind_margin", "crowd_share",
                     "detail_area", "detail_relative", "salient_detail", "guard_area"):
            _check_range(self, name, 0, 1)
        for name in ("headroom_weight", "lead_weight", "wide_weight"):
            _check_range(self, name, 0, 1e6)
        _check_int(self, "platform_side", minimum=0)
        _check_int(self, "crowd_min", minimum=0)
        _check_positive_int(self, "max_subjects")
        if self.out_share >= self.whole_share:
            raise InvalidParameterError(
                f"out_share must be < whole_share ({self.whole_share}), got {self.out_share!r}")
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
