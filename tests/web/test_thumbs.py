"""Strip thumbnails rendered from the full photo: a rotated JPEG decoded at a DCT scale stands upright."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from multicrop.geometry import Box
from multicrop.io import load_image
from multicrop.web.photos import Photo
from multicrop.web.thumbs import RenderCache, dct_scale


def test_a_crop_of_a_rotated_jpeg_at_a_dct_scale_is_the_upright_crop(tmp_path):
    # stored 1600 wide x 1200 tall with EXIF orientation 6: shown 1200 wide x 1600 tall; a bright square
    # sits at the shown top-left, which is the stored bottom-left
    stored = np.full((1200, 1600, 3), 40, np.uint8)
    stored[800:1200, 0:400] = 230
    exif = Image.Exif()
    exif[0x0112] = 6
    path = tmp_path / "rotated.jpg"
    Image.fromarray(stored).save(path, quality=95, exif=exif)
    loaded = load_image(path, max_side=512)
    assert loaded.size == (1200, 1600)
    photo = Photo("p", "rotated.jpg", path, loaded, b"")
    box, width = Box(0, 0, 1200, 1600), 150
    assert dct_scale(box, width, loaded.format) == 4  # the decode is a quarter of the photo across
    got = np.asarray(Image.open(io.BytesIO(RenderCache().render(photo, box, width))).convert("L")).astype(int)
    assert got.shape == (200, 150)
    upright = np.asarray(loaded.open_full(rgb=True).convert("L").resize((150, 200), Image.Resampling.LANCZOS))
    assert np.abs(got - upright.astype(int)).mean() < 3
    assert got[:40, :40].mean() > 200 and got[-40:, -40:].mean() < 60  # the square at the shown top-left
