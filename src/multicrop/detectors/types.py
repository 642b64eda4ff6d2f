"""What a detector returns: one typed value per found thing.

Detectors know nothing of crops: they name things in an image (people,
animals, vehicles, objects, faces) with a box, a confidence and, where the
model gives them, keypoints and a mask.  The crop wing turns detections into
subjects (:mod:`multicrop.crop.subjects`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidParameterError
from ..geometry import Box

__all__ = ["Detection", "KINDS"]

#: Coarse kinds a detection can have (COCO's supercategories folded into five).
KINDS = ("person", "animal", "vehicle", "object", "face")


@dataclass(frozen=True)
class Detection:
    """One thing found in an image.

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`.
    label : str
        The model's class name (``"person"``, ``"giraffe"``, ``"umbrella"``,
        ``"face"``).
    class_id : int
        COCO category id as in COCO's JSON (1 person ... 90 toothbrush);
        ``-1`` for classes outside COCO (faces).
    box : Box
        In pixels of the image the detector was given.
    score : float
        Confidence in ``[0, 1]``.
    keypoints : ndarray of shape (K, 3) or None
        ``(x, y, visibility)`` per keypoint in image pixels (people: the
        MediaPipe 33-point pose order; faces: YuNet's five landmarks).
    mask : ndarray of shape (H, W) or None
        Soft mask in ``[0, 1]`` over the whole image, where the model gives one.
    detector : str
        Name of the detector that produced it (its registry name).
    """

    kind: str
    label: str
    class_id: int
    box: Box
    score: float
    keypoints: np.ndarray | None = field(default=None, compare=False, repr=False)
    mask: np.ndarray | None = field(default=None, compare=False, repr=False)
    detector: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidParameterError(f"Detection.kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if not 0.0 <= float(self.score) <= 1.0:
            raise InvalidParameterError(f"Detection.score must lie in [0, 1], got {self.score!r}")
