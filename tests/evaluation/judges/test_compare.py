"""Paired bootstrap comparisons against a scipy loop over the same resamples and statsmodels' BH."""

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests


def test_comparisons_deltas_and_bh(report):
    c = report.comparisons
    arms = report.arms.set_index("arm")
    col = {"spearman": "rho", "kendall": "tau_b"}
    for _, r in c.iterrows():
        want = arms.loc[r["arm"], col[r["metric"]]] - arms.loc[r["comparator_arm"], col[r["metric"]]]
        assert r["delta"] == pytest.approx(want, abs=1e-12)
        assert r["ci_low"] <= r["ci_high"]
    assert set(c["group"]) == {"protocol", "baseline"}
    for metric in ("spearman", "kendall"):
        for group in ("protocol", "baseline"):  # each corrected on its own
            sub = c[(c["metric"] == metric) & (c["group"] == group)]
            np.testing.assert_allclose(sub["p_bh"], multipletests(sub["p"], method="fdr_bh")[1], atol=1e-12)


def test_p_and_p_max_equal_a_scipy_loop_over_the_same_resamples(report, protocol_config):
    """Reference: the documented resample stream (``default_rng([seed, 0])``,
    ``integers(0, n, (B, n))``) replayed with scipy.spearmanr in a loop; p is
    ``(1 + #{d* <= 0}) / (B + 1)`` and p_max uses the best member re-selected
    in every resample."""
    pred = report.predictions
    n, B = len(pred), protocol_config.n_resamples
    idx = np.random.default_rng([protocol_config.seed, 0]).integers(0, n, size=(B, n))
    members = [a for a in report.arms["arm"] if a.startswith("member:")]
    h = pred["human"].to_numpy()
    rho = {a: np.array([stats.spearmanr(pred[a].to_numpy()[i], h[i]).statistic for i in idx])
           for a in [*members, "H+P_gb"]}
    best = report.summary["best_single"]
    d = rho["H+P_gb"] - rho[best]
    d_max = rho["H+P_gb"] - np.max([rho[m] for m in members], axis=0)
    row = report.comparisons.set_index(["arm", "comparator", "metric"]).loc[("H+P_gb", "best_single", "spearman")]
    assert row["p"] == pytest.approx((1 + np.sum(d <= 0)) / (B + 1), abs=1e-12)
    assert row["p_max"] == pytest.approx((1 + np.sum(d_max <= 0)) / (B + 1), abs=1e-12)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(tuple(np.percentile(d, [2.5, 97.5])), abs=1e-12)
