"""The judge protocol end to end on simulated data, checked against references."""

import json

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from multicrop.datasets.ratings import ratings_from_frame
from multicrop.errors import DatasetError, InvalidParameterError
from multicrop.evaluation.judges_report import (
    JudgesReportConfig,
    evaluate_judges,
    precision_at_top,
    probe_headroom,
    write_judges_report,
)
from multicrop.fusion.combiners import make_combiner, out_of_fold_predict
from multicrop.fusion.features import build_features, validate_judge_table
from multicrop.stats.simulate import simulate_study

CFG = JudgesReportConfig(n_resamples=300, n_partitions=3, n_splits=10, combiners=("gb", "ridge"))


@pytest.fixture(scope="module")
def study():
    return simulate_study(120, n_families=3, rng=np.random.default_rng(5))


@pytest.fixture(scope="module")
def report(study):
    return evaluate_judges(study.judge_table, ratings_from_frame(study.ratings), CFG)


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
    ref = out_of_fold_predict(make_combiner("gb", random_state=0), X.to_numpy(), report.predictions["human"].to_numpy(),
                              n_folds=5, seed=0)
    np.testing.assert_array_equal(report.predictions["H+P_gb"].to_numpy(), ref)
    # human column is the per-image rater mean
    ref_h = study.ratings.groupby("image")["score"].mean().loc[report.predictions.index]
    np.testing.assert_allclose(report.predictions["human"], ref_h, atol=1e-12)


def test_comparisons_deltas_and_bh(report):
    c = report.comparisons
    arms = report.arms.set_index("arm")
    col = {"spearman": "rho", "kendall": "tau_b"}
    for _, r in c.iterrows():
        want = arms.loc[r["arm"], col[r["metric"]]] - arms.loc[r["comparator_arm"], col[r["metric"]]]
        assert r["delta"] == pytest.approx(want, abs=1e-12)
        assert r["ci_low"] <= r["ci_high"]
    for metric in ("spearman", "kendall"):
        sub = c[c["metric"] == metric]
        np.testing.assert_allclose(sub["p_bh"], multipletests(sub["p"], method="fdr_bh")[1], atol=1e-12)
    best = c[c["comparator"] == "best_single"]
    assert (best["p_max"] >= best["p"] - 1e-12).all()  # re-selecting the best member is more conservative


def test_mtmm_matrix_equals_pingouin(study, report):
    hum = study.ratings.groupby("image")[["score", "quality", "composition", "colour"]].mean()
    hum = hum.loc[report.predictions.index]
    m = report.mtmm_matrix.set_index(["family", "prompt"])
    t = validate_judge_table(study.judge_table)
    P = build_features(t, "P").loc[hum.index]
    H = build_features(t, "H").loc[hum.index]
    for fam, prompt, col in (("family0", "composition", "P:family0:composition"), ("family2", "holistic", "H:family2")):
        src = P[col] if col.startswith("P:") else H[col]
        df = pd.DataFrame({"s": src.to_numpy(), "a": hum["composition"].to_numpy(), "o": hum["score"].to_numpy()})
        ref = pg.partial_corr(df, x="s", y="a", covar="o", method="spearman")["r"].iloc[0]
        assert m.loc[(fam, prompt), "composition"] == pytest.approx(ref, abs=1e-12)
    cells = report.mtmm
    assert len(cells) == 9  # 3 families x 3 matched attributes
    np.testing.assert_allclose(cells["p_bh"], multipletests(cells["p"], method="fdr_bh")[1], atol=1e-12)
    # planted: dimension prompts carry their attribute; holistic prompts do not
    assert (cells["ci_low"] > 0).all()


def test_robustness_and_ceiling(report, study):
    r = report.robustness
    fp = r[r["check"] == "fold_partitions"].iloc[0]
    assert fp["arm"] == "H+P_gb" and "3 partitions" in fp["detail"]
    assert fp["ci_low"] <= fp["estimate"] <= fp["ci_high"]
    assert report.ceiling.ceiling == pytest.approx(study.ceiling, abs=0.03)
    assert report.summary["headroom"] == pytest.approx(report.summary["best_single_rho"] / report.ceiling.ceiling)


def test_label_transfer(study):
    other = simulate_study(100, n_families=3, rng=np.random.default_rng(6))
    cfg = JudgesReportConfig(n_resamples=200, n_partitions=0, n_splits=5, combiners=("ridge",))
    rep = evaluate_judges(study.judge_table, ratings_from_frame(study.ratings), cfg,
                          transfer=(other.judge_table, ratings_from_frame(other.ratings)))
    tr = rep.robustness[rep.robustness["check"] == "label_transfer"].set_index("arm")
    assert set(tr.index) == {"H+P_ridge", "P_ridge"}
    # same generating process: labels transfer, fusion beats the other set's best member
    assert tr.loc["H+P_ridge", "ci_low"] > 0


def test_same_inputs_same_bytes(tmp_path, study):
    ratings = ratings_from_frame(study.ratings)
    cfg = JudgesReportConfig(n_resamples=200, n_partitions=2, n_splits=5, combiners=("ridge",),
                             robustness_arms=("H+P_ridge",))
    a = write_judges_report(evaluate_judges(study.judge_table, ratings, cfg), tmp_path / "a")
    b = write_judges_report(evaluate_judges(study.judge_table, ratings, cfg), tmp_path / "b")
    assert [p.name for p in a] == [p.name for p in b]
    assert {p.name for p in a} >= {"arms.csv", "comparisons.csv", "mtmm.csv", "robustness.csv", "summary.json",
                                   "forest.png", "accuracy_vs_calls.png", "index.html"}
    for pa, pb in zip(a, b):
        assert pa.read_bytes() == pb.read_bytes(), pa.name
    assert not list((tmp_path / "a").glob(".*.tmp"))  # atomic writes leave no temp files
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["config"]["n_resamples"] == 200
    html = (tmp_path / "a" / "index.html").read_text()
    assert "forest.png" in html and "accuracy_vs_calls.png" in html
    assert (tmp_path / "a" / "forest.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"matplotlib" not in (tmp_path / "a" / "forest.png").read_bytes()  # no version in metadata
    other = evaluate_judges(study.judge_table, ratings,
                            JudgesReportConfig(**{**cfg.to_dict(), "combiners": ("ridge",), "robustness_arms": ("H+P_ridge",), "seed": 1}))
    c = write_judges_report(other, tmp_path / "c")
    assert c[1].read_bytes() != b[1].read_bytes()  # the seed does matter


def test_precision_at_top_by_hand():
    assert precision_at_top([4, 3, 2, 1], [1, 2, 3, 4], fraction=0.5) == 0.0
    assert precision_at_top([4, 3, 2, 1], [4, 1, 3, 2], fraction=0.5) == 0.5  # {0,1} vs {0,2}
    with pytest.raises(InvalidParameterError, match="fraction"):
        precision_at_top([1, 2], [1, 2], fraction=0)


def test_probe_verdicts(study):
    weak = simulate_study(150, n_families=2, holistic_fidelity=0.4, rng=np.random.default_rng(2))
    res = probe_headroom(weak.judge_table, ratings_from_frame(weak.ratings), n_resamples=300, n_splits=10)
    assert res.verdict == "panel"  # planted: holistic fidelity 0.4 against a ceiling of about 0.95
    assert res.headroom == pytest.approx(max(res.members.values()) / res.ceiling.ceiling)
    assert res.best_rho.ci_low < res.best_rho.estimate < res.best_rho.ci_high
    strong = simulate_study(150, n_families=2, holistic_fidelity=0.97, judge_noise=0.1,
                            rng=np.random.default_rng(1))
    res2 = probe_headroom(strong.judge_table, ratings_from_frame(strong.ratings), n_resamples=300, n_splits=10)
    assert res2.verdict == "single"
    # only the first `repetitions` holistic calls are used
    ratings = ratings_from_frame(study.ratings)
    one = probe_headroom(study.judge_table, ratings, repetitions=1, n_resamples=300, n_splits=10)
    t = study.judge_table
    first = t[(t.prompt_kind == "holistic") & (t.repetition == 0) & (t.family == "family0")].set_index("image")["score"]
    hum = study.ratings.groupby("image")["score"].mean()
    assert one.members["family0"] == pytest.approx(stats.spearmanr(first.loc[hum.index], hum).statistic, abs=1e-12)


def test_config_and_input_errors(study):
    with pytest.raises(InvalidParameterError, match="n_folds must be >= 2, got 1"):
        JudgesReportConfig(n_folds=1)
    with pytest.raises(InvalidParameterError, match="confidence"):
        JudgesReportConfig(confidence=95)
    few = study.ratings[study.ratings["image"].isin(sorted(study.ratings["image"].unique())[:5])]
    with pytest.raises(DatasetError, match="only 5 images"):
        evaluate_judges(study.judge_table, ratings_from_frame(few), CFG)


def test_paths_in_judge_table_meet_rating_ids(study):
    """The judges module writes image paths; EVA/PARA ratings use ids."""
    from multicrop.evaluation.judges_report import match_images

    t = study.judge_table.assign(image="photos/" + study.judge_table["image"] + ".jpg")
    ratings = ratings_from_frame(study.ratings)
    table, r2, mode = match_images(validate_judge_table(t), ratings)
    assert mode == "stem"
    assert set(table.data["image"]) == set(r2.means.index)
    cfg = JudgesReportConfig(n_resamples=200, n_partitions=0, n_splits=5, combiners=("ridge",))
    rep = evaluate_judges(t, ratings, cfg)
    assert rep.summary["image_key"] == "stem" and rep.summary["n_images"] == 120
    clash = t.assign(image=np.where(t["image"].str.endswith("1.jpg"), "a/x.jpg", "b/x.jpg"))
    with pytest.raises(DatasetError, match="maps several images"):
        match_images(validate_judge_table(clash.drop_duplicates(
            ["image", "family", "prompt_kind", "dimension", "repetition"])), ratings, "stem")


def test_parallel_refits_give_the_same_robustness(study):
    ratings = ratings_from_frame(study.ratings)
    base = dict(n_resamples=100, n_partitions=3, n_splits=5, combiners=("ridge",), robustness_arms=("H+P_ridge",))
    one = evaluate_judges(study.judge_table, ratings, JudgesReportConfig(**base, n_jobs=1))
    two = evaluate_judges(study.judge_table, ratings, JudgesReportConfig(**base, n_jobs=2))
    pd.testing.assert_frame_equal(one.robustness, two.robustness)
    fp = one.robustness[one.robustness["check"] == "fold_partitions"].iloc[0]
    # partition 0 is the main analysis: its margin is the reported delta vs best single
    c = one.comparisons
    main_delta = c[(c.arm == "H+P_ridge") & (c.comparator == "best_single") & (c.metric == "spearman")]["delta"].iloc[0]
    assert fp["ci_low"] <= main_delta <= fp["ci_high"]


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
