"""Paired bootstrap, percentile CI, one-sided and max-T p-values."""

import numpy as np
import pytest
from scipy import stats

from multicrop.errors import InvalidParameterError
from multicrop.stats.bootstrap import (
    max_statistic_pvalues,
    one_sided_p,
    paired_bootstrap,
    two_sided_p,
    percentile_ci,
)


def test_paired_bootstrap_equals_naive_scipy_loop():
    """Reference: a plain loop over the same index draws with scipy.spearmanr."""
    rng = np.random.default_rng(0)
    n, B = 120, 300
    h = rng.normal(size=n)
    a, b = h + rng.normal(size=n), np.round(h + 1.5 * rng.normal(size=n))
    res = paired_bootstrap(h, a, b, n_resamples=B, rng=np.random.default_rng(42))
    idx = np.random.default_rng(42).integers(0, n, size=(B, n))
    d = np.array([stats.spearmanr(a[i], h[i]).statistic - stats.spearmanr(b[i], h[i]).statistic for i in idx])
    assert res.estimate == pytest.approx(stats.spearmanr(a, h).statistic - stats.spearmanr(b, h).statistic,
                                         abs=1e-15)
    lo, hi = np.percentile(d, [2.5, 97.5])
    assert res.ci_low == pytest.approx(lo, abs=1e-12)
    assert res.ci_high == pytest.approx(hi, abs=1e-12)
    assert res.p == pytest.approx((1 + np.sum(d <= 0)) / (B + 1), abs=1e-15)
    assert res.n_resamples == B


def test_paired_bootstrap_kendall_equals_naive_loop():
    rng = np.random.default_rng(1)
    n, B = 60, 100
    h = np.round(rng.normal(size=n), 1)
    a, b = h + rng.normal(size=n), h + 2 * rng.normal(size=n)
    res = paired_bootstrap(h, a, b, metric="kendall", n_resamples=B, rng=np.random.default_rng(7))
    idx = np.random.default_rng(7).integers(0, n, size=(B, n))
    d = np.array([stats.kendalltau(a[i], h[i]).statistic - stats.kendalltau(b[i], h[i]).statistic for i in idx])
    assert (res.ci_low, res.ci_high) == pytest.approx(tuple(np.percentile(d, [2.5, 97.5])), abs=1e-12)


def test_same_seed_same_result_and_identical_arms_give_zero():
    rng = np.random.default_rng(2)
    h, a = rng.normal(size=(2, 50))
    r1 = paired_bootstrap(h, a, a + 0.5 * h, n_resamples=200, rng=np.random.default_rng(9))
    r2 = paired_bootstrap(h, a, a + 0.5 * h, n_resamples=200, rng=np.random.default_rng(9))
    assert r1 == r2
    same = paired_bootstrap(h, a, a, n_resamples=200, rng=np.random.default_rng(9))
    assert (same.estimate, same.ci_low, same.ci_high, same.p) == (0.0, 0.0, 0.0, 1.0)


def test_one_sided_p_and_percentile_ci_by_hand():
    assert one_sided_p([0.1, 0.2, -0.1, 0.3]) == pytest.approx(2 / 5)  # (1 + 1) / (4 + 1)
    assert one_sided_p([1.0] * 9) == pytest.approx(0.1)
    lo, hi = percentile_ci(np.arange(1.0, 101.0))
    assert (lo, hi) == pytest.approx((np.percentile(np.arange(1.0, 101.0), 2.5), np.percentile(np.arange(1.0, 101.0), 97.5)))
    with pytest.raises(InvalidParameterError, match="confidence"):
        percentile_ci([1.0, 2.0], confidence=95)


def test_max_statistic_pvalues_by_hand_and_bounds():
    # boot - observed: rows (0.1, -0.2), (-0.3, 0.05), (0.0, 0.0): maxima 0.1, 0.05, 0.0
    observed = np.array([0.06, 0.2])
    boot = observed + np.array([[0.1, -0.2], [-0.3, 0.05], [0.0, 0.0]])
    p = max_statistic_pvalues(observed, boot)
    # m=0: #{max >= 0.06} = 1 -> 2/4; m=1: #{max >= 0.2} = 0 -> 1/4
    np.testing.assert_allclose(p, [0.5, 0.25])
    # the max-T p-value is never smaller than the marginal centred bootstrap p
    rng = np.random.default_rng(3)
    obs = np.array([0.02, 0.05, 0.1])
    bt = obs + rng.normal(0, 0.04, size=(2000, 3))
    pm = max_statistic_pvalues(obs, bt)
    marginal = (1 + ((bt - obs) >= obs).sum(axis=0)) / 2001
    assert np.all(pm >= marginal)
    with pytest.raises(InvalidParameterError, match="shape"):
        max_statistic_pvalues([0.1, 0.2], np.zeros((5, 3)))


def test_undefined_statistics_get_no_p_value():
    assert np.isnan(one_sided_p([np.nan, np.nan]))
    p = max_statistic_pvalues([0.1, np.nan], np.array([[0.1, np.nan], [0.12, np.nan], [0.05, np.nan]]))
    assert np.isnan(p[1]) and p[0] == pytest.approx(1 / 4)  # max centred = 0, 0.02, -0.05 < 0.1


def test_two_sided_p_by_hand():
    """Hand counts: of 8 finite replicates 2 are <= 0 and 7 >= 0 (the zero is in both tails)."""
    boot = [-0.2, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, np.nan]
    assert two_sided_p(boot) == pytest.approx(2 * (1 + 2) / (8 + 1))
    assert two_sided_p([0.5] * 9) == pytest.approx(2 * 1 / 10)
    assert two_sided_p([0.0] * 4) == 1.0  # capped
    assert np.isnan(two_sided_p([np.nan]))
