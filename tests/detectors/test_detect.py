"""The shipped detectors on the bundled sample photos, and the registry contract."""

from __future__ import annotations

import numpy as np
import pytest

from multicrop.datasets.photos import sample_photo
from multicrop.detectors import DETECTORS, KINDS, Detection, detect, detector_versions
from multicrop.errors import InvalidParameterError, UnknownNameError
from multicrop.models import MODELS
from multicrop.registry import available, create


@pytest.fixture(scope="module")
def astronaut():
    return sample_photo("astronaut")


def test_the_astronaut_is_a_person_with_a_face(astronaut):
    found = detect(astronaut, detectors=("nanodet", "yunet"), threads=1)
    people = [d for d in found if d.kind == "person"]
    faces = [d for d in found if d.kind == "face"]
    assert len(people) == 1 and len(faces) == 1
    person, face = people[0], faces[0]
    assert person.label == "person" and person.class_id == 1 and person.detector == "nanodet"
    # She fills most of the left of the frame: her box covers the face box and most of the height.
    assert person.box.contains(face.box, tol=2) and person.box.h > 0.8 * astronaut.shape[0]
    assert face.class_id == -1 and face.detector == "yunet" and face.score > 0.9
    # Her face sits at about (220, 120) in the 512 x 512 photo, about 90 px wide.
    cx, cy = face.box.center
    assert 190 < cx < 250 and 90 < cy < 150 and 60 < face.box.w < 120
    # YuNet's landmarks: the eyes above the nose, the nose above the mouth, all inside the face box.
    k = face.keypoints
    assert k.shape == (5, 3)
    assert max(k[0, 1], k[1, 1]) < k[2, 1] < min(k[3, 1], k[4, 1])
    assert all(face.box.x <= x <= face.box.x2 and face.box.y <= y <= face.box.y2 for x, y, _ in k)


@pytest.mark.parametrize(("photo", "label", "kind", "share"), [
    ("motorcycle", "motorcycle", "vehicle", 0.4),  # a motorcycle filling most of the frame
    ("chelsea", "cat", "animal", 0.6),  # a cat's head filling the frame
    ("coffee", "cup", "object", 0.1),  # a cup on a saucer on a table
])
def test_the_detector_names_what_the_sample_photo_shows(photo, label, kind, share):
    image = sample_photo(photo)
    found = detect(image, detectors="nanodet", threads=1)
    named = [d for d in found if d.label == label]
    assert named and named[0].kind == kind and named[0].class_id in (4, 17, 47)
    h, w = image.shape[:2]
    assert named[0].box.area > share * w * h
    if kind != "person":
        assert not [d for d in found if d.kind == "person"]  # nobody is in these photos


def test_a_flat_image_has_no_detections():
    grey = np.full((300, 400, 3), 128, np.uint8)
    assert detect(grey, detectors=("nanodet", "yunet"), threads=1) == ()


def test_boxes_are_in_the_given_images_pixels(astronaut):
    (small,) = [d for d in detect(astronaut[::2, ::2].copy(), detectors="nanodet", threads=1) if d.kind == "person"]
    (full,) = [d for d in detect(astronaut, detectors="nanodet", threads=1) if d.kind == "person"]
    assert abs(small.box.x * 2 - full.box.x) < 8 and abs(small.box.w * 2 - full.box.w) < 12


def test_thresholds_are_settings(astronaut):
    strict = detect(astronaut, detectors="nanodet", threads=1, min_score=0.99)
    assert strict == ()
    loose = detect(astronaut, detectors=("nanodet", "yunet"), threads=1, min_score={"nanodet": 0.1})
    assert len([d for d in loose if d.detector == "nanodet"]) > 2
    assert all(d.score >= 0.1 for d in loose)


@pytest.mark.parametrize("bad", [
    {"detectors": ("nanodet", "nanodet")}, {"min_score": 1.5}, {"min_score": {"yunet": 0.5}},
    {"threads": 0},
])
def test_bad_options_are_refused_naming_them(astronaut, bad):
    with pytest.raises(InvalidParameterError):
        detect(astronaut, **{"detectors": "nanodet", **bad})


def test_bad_images_and_unknown_names_are_refused(astronaut):
    with pytest.raises(InvalidParameterError, match="uint8"):
        detect(astronaut.astype(np.float32))
    with pytest.raises(InvalidParameterError, match=r"\(H, W, 3\)"):
        detect(astronaut[..., 0])
    with pytest.raises(UnknownNameError, match="did you mean 'nanodet'"):
        detect(astronaut, detectors=("nanodot",))


def test_versions_name_the_model_hash_and_the_decode_version():
    versions = detector_versions(("nanodet", "yunet"))
    assert versions == {
        "nanodet": "nanodet-2-" + MODELS["nanodet"].sha256[:12],
        "yunet": "yunet-1-" + MODELS["yunet"].sha256[:12],
    }
    with pytest.raises(UnknownNameError):
        detector_versions(("yolo",))


@pytest.mark.parametrize("name", DETECTORS.names())
def test_every_detector_has_the_registry_shape(name):
    cls = DETECTORS.get(name)
    assert name in available("detector")
    assert cls.version and cls.description and cls.kinds and set(cls.kinds) <= set(KINDS)
    assert isinstance(cls.gives_keypoints, bool) and isinstance(cls.refines_people, bool)
    assert 0 < cls.default_min_score < 1
    det = create("detector", name, threads=1)
    assert det.threads == 1 and det.min_score == cls.default_min_score
    with pytest.raises(TypeError):
        create("detector", name, colour="red")  # unknown options fail


def test_detection_values_are_checked():
    from multicrop.geometry import Box

    with pytest.raises(InvalidParameterError, match="kind"):
        Detection(kind="plant", label="x", class_id=1, box=Box(0, 0, 1, 1), score=0.5)
    with pytest.raises(InvalidParameterError, match="score"):
        Detection(kind="person", label="person", class_id=1, box=Box(0, 0, 1, 1), score=1.5)
