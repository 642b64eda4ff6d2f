"""Fixtures shared by the whole suite; nothing outside the repository is read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# One hypothesis profile for the whole suite: no deadlines (a deadline is a timed assertion, and fails on a
# loaded machine), no "too slow" health check for the same reason; print_blob so that a failure found
# once can be replayed (@reproduce_failure).  HYPOTHESIS_PROFILE=ci-derandomized gives a fixed sequence.
settings.register_profile("multicrop", deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci-derandomized", parent=settings.get_profile("multicrop"), derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "multicrop"))


@pytest.fixture(scope="session", autouse=True)
def _onnx_cache(tmp_path_factory):
    """Optimised model graphs go to a folder of this test session, never the user's cache (subprocesses too)."""
    old = os.environ.get("MULTICROP_ONNX_CACHE")
    os.environ["MULTICROP_ONNX_CACHE"] = str(tmp_path_factory.mktemp("onnx-cache"))
    yield
    if old is None:
        os.environ.pop("MULTICROP_ONNX_CACHE", None)
    else:
        os.environ["MULTICROP_ONNX_CACHE"] = old


@pytest.fixture(scope="session")
def carousel_labels(tmp_path_factory) -> Path:
    """The real Carousel label files (170 items, no images), as the dataset has them.

    Written from the copy shipped inside multicrop
    (:mod:`multicrop.datasets.carousel_labels`), byte for byte the real files.
    """
    from multicrop.datasets.carousel_labels import write_labelme

    return write_labelme(tmp_path_factory.mktemp("carousel") / "labels")


#: Label files used by the small synthetic Carousel copies in tests: a plain
#: k=2 image, a hard failure, a subcrops mismatch (3 boxes, k=2), a mixed-orientation image.
SMALL_NAMES = (
    "090717-N-4234E-473",
    "1_Las_vegas_strip",
    "2021_WK_Vlaanderen_men_elite_podium",
    "Hockey_players",
)


@pytest.fixture(scope="session")
def small_synth(tmp_path_factory, carousel_labels) -> Path:
    """A carousel-synth copy of four real label files, rendered at 160 px."""
    from multicrop.datasets.synth import make_synth

    out = tmp_path_factory.mktemp("synth") / "small"
    make_synth(carousel_labels, out, seed=0, max_side=160, names=SMALL_NAMES)
    return out
