"""Detectors: people, animals, vehicles, objects and faces named in an image.

A registry kind beside :mod:`multicrop.saliency`, below both wings: detectors
know nothing of crops.  Each returns :class:`Detection` values (kind, COCO
label and id, box in the given image's pixels, confidence, keypoints and a
mask where the model gives them); the crop wing turns them into subjects.

Built-in detectors (``multicrop.registry.available("detector")``):

``nanodet``
    NanoDet, the 80 COCO classes (:mod:`multicrop.detectors.nanodet`).
``yunet``
    YuNet faces with five landmarks (:mod:`multicrop.detectors.yunet`).
``pose``
    MediaPipe pose landmarks (33 keypoints and a person mask) on each
    person found by the detectors before it (:mod:`multicrop.detectors.pose`).

All run through :func:`multicrop.models.onnx_session` on the shipped,
SHA-256-checked ONNX files; nothing is downloaded.  The keypoints of a person
are in :data:`POSE_LANDMARKS` order (MediaPipe's 33), those of a face in
:data:`FACE_LANDMARKS` order (YuNet's 5).

Examples
--------
>>> {"nanodet", "yunet"} <= set(DETECTORS.names())
True
>>> detector_versions(("nanodet",))["nanodet"].startswith("nanodet-")
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from ..defaults import DEFAULT_DETECTORS
from ..errors import InvalidParameterError
from ..models import thread_count
from ..models.yunet import LANDMARKS as FACE_LANDMARKS
from . import nanodet, pose, yunet  # noqa: F401  (registers the built-ins)
from .base import DETECTORS, Detector, check_score
from .pose import LANDMARKS as POSE_LANDMARKS
from .types import KINDS, Detection

__all__ = ["Detection", "Detector", "DETECTORS", "KINDS", "DEFAULT_DETECTORS", "POSE_LANDMARKS", "FACE_LANDMARKS",
           "detect", "detector_versions"]



def _names(detectors: Iterable[str] | str) -> tuple[str, ...]:
    if isinstance(detectors, str):
        detectors = (detectors,)
    names = tuple(detectors)
    for n in names:
        DETECTORS.get(n)  # unknown names fail with suggestions
    if len(set(names)) != len(names):
        raise InvalidParameterError(f"detectors must not repeat a name, got {names!r}")
    return names


def detector_versions(detectors: Iterable[str] | str = DEFAULT_DETECTORS) -> dict[str, str]:
    """The version of each named detector: model-file hash prefix and decode version.

    Put into every record and cache key that detections reach, so a changed
    model or decoding never silently reuses old results.

    Raises
    ------
    UnknownNameError
        If a name is not a registered detector.
    """
    return {n: DETECTORS.get(n).version for n in _names(detectors)}


def detect(
    image: np.ndarray,
    *,
    detectors: Iterable[str] | str = DEFAULT_DETECTORS,
    threads: int | None = None,
    min_score: float | Mapping[str, float] | None = None,
) -> tuple[Detection, ...]:
    """Run detectors on an image, in order.

    Parameters
    ----------
    image : ndarray of uint8, shape (H, W, 3)
        RGB (the analysis copy of a photo); boxes come back in its pixels.
    detectors : sequence of str
        Registered detector names, run in this order.  A detector with the
        ``refines_people`` flag (``pose``) adds to the people found by those
        before it and replaces them in the result.
    threads : int, optional
        onnxruntime intra-op threads (default :func:`multicrop.models.thread_count`).
    min_score : float or mapping of str to float, optional
        Confidence threshold for every detector, or per detector name; the
        default is each detector's :attr:`~Detector.default_min_score`.

    Returns
    -------
    tuple of Detection
        In detector order, each detector's best score first.

    Raises
    ------
    InvalidParameterError
        If ``image`` is not an ``(H, W, 3)`` uint8 array, or an option is invalid.
    UnknownNameError
        If a detector name is not registered.
    """
    if not isinstance(image, np.ndarray) or image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise InvalidParameterError(
            f"image must be an (H, W, 3) uint8 RGB array, got "
            f"{getattr(image, 'shape', type(image))} {getattr(image, 'dtype', '')}".rstrip()
        )
    names = _names(detectors)
    if isinstance(min_score, Mapping):
        unknown = sorted(set(min_score) - set(names))
        if unknown:
            raise InvalidParameterError(
                f"min_score names detectors not run: {', '.join(unknown)} (running: {', '.join(names)})"
            )
        scores = {n: check_score(v, name=f"min_score[{n!r}]") for n, v in min_score.items()}
    else:
        scores = {n: min_score for n in names} if min_score is not None else {}
    threads = thread_count() if threads is None else threads
    found: list[Detection] = []
    for name in names:
        det = DETECTORS.create(name, threads=threads, min_score=scores.get(name))
        result = det(image, found=tuple(found))
        if det.refines_people:
            people = [d for d in found if d.kind == "person"]
            rest = [d for d in found if d.kind != "person"]
            # Refined people keep their place before the other kinds' detections.
            found = list(result) + rest if people else found
        else:
            found.extend(result)
    return tuple(found)
