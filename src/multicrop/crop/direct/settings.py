"""Settings of ``strategy="direct"`` by stage: pool, rules, objective, close-ups, details, shortlist.

:class:`SelectionConfig` changes which crops are chosen, never the analysis:
it is not part of :attr:`multicrop.crop.analysis.Analysis.key`.  Records and
``-c`` files written before the split hold one flat ``direct`` object;
:func:`split_legacy` turns its keys into the new paths (:data:`LEGACY_KEYS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import InvalidParameterError
from ..settings import Settings, count, fractions, num
from .rules import HoldsMain, NoCutFace, NoHalfSalient, NoSlicedBody, Rule
from .terms import AspectFit, Headroom, LeadRoom, NotTooWide, OneSubject, PhotoOrientation

__all__ = ["PoolConfig", "Objective", "CloseUps", "Details", "EveryBody", "SceneViews", "Shortlist", "SelectionConfig", "LEGACY_KEYS",
           "split_legacy"]


@dataclass(frozen=True)
class PoolConfig(Settings):
    """The candidates: windows over the photo (``window_scales`` of its largest crop, ``window_stride``),
    grid anchors, and framings of every subject (it spans each of ``fills`` of the crop, its centre at
    each of ``placements``); no crop's long side under ``min_crop_share`` of the photo's, nor under
    ``platform_side`` source pixels where a crop of that size is at most ``platform_share`` of the
    photo's long side (0: no platform rule)."""

    fills: tuple[float, ...] = fractions((0.55, 0.62, 0.7, 0.78, 0.85, 0.92, 0.97))
    placements: tuple[float, ...] = fractions((1 / 3, 0.5, 2 / 3))
    window_scales: tuple[float, ...] = fractions((1.0, 0.75, 0.55, 0.4, 0.3, 0.22))
    window_stride: float = num(0.2, 0, 1, lo_open=True)
    min_crop_share: float = num(0.2, 0, 1)
    platform_side: int = count(1080, 0)
    platform_share: float = num(0.6, 0, 1)


@dataclass(frozen=True)
class Objective(Settings):
    """The greedy gain (docs/cropping.md): a subject a chosen crop holds but is not about counts
    ``group_credit``; shared subject costs ``shared_weight``, shared rectangle ``overlap_weight``;
    ``k="auto"`` stops when the best gain is under ``min_gain``, then tops a carousel of a detected subject up
    to ``min_slides`` with its close-ups, portraits and zooms (direct-17); a fixed k stops when no candidate
    adds ``distinct_share`` of a new subject."""

    group_credit: float = num(0.25, 0, 1)
    shared_weight: float = num(1.0, 0, 1e6)
    overlap_weight: float = num(0.25, 0, 1e6)
    min_gain: float = num(0.15, 0, 1e6)
    distinct_share: float = num(0.05, 0, 1)
    min_slides: int = count(2, 1)


@dataclass(frozen=True)
class CloseUps(Rule):
    """Zoom in after the wide shot: each person, animal or vehicle of at least ``min_area`` of the photo
    (and ``relative`` of the largest body) that no crop of at most ``share`` of the photo holds gets a
    framing of its own: at most ``share`` of the photo and ``shrink`` of the crop showing it, IoU at most
    ``iou`` with every crop; a body behind it may show by ``sliver`` of what is seen of it, a person
    beside it with a mask counts as whole from ``mask_whole``; the person it frames, where the pose gives a
    mask and keypoints, from ``mask_own`` of it when what it leaves out lies below its bottom edge and no edge
    crosses a hand or a foot the pose sees or passes an elbow or a knee by less than ``joint_margin`` of their
    height (their legs, as a three-quarter shot; :mod:`multicrop.crop.direct.trim`, direct-25).  With ``groups``, a group of four or more
    is zoomed into by its sub-groups too (runs of neighbours, two up to half the group,
    :func:`multicrop.crop.direct.zoom.sub_groups`).  With ``portraits`` and a fixed k, people whose
    face the pose sees are zoomed to the waist and the chest too, cut only at those portrait lines
    (direct-14; k auto only to reach ``objective.min_slides``).
    With ``zooms`` and a fixed k (or k auto's ``objective.min_slides``) still short, framings that zoom in or out of a crop of the same subject
    follow (one box within the other by ``inside`` of the smaller, breaking no hard rule,
    :func:`multicrop.crop.direct.zoom.zoom_levels`)."""

    reason = "a carousel zooms in: after the wide shot, the subjects it shows small get a slide of their own"
    evidence = ("coco-subjects featured 36.8 % -> 39.5 % (direct-5 -> direct-6); portraits (direct-14): k = 3 crops/photo "
                "2.145 -> 2.327, person-cut 3.4 -> 3.1 %, 16 portraits (subjects metric 2; version 1 counts a portrait as a "
                "cut: 4.2 -> 14.8 %); the legs left out (mask_own 0.93, joint_margin 0.03; direct-22 -> direct-25): "
                "Instagram k = 3 featured 35.5 -> 38.2 % and k auto 36.8 -> 39.5 %, no figure of the 2:3 / 3:2 rows moved")
    share: float = num(0.55, 0, 1)
    min_area: float = num(0.02, 0, 1)
    shrink: float = num(0.75, 0, 1)
    iou: float = num(0.6, 0, 1)
    relative: float = num(0.25, 0, 1)
    sliver: float = num(0.1, 0, 1)
    mask_whole: float = num(0.9, 0, 1)
    mask_own: float = num(0.93, 0, 1, lo_open=True)
    joint_margin: float = num(0.03, 0, 1)
    groups: bool = True
    portraits: bool = True
    zooms: bool = True
    inside: float = num(0.9, 0, 1, lo_open=True)


@dataclass(frozen=True)
class Details(Rule):
    """With ``k="auto"`` beside detected subjects, a subject under ``area`` of the photo and ``relative`` of
    the largest (a body: of the largest detected one) is a detail, no slide of its own; so is a salient
    thing smaller than ``salient`` times the largest body."""

    reason = "details get no slide of their own when the photo decides how many"
    evidence = ("coco-subjects empty crops 7/89 -> 2/82 (direct-6); salient 1.0 -> 0.25: carousel-synth k auto "
                "k-exact 45 % -> 71 % for one more empty crop on coco-subjects (direct-9); 0.25 -> 0.1: k auto "
                "kIoU@0.5 0.419 -> 0.422, k-exact 70.6 % -> 72.4 % (seed 1, held out: 0.396 -> 0.402), no coco-subjects "
                "crop changes (direct-11)")
    area: float = num(0.02, 0, 1)
    relative: float = num(0.25, 0, 1)
    salient: float = num(0.1, 0, 1)


@dataclass(frozen=True)
class EveryBody(Rule):
    """Every detected person, animal or vehicle (but a detail at k auto) that no slide holds whole, close-ups
    included, gets the best slide that does and breaks no hard rule, IoU at most ``iou`` with every slide, within
    k (:func:`multicrop.crop.direct.cover.every_body`); after the close-ups, so a fixed k keeps its zooms."""

    reason = "every person, animal or vehicle is seen whole on some slide, where a slide can hold it whole"
    evidence = ("coco-subjects k auto covered 88.2 % -> 90.8 %, no cut or empty crop more; k = 3 covered 86.8 -> 89.5 %; "
                "k = 2 (the default) no box moved; held-out coco128 photos covered 77.8 % -> 88.9 %; carousel-synth "
                "and -hard: no box moved (direct-19, direct-21)")
    iou: float = num(0.6, 0, 1)


@dataclass(frozen=True)
class SceneViews(Rule):
    """A photo with no subject gets the best-composed view of the scene (windows of the first two
    ``scales``); at a fixed k, up to k - 1 more views, each the best-scored window of any of ``scales``
    slicing no guard, IoU at most ``iou`` with every view before it; at k auto, up to
    ``objective.min_slides`` - 1 closer views inside the first, as zooms are (``enabled=False``: one view).
    A k-auto carousel of subjects still one slide after its close-ups, portraits and zooms gets such a closer
    view too, where one breaks no hard rule and holds the slide's main subject whole
    (:func:`multicrop.crop.direct.views.closer_views`, direct-22)."""

    reason = ("a fixed k is honoured on a photo with nothing to cut: distinct views of the scene; a carousel of one "
              "slide looks closer inside it")
    evidence = ("coco-subjects k = 3 crops/photo 1.927 -> 2.145, person-cut 3.8 % -> 3.4 % (the 4 photos with nothing "
                "detected: 1 -> 3 crops each); carousel-synth-hard given k 0.216 -> 0.220 (seed 1, held out: "
                "0.254 -> 0.259); no crop at k auto changes (direct-12); the closer view of a one-slide carousel of "
                "subjects: coco-subjects k auto crops/photo 1.982 -> 2.018, empty 2 -> 3 of 111, no cut more; the other photos "
                "1.733 -> 1.778, empty 24.4 -> 25.0 %; "
                "carousel-synth k auto k-exact 85.9 -> 86.5 % (direct-22)")
    scales: tuple[float, ...] = fractions((1.0, 0.85, 0.7, 0.55))
    iou: float = num(0.5, 0, 1)


@dataclass(frozen=True)
class Shortlist(Settings):
    """Alternatives per chosen crop for a judge: same main subject, held by at least its share and
    sharing no more with the others (both within ``slack``), no two with IoU above ``iou``."""

    slack: float = num(0.05, 0, 1)
    iou: float = num(0.8, 0, 1)


@dataclass(frozen=True)
class SelectionConfig(Settings):
    """Every setting of direct selection: the pool, the hard rules, the soft terms, the objective,
    close-ups, details and shortlists.  ``docs/cropping.md`` tabulates the rules."""

    pool: PoolConfig = field(default_factory=PoolConfig)
    holds_main: HoldsMain = field(default_factory=HoldsMain)
    no_sliced_body: NoSlicedBody = field(default_factory=NoSlicedBody)
    no_cut_face: NoCutFace = field(default_factory=NoCutFace)
    no_half_salient: NoHalfSalient = field(default_factory=NoHalfSalient)
    aspect_fit: AspectFit = field(default_factory=AspectFit)
    photo_orientation: PhotoOrientation = field(default_factory=PhotoOrientation)
    headroom: Headroom = field(default_factory=Headroom)
    lead_room: LeadRoom = field(default_factory=LeadRoom)
    not_too_wide: NotTooWide = field(default_factory=NotTooWide)
    one_subject: OneSubject = field(default_factory=OneSubject)
    objective: Objective = field(default_factory=Objective)
    close_ups: CloseUps = field(default_factory=CloseUps)
    details: Details = field(default_factory=Details)
    every_body: EveryBody = field(default_factory=EveryBody)
    scene_views: SceneViews = field(default_factory=SceneViews)
    shortlist: Shortlist = field(default_factory=Shortlist)

    @property
    def hard(self) -> tuple:
        return (self.holds_main, self.no_sliced_body, self.no_cut_face, self.no_half_salient)

    @property
    def soft(self) -> tuple:
        return (self.aspect_fit, self.photo_orientation, self.headroom, self.lead_room, self.one_subject)

    def rules(self) -> dict[str, Rule]:
        """Every rule by its setting name (hard, soft, then the stage rules)."""
        names = ("holds_main", "no_sliced_body", "no_cut_face", "no_half_salient", "aspect_fit",
                 "photo_orientation", "headroom", "lead_room", "not_too_wide", "one_subject", "close_ups", "details",
                 "every_body", "scene_views")
        return {n: getattr(self, n) for n in names}


#: The flat keys of the old ``DirectConfig`` (records and ``-c`` files before direct-7) -> their paths
#: (``subjects.`` or ``selection.``); a key that fed two rules sets both.
LEGACY_KEYS: dict[str, tuple[str, ...]] = {
    "blob_level": ("subjects.blobs.level",), "blob_close": ("subjects.blobs.close",),
    "min_peak": ("subjects.blobs.min_peak",), "min_blob_share": ("subjects.blobs.min_share",),
    "weak_floor": ("subjects.blobs.weak_floor",), "weak_peak": ("subjects.blobs.weak_peak",),
    "weak_share": ("subjects.blobs.weak_share",), "max_weak": ("subjects.blobs.max_weak",),
    "max_blobs": ("subjects.blobs.max_blobs",), "size_exponent": ("subjects.importance.size_exponent",),
    "min_person_score": ("subjects.detections.min_person_score",),
    "min_animal_score": ("subjects.detections.min_animal_score",),
    "min_vehicle_score": ("subjects.detections.min_vehicle_score",),
    "min_object_score": ("subjects.detections.min_object_score",),
    "min_subject_area": ("subjects.detections.min_area",), "max_object_area": ("subjects.detections.max_object_area",),
    "max_subjects": ("subjects.detections.max_subjects",), "group_overlap": ("subjects.groups.overlap",),
    "group_margin": ("subjects.groups.margin",), "behind_margin": ("subjects.groups.behind_margin",),
    "guard_score": ("subjects.guards.score",), "guard_area": ("subjects.guards.area",),
    "crowd_min": ("subjects.crowds.min",), "max_blob_area": ("subjects.salient.max_area",),
    "saliency_outside": ("subjects.salient.outside",), "min_blob_importance": ("subjects.salient.min_importance",),
    "min_blob_mean": ("subjects.salient.min_mean",), "scene_share": ("subjects.salient.scene_share",),
    "vehicle_weight": ("subjects.importance.vehicle",), "object_weight": ("subjects.importance.object",),
    "saliency_weight": ("subjects.importance.salient",),
    "fills": ("selection.pool.fills",), "placements": ("selection.pool.placements",),
    "window_scales": ("selection.pool.window_scales",), "window_stride": ("selection.pool.window_stride",),
    "min_crop_share": ("selection.pool.min_crop_share",), "platform_side": ("selection.pool.platform_side",),
    "platform_share": ("selection.pool.platform_share",),
    "whole_share": ("selection.holds_main.whole", "selection.no_half_salient.whole"),
    "body_whole": ("selection.holds_main.body_whole", "selection.no_sliced_body.whole"),
    "hold_share": ("selection.no_half_salient.hold",), "out_share": ("selection.no_sliced_body.sliver",),
    "crowd_share": ("selection.no_sliced_body.crowd",), "part_share": ("selection.no_sliced_body.part",),
    "aspect_weight": ("selection.aspect_fit.weight",), "aspect_sigma": ("selection.aspect_fit.sigma",),
    "photo_orientation": ("selection.photo_orientation.weight",),
    "min_headroom": ("selection.headroom.min_room",), "headroom_weight": ("selection.headroom.weight",),
    "lead_weight": ("selection.lead_room.weight",), "wide_share": ("selection.not_too_wide.share",),
    "wide_weight": ("selection.not_too_wide.weight",), "other_weight": ("selection.one_subject.weight",),
    "group_credit": ("selection.objective.group_credit",), "shared_weight": ("selection.objective.shared_weight",),
    "overlap_weight": ("selection.objective.overlap_weight",), "min_gain": ("selection.objective.min_gain",),
    "distinct_share": ("selection.objective.distinct_share",),
    "shortlist_slack": ("selection.shortlist.slack",), "shortlist_iou": ("selection.shortlist.iou",),
    "zoom_share": ("selection.close_ups.share",), "zoom_min_area": ("selection.close_ups.min_area",),
    "zoom_shrink": ("selection.close_ups.shrink",), "zoom_iou": ("selection.close_ups.iou",),
    "zoom_relative": ("selection.close_ups.relative",), "zoom_sliver": ("selection.close_ups.sliver",),
    "zoom_mask_whole": ("selection.close_ups.mask_whole",),
    "detail_area": ("selection.details.area",), "detail_relative": ("selection.details.relative",),
    "salient_detail": ("selection.details.salient",),
}


def split_legacy(flat: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The old flat ``direct`` object as ``set()`` changes for SubjectConfig and SelectionConfig.

    Raises
    ------
    InvalidParameterError
        For a key the old settings never had.
    """
    if not isinstance(flat, Mapping):
        raise InvalidParameterError(f"direct: expected an object, got {type(flat).__name__}")
    subjects: dict[str, Any] = {}
    selection: dict[str, Any] = {}
    for key, value in flat.items():
        if key not in LEGACY_KEYS:
            raise InvalidParameterError(f"direct: unknown key {key!r} (the settings are now 'subjects' and "
                                        "'selection'; docs/cropping.md lists them)")
        for path in LEGACY_KEYS[key]:
            head, rest = path.split(".", 1)
            (subjects if head == "subjects" else selection)[rest.replace(".", "__")] = value
    return subjects, selection
