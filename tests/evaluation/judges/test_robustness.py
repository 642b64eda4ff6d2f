"""Robustness over fold partitions against plain scikit-learn."""

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from multicrop.datasets.ratings import ratings_from_frame
from multicrop.evaluation.judges.config import JudgesReportConfig
from multicrop.evaluation.judges.report import evaluate_judges
from multicrop.evaluation.judges.robustness import Check, robustness_table
from multicrop.fusion.features import build_features, validate_judge_table


def test_twenty_fold_partition_margins_equal_plain_sklearn(study):
    """Reference: for k = 0..19, KFold(5, shuffle=True, random_state=seed + k)
    with sklearn's cross_val_predict on a plain StandardScaler + Ridge(1.0)
    pipeline; margin = scipy Spearman of the prediction minus that of the best
    single member."""
    ratings = ratings_from_frame(study.ratings)
    cfg = JudgesReportConfig(n_resamples=100, n_partitions=20, n_splits=5, combiners=("ridge",),
                             robustness_arms=("H+P_ridge",), seed=3)
    rep = evaluate_judges(study.judge_table, ratings, cfg)
    y = rep.predictions["human"].to_numpy()
    X = build_features(validate_judge_table(study.judge_table), "H+P").loc[rep.predictions.index].to_numpy()
    best_rho = stats.spearmanr(rep.predictions[rep.summary["best_single"]], y).statistic
    margins = np.array([
        stats.spearmanr(cross_val_predict(make_pipeline(StandardScaler(), Ridge(alpha=1.0)), X, y,
                                          cv=KFold(5, shuffle=True, random_state=cfg.seed + k)), y).statistic
        - best_rho
        for k in range(20)
    ])
    fp = rep.robustness[rep.robustness["check"] == "fold_partitions"].iloc[0]
    assert fp["arm"] == "H+P_ridge" and "20 partitions" in fp["detail"]
    assert fp["estimate"] == pytest.approx(margins.mean(), abs=1e-12)
    assert fp["sd"] == pytest.approx(margins.std(ddof=1), abs=1e-12)
    assert (fp["ci_low"], fp["ci_high"]) == pytest.approx((margins.min(), margins.max()), abs=1e-12)
    assert fp["sd"] > 0  # different partitions really were used


def test_robustness_table_has_one_row_per_check_in_field_order():
    df = robustness_table([Check("precision_top", "panel_mean", 0.25, detail="d"),
                           Check("fold_partitions", "H+P_gb", 0.1, sd=0.02, ci_low=0.05, ci_high=0.2)])
    assert list(df.columns) == ["check", "arm", "estimate", "sd", "ci_low", "ci_high", "p", "detail"]
    assert df["arm"].tolist() == ["panel_mean", "H+P_gb"]
    assert df.loc[1, "ci_high"] == 0.2 and math.isnan(df.loc[0, "sd"]) and df.loc[1, "detail"] == ""


def test_missing_robustness_arms_are_noted_and_skipped(study):
    cfg = JudgesReportConfig(n_resamples=100, n_partitions=2, n_splits=5, combiners=("ridge",),
                             robustness_arms=("H+P_ridge", "H+P_gb"))
    rep = evaluate_judges(study.judge_table, ratings_from_frame(study.ratings), cfg)
    assert rep.summary["notes"]["robustness"] == "robustness arms ['H+P_gb'] are not among the arms run; skipped"
    fp = rep.robustness[rep.robustness["check"] == "fold_partitions"]
    assert fp["arm"].tolist() == ["H+P_ridge"] and "2 partitions" in fp["detail"].iloc[0]
    assert rep.robustness["check"].tolist().count("precision_top") == len(rep.arms)
