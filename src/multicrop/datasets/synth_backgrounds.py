"""The pixels carousel-synth paints on: shipped photos as RGB, resizing, and the two kinds of background.

:func:`soft_background` is a blurred, low-contrast, tinted view of a shipped
photo or texture (carousel-synth); :func:`sharp_background` a sharp window
of a photo (carousel-synth-hard), from the shipped photos or the user's own
(:func:`load_backgrounds`).  Used by :mod:`multicrop.datasets.synth`, which
re-exports :data:`BACKGROUNDS` and :func:`load_backgrounds`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import DatasetError, ImageLoadError
from ..io import is_photo, open_image
from ..io.orientation import transpose
from .photos import sample_photo

__all__ = ["BACKGROUNDS", "sample_rgb", "resize_to", "soft_background", "sharp_background", "load_backgrounds"]

#: Photos and textures used (blurred) as backgrounds.
BACKGROUNDS: tuple[str, ...] = (
    "hubble_deep_field", "grass", "gravel", "brick", "coffee", "chelsea", "rocket", "motorcycle",
)


def sample_rgb(name: str) -> np.ndarray:
    """The shipped photo ``name`` (:func:`~multicrop.datasets.photos.sample_photo`) as (H, W, 3) uint8 RGB."""
    img = sample_photo(name)
    if img.ndim == 2:
        img = np.repeat(img[:, :, None], 3, axis=2)
    return np.ascontiguousarray(img[:, :, :3]).astype(np.uint8)


def resize_to(img: np.ndarray, w: int, h: int) -> np.ndarray:
    """``img`` resized to ``w`` x ``h`` (area averaging when shrinking, bilinear when enlarging)."""
    import cv2

    interp = cv2.INTER_AREA if w < img.shape[1] else cv2.INTER_LINEAR
    return cv2.resize(img, (max(w, 1), max(h, 1)), interpolation=interp)


def _random_window(src: np.ndarray, w: int, h: int, rng: np.random.Generator, *, min_fraction: float) -> np.ndarray:
    """A random window of ``src`` with the aspect ``w:h``, covering ``min_fraction``-100 % of its side, flipped
    left-right half the time."""
    sh, sw = src.shape[:2]
    f = rng.uniform(min_fraction, 1.0)
    ww = min(sw, sh * w / h) * f
    hh = ww * h / w
    x0 = rng.uniform(0, sw - ww)
    y0 = rng.uniform(0, sh - hh)
    win = src[int(y0): int(y0 + hh) + 1, int(x0): int(x0 + ww) + 1]
    return win[:, ::-1] if rng.random() < 0.5 else win


def soft_background(w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    import cv2

    src = sample_rgb(BACKGROUNDS[int(rng.integers(len(BACKGROUNDS)))]).astype(np.float32)
    win = _random_window(src, w, h, rng, min_fraction=0.5)
    # Blur at 1/8 size (same look, a fraction of the cost), then enlarge.
    sw8, sh8 = max(w // 8, 8), max(h // 8, 8)
    small = resize_to(np.ascontiguousarray(win), sw8, sh8)
    sigma = max(sw8, sh8) * rng.uniform(0.01, 0.03)
    bg = resize_to(cv2.GaussianBlur(small, (0, 0), sigma), w, h)
    tint = rng.uniform(0.6, 1.1, size=3).astype(np.float32)
    mean = bg.mean(axis=(0, 1), keepdims=True)
    bg = (mean + (bg - mean) * rng.uniform(0.3, 0.6)) * tint * rng.uniform(0.5, 0.9)
    return bg


def sharp_background(w: int, h: int, rng: np.random.Generator, photos: Sequence[np.ndarray]) -> np.ndarray:
    """A random window of the target aspect from one of ``photos``, resized, unblurred."""
    src = photos[int(rng.integers(len(photos)))]
    win = _random_window(src, w, h, rng, min_fraction=0.6)
    return resize_to(np.ascontiguousarray(win), w, h).astype(np.float32)


def load_backgrounds(directory: str | Path, *, max_side: int = 1600) -> list[np.ndarray]:
    """The JPEG/PNG photos of ``directory`` as RGB arrays (long side at most ``max_side``).

    Raises
    ------
    DatasetError
        If ``directory`` holds no readable photo.
    """
    out = []
    for p in sorted(Path(directory).glob("*")):
        if not is_photo(p):
            continue
        try:
            with open_image(p) as im:
                im = transpose(im).convert("RGB")
                im.thumbnail((max_side, max_side))
                out.append(np.asarray(im, dtype=np.uint8))
        except (OSError, ImageLoadError):
            continue
    if not out:
        raise DatasetError(f"backgrounds: no readable JPEG/PNG/WebP photo in {directory}")
    return out
