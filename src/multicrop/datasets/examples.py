"""A bundled multi-subject example photo, built from scikit-image's sample images.

The photos (astronaut, chelsea the cat, a coffee cup) ship inside
scikit-image, so the example needs no download.  They are pasted, scaled,
onto a wide, softly lit, slightly grainy backdrop, deterministically (fixed
seed): the same call always gives the same pixels.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from PIL import Image

from ..errors import InvalidParameterError
from ..io import DEFAULT_QUALITY, save_image
from .photos import sample_photo

__all__ = ["example_image", "example_photo", "EXAMPLE_SUBJECTS", "EXAMPLE_WIDTH", "EXAMPLE_HEIGHT"]

#: Sample images used, left to right, with their centre as a fraction of the canvas width.
EXAMPLE_SUBJECTS = (("astronaut", 1 / 6), ("chelsea", 1 / 2), ("coffee", 5 / 6))

#: Default canvas size of the example photo, in pixels (5 MP, wide like a panorama).
EXAMPLE_WIDTH, EXAMPLE_HEIGHT = 3600, 1400


def example_image(*, width: int = EXAMPLE_WIDTH, height: int = EXAMPLE_HEIGHT, seed: int = 0) -> np.ndarray:
    """The example photo as an array: three subjects side by side on a plain backdrop.

    Parameters
    ----------
    width, height : int
        Canvas size in pixels (at least 300 x 100, wider than tall).
    seed : int
        Seed of the backdrop's grain.

    Returns
    -------
    ndarray of uint8, shape (height, width, 3)

    Examples
    --------
    >>> a = example_image(width=600, height=240)
    >>> a.shape, a.dtype.name, bool((a == example_image(width=600, height=240)).all())
    ((240, 600, 3), 'uint8', True)
    """
    if not (isinstance(width, int) and isinstance(height, int)) or width < 300 or height < 100:
        raise InvalidParameterError(f"example size must be at least 300x100, got {width}x{height}")
    if width < 2 * height:
        raise InvalidParameterError(f"example must be at least twice as wide as tall, got {width}x{height}")
    rng = np.random.default_rng(seed)
    yy = np.linspace(0, 1, height, dtype=np.float32)[:, None]
    xx = np.linspace(0, 1, width, dtype=np.float32)[None, :]
    base = 0.42 + 0.1 * yy - 0.05 * (xx - 0.5) ** 2
    canvas = np.stack([base * 0.95, base * 0.9, base * 0.8], axis=-1)
    canvas = canvas + rng.normal(0, 0.01, size=(height, width, 1)).astype(np.float32)
    out = Image.fromarray(np.clip(canvas * 255 + 0.5, 0, 255).astype(np.uint8))
    slot = width / len(EXAMPLE_SUBJECTS)
    for name, cx in EXAMPLE_SUBJECTS:
        sub = Image.fromarray(sample_photo(name))
        f = min(0.62 * height / sub.height, 0.6 * slot / sub.width)
        sub = sub.resize((max(1, round(sub.width * f)), max(1, round(sub.height * f))), Image.Resampling.LANCZOS)
        x = round(cx * width - sub.width / 2)
        y = round(0.5 * height - sub.height / 2)
        out.paste(sub, (x, y))
    return np.asarray(out)


def example_photo(path: str | os.PathLike, *, width: int = EXAMPLE_WIDTH, height: int = EXAMPLE_HEIGHT,
                  seed: int = 0, quality: int = DEFAULT_QUALITY) -> Path:
    """Write the example photo to ``path`` (format from the extension) and return the path."""
    img = Image.fromarray(example_image(width=width, height=height, seed=seed))
    return save_image(img, path, quality=quality)
