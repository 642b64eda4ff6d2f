"""The ground floor's array measurements shared by the crop scorer and the measured judge."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from multicrop.measures import (
    BORDER_BAND,
    THIRDS_POINTS,
    border_band,
    box_sums,
    gradient_magnitude,
    laplacian_variance,
    luminance,
    summed_area_table,
    tone_departure,
)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.uint8, bool, np.int64])
def test_summed_area_table_is_the_cumulative_sum_with_a_zero_border(dtype):
    rng = np.random.default_rng(0)
    values = (rng.random((37, 53)) * 10).astype(dtype)
    sat = summed_area_table(values)
    assert sat.dtype == np.float64 and sat.shape == (38, 54)
    assert not sat[0].any() and not sat[:, 0].any()
    reference = np.cumsum(np.cumsum(values.astype(np.float64), axis=0), axis=1)
    np.testing.assert_allclose(sat[1:, 1:], reference, rtol=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 30), st.integers(1, 30), st.integers(0, 2**32 - 1))
def test_box_sums_equal_the_sum_of_the_slice(h, w, seed):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 100, (h, w)).astype(np.float32)  # integers: exact in float64
    x1, x2 = sorted(rng.integers(0, w + 1, 2))
    y1, y2 = sorted(rng.integers(0, h + 1, 2))
    got = box_sums(summed_area_table(values), np.array([x1]), np.array([y1]), np.array([x2]), np.array([y2]))
    assert got[0] == values[y1:y2, x1:x2].sum()


def test_border_band_rounds_like_python_and_is_at_least_one_pixel():
    sides = np.arange(1, 2000)
    expected = [max(1, round(BORDER_BAND * int(s))) for s in sides]
    assert border_band(sides).tolist() == expected
    assert int(border_band(50)) == 2 and int(border_band(10)) == 1  # 1.5 -> 2, 0.3 -> 1


def test_thirds_points_and_tone_departure():
    assert sorted(THIRDS_POINTS) == [(1 / 3, 1 / 3), (1 / 3, 2 / 3), (2 / 3, 1 / 3), (2 / 3, 2 / 3)]
    assert tone_departure(np.array([0.5, 0.25, 0.0, 1.0]), centre=0.5, spread=0.5).tolist() == [0, 0.5, 1, 1]
    assert float(tone_departure(118.0 + 40.0, centre=118.0, spread=80.0)) == 0.5


def test_luminance_and_sharpness_maps():
    img = np.zeros((20, 30, 3), np.uint8)
    img[:, 15:] = (255, 255, 255)
    grey = luminance(img)
    assert grey.dtype == np.uint8 and grey.shape == (20, 30) and grey[0, 0] == 0 and grey[0, 29] == 255
    assert luminance(np.dstack([img, np.zeros((20, 30), np.uint8)])).tolist() == grey.tolist()  # alpha ignored
    g = grey.astype(np.float32) / 255
    mag = gradient_magnitude(g)
    assert mag[10, 14] == mag[10, 15] == 4.0 and mag[10, :13].max() == 0
    flat = np.full((20, 30), 0.5, np.float32)
    assert laplacian_variance(flat) == 0.0 < laplacian_variance(g)
