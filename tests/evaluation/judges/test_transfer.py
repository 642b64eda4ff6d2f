"""Label transfer against a plain scikit-learn fit-then-predict."""

import numpy as np
import pytest
from scipy import stats
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from multicrop.datasets.ratings import ratings_from_frame
from multicrop.datasets.simulate import simulate_study
from multicrop.errors import DatasetError
from multicrop.evaluation.judges.config import JudgesReportConfig
from multicrop.evaluation.judges.report import evaluate_judges, write_judges_report
from multicrop.fusion.features import build_features, validate_judge_table


def _renamed(sim, prefix):
    return (sim.judge_table.assign(image=prefix + sim.judge_table["image"]),
            sim.ratings.assign(image=prefix + sim.ratings["image"]))


def test_label_transfer_equals_plain_sklearn_fit_then_predict(study):
    """Reference: StandardScaler + Ridge(1.0) fitted on all of the main set's
    H+P features, predicting the transfer set's; scipy Spearman of that minus
    the transfer set's best single member."""
    other = simulate_study(100, n_families=3, rng=np.random.default_rng(6))
    o_table, o_ratings = _renamed(other, "t")
    cfg = JudgesReportConfig(n_resamples=200, n_partitions=0, n_splits=5, combiners=("ridge",))
    rep = evaluate_judges(study.judge_table, ratings_from_frame(study.ratings), cfg,
                          transfer=(o_table, ratings_from_frame(o_ratings)))
    tr = rep.robustness[rep.robustness["check"] == "label_transfer"].set_index("arm")
    assert set(tr.index) == {"H+P_ridge", "P_ridge"}
    X = build_features(validate_judge_table(study.judge_table), "H+P").loc[rep.predictions.index]
    Xt = build_features(validate_judge_table(o_table), "H+P")
    yt = o_ratings.groupby("image")["score"].mean().loc[Xt.index]
    pred = make_pipeline(StandardScaler(), Ridge(alpha=1.0)).fit(X.to_numpy(), rep.predictions["human"]).predict(
        Xt[X.columns].to_numpy())
    Ht = build_features(validate_judge_table(o_table), "H").loc[Xt.index]
    best_t = max(stats.spearmanr(Ht[c], yt).statistic for c in Ht.columns)
    assert tr.loc["H+P_ridge", "estimate"] == pytest.approx(stats.spearmanr(pred, yt).statistic - best_t, abs=1e-12)
    # same generating process: labels transfer, fusion beats the other set's best member
    assert tr.loc["H+P_ridge", "ci_low"] > 0
    assert rep.summary["transfer"] == {"n_transfer_images": 100, "n_transfer_overlap": 0}


def test_label_transfer_drops_images_shared_with_the_main_set(study, tmp_path):
    other = simulate_study(100, n_families=3, rng=np.random.default_rng(6))
    o_table, o_ratings = _renamed(other, "t")
    shared = sorted(o_ratings["image"].unique())[:20]
    rename = {s: s[1:] for s in shared}  # 't' + 'img00000' -> 'img00000', an image of the main set
    o_table["image"], o_ratings["image"] = o_table["image"].replace(rename), o_ratings["image"].replace(rename)
    cfg = JudgesReportConfig(n_resamples=100, n_partitions=0, n_splits=5, combiners=("ridge",))
    rep = evaluate_judges(study.judge_table, ratings_from_frame(study.ratings), cfg,
                          transfer=(o_table, ratings_from_frame(o_ratings)))
    assert rep.summary["transfer"] == {"n_transfer_images": 80, "n_transfer_overlap": 20}
    assert "20 images of the transfer set" in rep.summary["notes"]["transfer"]
    write_judges_report(rep, tmp_path)
    assert "20 images shared with this dataset were dropped" in (tmp_path / "index.html").read_text()
    with pytest.raises(DatasetError, match="shares 120 of its 120 images"):
        evaluate_judges(study.judge_table, ratings_from_frame(study.ratings), cfg,
                        transfer=(study.judge_table, ratings_from_frame(study.ratings)))


def test_label_transfer_missing_feature_columns_is_a_dataset_error(study):
    other = simulate_study(100, n_families=3, rng=np.random.default_rng(6))
    o_table, o_ratings = _renamed(other, "t")
    o_table = o_table[~((o_table.family == "family1") & (o_table.dimension == "composition"))]
    cfg = JudgesReportConfig(n_resamples=100, n_partitions=0, n_splits=5, combiners=("ridge",))
    with pytest.raises(DatasetError, match="lacks the H\\+P feature columns P:family1:composition"):
        evaluate_judges(study.judge_table, ratings_from_frame(study.ratings), cfg,
                        transfer=(o_table, ratings_from_frame(o_ratings)))
