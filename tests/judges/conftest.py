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


def make_toy_head(path: Path, *, targets=("overall", "composition"), seed: int = 0) -> Path:
    """A head file over the shipped embedding with random coefficients (tests need no fitting)."""
    from multicrop.embeddings import EMBEDDING
    from multicrop.judges.heads import Head, HeadTarget, save_head

    rng = np.random.default_rng(seed)
    ts = tuple(HeadTarget(name=t, attribute="score" if t == "overall" else t, scale=(1.0, 5.0),
                          coef=(rng.normal(size=EMBEDDING.dim) * 0.01).astype(np.float32), intercept=3.0,
                          alpha=1.0, n=100, oof_spearman=0.5) for t in targets)
    save_head(Head(embedding=EMBEDDING.id, targets=ts, source="toy"), path)
    return path


@pytest.fixture
def toy_head(tmp_path):
    """A factory of toy head files under ``tmp_path``."""
    count = iter(range(1000))

    def make(**kw):
        return make_toy_head(tmp_path / f"head{next(count)}.json", **kw)

    return make
