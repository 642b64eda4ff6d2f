"""Partial correlation against pingouin 0.7.0 (``partial_corr`` columns r, p_val)."""

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats

from multicrop.errors import InvalidParameterError
from multicrop.stats.correlation import resample_counts
from multicrop.stats.partial import bootstrap_partial_difference, partial_correlation


def _data(seed=0, n=150, ties=False):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    x = z + rng.normal(size=n)
    y = 0.5 * z + 0.3 * x + rng.normal(size=n)
    if ties:
        x, y, z = np.round(x), np.round(y, 1), np.round(z)
    return x, y, z


@pytest.mark.parametrize("method", ["pearson", "spearman"])
@pytest.mark.parametrize("ties", [False, True])
def test_partial_equals_pingouin(method, ties):
    x, y, z = _data(1, ties=ties)
    ref = pg.partial_corr(pd.DataFrame({"x": x, "y": y, "z": z}), x="x", y="y", covar="z", method=method)
    got = partial_correlation(x, y, z, method=method)
    assert got.estimate == pytest.approx(float(ref["r"].iloc[0]), abs=1e-12)
    assert got.p == pytest.approx(float(ref["p_val"].iloc[0]), rel=1e-9, abs=1e-15)


def test_partial_bootstrap_replicate_equals_pingouin_on_expanded_resample():
    x, y, z = _data(2, n=80, ties=True)
    hol = np.round(z + np.random.default_rng(3).normal(size=80))
    counts = resample_counts(80, 3, np.random.default_rng(4))
    res = bootstrap_partial_difference(x, hol, y, z, counts)
    obs = partial_correlation(x, y, z).estimate - partial_correlation(hol, y, z).estimate
    assert res.estimate == pytest.approx(obs, abs=1e-15)
    # rebuild the three replicate differences the slow way, with pingouin
    reps = []
    for b in range(3):
        idx = np.repeat(np.arange(80), counts[b])
        df = pd.DataFrame({"a": x[idx], "h": hol[idx], "t": y[idx], "o": z[idx]})
        ra = pg.partial_corr(df, x="a", y="t", covar="o", method="spearman")["r"].iloc[0]
        rh = pg.partial_corr(df, x="h", y="t", covar="o", method="spearman")["r"].iloc[0]
        reps.append(ra - rh)
    assert (res.ci_low, res.ci_high) == pytest.approx(tuple(np.percentile(reps, [2.5, 97.5])), abs=1e-12)
    reps = np.array(reps)
    two_sided = min(1.0, 2 * min(1 + np.sum(reps <= 0), 1 + np.sum(reps >= 0)) / (3 + 1))
    assert res.p == pytest.approx(two_sided, abs=1e-15)


def test_an_mtmm_reversal_gets_a_small_two_sided_p():
    """Planted reversal: the holistic prompt tracks the attribute, the dimension prompt does not.

    With the old one-sided p (H1: dimension > holistic) this p was about 1,
    so BH could never flag a reversal; two-sided it is (1 + 0) * 2 / (B + 1).
    """
    rng = np.random.default_rng(8)
    ov, at = rng.normal(size=(2, 300))
    hol, dim = at + rng.normal(size=300), ov + rng.normal(size=300)
    c = resample_counts(300, 500, np.random.default_rng(1))
    res = bootstrap_partial_difference(dim, hol, at, ov, c)
    assert res.ci_high < 0
    assert res.p == pytest.approx(2 / 501, abs=1e-15)


def test_partial_with_independent_covariate_is_close_to_plain_correlation():
    rng = np.random.default_rng(5)
    x = rng.normal(size=2000)
    y = x + rng.normal(size=2000)
    z = rng.normal(size=2000)
    assert partial_correlation(x, y, z).estimate == pytest.approx(stats.spearmanr(x, y).statistic, abs=0.01)


def test_bad_method():
    with pytest.raises(InvalidParameterError, match="method"):
        partial_correlation([1.0, 2, 3, 4], [1.0, 2, 3, 4], [1.0, 2, 3, 5], method="kendall")


def test_a_shared_cache_does_not_change_the_result():
    """MTMM cells share one cache over one set of resamples; every cell must equal its uncached value."""
    rng = np.random.default_rng(4)
    ov, hol = rng.normal(size=(2, 80))
    counts = resample_counts(80, 300, np.random.default_rng(5))
    cache: dict = {}
    for k in range(4):  # the attribute changes every other cell: cache entries are reused and evicted
        at = rng.normal(size=80) if k % 2 == 0 else at
        dim = at + rng.normal(size=80)
        shared = bootstrap_partial_difference(dim, hol, at, ov, counts, cache=cache)
        alone = bootstrap_partial_difference(dim, hol, at, ov, counts)
        assert (shared.estimate, shared.ci_low, shared.ci_high, shared.p) == (
            alone.estimate, alone.ci_low, alone.ci_high, alone.p)
    assert set(cache) == {"w", "b", "attribute", "overall"}
