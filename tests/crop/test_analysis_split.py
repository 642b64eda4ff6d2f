"""``analyse`` = ``run_models`` (the models) then ``analysis_from`` (faces, subjects, key)."""

from __future__ import annotations

import numpy as np

from multicrop.crop.analysis import analyse, analysis_from, run_models
from multicrop.crop.config import CropConfig
from multicrop.detectors.types import Detection
from multicrop.geometry import Box


def _image():
    img = np.full((80, 120, 3), 35, np.uint8)
    img[20:60, 15:45] = 230
    img[30:50, 80:105] = 180
    return img


def test_the_two_halves_make_the_analysis_analyse_makes():
    img, cfg = _image(), CropConfig(saliency="spectral", detectors=())
    sal, dets = run_models(img, cfg)
    a, b = analysis_from(img, sal, dets, cfg), analyse(img, cfg)
    assert a.key == b.key and a.size == b.size and a.versions == b.versions
    assert np.array_equal(a.saliency, b.saliency) and a.subjects == b.subjects and len(a.subjects) >= 1


def test_given_detections_raise_faces_and_enter_the_key_as_analyse_does():
    img, cfg = _image(), CropConfig(saliency="spectral", detectors=())
    face = Detection("face", "face", -1, Box(20, 25, 10, 10), 0.9, detector="yunet")
    sal, _ = run_models(img, cfg)
    kept = sal.copy()
    a = analysis_from(img, sal, [face], cfg, given=True)
    b = analyse(img, cfg, detections=[face])
    assert a.key == b.key and np.array_equal(a.saliency, b.saliency) and a.subjects == b.subjects
    assert np.array_equal(sal, kept)  # the map handed in is not changed
    assert a.saliency[30, 25] == 1.0 > kept[30, 25]  # the face is raised to full saliency
    assert analysis_from(img, sal, [face], cfg).key != a.key  # found by the detectors: not in the key
