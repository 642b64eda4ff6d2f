"""Fixtures for judge tests: a loopback OpenAI-compatible server and small images."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

_HERE = Path(__file__).resolve().parent


def load_fake_server_module():
    """Import ``fake_openai_server.py`` by path (tests use --import-mode=importlib)."""
    spec = importlib.util.spec_from_file_location("fake_openai_server", _HERE / "fake_openai_server.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def fake_server():
    mod = load_fake_server_module()
    with mod.FakeOpenAIServer() as srv:
        yield srv


def write_images(folder: Path, n: int, *, size: int = 48, seed: int = 0) -> list[Path]:
    """``n`` distinct small random JPEGs under ``folder``."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        p = folder / f"img{i:03d}.jpg"
        Image.fromarray((rng.random((size, size + 8, 3)) * 255).astype(np.uint8)).save(p, quality=90)
        paths.append(p)
    return paths


@pytest.fixture
def images(tmp_path) -> list[Path]:
    return write_images(tmp_path / "imgs", 2)
