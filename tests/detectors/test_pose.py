"""The pose landmarks on the astronaut, and what happens to people too small for them."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from multicrop.datasets.photos import sample_photo
from multicrop.detectors import DETECTORS, detect
from multicrop.detectors.pose import LANDMARKS, MIN_SIDE
from multicrop.geometry import Box


@pytest.fixture(scope="module")
def astronaut_found():
    image = sample_photo("astronaut")
    return image, detect(image, threads=1)


def test_the_33_landmarks_are_mediapipes_in_its_order():
    assert len(LANDMARKS) == 33 and len(set(LANDMARKS)) == 33
    assert LANDMARKS[0] == "nose" and LANDMARKS[11:13] == ("left_shoulder", "right_shoulder")
    assert LANDMARKS[23:29] == ("left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle")
    assert LANDMARKS[32] == "right_foot_index"


def test_the_astronauts_pose(astronaut_found):
    image, found = astronaut_found
    (person,) = [d for d in found if d.kind == "person"]
    (face,) = [d for d in found if d.kind == "face"]
    k = person.keypoints
    assert k is not None and k.shape == (33, 3) and k.dtype == np.float32
    at = {name: k[i] for i, name in enumerate(LANDMARKS)}
    # The nose lies in the face YuNet found, and near YuNet's own nose tip.
    assert face.box.contains(Box(float(at["nose"][0]), float(at["nose"][1]), 0, 0))
    assert np.hypot(*(at["nose"][:2] - face.keypoints[2, :2])) < 0.25 * face.box.w
    # She faces the camera: her left shoulder is on the image's right, both shoulders below the face,
    # the hips below the shoulders; all of them visible.
    assert at["left_shoulder"][0] > at["right_shoulder"][0]
    assert min(at["left_shoulder"][1], at["right_shoulder"][1]) > face.box.y2 - 0.1 * face.box.h
    assert min(at["left_hip"][1], at["right_hip"][1]) > max(at["left_shoulder"][1], at["right_shoulder"][1])
    for name in ("nose", "left_eye", "right_eye", "left_shoulder", "right_shoulder"):
        assert at[name][2] > 0.9, name
    # The mask covers her: high inside the face and on the chest, low in the photo's top-right corner.
    m = person.mask
    assert m.shape == image.shape[:2] and 0.0 <= float(m.min()) and float(m.max()) <= 1.0
    fx, fy = (round(v) for v in face.box.center)
    chest = (round((at["left_shoulder"][0] + at["right_shoulder"][0]) / 2),
             round((at["left_shoulder"][1] + at["right_shoulder"][1]) / 2) + 20)
    assert m[fy, fx] > 0.5 and m[chest[1], chest[0]] > 0.5 and m[:60, -60:].mean() < 0.1


def test_pose_only_refines_people_and_leaves_the_others(astronaut_found):
    image, found = astronaut_found
    plain = detect(image, detectors=("nanodet",), threads=1)
    assert [d.label for d in found if d.detector == "nanodet"] == [d.label for d in plain]
    assert all(d.keypoints is None for d in plain)
    assert DETECTORS.get("pose").refines_people and DETECTORS.get("pose").gives_masks
    # Without people before it, pose finds nothing of its own.
    assert detect(image, detectors=("pose",), threads=1) == ()


def test_a_person_too_small_keeps_its_box_without_landmarks(astronaut_found):
    image, found = astronaut_found
    (person,) = [d for d in found if d.kind == "person"]
    tiny = dataclasses.replace(person, box=Box(10, 10, MIN_SIDE - 1, MIN_SIDE - 1), keypoints=None, mask=None)
    (out,) = DETECTORS.create("pose", threads=1)(image, found=(tiny,))
    assert out == tiny and out.keypoints is None and out.mask is None
