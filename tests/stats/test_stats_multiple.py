"""Benjamini–Hochberg against statsmodels (outside reference) and against hand arithmetic."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from multicrop.errors import InvalidParameterError
from multicrop.stats.multiple import bh_adjust


def test_bh_by_hand():
    # sorted p: 0.005, 0.01, 0.03, 0.04 (m = 4); p*m/rank = 0.02, 0.02, 0.04, 0.04;
    # running minimum from the top keeps them.  (Holm-Sidak, statsmodels' default,
    # would give different numbers: 0.0199, 0.0297, 0.0591, 0.0591.)
    got = bh_adjust([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(got, [0.02, 0.04, 0.04, 0.02], atol=1e-15)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=40))
def test_bh_equals_statsmodels_fdr_bh(p):
    """Reference: statsmodels ``multipletests(p, method="fdr_bh")`` (an independent implementation)."""
    np.testing.assert_allclose(bh_adjust(p), multipletests(p, method="fdr_bh")[1], atol=1e-12)


def test_nan_is_kept_out_of_the_family():
    got = bh_adjust([0.01, np.nan, 0.04])
    assert np.isnan(got[1])
    np.testing.assert_allclose(got[[0, 2]], multipletests([0.01, 0.04], method="fdr_bh")[1])


def test_out_of_range_raises():
    with pytest.raises(InvalidParameterError, match=r"\[0, 1\], got \[1.5\]"):
        bh_adjust([0.5, 1.5])


def test_all_nan_and_not_1d():
    assert np.isnan(bh_adjust([np.nan, np.nan])).all()
    with pytest.raises(InvalidParameterError, match="1-D"):
        bh_adjust([[0.1, 0.2]])
