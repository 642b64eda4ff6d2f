"""Baseline and ablation arms: the embedding probe on the fused arms' folds, budgets, selection, tie-breaking."""

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import KFold

from multicrop.datasets.ratings import ratings_from_frame
from multicrop.datasets.simulate import simulate_study
from multicrop.evaluation.judges.baselines import Baselines, shared_folds
from multicrop.evaluation.judges.config import JudgesReportConfig
from multicrop.evaluation.judges.report import evaluate_judges
from multicrop.fusion.ridge import ridge_out_of_fold


@pytest.fixture(scope="module")
def study():
    return simulate_study(1500, n_families=2, rng=np.random.default_rng(1))


@pytest.fixture(scope="module")
def rep(study):
    images = sorted(set(study.judge_table["image"]))
    rng = np.random.default_rng(5)
    human = ratings_from_frame(study.ratings).means["score"]
    # an "embedding" that carries the human mean in one of 16 noisy columns
    emb = pd.DataFrame(rng.normal(size=(len(images), 16)), index=images)
    emb[0] = human.reindex(images).to_numpy() + rng.normal(scale=0.5, size=len(images))
    iaa = pd.Series(human.reindex(images).to_numpy() + rng.normal(scale=2.0, size=len(images)), index=images)
    cfg = JudgesReportConfig(n_resamples=200, n_partitions=0, n_splits=5, combiners=("ridge",))
    r = evaluate_judges(study.judge_table, ratings_from_frame(study.ratings), cfg,
                        baselines=Baselines(embeddings=emb, iaa={"toy": iaa}))
    return r, emb, cfg


def test_shared_folds_are_the_fused_arms_kfold():
    folds = shared_folds(50, n_folds=5, seed=3)
    for k, (_, test) in enumerate(KFold(5, shuffle=True, random_state=3).split(np.zeros(50))):
        assert (folds[test] == k).all()


def test_every_baseline_arm_is_in_the_table_with_a_paired_interval(rep):
    r, _, _ = rep
    base = r.arms[r.arms["kind"] == "baseline"].set_index("arm")
    assert {"embedding_ridge", "embedding_ridge@100", "embedding_ridge@300", "embedding_ridge@1000",
            "H+P_ridge@100", "H+P_ridge@1000", "iaa:toy", "select_all", "select_oracle", "select_infold",
            "rounded:family0", "rounded:family1"} <= set(base.index)
    assert (base["rho_ci_low"] <= base["rho"]).all() and (base["rho"] <= base["rho_ci_high"]).all()
    assert base.loc["embedding_ridge", "calls_per_image"] == 0
    c = r.comparisons
    assert set(c.loc[c["group"] == "baseline", "arm"]) == set(base.index)


def test_the_probe_is_out_of_fold_on_the_fused_folds(rep, study):
    r, emb, cfg = rep
    pred = r.predictions
    y = pred["human"].to_numpy()
    folds = shared_folds(len(y), n_folds=cfg.n_folds, seed=cfg.seed)
    want = ridge_out_of_fold(emb.loc[pred.index].to_numpy(float), y, folds=folds)
    np.testing.assert_allclose(pred["embedding_ridge"].to_numpy(), want)


def test_more_labels_help_and_the_budget_curve_rises(rep):
    r, _, _ = rep
    rho = r.arms.set_index("arm")["rho"]
    assert rho["embedding_ridge@100"] < rho["embedding_ridge@1000"] <= rho["embedding_ridge"] + 0.01
    assert rho["embedding_ridge"] > 0.5


def test_oracle_selection_is_never_worse_in_fold_than_honest_selection(rep):
    r, _, _ = rep
    rho = r.arms.set_index("arm")["rho"]
    assert rho["select_oracle"] >= rho["select_infold"] - 0.02


def test_rounding_the_mean_of_repetitions_makes_ties(rep):
    r, _, _ = rep
    pred = r.predictions
    assert pred["rounded:family0"].nunique() < pred["member:family0"].nunique()
    np.testing.assert_array_equal(pred["rounded:family0"], np.round(pred["member:family0"]))
