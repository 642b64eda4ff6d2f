"""Sample photos shipped inside multicrop (public domain and CC0), for the example photo and carousel-synth.

Ten of scikit-image's sample images, stored in ``multicrop/data/photos/``
with exactly the pixels ``skimage.data`` gives (built by
``scripts/build_sample_photos.py``), so ``multicrop example`` and
carousel-synth need neither scikit-image nor a download.  Each entry of
:data:`SAMPLE_PHOTOS` names its author, source and licence; ``NOTICE`` lists
them too.

Examples
--------
>>> img = sample_photo("chelsea")
>>> img.shape, img.dtype.name
((300, 451, 3), 'uint8')
>>> sample_photo("camera").shape  # greyscale photos come as (H, W)
(512, 512)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

import numpy as np

from ..errors import InvalidParameterError

__all__ = ["SamplePhoto", "SAMPLE_PHOTOS", "sample_photo"]


@dataclass(frozen=True)
class SamplePhoto:
    """One shipped photo: file, where it comes from and under which terms."""

    name: str
    filename: str
    source_file: str  # its file in scikit-image's ``skimage/data`` folder
    credit: str
    licence: str


#: The shipped photos, by name (the ``skimage.data`` function names; ``motorcycle``
#: is the left view of ``stereo_motorcycle``).
SAMPLE_PHOTOS: dict[str, SamplePhoto] = {
    p.name: p
    for p in (
        SamplePhoto("astronaut", "astronaut.png", "astronaut.png",
                    "Eileen Collins, NASA Great Images database (https://flic.kr/p/r9qvLn)",
                    "public domain (no known copyright restrictions)"),
        SamplePhoto("chelsea", "chelsea.png", "chelsea.png", "Chelsea the cat, by Stefan van der Walt", "CC0-1.0"),
        SamplePhoto("coffee", "coffee.png", "coffee.png",
                    "Coffee cup by Rachel Michetti, courtesy of Pikolo Espresso Bar", "CC0-1.0"),
        SamplePhoto("rocket", "rocket.jpg", "rocket.jpg",
                    "DSCOVR launch on Falcon 9, SpaceX "
                    "(https://www.flickr.com/photos/spacexphotos/16511594820)", "public domain (released by SpaceX)"),
        SamplePhoto("motorcycle", "motorcycle_left.png", "motorcycle_left.png",
                    "Left view of the Motorcycle pair of the Middlebury 2014 stereo dataset (D. Scharstein et al., "
                    "GCPR 2014), downsampled 4x by scikit-image",
                    "as redistributed in scikit-image (BSD-3-Clause package); Middlebury asks for a citation"),
        SamplePhoto("camera", "camera.png", "camera.png", "Cameraman, by Lav Varshney", "CC0-1.0"),
        SamplePhoto("hubble_deep_field", "hubble_deep_field.jpg", "hubble_deep_field.jpg",
                    "Hubble eXtreme Deep Field, NASA (HubbleSite release 2012-37)", "public domain (NASA)"),
        SamplePhoto("grass", "grass.png", "grass.png",
                    "Grass-01 by linolafett (DeviantArt), cropped and greyscaled by scikit-image", "CC0-1.0"),
        SamplePhoto("gravel", "gravel.png", "gravel.png",
                    "Gravel04, CC0Textures, rescaled, cropped and greyscaled by scikit-image", "CC0-1.0"),
        SamplePhoto("brick", "brick.png", "brick.png",
                    "Bricks25, CC0Textures, warped, cropped and greyscaled by scikit-image", "CC0-1.0"),
    )
}


@functools.lru_cache(maxsize=None)
def _decoded(name: str) -> np.ndarray:
    from ..io import open_image

    with resources.files("multicrop").joinpath("data", "photos", SAMPLE_PHOTOS[name].filename).open("rb") as f:
        with open_image(f, name=SAMPLE_PHOTOS[name].filename) as im:
            arr = np.asarray(im)
    arr.setflags(write=False)
    return arr


def sample_photo(name: str) -> np.ndarray:
    """A shipped sample photo as a new array (the pixels ``skimage.data.<name>()`` gives).

    Parameters
    ----------
    name : str
        A key of :data:`SAMPLE_PHOTOS`.

    Returns
    -------
    ndarray of uint8, shape (H, W, 3) for colour photos, (H, W) for greyscale ones

    Raises
    ------
    InvalidParameterError
        If ``name`` is not a shipped photo.
    """
    if name not in SAMPLE_PHOTOS:
        raise InvalidParameterError(f"sample photo must be one of {', '.join(SAMPLE_PHOTOS)}, got {name!r}")
    return _decoded(name).copy()
