"""The sample photos shipped inside multicrop: the exact pixels of scikit-image's sample images."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from multicrop.datasets.photos import SAMPLE_PHOTOS, sample_photo
from multicrop.errors import InvalidParameterError

#: Shape and SHA-256 of the array ``skimage.data.<name>()`` gives (scikit-image 0.26.0;
#: motorcycle: ``stereo_motorcycle()[0]``), recorded when the photos were built.
SKIMAGE_ARRAYS = {
    "astronaut": ((512, 512, 3), "a8c429c18afa7b0fd5673e598d73a21225d94c864a71bbb3885126fdecb41071"),
    "chelsea": ((300, 451, 3), "416b729128bfb2c3d1eb69bf9b1734a796293abc17939267b2dc94f8a5784031"),
    "coffee": ((400, 600, 3), "0ce2b51640b9c95f19617f03eabf40c3f0368589cc1ee1190b70966165ac184f"),
    "rocket": ((427, 640, 3), "3d4435cc745752b7f9724df88c6e18817de3ce7e3d2d71c55f85f7831e68f197"),
    "motorcycle": ((500, 741, 3), "ca829467c1d4f427da9c4862ba43829da6ac90afe1f75735e95dba9e3fd9620b"),
    "camera": ((512, 512), "5cb24482a53416f99052258be2b1ee38cd31c559a70c8a8b321cba231b332e21"),
    "hubble_deep_field": ((872, 1000, 3), "9a3ea9548188f81e63435188456e74de45a981ebeb791e265abe79a26d3b528b"),
    "grass": ((512, 512), "b18dae4c68bf850a7a7b28a29d1846c76be890665117b57fd125fe29c4d4ede6"),
    "gravel": ((512, 512), "3d51ad45f789cd8b98534b7af6bce774e499ead45421135afd757358c7230009"),
    "brick": ((512, 512), "664a145c5253f0d66db1a12776785f0ea35a44cc7447ffc933f6d6118dc58643"),
}


@pytest.mark.parametrize("name", sorted(SAMPLE_PHOTOS))
def test_each_photo_has_the_pixels_of_scikit_image(name):
    img = sample_photo(name)
    shape, digest = SKIMAGE_ARRAYS[name]
    assert img.dtype == np.uint8 and img.shape == shape
    assert hashlib.sha256(np.ascontiguousarray(img).tobytes()).hexdigest() == digest
    photo = SAMPLE_PHOTOS[name]
    assert photo.credit and photo.licence and photo.filename.endswith((".png", ".jpg"))


def test_callers_get_their_own_copy():
    a = sample_photo("chelsea")
    a[:] = 0
    assert sample_photo("chelsea").any()


def test_unknown_photo():
    with pytest.raises(InvalidParameterError, match="sample photo must be one of astronaut, chelsea"):
        sample_photo("lena")
