"""How a photo's saliency and detections become subjects: the only crop settings an analysis depends on.

:class:`SubjectConfig` is hashed into :attr:`multicrop.crop.analysis.Analysis.key`
(and so into every analysis cache); nothing of the selection
(:class:`multicrop.crop.direct.settings.SelectionConfig`) is, so changing a
selection weight never re-runs the models.  Each part is one stage of
:func:`multicrop.crop.subjects.find_subjects`.

Examples
--------
>>> SubjectConfig().set(groups__overlap=0.2).groups.overlap
0.2
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .settings import Settings, count, num

__all__ = ["BlobRules", "DetectionRules", "GroupRules", "GuardRules", "CrowdRules", "SalientRules",
           "ImportanceRules", "SubjectConfig"]


@dataclass(frozen=True)
class BlobRules(Settings):
    """Salient blobs (:func:`multicrop.crop.subjects.salient_blobs`).

    ``level``: blobs are connected components of saliency at or above this
    fraction of the maximum, after a closing of ``close`` of the long side;
    a blob whose peak is under ``min_peak`` of the maximum, or whose mass is
    under ``min_share`` of the largest blob's, is noise.  Weak subjects (thin
    or low-contrast, barely marked): components at or above ``weak_floor``
    holding no blob, peaking at ``weak_peak`` or more, with at least
    ``weak_share`` of the largest blob's mass; at most ``max_weak`` of them
    (0: none) and ``max_blobs`` blobs in all.
    """

    level: float = num(0.3, 0, 1, lo_open=True)
    close: float = num(0.01, 0, 0.25)
    min_peak: float = num(0.5, 0, 1, lo_open=True)
    min_share: float = num(0.01, 0, 1)
    weak_floor: float = num(0.05, 0, 1, lo_open=True)
    weak_peak: float = num(0.2, 0, 1, lo_open=True)
    weak_share: float = num(0.005, 0, 1)
    max_weak: int = count(2, 0)
    max_blobs: int = count(12, 1)


@dataclass(frozen=True)
class DetectionRules(Settings):
    """Which detections are subjects: a score of at least ``min_<kind>_score``, a box of at least
    ``min_area`` of the frame (an object: at most ``max_object_area``, larger ones are the scene);
    at most ``max_subjects`` subjects (most important first).  An animal or vehicle the detector
    gives no mask gets an outline from the saliency inside its box where that mask's trust is at
    least ``outline_trust`` (:mod:`multicrop.crop.masks`; above 1: never, the default): "left out" is
    then judged on it.  Off by default: on coco-subjects at 0.6 or 0.8 it changed 3 photos of 55 and
    one for the worse (a motorcycle sliced: subject-cut at k auto 8.5 % -> 9.8 %)."""

    min_person_score: float = num(0.4, 0, 1)
    min_animal_score: float = num(0.4, 0, 1)
    min_vehicle_score: float = num(0.4, 0, 1)
    min_object_score: float = num(0.5, 0, 1)
    min_area: float = num(0.01, 0, 1)
    max_object_area: float = num(0.4, 0, 1)
    max_subjects: int = count(16, 1)
    outline_trust: float = num(2.0, 0, 2)


@dataclass(frozen=True)
class GroupRules(Settings):
    """Bodies no crop can separate form one group: boxes overlapping by ``overlap`` of the smaller one,
    or one grown by ``margin`` of its height taking in more than ``near`` of the other.  A body is
    behind another of its group when the other's box ends lower by ``behind_margin`` of its height."""

    overlap: float = num(0.1, 0, 1)
    margin: float = num(0.0, 0, 1)
    near: float = num(0.03, 0, 1)
    behind_margin: float = num(0.1, 0, 1)


@dataclass(frozen=True)
class GuardRules(Settings):
    """Bodies too unsure (``score`` up to the subject floor) or animals and vehicles too small
    (``area`` up to :attr:`DetectionRules.min_area` of the frame) to be framed, never sliced either."""

    score: float = num(0.3, 0, 1)
    area: float = num(0.003, 0, 1)


@dataclass(frozen=True)
class CrowdRules(Settings):
    """At least ``min`` people each too small to be a subject, their boxes grown by ``grow`` of their
    height overlapping, are one crowd: a guard held whole or left out (``min`` 0: no crowds)."""

    min: int = count(5, 0)
    grow: float = num(1.0, 0, 10)


@dataclass(frozen=True)
class SalientRules(Settings):
    """Salient blobs as subjects.  A blob over ``max_area`` of the frame is background.  Beside
    detections a blob counts only with ``outside`` of its mass outside every detector box, an
    importance of ``min_importance`` and a mean saliency of ``min_mean`` of the maximum.  With
    nothing detected, blobs holding under ``scene_share`` of the map's saliency are a texture's
    fragments (one view of the scene instead)."""

    max_area: float = num(0.5, 0, 1)
    outside: float = num(0.5, 0, 1)
    min_importance: float = num(0.0, 0, 1)
    min_mean: float = num(0.5, 0, 1)
    scene_share: float = num(0.3, 0, 1)


@dataclass(frozen=True)
class ImportanceRules(Settings):
    """A subject's importance: its area over the largest's, to ``size_exponent``, times its kind's
    weight (people and animals 1, ``vehicle``, ``object``; salient blobs beside detections ``salient``)."""

    size_exponent: float = num(0.25, 0, 1e6)
    vehicle: float = num(0.8, 0, 1)
    object: float = num(0.5, 0, 1)
    salient: float = num(1.0, 0, 1)


@dataclass(frozen=True)
class SubjectConfig(Settings):
    """Every setting of :func:`multicrop.crop.subjects.find_subjects`, one part per stage.

    ``focus_side``: a focus point grows to this share of the photo's short side.
    """

    blobs: BlobRules = field(default_factory=BlobRules)
    detections: DetectionRules = field(default_factory=DetectionRules)
    groups: GroupRules = field(default_factory=GroupRules)
    guards: GuardRules = field(default_factory=GuardRules)
    crowds: CrowdRules = field(default_factory=CrowdRules)
    salient: SalientRules = field(default_factory=SalientRules)
    importance: ImportanceRules = field(default_factory=ImportanceRules)
    focus_side: float = num(0.04, 0, 1)
