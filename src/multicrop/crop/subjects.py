"""Subjects of a photo: the things a crop is about, from detectors, saliency and the user.

A :class:`Subject` is one typed value whatever found it:

- **detector** subjects are the people, animals, vehicles and objects a
  detector named (:class:`multicrop.detectors.types.Detection`).  People,
  animals and vehicles whose boxes overlap so much that a crop holding one
  whole would slice the other (a rider on a horse, a couple embracing, a
  person in front of a bus) are joined into one *group* subject; the
  individuals stay its ``members``, and direct selection checks every member
  for a cut.  A crowd therefore becomes a few groups, not dozens of subjects.
  Detections under ``detections.min_area`` of the frame (a passer-by in the
  distance) or under the confidence floor of their kind are not subjects:
  background, or *guards* that no crop may slice (a body just under its
  kind's floor; an animal or vehicle from ``guards.area`` of the frame on;
  a crowd of small people).
- **saliency** subjects are salient blobs (connected components of the
  saliency map) that no detector names: a sculpture, a rock, a boat far
  away.  With detector subjects present, only a blob that lies mostly outside
  them and is itself compact counts (``salient.outside``,
  ``salient.max_area``): a region of plain background, however bright the
  saliency model finds it, is never a subject.
- **focus** is the point or region the user named; one crop must hold it.

Every threshold is a field of :class:`multicrop.crop.subject_config.SubjectConfig`
(one part per stage) with its reason.  The blobs live in :mod:`multicrop.crop.blobs`, the pose rules
for people in :mod:`multicrop.crop.people` (both re-exported here).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..geometry import Box
from ..serialize import Serializable, serialized
from .blobs import Blob, connected_components, salient_blobs
from .grouping import clusters, fill_box, joined_groups, near_box, union, visible_parts
from .people import facing, portrait_lines
from .subject_config import SubjectConfig

__all__ = ["Blob", "Subject", "SubjectRecord", "BODY_KINDS", "connected_components", "salient_blobs", "find_subjects",
           "portrait_lines", "facing"]

#: Kinds a crop must never slice: held whole, left out, or (people) cut only at portrait lines.
BODY_KINDS = ("person", "animal", "vehicle")


@dataclass(frozen=True)
class Subject:
    """One thing a crop can be about.

    Attributes
    ----------
    kind : str
        ``person``, ``animal``, ``vehicle``, ``object`` (detected), ``crowd``
        (many small people, a guard), ``salient`` (saliency only) or
        ``focus`` (given by the user).
    box : Box
        Bounding box in analysis pixels (a group's: the union of its members).
    confidence : float
        The detector's score (the best member's for a group); 1 for focus,
        the blob's peak saliency for a salient subject.
    importance : float
        Weight in ``(0, 1]`` of the subject in the selection (1: the main
        subject of the photo); 0 for a *guard*, a body detected with too
        little confidence to be framed (a half-hidden person) that no crop
        may slice all the same.
    source : str
        ``detector``, ``saliency`` or ``focus``.
    label : str
        The detector's class (``"person"``, ``"giraffe"``); ``"group of 3"``
        for a group; ``"salient"`` / ``"focus"``.
    weight : ndarray of float32, shape (H, W), or None
        Where the subject is: a mask (detector masks; a blob's saliency).
        None: the box itself, uniformly (shares are box areas).
    keypoints : ndarray of shape (33, 3) or None
        Pose keypoints of a single person (MediaPipe order), analysis pixels.
    outline : ndarray of float32, shape (H, W), or None
        What judges whether a crop slices this body when it has no ``weight``:
        an animal's or vehicle's mask from the saliency inside its box
        (:func:`multicrop.crop.masks.box_masks`, trusted masks only); whether
        it is held whole as a main subject is still judged on its box.
    members : tuple of Subject
        A group's individuals (empty for a single subject).
    """

    kind: str
    box: Box
    confidence: float
    importance: float
    source: str
    label: str = ""
    weight: np.ndarray | None = field(default=None, compare=False, repr=False)
    keypoints: np.ndarray | None = field(default=None, compare=False, repr=False)
    members: tuple[Subject, ...] = ()
    outline: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def is_body(self) -> bool:
        """A person, animal or vehicle: never sliced."""
        return self.kind in BODY_KINDS

    @property
    def bodies(self) -> tuple[Subject, ...]:
        """What a crop must never slice: a group's people, animals and vehicles, else itself when a body
        or a crowd."""
        if self.members:
            return tuple(m for m in self.members if m.is_body)
        return (self,) if self.is_body or self.kind == "crowd" else ()

    def describe(self) -> str:
        """A short name for notes (``"person"``, ``"group of 3 people"``, ``"salient region"``)."""
        if self.members:
            return self.label
        return {"salient": "salient region", "focus": "focus region"}.get(self.kind, self.label or self.kind)


@dataclass(frozen=True)
class SubjectRecord(Serializable):
    """What a record says of one subject (:attr:`multicrop.crop.pipeline.CropResult.subjects`): its kind,
    label and source, its box ``[x, y, w, h]`` in the record's pixels, confidence, importance and members.

    Examples
    --------
    >>> s = Subject("person", Box(10, 20, 30, 40), 0.912345, 1.0, "detector", "person")
    >>> SubjectRecord.of(s, 2.0, 2.0).to_dict()["box"], SubjectRecord.of(s).to_dict()["confidence"]
    ([20.0, 40.0, 60.0, 80.0], 0.9123)
    """

    kind: str
    label: str | None
    source: str
    box: tuple[float, float, float, float] = field(metadata=serialized(round=1))
    confidence: float = field(metadata=serialized(round=4))
    importance: float = field(metadata=serialized(round=4))
    members: int = 1

    @classmethod
    def of(cls, subject: Subject, sx: float = 1.0, sy: float = 1.0) -> SubjectRecord:
        """The record of ``subject``, its box scaled by ``sx``, ``sy`` (analysis to source pixels); no maps."""
        b = subject.box.scale(sx, sy)
        return cls(subject.kind, subject.label, subject.source, (b.x, b.y, b.w, b.h), float(subject.confidence),
                   float(subject.importance), len(subject.members) or 1)


# -- detections -> subjects ---------------------------------------------------------------

def _single(det, frame: float, cfg: SubjectConfig, outlines: dict | None = None) -> Subject:
    """One detection as a subject (importance set later); ``outlines`` by ``id(det)``."""
    weight = None
    if det.mask is not None:
        weight = np.clip(np.asarray(det.mask, np.float32), 0, 1)
        if float(weight.sum()) < 1.0:
            weight = None
    kp = None if det.kind != "person" or det.keypoints is None else np.asarray(det.keypoints, np.float64)
    outline = None if weight is not None or outlines is None else outlines.get(id(det))
    return Subject(det.kind, det.box, float(det.score), 0.0, "detector", det.label, weight, kp, outline=outline)


def _outlines(s: np.ndarray, detections: Sequence, trust: float) -> dict[int, np.ndarray]:
    """Trusted saliency masks of the animals and vehicles the detector gives no mask, by ``id(det)``."""
    todo = [d for d in detections if d.mask is None and d.kind in ("animal", "vehicle")]
    if not todo or trust > 1 or float(s.max(initial=0.0)) <= 0:
        return {}
    from .masks import box_masks

    people = [np.asarray(d.mask) > 0.5 for d in detections if d.kind == "person" and d.mask is not None]
    exclude = np.logical_or.reduce(people) if people else None
    masks = box_masks(s, [d.box for d in todo], exclude=exclude)
    return {id(d): m.mask.astype(np.float32) for d, m in zip(todo, masks)
            if m.good(trust) and float(m.mask.sum()) >= 1.0}


def _group(members: list[Subject]) -> Subject:
    if len(members) == 1:
        return members[0]
    kinds = {m.kind for m in members}
    kind = next(k for k in ("person", "animal", "vehicle", "object") if k in kinds)
    people = sum(m.kind == "person" for m in members)
    label = f"group of {len(members)}" + (" people" if people == len(members) else "")
    return Subject(kind, union([m.box for m in members]), max(m.confidence for m in members), 0.0,
                   "detector", label, None, None, tuple(members))


def _area_share(box: Box, frame: float) -> float:
    return box.area / max(frame, 1e-9)


def find_subjects(saliency: np.ndarray, detections: Sequence = (), *, config: SubjectConfig | None = None,
                  focus: Box | None = None) -> tuple[Subject, ...]:
    """The subjects of one photo, most important first (see the module notes).

    Parameters
    ----------
    saliency : ndarray of float, shape (H, W)
        The saliency map (analysis pixels).
    detections : sequence of Detection
        In the same pixels (faces are not subjects of their own: they guard
        the people they belong to through the scorer's face terms).
    config : SubjectConfig, optional
        Thresholds (``detections.min_area``, ``groups.overlap``, the score floors ...).
    focus : Box, optional
        The user's point (a box of zero size is grown) or region: a subject
        of importance 1.

    Returns
    -------
    tuple of Subject
        Subjects most important first, then the guards (importance 0).

    Examples
    --------
    >>> from multicrop.detectors.types import Detection
    >>> sal = np.zeros((100, 200), np.float32)
    >>> dets = [Detection("person", "person", 1, Box(20, 20, 30, 70), 0.9),
    ...         Detection("person", "person", 1, Box(40, 25, 30, 70), 0.8),
    ...         Detection("animal", "dog", 18, Box(140, 60, 40, 30), 0.7)]
    >>> [(s.label, len(s.members)) for s in find_subjects(sal, dets)]
    [('group of 2 people', 2), ('dog', 0)]
    """
    cfg = config or SubjectConfig()
    s = np.asarray(saliency, dtype=np.float32)
    h, w = s.shape
    frame = float(w * h)
    floors = {"person": cfg.detections.min_person_score, "animal": cfg.detections.min_animal_score,
              "vehicle": cfg.detections.min_vehicle_score, "object": cfg.detections.min_object_score}
    def sure(x: Subject) -> bool:
        return x.confidence >= floors[x.kind]

    crowds = _crowds(detections, w, h, cfg)
    outlines = _outlines(s, detections, cfg.detections.outline_trust)
    singles = [_single(d, frame, cfg, outlines) for d in detections
               if d.kind in floors and d.score >= min(floors[d.kind], cfg.guards.score if d.kind in BODY_KINDS else 1)
               and _area_share(d.box.clip(w, h), frame) >= cfg.detections.min_area]
    items = [x for x in singles if x.is_body or _area_share(x.box, frame) <= cfg.detections.max_object_area]
    groups = [visible_parts([items[i] for i in g], w, h, cfg.groups.behind_margin)
              for g in joined_groups(items, cfg.groups.overlap, cfg.groups.margin, cfg.groups.near)]
    # A group with no member sure enough to be a subject is a guard: never sliced, never framed.
    guards = [_with_importance(_group(g), 0.0, guard=True) for g in groups if not any(sure(x) for x in g)]
    # So is an animal or vehicle too small to be a subject (a car down the street); small people are crowds.
    guards += [_with_importance(_single(d, frame, cfg, outlines), 0.0, guard=True) for d in detections
               if d.kind in BODY_KINDS and d.kind != "person" and d.score >= cfg.guards.score
               and cfg.guards.area <= _area_share(d.box.clip(w, h), frame) < cfg.detections.min_area]
    subjects = [_group(g) for g in groups if any(sure(x) for x in g)]
    weights = {"person": 1.0, "animal": 1.0, "vehicle": cfg.importance.vehicle, "object": cfg.importance.object}
    detected = bool(subjects)
    if subjects:
        big = max(_area_share(x.box, frame) for x in subjects)
        subjects = [_with_importance(x, weights[x.kind] * (_area_share(x.box, frame) / big) ** cfg.importance.size_exponent)
                    for x in subjects]
    subjects += _saliency_subjects(s, subjects, cfg, detected=detected)
    if focus is not None:
        subjects.append(_focus_subject(focus, w, h, cfg.focus_side))
    subjects.sort(key=lambda x: -x.importance)
    return tuple(subjects[: cfg.detections.max_subjects]) + tuple(guards) + tuple(crowds)


def _crowds(detections: Sequence, w: int, h: int, cfg: SubjectConfig) -> list[Subject]:
    """Crowds: clusters of at least ``crowds.min`` people each too small to be a subject, as guards.

    People under ``detections.min_area`` of the frame are background one by
    one, but a street or a beach full of them is one thing a crop holds or
    leaves out: a crop through the middle of a crowd is a crop through
    people.  Two such people belong to one crowd when their boxes, grown by
    their own height, overlap.  A crowd's weight is the union of its
    people's boxes; direct selection never holds a share of it between
    ``no_sliced_body.crowd`` and ``1 - crowd_share``.
    """
    if cfg.crowds.min <= 0:
        return []
    frame = float(w * h)
    small = [d for d in detections if d.kind == "person" and d.score >= cfg.guards.score
             and _area_share(d.box.clip(w, h), frame) < cfg.detections.min_area]
    if len(small) < cfg.crowds.min:
        return []
    out = []
    grow, near = cfg.crowds.grow, cfg.groups.near
    for idx in clusters(small, lambda a, b: near_box(a.box, b.box, grow, near) or near_box(b.box, a.box, grow, near)):
        if len(idx) < cfg.crowds.min:
            continue
        people = [small[i] for i in idx]
        weight = np.zeros((h, w), np.float32)
        for d in people:
            fill_box(weight, d.box, 1.0)
        if float(weight.sum()) < 1.0:
            continue
        out.append(Subject("crowd", union([d.box.clip(w, h) for d in people]), max(d.score for d in people), 0.0,
                           "detector", f"crowd of {len(people)}", weight))
    return out


def _with_importance(x: Subject, importance: float, *, guard: bool = False) -> Subject:
    return replace(x, importance=0.0 if guard else float(min(max(importance, 1e-6), 1.0)))


def _saliency_subjects(s: np.ndarray, found: list[Subject], cfg: SubjectConfig, *, detected: bool) -> list[Subject]:
    """Salient blobs no detector names; with detector subjects present, only crisp blobs outside them.

    With no detector subject, the blobs are subjects only when they hold at
    least ``salient.scene_share`` of the map's saliency: a texture (grass, sand, a
    cloudy sky) spreads its saliency over the frame and its blobs are
    arbitrary fragments of it.

    A blob covering more than ``salient.max_area`` of the frame is background
    (sky, a wall, a lawn the model finds bright), never a subject.  Beside
    detector subjects a blob counts only when ``salient.outside`` of its
    mass lies outside every detector box, its importance among the blobs is
    at least ``salient.min_importance`` and its mean saliency at least
    ``salient.min_mean`` of the map's maximum; it weighs ``importance.salient`` of
    its own importance.
    """
    h, w = s.shape
    frame = float(w * h)
    blobs, labels = salient_blobs(s, config=cfg)
    if not blobs:
        return []
    if not detected and float(s[labels > 0].sum()) < cfg.salient.scene_share * max(float(s.sum()), 1e-9):
        # The saliency is spread over the whole scene (grass, dunes, a wall of blinds, a stormy sky):
        # its blobs are fragments of a texture, not subjects; the photo gets one view.
        return []
    covered = np.zeros(s.shape, bool)
    for x in found:
        fill_box(covered, x.box, True)
    out = []
    for b in blobs:
        if _area_share(b.box, frame) > cfg.salient.max_area:
            continue
        where = labels == b.label
        mass = float(s[where].sum())
        outside = float(s[where & ~covered].sum()) / max(mass, 1e-9)
        crisp = float(s[where].mean()) / max(float(s.max()), 1e-9)
        if detected and (outside < cfg.salient.outside or b.importance < cfg.salient.min_importance
                         or crisp < cfg.salient.min_mean):
            continue
        weight = np.where(where & ~covered, s, 0.0) if detected else np.where(where, s, 0.0)
        imp = b.importance * (cfg.importance.salient if detected else 1.0)
        out.append(Subject("salient", b.box, float(s[where].max()), float(min(imp, 1.0)), "saliency", "salient",
                           weight.astype(np.float32)))
    return out


def _focus_subject(focus: Box, w: int, h: int, share: float) -> Subject:
    """The user's point or region as a subject (a point grows to ``share`` of the short side)."""
    side = share * min(w, h)
    b = focus
    if b.w < side or b.h < side:
        cx, cy = b.center
        b = Box(cx - max(b.w, side) / 2, cy - max(b.h, side) / 2, max(b.w, side), max(b.h, side))
    return Subject("focus", b.clip(w, h), 1.0, 1.0, "focus", "focus")
