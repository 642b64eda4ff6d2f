"""Planted effects are recovered: the protocol's statistics are calibrated."""

import numpy as np
import pytest
from scipy import stats

from multicrop.datasets.ratings import ratings_from_frame
from multicrop.evaluation.judges.config import JudgesReportConfig
from multicrop.evaluation.judges.report import evaluate_judges
from multicrop.stats.bootstrap import percentile_ci
from multicrop.stats.correlation import bootstrap_metric, resample_counts
from multicrop.datasets.simulate import gaussian_spearman, simulate_judge_pairs, simulate_study


def _planted_h_p_gain(*, n_families=3, fid=0.6, sig=0.8, shared=0.8, judge_noise=0.5, n_holistic=5,
                      n_dimension=3, rater_noise=1.0, n_raters=10):
    """Population Spearman gain of the best linear H+P predictor over one holistic judge.

    Closed form from simulate_study's generating model: every feature is
    Gaussian, so the best linear predictor of q has R^2 = c' S^-1 c (S the
    feature covariance, c the feature-q covariances); its Pearson r with the
    human mean q + e is sqrt(R^2 / (1 + s_r^2 / k)), converted to Spearman
    with gaussian_spearman.
    """
    nd = 5
    feats = [("H", f, -1) for f in range(n_families)] + [("P", f, d) for f in range(n_families) for d in range(nd)]
    S = np.zeros((len(feats), len(feats)))
    c = np.array([fid if a[0] == "H" else sig / np.sqrt(nd) for a in feats])
    for i, a in enumerate(feats):
        for j, b in enumerate(feats):
            if i == j:
                S[i, j] = 1 + judge_noise**2 / (n_holistic if a[0] == "H" else n_dimension)
            elif a[0] == b[0] == "H":
                S[i, j] = fid**2 + (1 - fid**2) * shared
            elif a[0] != b[0]:
                S[i, j] = fid * sig / np.sqrt(nd)
            else:
                S[i, j] = sig**2 if a[2] == b[2] else 0.0
    human_var = 1 + rater_noise**2 / n_raters
    fused = gaussian_spearman(np.sqrt(c @ np.linalg.solve(S, c) / human_var))
    single = gaussian_spearman(fid / np.sqrt((1 + judge_noise**2 / n_holistic) * human_var))
    return float(fused - single)


def test_gaussian_spearman_matches_a_large_sample():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200_000)
    y = 0.6 * x + 0.8 * rng.normal(size=200_000)  # Pearson 0.6
    assert stats.spearmanr(x, y).statistic == pytest.approx(gaussian_spearman(0.6), abs=0.005)


def test_bootstrap_ci_covers_true_delta_rho_95_percent():
    """400 datasets, n = 200, 1000 paired resamples each: coverage must be 93-97 %.

    The coverage estimate itself has a binomial sd of about 1.1 points; with
    this resampling stream, data seeds 1, 2 and 2024 give 95.0, 94.5 and 93.5 %.
    """
    sim = simulate_judge_pairs(400, 200, rng=np.random.default_rng(1))
    rng = np.random.default_rng(7)
    covered = 0
    for d in range(400):
        counts = resample_counts(200, 1000, rng)
        boot = bootstrap_metric(sim.human[d], np.vstack([sim.a[d], sim.b[d]]), counts)
        lo, hi = percentile_ci(boot[:, 0] - boot[:, 1])
        covered += lo <= sim.true_delta <= hi
    assert 0.93 <= covered / 400 <= 0.97, covered


def test_fusion_gain_is_recovered_and_the_control_does_not_get_it():
    sim = simulate_study(300, n_families=3, rng=np.random.default_rng(11))
    cfg = JudgesReportConfig(n_resamples=1000, n_partitions=0, n_splits=20, combiners=("ridge",))
    rep = evaluate_judges(sim.judge_table, ratings_from_frame(sim.ratings), cfg)
    c = rep.comparisons.set_index(["arm", "comparator", "metric"])
    gain = c.loc[("H+P_ridge", "best_single", "spearman")]
    planted = _planted_h_p_gain()  # 0.319: dimension signal 0.8 vs holistic fidelity 0.6
    assert planted == pytest.approx(0.319, abs=0.001)
    # Tolerance 0.08, about 2 bootstrap sds of the estimate at n = 300 (the CI here is about +-0.07);
    # the estimate also sits a little low because the comparator is the best of 3 members picked on
    # this sample (biased up) and the ridge fit loses a little out of fold.  Observed: 0.274.
    assert gain["delta"] == pytest.approx(planted, abs=0.08)
    assert gain["ci_low"] <= planted <= gain["ci_high"]
    assert gain["p_bh"] < 0.01
    control = c.loc[("Hsplit_ridge", "best_single", "spearman")]
    # The feature-count control gets none of the gain: its delta is within 0.1 of zero (under a third of
    # the planted 0.319), not a significant gain after BH, and its whole CI lies below the fused arm's.
    # Observed at this seed: delta -0.046 [-0.087, -0.008] (more noisy columns cost ridge a little), p_bh 1.0.
    assert abs(control["delta"]) < 0.1
    assert control["p_bh"] > 0.05
    assert control["ci_high"] < gain["ci_low"]
    assert rep.summary["ceiling"]["ceiling"] == pytest.approx(sim.ceiling, abs=0.02)


def test_no_planted_dimension_signal_no_significant_gain():
    sim = simulate_study(300, n_families=3, dimension_signal=0.0, rng=np.random.default_rng(12))
    cfg = JudgesReportConfig(n_resamples=1000, n_partitions=0, n_splits=10, combiners=("ridge",))
    rep = evaluate_judges(sim.judge_table, ratings_from_frame(sim.ratings), cfg)
    c = rep.comparisons.set_index(["arm", "comparator", "metric"])
    assert c.loc[("P_ridge", "best_single", "spearman"), "ci_high"] < 0  # pure noise dimensions lose
