"""A tiny outlined folder: synthetic photos with their objects' outlines as YOLO polygons."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image


def write_outlined(root, photos):
    """``photos``: ``{id: (width, height, [(class, (x0, y0, x1, y1)), ...])}``, boxes in pixels.

    Each object is painted as a bright rectangle on a dark, lightly textured
    background and written as a normalised rectangle polygon.
    """
    (root / "images").mkdir(parents=True, exist_ok=True)
    (root / "labels").mkdir(parents=True, exist_ok=True)
    (root / "classes.txt").write_text("1: person\n3: car\n18: dog\n67: dining table\n")
    rng = np.random.default_rng(0)
    for pid, (w, h, objects) in photos.items():
        img = (rng.random((h, w, 3)) * 30 + 20).astype(np.uint8)
        lines = []
        for i, (cls, (x0, y0, x1, y1)) in enumerate(objects):
            img[y0:y1, x0:x1] = (230 - 40 * i, 200, 60 + 50 * i)
            lines.append(f"{cls} " + " ".join(f"{v:.6f}" for v in
                                              (x0 / w, y0 / h, x1 / w, y0 / h, x1 / w, y1 / h, x0 / w, y1 / h)))
        Image.fromarray(img).save(root / "images" / f"{pid}.png")
        (root / "labels" / f"{pid}.txt").write_text("\n".join(lines) + "\n")
    return root


#: Two photos with two large objects each, one with a single object (left out by default).
PHOTOS = {
    "two": (240, 160, [(1, (20, 40, 80, 140)), (18, (150, 60, 220, 130))]),
    "pair": (200, 200, [(3, (10, 10, 90, 90)), (1, (120, 100, 180, 190))]),
    "single": (200, 150, [(1, (80, 30, 130, 140))]),
}


@pytest.fixture(scope="module")
def outlined(tmp_path_factory):
    return write_outlined(tmp_path_factory.mktemp("outlined") / "set", PHOTOS)
