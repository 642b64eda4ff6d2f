"""The ``pose`` detector: MediaPipe pose landmarks and a person mask on each detected person.

MediaPipe finds people with its own detector, whose file cannot be converted
to ONNX (its weights are sparse); here the people come from the detectors run
before (``nanodet``), and the landmark model (``pose_landmark_full.onnx``,
:mod:`multicrop.models`) runs on a square crop around each of them:

- the crop is centred on the person's box, its side :data:`ROI_SCALE` times
  the box's longer side (MediaPipe's own crops are 1.25 times the body's
  extent, so that limbs reaching out of the detector's box stay inside), not
  rotated, resampled to 256 x 256 and fed as RGB in ``[0, 1]``;
- the network gives 39 landmarks ``(x, y, z, visibility, presence)`` in crop
  pixels (the first 33 are the body's, in :data:`LANDMARKS` order; the others
  only steer MediaPipe's tracking), a pose-presence score in ``[0, 1]`` and a
  256 x 256 segmentation logit map;
- keypoints are mapped back to image pixels with visibility
  ``sigmoid(visibility logit)`` (a body part outside the photo gets a point
  outside it, with a low visibility); the mask is ``sigmoid(logit)`` pasted
  into the crop's place in an image-sized map, zero outside the crop.  The
  model segments every person in its crop: where people overlap, each one's
  mask also covers the others.

On the 100 coco-subjects photos, 94.7 % of the 2,036 keypoints the model
calls visible (visibility > 0.5) on the people NanoDet found lie inside a
person's outline grown by 2 % of the photo's diagonal
(``benchmarks/bench_detectors.py --labelled DIR``).

A person whose box is smaller than :data:`MIN_SIDE` pixels, or whose
pose-presence score is below :data:`MIN_PRESENCE`, keeps its detection
without keypoints.  At most :data:`MAX_PEOPLE` people (the largest) are
refined: each costs about 22 ms on 2 threads (88 ms for four people of a
12 MP photo, ``benchmarks/bench_detectors.py``).

References
----------
V. Bazarevsky et al., "BlazePose: On-device real-time body pose tracking",
CVPR Workshop on Computer Vision for Augmented and Virtual Reality, 2020.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import cv2
import numpy as np

from ..models import MODELS, onnx_session
from .base import DETECTORS, Detector
from .types import Detection

__all__ = ["Pose", "LANDMARKS", "landmarks_in_box", "ROI_SCALE", "MIN_SIDE", "MIN_PRESENCE", "MAX_PEOPLE"]

#: The 33 body landmarks of MediaPipe Pose, in the model's order.
LANDMARKS = (
    "nose", "left_eye_inner", "left_eye", "left_eye_outer", "right_eye_inner", "right_eye", "right_eye_outer",
    "left_ear", "right_ear", "mouth_left", "mouth_right", "left_shoulder", "right_shoulder", "left_elbow",
    "right_elbow", "left_wrist", "right_wrist", "left_pinky", "right_pinky", "left_index", "right_index",
    "left_thumb", "right_thumb", "left_hip", "right_hip", "left_knee", "right_knee", "left_ankle",
    "right_ankle", "left_heel", "right_heel", "left_foot_index", "right_foot_index",
)
INPUT_SIZE = 256
#: Side of the square crop fed to the model, relative to the person box's longer side.
ROI_SCALE = 1.25
#: People whose box's longer side is below this many pixels get no landmarks
#: (the crop would be upsampled more than 5 times).
MIN_SIDE = 48
#: Pose-presence score below which the model's landmarks are not trusted.
MIN_PRESENCE = 0.5
#: Most people refined per image, the largest first (at about 20-25 ms each on
#: 2 threads, this keeps the three detectors within 0.3 s of a photo).
MAX_PEOPLE = 4
#: Version of the crop and decoding below and of the defaults MIN_SIDE, MIN_PRESENCE and
#: MAX_PEOPLE (bump when the detections of the same file change).
DECODE_VERSION = "2"


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -60, 60)))


def _roi(box) -> tuple[float, float, float]:
    """``(x0, y0, side)`` of the square crop around a person box."""
    side = ROI_SCALE * max(box.w, box.h)
    cx, cy = box.center
    return cx - side / 2, cy - side / 2, side


def landmarks_in_box(
    image: np.ndarray, box, *, threads: int, with_mask: bool = True
) -> tuple[np.ndarray, float, np.ndarray | None]:
    """Run the landmark model on the crop around ``box``.

    Returns
    -------
    keypoints : ndarray of shape (33, 3)
        ``(x, y, visibility)`` in image pixels.
    presence : float
        The model's pose-presence score in ``[0, 1]``.
    mask : ndarray of shape (H, W) or None
        The person's soft mask over the whole image (``None`` without ``with_mask``).
    """
    h, w = image.shape[:2]
    x0, y0, side = _roi(box)
    f = INPUT_SIZE / side
    warp = np.array([[f, 0, -x0 * f], [0, f, -y0 * f]], np.float32)
    interp = cv2.INTER_AREA if f < 1 else cv2.INTER_LINEAR
    crop = cv2.warpAffine(image, warp, (INPUT_SIZE, INPUT_SIZE), flags=interp, borderMode=cv2.BORDER_CONSTANT,
                          borderValue=(0, 0, 0))
    x = (crop.astype(np.float32) * (1.0 / 255.0))[None]
    sess = onnx_session("pose_landmark_full", threads=threads)
    raw, flag, seg = sess.run(None, {sess.get_inputs()[0].name: x})[:3]
    lm = raw.reshape(-1, 5)[: len(LANDMARKS)].astype(np.float64)
    keypoints = np.stack([x0 + lm[:, 0] / f, y0 + lm[:, 1] / f, _sigmoid(lm[:, 3])], axis=1).astype(np.float32)
    mask = None
    if with_mask:
        inverse = cv2.invertAffineTransform(warp)
        prob = _sigmoid(seg.reshape(INPUT_SIZE, INPUT_SIZE).astype(np.float32)).astype(np.float32)
        mask = cv2.warpAffine(prob, inverse, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                              borderValue=0.0)
        mask = mask.clip(0.0, 1.0)
    return keypoints, float(np.asarray(flag).reshape(-1)[0]), mask


@DETECTORS.register
class Pose(Detector):
    name = "pose"
    models = ("pose_landmark_full",)
    version = f"pose-{DECODE_VERSION}-{MODELS['pose_landmark_full'].version}"
    description = "MediaPipe pose: 33 keypoints and a mask on each detected person (onnxruntime; shipped weights)"
    kinds = ("person",)
    gives_keypoints = True
    gives_masks = True
    refines_people = True
    default_min_score = MIN_PRESENCE

    def __call__(self, image: np.ndarray, *, found: Sequence[Detection] = ()) -> tuple[Detection, ...]:
        people = [d for d in found if d.kind == "person"]
        chosen = sorted(
            (i for i, d in enumerate(people) if max(d.box.w, d.box.h) >= MIN_SIDE),
            key=lambda i: -people[i].box.area,
        )[:MAX_PEOPLE]
        out = list(people)
        for i in chosen:
            keypoints, presence, mask = landmarks_in_box(image, people[i].box, threads=self.threads)
            if presence >= self.min_score:
                out[i] = dataclasses.replace(people[i], keypoints=keypoints, mask=mask)
        return tuple(out)
