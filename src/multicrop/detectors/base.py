"""The ``detector`` registry kind: what every registered detector class carries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from ..errors import InvalidParameterError
from ..models import thread_count
from ..registry import Registry
from .types import Detection

__all__ = ["Detector", "DETECTORS", "check_score"]


def check_score(value: object, *, name: str = "min_score") -> float:
    """``value`` as a float in ``[0, 1]``, else :class:`InvalidParameterError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise InvalidParameterError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


class Detector:
    """Base of registered detectors.

    A subclass sets the class attributes and implements :meth:`__call__`.

    Attributes
    ----------
    name, version, description : str
        Registry name; version (model-file hash prefix and decode version:
        part of every cache key and record that detections reach); one line.
    kinds : tuple of str
        The :data:`~multicrop.detectors.types.KINDS` it can return.
    gives_keypoints, gives_masks : bool
        Capability flags: detections carry keypoints / a mask.
    refines_people : bool
        Capability flag: the detector adds to the person detections found by
        the detectors run before it (it finds no people of its own).
    default_min_score : float
        The confidence threshold used when ``min_score`` is not given (each
        detector's module says what precision and recall it gives).
    models : tuple of str
        The shipped model files it runs (keys of :data:`multicrop.models.MODELS`),
        so a caller can build their sessions ahead (:func:`multicrop.models.prefetch`).

    Parameters
    ----------
    threads : int, optional
        onnxruntime intra-op threads (default :func:`multicrop.models.thread_count`).
    min_score : float, optional
        Confidence threshold in ``[0, 1]`` (default :attr:`default_min_score`).
    """

    name: ClassVar[str]
    version: ClassVar[str]
    description: ClassVar[str]
    kinds: ClassVar[tuple[str, ...]] = ()
    gives_keypoints: ClassVar[bool] = False
    gives_masks: ClassVar[bool] = False
    refines_people: ClassVar[bool] = False
    default_min_score: ClassVar[float] = 0.5
    models: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, threads: int | None = None, min_score: float | None = None) -> None:
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise InvalidParameterError(f"threads must be a positive integer or None, got {threads!r}")
        self.threads = thread_count() if threads is None else threads
        self.min_score = self.default_min_score if min_score is None else check_score(min_score)

    def __call__(self, image: np.ndarray, *, found: Sequence[Detection] = ()) -> tuple[Detection, ...]:
        """Detections in an ``(H, W, 3)`` uint8 RGB image, boxes in its pixels.

        ``found`` holds what the detectors run before this one returned
        (used by detectors that refine them); a refining detector returns
        its replacements for those detections, others ignore ``found``.
        """
        raise NotImplementedError


#: Registered detectors (entry-point group ``multicrop.detectors``).
DETECTORS: Registry[type[Detector]] = Registry("detector", entry_point_group="multicrop.detectors")
