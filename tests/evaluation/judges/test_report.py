"""The judge protocol end to end on simulated data, checked against references."""

import itertools
import json
import os

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from statsmodels.stats.multitest import multipletests

from multicrop.datasets.ratings import ratings_from_frame
from multicrop.errors import DatasetError, InvalidParameterError
from multicrop.evaluation.judges.report import (
    PROBE_HIGH,
    PROBE_LOW,
    JudgesReportConfig,
    evaluate_judges,
    precision_at_top,
    probe_headroom,
    probe_verdict,
    write_judges_report,
)
from multicrop.fusion.combiners import COMBINERS, out_of_fold_predict
from multicrop.fusion.features import build_features, validate_judge_table
from multicrop.datasets.simulate import simulate_study

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
    ref = out_of_fold_predict(COMBINERS.create("gb", random_state=0), X.to_numpy(), report.predictions["human"].to_numpy(),
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



def test_p_and_p_max_equal_a_scipy_loop_over_the_same_resamples(report):
    """Reference: the documented resample stream (``default_rng([seed, 0])``,
    ``integers(0, n, (B, n))``) replayed with scipy.spearmanr in a loop; p is
    ``(1 + #{d* <= 0}) / (B + 1)`` and p_max uses the best member re-selected
    in every resample."""
    pred = report.predictions
    n, B = len(pred), CFG.n_resamples
    idx = np.random.default_rng([CFG.seed, 0]).integers(0, n, size=(B, n))
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


def test_mtmm_reversal_is_flagged_two_sided(study):
    """A planted reversal (holistic prompt tracks the attribute, dimension prompt
    does not) must get a small BH-adjusted p; the old one-sided p was ~1."""
    t = study.judge_table.copy()
    hum = study.ratings.groupby("image")["composition"].mean()
    rng = np.random.default_rng(0)
    hol = (t.prompt_kind == "holistic") & (t.family == "family0")
    t.loc[hol, "score"] = hum.loc[t.loc[hol, "image"]].to_numpy() + 0.3 * rng.normal(size=hol.sum())
    dim = (t.prompt_kind == "dimension") & (t.family == "family0") & (t.dimension == "composition")
    t.loc[dim, "score"] = rng.normal(size=dim.sum())
    cfg = JudgesReportConfig(n_resamples=300, n_partitions=0, n_splits=5, combiners=("ridge",))
    cells = evaluate_judges(t, ratings_from_frame(study.ratings), cfg).mtmm.set_index(["family", "attribute"])
    cell = cells.loc[("family0", "composition")]
    assert cell["delta"] < 0 and cell["ci_high"] < 0
    assert cell["p"] == pytest.approx(2 / (300 + 1), abs=1e-15)  # no replicate >= 0: 2 * (1 + 0) / (B + 1)
    assert cell["p_bh"] < 0.05


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


def test_ceiling_recovers_the_planted_one(report, study):
    assert report.ceiling.ceiling == pytest.approx(study.ceiling, abs=0.03)


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
    assert not list((tmp_path / "a").glob(".*"))  # atomic writes leave no temp files
    umask = os.umask(0)
    os.umask(umask)
    assert {oct(p.stat().st_mode & 0o777) for p in a} == {oct(0o666 & ~umask)}  # not mkstemp's 0600
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
    # k = 2; predicted: image 0 in, images 1-3 tie for one place (1/3 each);
    # human top is {0, 1}: expected overlap 1 + 1/3, precision (4/3) / 2
    assert precision_at_top([3, 2, 2, 2, 1], [5, 4, 3, 2, 1], fraction=0.4) == pytest.approx(2 / 3, abs=1e-15)
    # ties on both sides: k = 2; predicted {0: 1, 1: 1/3, 2: 1/3, 3: 1/3}; human {0: 1/2, 1: 1/2, 4: 1/2, 5: 1/2}
    assert precision_at_top([9, 5, 5, 5, 1, 0], [7, 7, 1, 0, 7, 7], fraction=0.3) == pytest.approx(
        (1 * 0.5 + (1 / 3) * 0.5) / 2, abs=1e-15)
    with pytest.raises(InvalidParameterError, match="fraction"):
        precision_at_top([1, 2], [1, 2], fraction=0)


def _brute_force_expected_precision(p, h, fraction):
    """Average the position-tie-broken precision over every ordering of the images."""
    k = int(np.ceil(fraction * len(p)))
    vals = []
    for order in itertools.permutations(range(len(p))):
        o = np.array(order)
        top_p = set(o[np.argsort(-np.asarray(p)[o], kind="stable")[:k]])
        top_h = set(o[np.argsort(-np.asarray(h)[o], kind="stable")[:k]])
        vals.append(len(top_p & top_h) / k)
    return float(np.mean(vals))


@pytest.mark.parametrize("seed", range(4))
def test_precision_at_top_is_the_expectation_over_random_tie_breaks(seed):
    rng = np.random.default_rng(seed)
    p, h = rng.integers(0, 3, size=7), rng.integers(0, 3, size=7)
    assert precision_at_top(p, h, fraction=0.3) == pytest.approx(_brute_force_expected_precision(p, h, 0.3),
                                                                 abs=1e-12)


def test_precision_at_top_does_not_depend_on_image_order():
    """Integer verdicts tie a lot; before the fix the id order decided the ties."""
    rng = np.random.default_rng(0)
    p, h = rng.integers(1, 11, size=300), np.round(rng.normal(size=300), 1)
    ref = precision_at_top(p, h)
    for s in range(5):
        perm = np.random.default_rng(s).permutation(300)
        assert precision_at_top(p[perm], h[perm]) == pytest.approx(ref, abs=1e-12)


def test_probe_bands_include_the_papers_datasets():
    """Jadhav et al. (2026) §5.5: the best probe model captured 62.0 % of EVA's
    ceiling (fusion paid) and 84.6 % of PARA's (parity)."""
    assert (PROBE_LOW, PROBE_HIGH) == (0.620, 0.846)
    assert probe_verdict(0.620)[0] == "panel"
    assert probe_verdict(0.846)[0] == "single"
    assert probe_verdict(0.6201)[0] == probe_verdict(0.8459)[0] == "uncertain"
    assert "62.0%" in probe_verdict(0.7)[1] and "84.6%" in probe_verdict(0.7)[1]


def test_probe_verdicts(study):
    weak = simulate_study(150, n_families=2, holistic_fidelity=0.4, rng=np.random.default_rng(2))
    weak_r = ratings_from_frame(weak.ratings)
    res = probe_headroom(weak.judge_table, weak_r, n_resamples=300, n_splits=10)
    assert res.verdict == "panel"  # planted: holistic fidelity 0.4 against a ceiling of about 0.95
    # members: scipy Spearman of the 5-repetition holistic mean; headroom against the planted ceiling
    hum = weak.ratings.groupby("image")["score"].mean()
    t = weak.judge_table[weak.judge_table.prompt_kind == "holistic"]
    for fam, rho in res.members.items():
        mean5 = t[t.family == fam].groupby("image")["score"].mean().loc[hum.index]
        assert rho == pytest.approx(stats.spearmanr(mean5, hum).statistic, abs=1e-12)
    assert res.headroom == pytest.approx(max(res.members.values()) / weak.ceiling, abs=0.02)
    # a headroom exactly on a band edge is inside the band
    assert probe_headroom(weak.judge_table, weak_r, n_resamples=300, n_splits=10, low=res.headroom,
                          high=0.99).verdict == "panel"
    # the CI follows the confidence option
    narrow = probe_headroom(weak.judge_table, weak_r, n_resamples=300, n_splits=10, confidence=0.5)
    assert narrow.best_rho.ci_high - narrow.best_rho.ci_low < res.best_rho.ci_high - res.best_rho.ci_low
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
    from multicrop.evaluation.judges.report import match_images

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


def test_parallel_refits_give_the_same_report_bytes(study, tmp_path):
    ratings = ratings_from_frame(study.ratings)
    base = dict(n_resamples=100, n_partitions=3, n_splits=5, combiners=("ridge",), robustness_arms=("H+P_ridge",))
    one = write_judges_report(evaluate_judges(study.judge_table, ratings, JudgesReportConfig(**base, n_jobs=1)),
                              tmp_path / "one")
    two = write_judges_report(evaluate_judges(study.judge_table, ratings, JudgesReportConfig(**base, n_jobs=2)),
                              tmp_path / "two")
    for a, b in zip(one, two):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert "n_jobs" not in json.loads((tmp_path / "one" / "summary.json").read_text())["config"]


def _anticorrelated_raters(study):
    """Two raters per image whose scores rank-correlate negatively (as /tmp/review_b/neg.py):
    the split-half reliability is negative, so the ceiling is 0."""
    imgs = sorted(study.ratings["image"].unique())
    rng = np.random.default_rng(1)
    while True:
        a, b = rng.normal(size=(2, len(imgs)))
        if stats.spearmanr(a, b).statistic < -0.1:
            break
    return pd.DataFrame({"image": imgs * 2, "rater": ["r1"] * len(imgs) + ["r2"] * len(imgs),
                         "score": np.concatenate([a, b])})


def test_a_non_positive_noise_ceiling_is_reported_not_a_crash(study, tmp_path):
    ratings = ratings_from_frame(_anticorrelated_raters(study))
    cfg = JudgesReportConfig(n_resamples=100, n_partitions=0, n_splits=5, combiners=("ridge",))
    rep = evaluate_judges(study.judge_table, ratings, cfg)
    assert rep.ceiling.ceiling == 0.0 and rep.summary["headroom"] is None
    assert "headroom is undefined" in rep.summary["notes"]["ceiling"]
    write_judges_report(rep, tmp_path)
    page = (tmp_path / "index.html").read_text()
    assert "headroom: n/a" in page and "headroom is undefined" in page
    with pytest.raises(DatasetError, match="noise ceiling is 0.000"):
        probe_headroom(study.judge_table, ratings, n_resamples=100, n_splits=5)


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


def test_a_family_with_no_parsed_reply_is_noted_and_its_calls_still_count(study, tmp_path):
    table = study.judge_table.copy()
    dead = table[table.family == "family0"].assign(family="deadfam", score=np.nan)
    cfg = JudgesReportConfig(n_resamples=200, n_partitions=0, n_splits=5, combiners=("ridge",))
    ratings = ratings_from_frame(study.ratings)
    base = evaluate_judges(study.judge_table, ratings, cfg)
    rep = evaluate_judges(pd.concat([table, dead]), ratings, cfg)
    n_dead = len(dead)
    assert rep.summary["unparsed_families"] == {"deadfam": n_dead}
    assert f"deadfam ({n_dead} calls)" in rep.summary["notes"]["unparsed_families"]
    assert "deadfam" not in rep.summary["families"]
    a0, a1 = base.arms.set_index("arm"), rep.arms.set_index("arm")
    per_image = n_dead / study.judge_table.image.nunique()
    assert a1.loc["H+P_ridge", "calls_per_image"] == pytest.approx(a0.loc["H+P_ridge", "calls_per_image"] + per_image)
    assert a1.loc["member:family0", "calls_per_image"] == a0.loc["member:family0", "calls_per_image"]
    write_judges_report(rep, tmp_path)
    page = (tmp_path / "index.html").read_text()
    assert "unparsed_families" in page and f"deadfam ({n_dead} calls)" in page


def test_probe_records_the_repetitions_actually_used(study):
    reps = study.judge_table[study.judge_table.prompt_kind == "holistic"].repetition.nunique()
    table = study.judge_table
    short = table[~((table.family == "family1") & (table.prompt_kind == "holistic") & (table.repetition >= 2))]
    res = probe_headroom(short, ratings_from_frame(study.ratings), repetitions=reps + 3, n_resamples=200,
                         n_splits=5)
    assert res.repetitions == reps + 3
    assert res.repetitions_used == {"family0": reps, "family1": 2, "family2": reps}
    assert res.short_families == res.repetitions_used
    assert res.to_dict()["repetitions_used"]["family1"] == 2
    assert probe_headroom(table, ratings_from_frame(study.ratings), repetitions=2, n_resamples=200,
                          n_splits=5).short_families == {}


def test_mtmm_cells_reuse_the_matrix_partials(report):
    mat = report.mtmm_matrix.set_index(["family", "prompt"])
    for _, c in report.mtmm.iterrows():
        assert c["partial_dimension"] == mat.loc[(c["family"], c["dimension"]), c["attribute"]]
        assert c["partial_holistic"] == mat.loc[(c["family"], "holistic"), c["attribute"]]


def test_default_robustness_arm_follows_the_first_combiner():
    assert JudgesReportConfig().robustness_arms == ("H+P_gb",)
    assert JudgesReportConfig(combiners=("ridge", "gb")).robustness_arms == ("H+P_ridge",)
    assert JudgesReportConfig(combiners=("ridge",), robustness_arms=("P_ridge",)).robustness_arms == ("P_ridge",)
    assert JudgesReportConfig(combiners=("ridge",)).to_dict()["robustness_arms"] == ["H+P_ridge"]


def test_report_tables_write_missing_values_as_nan_and_to_json_is_canonical(report, tmp_path):
    from multicrop.hashing import canonical_json

    write_judges_report(report, tmp_path)
    comp = (tmp_path / "comparisons.csv").read_text().splitlines()
    # p_max is undefined against the panel mean: written as the judge table writes a missing score
    assert any(line.split(",")[comp[0].split(",").index("p_max")] == "NaN" for line in comp[1:])
    assert report.config.to_json() == canonical_json(report.config.to_dict())


def test_probe_does_not_import_scikit_learn(tmp_path, study):
    import subprocess
    import sys

    study.judge_table.to_csv(tmp_path / "j.csv", index=False)
    study.ratings.to_csv(tmp_path / "r.csv", index=False)
    code = (
        "import sys\n"
        "from multicrop.cli.main import main\n"
        f"rc = main(['eval', 'probe', '-s', {str(tmp_path / 'j.csv')!r}, '-r', {str(tmp_path / 'r.csv')!r}, "
        "'-B', '200', '--splits', '5', '--json'])\n"
        "assert rc == 0, rc\n"
        "print('SKLEARN' if any(m == 'sklearn' or m.startswith('sklearn.') for m in sys.modules) else 'CLEAN')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "CLEAN"
