"""Rank correlations and their vectorised bootstrap against scipy.

Reference values come from scipy.stats.spearmanr / kendalltau(variant="b")
applied to the explicitly expanded resample (np.repeat of the items by their
counts), i.e. the textbook bootstrap with a Python loop.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from multicrop.errors import InvalidParameterError
from multicrop.stats.correlation import (
    bootstrap_kendall_tau_b,
    bootstrap_metric,
    bootstrap_spearman,
    kendall_tau_b,
    resample_counts,
    resampled_rank_correlation,
    resampled_ranks,
    spearman,
)


def _expand(counts_row):
    return np.repeat(np.arange(counts_row.size), counts_row)


def test_point_estimates_equal_scipy():
    rng = np.random.default_rng(3)
    x = rng.normal(size=80)
    y = np.round(x + rng.normal(size=80))  # ties in y
    assert spearman(x, y) == stats.spearmanr(x, y).statistic
    assert kendall_tau_b(x, y) == stats.kendalltau(x, y, variant="b").statistic


def test_tiny_hand_values():
    # rho = 1 - 6*sum(d^2)/(n(n^2-1)) = 1 - 6*2/60 = 0.8; tau = (5-1)/6
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8, abs=1e-15)
    assert kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6, abs=1e-15)


def test_resample_counts_reproduce_index_draws():
    counts = resample_counts(7, 5, np.random.default_rng(11))
    idx = np.random.default_rng(11).integers(0, 7, size=(5, 7))
    for b in range(5):
        assert counts[b].tolist() == np.bincount(idx[b], minlength=7).tolist()


@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=6, max_size=30),
    seed=st.integers(0, 2**32 - 1),
)
def test_bootstrap_equals_scipy_on_expanded_resamples(data, seed):
    x = np.array([d[0] for d in data], dtype=float)  # small integer ranges force many ties
    y = np.array([d[1] for d in data], dtype=float)
    counts = resample_counts(x.size, 8, np.random.default_rng(seed))
    rho = bootstrap_spearman(x, y, counts)
    tau = bootstrap_kendall_tau_b(x, y, counts)
    for b in range(counts.shape[0]):
        idx = _expand(counts[b])
        xs, ys = x[idx], y[idx]
        if np.ptp(xs) == 0 or np.ptp(ys) == 0:  # undefined in scipy (constant input)
            assert np.isnan(rho[b]) and np.isnan(tau[b])
            continue
        assert rho[b] == pytest.approx(stats.spearmanr(xs, ys).statistic, abs=1e-12)
        assert tau[b] == pytest.approx(stats.kendalltau(xs, ys, variant="b").statistic, abs=1e-12)


def test_resampled_ranks_equal_rankdata():
    rng = np.random.default_rng(5)
    x = np.round(rng.normal(size=40), 1)
    counts = resample_counts(40, 4, rng)
    ranks = resampled_ranks(x, counts)
    for b in range(4):
        idx = _expand(counts[b])
        ref = stats.rankdata(x[idx])  # average ranks of the expanded resample
        np.testing.assert_allclose(ranks[b][idx], ref, rtol=0, atol=1e-12)


def test_resampled_rank_correlation_equals_scipy_spearman_on_expanded_resamples():
    rng = np.random.default_rng(6)
    x, y = np.round(rng.normal(size=(2, 50)), 1)
    counts = resample_counts(50, 5, rng)
    rx, ry, w = resampled_ranks(x, counts), resampled_ranks(y, counts), counts.astype(np.float64)
    got = resampled_rank_correlation(rx, ry, w)
    ref = [stats.spearmanr(x[_expand(c)], y[_expand(c)]).statistic for c in counts]
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
    pre = resampled_rank_correlation(rx, ry, w, ryy=np.einsum("bi,bi,bi->b", w, ry, ry),
                                     rxx=np.einsum("bi,bi,bi->b", w, rx, rx))
    np.testing.assert_array_equal(pre, got)


def test_bootstrap_metric_columns_match_single_calls():
    rng = np.random.default_rng(8)
    h = rng.normal(size=60)
    preds = np.vstack([h + rng.normal(size=60), np.round(h + 2 * rng.normal(size=60))])
    counts = resample_counts(60, 50, rng)
    both = bootstrap_metric(h, preds, counts)
    np.testing.assert_allclose(both[:, 1], bootstrap_spearman(preds[1], h, counts), atol=1e-13)
    tb = bootstrap_metric(h, preds, counts, metric="kendall")
    np.testing.assert_allclose(tb[:, 0], bootstrap_kendall_tau_b(preds[0], h, counts), atol=1e-13)


def test_bad_inputs_raise_value_errors_naming_the_problem():
    with pytest.raises(InvalidParameterError, match="equal length"):
        spearman([1, 2, 3], [1, 2])
    with pytest.raises(InvalidParameterError, match="finite"):
        spearman([1, 2, np.nan, 4], [1, 2, 3, 4])
    with pytest.raises(InvalidParameterError, match="rng must be a numpy.random.Generator"):
        resample_counts(5, 5, 0)
    with pytest.raises(InvalidParameterError, match="metric"):
        bootstrap_metric([1.0, 2, 3], [[1.0, 2, 3]], np.ones((2, 3), int), metric="pearson")


def test_constant_input_is_nan_without_warning():
    # scipy warns (ConstantInputWarning, an error under this suite's filters) and returns NaN
    assert np.isnan(spearman([1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0]))
    assert np.isnan(kendall_tau_b([1.0, 2.0, 3.0, 4.0], [2.0, 2.0, 2.0, 2.0]))
