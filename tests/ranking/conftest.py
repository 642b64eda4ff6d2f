"""Fixtures of the ranking tests: a photo with a sharp and a blurred dark copy of one subject, its crop result."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageFilter

from multicrop.crop.config import CropConfig
from multicrop.crop.pipeline import crop_photo
from multicrop.crop.scoring import ScoredCrop
from multicrop.datasets.photos import sample_photo
from multicrop.geometry import Box
from multicrop.ratios import Ratio

#: The blurred, darkened copy (left) and the sharp copy (right) of the astronaut, 256 px each.
SPOILED, SHARP = Box(0, 0, 256, 256), Box(256, 0, 256, 256)
MEASURED = 'holistic_repetitions = 1\ndimension_repetitions = 0\n' \
           '[[families]]\nname = "measured"\nbackend = "measured"\nmodel = "measured-v1"\n'


def two_copies() -> np.ndarray:
    """512 x 256: the spoiled copy, then the sharp copy of one subject."""
    im = Image.fromarray(sample_photo("astronaut")).resize((256, 256), Image.Resampling.LANCZOS)
    spoiled = (np.asarray(im.filter(ImageFilter.GaussianBlur(6))) * 0.2).astype(np.uint8)
    return np.concatenate([spoiled, np.asarray(im)], axis=1)


def alternatives(result, boxes_and_scores):
    """``result`` with one crop whose shortlist is the given (box, composition score) pairs, in order."""
    alts = tuple(ScoredCrop(b, s, {}, Ratio(1, 1)) for b, s in boxes_and_scores)
    return replace(result, crops=alts[:1], shortlists=(alts,))


@pytest.fixture(scope="session")
def base_result():
    """A crop result of :func:`two_copies` (its crops are replaced by each test)."""
    cfg = CropConfig(k=1, ratios="1:1", strategy="direct", saliency="spectral", faces=False, min_crop_side=64)
    return crop_photo(two_copies(), cfg, shortlist=2)


@pytest.fixture
def spoiled_first(base_result):
    """The composition scorer prefers the spoiled copy; the sharp one is the second alternative."""
    return alternatives(base_result, [(SPOILED, 2.0), (SHARP, 1.0)])


@pytest.fixture
def measured_panel(tmp_path) -> Path:
    path = tmp_path / "measured.toml"
    path.write_text(MEASURED)
    return path


def load_fake_server():
    """The loopback OpenAI-compatible server of tests/judges (imported by path)."""
    path = Path(__file__).resolve().parents[1] / "judges" / "fake_openai_server.py"
    spec = importlib.util.spec_from_file_location("fake_openai_server_ranking", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def fake_server():
    with load_fake_server().FakeOpenAIServer() as srv:
        yield srv
