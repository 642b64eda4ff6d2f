"""The thresholds of the real-photo subject metrics (:mod:`.metrics` says what each counts)."""

from __future__ import annotations

from dataclasses import dataclass

from ...detectors.coco import ANIMAL_IDS, PERSON_IDS, STREET_IDS, VEHICLE_IDS
from ...errors import InvalidParameterError
from ...serialize import Serializable

__all__ = ["SubjectRules"]


def _check_share(obj, name: str) -> None:
    v = getattr(obj, name)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
        raise InvalidParameterError(f"{name} must be a number in [0, 1], got {v!r}")


def _check_ids(obj, name: str) -> None:
    v = getattr(obj, name)
    try:
        ids = tuple(int(i) for i in v)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{name} must be a list of class ids, got {v!r}") from None
    object.__setattr__(obj, name, ids)


@dataclass(frozen=True)
class SubjectRules(Serializable):
    """The thresholds of the real-photo subject metrics (module docstring: what each means).

    Attributes
    ----------
    person_ids : tuple of int
        Classes that are people (COCO: 1).
    subject_ids : tuple of int
        Classes that may be subjects (COCO 1-25).
    cut_ids : tuple of int
        Subject classes counted by subject-cut, covered and featured: people,
        vehicles and animals (COCO 1-9, 16-25; street objects are not).
    subject_min, subject_max : float
        A subject covers this share of the frame (1-40 %).
    prominent_min : float
        A prominent subject covers at least this share (3 %; at most ``subject_max``).
    slice_min, slice_max : float
        A crop holding this share of an object slices it (15-85 %).
    portrait_side : float
        A person sliced with at most this share of their pixels outside the
        crop and not below its bottom edge (3 %) is cut at a portrait line.
    object_min : float
        Objects larger than this share of the frame (0.5 %) keep a crop from being empty ...
    hold_min : float
        ... when it holds at least this share of one of them (50 %).
    whole : float
        A crop holding at least this share of a subject holds it whole (90 %).
    zoom_max : float
        A crop featuring a subject covers at most this share of the frame (60 %).
    photo_object_min : float
        The photo filter counts objects of any class covering at least this share (3 %) ...
    photo_min_objects : int
        ... and keeps photos with at least this many (2).
    """

    person_ids: tuple[int, ...] = PERSON_IDS
    subject_ids: tuple[int, ...] = PERSON_IDS + VEHICLE_IDS + STREET_IDS + ANIMAL_IDS
    cut_ids: tuple[int, ...] = PERSON_IDS + VEHICLE_IDS + ANIMAL_IDS
    subject_min: float = 0.01
    subject_max: float = 0.40
    prominent_min: float = 0.03
    slice_min: float = 0.15
    slice_max: float = 0.85
    portrait_side: float = 0.03
    object_min: float = 0.005
    hold_min: float = 0.5
    whole: float = 0.9
    zoom_max: float = 0.6
    photo_object_min: float = 0.03
    photo_min_objects: int = 2

    def __post_init__(self) -> None:
        for name in ("person_ids", "subject_ids", "cut_ids"):
            _check_ids(self, name)
        for name in ("subject_min", "subject_max", "prominent_min", "slice_min", "slice_max", "portrait_side",
                     "object_min",
                     "hold_min", "whole", "zoom_max", "photo_object_min"):
            _check_share(self, name)
        if self.subject_min > self.subject_max:
            raise InvalidParameterError(f"subject_min must be <= subject_max, got {self.subject_min!r} > "
                                        f"{self.subject_max!r}")
        if self.slice_min > self.slice_max:
            raise InvalidParameterError(f"slice_min must be <= slice_max, got {self.slice_min!r} > "
                                        f"{self.slice_max!r}")
        v = self.photo_min_objects
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InvalidParameterError(f"photo_min_objects must be an integer >= 0, got {v!r}")
