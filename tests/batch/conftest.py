"""Folders of generated photos (with corrupt files) for the batch tests; everything under tmp_path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from multicrop.crop.config import CropConfig, OutputConfig

#: Fast settings: spectral saliency, no faces, no preview (the batch machinery is what is tested);
#: partition gives exactly k crops a photo (direct writes fewer when it finds fewer distinct subjects).
FAST = CropConfig(strategy="partition", saliency="spectral", faces=False)
NO_PREVIEW = OutputConfig(preview=False)


def make_photo(path: Path, seed: int, size=(320, 200)) -> Path:
    """A photo with two bright subjects on a textured background (deterministic in ``seed``)."""
    rng = np.random.default_rng(seed)
    w, h = size
    img = rng.integers(20, 70, (h, w, 3), dtype=np.uint8)
    for _ in range(2):
        x, y = int(rng.integers(0, w - 60)), int(rng.integers(0, h - 60))
        img[y:y + 50, x:x + 50] = rng.integers(180, 255, 3, dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(img).save(path)
    return path


def make_tree(root: Path, n_good: int = 6) -> tuple[list[Path], list[Path]]:
    """``n_good`` photos in nested folders, plus a non-image, a corrupt JPEG and a truncated PNG."""
    good = [make_photo(root / f"set{i % 2}" / f"p{i:02d}.{'jpg' if i % 3 else 'png'}", i) for i in range(n_good)]
    (root / "notes.txt").write_text("not a photo")
    bad_jpg = root / "set0" / "corrupt.jpg"
    bad_jpg.write_bytes(b"\xff\xd8\xff\xe0 this is not a JPEG")
    png = make_photo(root / "tmp.png", 99)
    data = png.read_bytes()
    png.unlink()
    truncated = root / "set1" / "truncated.png"
    truncated.write_bytes(data[: len(data) // 3])
    return good, [bad_jpg, truncated]


@pytest.fixture
def tree(tmp_path) -> tuple[Path, list[Path], list[Path]]:
    root = tmp_path / "photos"
    good, bad = make_tree(root)
    return root, good, bad
