"""Fixtures shared by the whole suite: the ``shared/`` folder beside the checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

_SHARED = (Path(__file__).resolve().parents[1] / ".." / "shared").resolve()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` relative to the repository root (CI has it there too)."""
    if not _SHARED.is_dir():
        pytest.fail(f"shared/ folder not found at {_SHARED}; it must sit beside the checkout")
    return _SHARED


@pytest.fixture(scope="session")
def carousel_labels(shared_dir: Path) -> Path:
    """The real Carousel label files (``shared/data/carousel``), without images."""
    path = shared_dir / "data" / "carousel"
    if not (path / "dataset").is_dir():
        pytest.fail(f"Carousel labels not found at {path}")
    return path


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
