"""EXIF orientation, the one place photos are turned upright (:mod:`multicrop.io.orientation`)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageOps

from multicrop.io import open_image
from multicrop.io.orientation import exif_unreadable, orientation, transpose


def _photo(tmp_path, tag: int):
    arr = np.zeros((30, 40, 3), np.uint8)
    arr[:10, :10] = 255  # white top-left corner of the stored pixels
    exif = Image.Exif()
    exif[0x0112] = tag
    path = tmp_path / f"o{tag}.jpg"
    Image.fromarray(arr).save(path, exif=exif.tobytes(), quality=95)
    return path


@pytest.mark.parametrize("tag", range(1, 9))
def test_transpose_turns_every_orientation_upright_as_pillow_does(tmp_path, tag):
    with open_image(_photo(tmp_path, tag)) as im:
        assert orientation(im) == tag and not exif_unreadable(im)
        ours = np.asarray(transpose(im).convert("RGB"))
        pillow = np.asarray(ImageOps.exif_transpose(im).convert("RGB"))
    assert ours.shape == ((40, 30, 3) if tag >= 5 else (30, 40, 3))
    assert np.array_equal(ours, pillow)


def test_nothing_to_do_is_no_copy(tmp_path):
    with open_image(_photo(tmp_path, 1)) as im:
        assert transpose(im) is im


def test_an_orientation_out_of_range_counts_as_upright(tmp_path):
    with open_image(_photo(tmp_path, 9)) as im:
        assert orientation(im) == 1 and transpose(im) is im
