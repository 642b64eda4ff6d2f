"""Arms: predictions, correlations with the human mean, the best single judge."""

import numpy as np
import pytest
from scipy import stats

from multicrop.datasets.ratings import ratings_from_frame
from multicrop.evaluation.judges.align import align
from multicrop.evaluation.judges.arms import FUSED, PANEL_MEAN, SINGLE, bootstrap_arms, fit_arms
from multicrop.evaluation.judges.config import JudgesReportConfig
from multicrop.evaluation.judges.metrics import precision_at_top
from multicrop.evaluation.judges.report import evaluate_judges
from multicrop.fusion.combiners import COMBINERS, out_of_fold_predict
from multicrop.fusion.features import build_features, validate_judge_table


def test_arm_statistics_equal_scipy(report):
    pred = report.predictions
    arms = report.arms.set_index("arm")
    for arm in arms.index:
        assert arms.loc[arm, "rho"] == pytest.approx(stats.spearmanr(pred[arm], pred["human"]).statistic, abs=1e-12)
        assert arms.loc[arm, "tau_b"] == pytest.approx(
            stats.kendalltau(pred[arm], pred["human"], variant="b").statistic, abs=1e-12)
        assert arms.loc[arm, "precision_top"] == precision_at_top(pred[arm], pred["human"], fraction=0.1)
    members = arms[arms["kind"] == "single"]
    assert report.summary["best_single"] == members["rho"].idxmax()


def test_fused_arm_is_sklearn_out_of_fold(study, report):
    t = validate_judge_table(study.judge_table)
    X = build_features(t, "H+P").loc[report.predictions.index]
    ref = out_of_fold_predict(COMBINERS.create("gb", random_state=0), X.to_numpy(), report.predictions["human"].to_numpy(),
                              n_folds=5, seed=0)
    np.testing.assert_array_equal(report.predictions["H+P_gb"].to_numpy(), ref)
    # human column is the per-image rater mean
    ref_h = study.ratings.groupby("image")["score"].mean().loc[report.predictions.index]
    np.testing.assert_allclose(report.predictions["human"], ref_h, atol=1e-12)


def test_a_constant_judge_is_undefined_not_best(study):
    t = study.judge_table.copy()
    t.loc[(t.family == "family1") & (t.prompt_kind == "holistic"), "score"] = 7.0  # always answers 7
    cfg = JudgesReportConfig(n_resamples=100, n_partitions=0, n_splits=5, combiners=("ridge",))
    rep = evaluate_judges(t, ratings_from_frame(study.ratings), cfg)  # no warnings (they are errors here)
    arms = rep.arms.set_index("arm")
    assert np.isnan(arms.loc["member:family1", "rho"])
    assert rep.summary["best_single"] != "member:family1"
    m = rep.members.set_index(["member", "metric"])
    assert np.isnan(m.loc[("member:family1", "spearman"), "p_maxT"])


def test_fit_arms_gives_typed_arms_in_table_order(study):
    table = validate_judge_table(study.judge_table)
    data = align(table, ratings_from_frame(study.ratings), families=table.families)
    cfg = JudgesReportConfig(n_resamples=100, combiners=("ridge",))
    steps = []
    arms = fit_arms(data, families=table.families, config=cfg, progress=lambda s, f: steps.append(s))
    assert [a.name for a in arms] == ["member:family0", "member:family1", "member:family2", "panel_mean",
                                      "H_ridge", "P_ridge", "H+P_ridge", "Hsplit_ridge"]
    assert [a.kind for a in arms[2:5]] == [SINGLE, PANEL_MEAN, FUSED]
    assert [a.n_features for a in arms] == [1, 1, 1, 3, 3, 15, 18, 15]
    assert [a.cost_key for a in arms[2:6]] == ["member:family2", "panel_mean", "H", "P"]
    assert (arms[6].block, arms[6].combiner) == ("H+P", "ridge")
    np.testing.assert_array_equal(arms[0].prediction, data.blocks["H"]["H:family0"].to_numpy())
    assert steps == [f"out-of-fold {b} with ridge" for b in ("H", "P", "H+P", "Hsplit")]
    scores = bootstrap_arms(arms, data.y, seed=0, n_resamples=100, progress=lambda s, f: None)
    assert scores.names == tuple(a.name for a in arms)
    assert scores.resampled["kendall"].shape == (100, 8)
    assert scores.rho("P_ridge") == pytest.approx(stats.spearmanr(arms[5].prediction, data.y).statistic, abs=1e-12)
