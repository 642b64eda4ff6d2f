"""The bundled example photo."""

import numpy as np
import pytest
from PIL import Image

from multicrop.errors import InvalidParameterError
from multicrop.datasets.examples import example_image, example_photo


def test_example_is_deterministic_and_written(tmp_path):
    path = example_photo(tmp_path / "e.png", width=600, height=240)
    with Image.open(path) as im:
        assert im.size == (600, 240)
        assert np.array_equal(np.asarray(im), example_image(width=600, height=240))
    assert not np.array_equal(example_image(width=600, height=240, seed=1), example_image(width=600, height=240))


def test_example_size_is_checked():
    with pytest.raises(InvalidParameterError, match="twice as wide"):
        example_image(width=400, height=300)
