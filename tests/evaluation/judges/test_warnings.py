"""Warnings about degenerate designs (issue 15): each fires on its design and only there."""

import numpy as np
import pandas as pd
import pytest

from multicrop.datasets.ratings import ratings_from_frame
from multicrop.datasets.simulate import simulate_study
from multicrop.evaluation.judges.config import JudgesReportConfig
from multicrop.evaluation.judges.report import evaluate_judges
from multicrop.evaluation.judges.warnings import design_warnings
from multicrop.fusion.features import validate_judge_table

CFG = JudgesReportConfig(n_resamples=200, n_partitions=0, n_splits=5, combiners=("ridge",), robustness_arms=())


def _codes(table, n, cfg=CFG):
    t = validate_judge_table(table)
    return [w.code for w in design_warnings(t, families=t.families, n_images=n, config=cfg)]


def test_a_healthy_two_family_design_has_no_warning():
    sim = simulate_study(120, n_families=2, rng=np.random.default_rng(0))
    assert _codes(sim.judge_table, 120) == []


def test_one_family_and_few_images_per_fold():
    sim = simulate_study(60, n_families=1, rng=np.random.default_rng(0))
    assert _codes(sim.judge_table, 60) == ["single_family", "few_images"]
    assert _codes(sim.judge_table, 60, JudgesReportConfig(n_folds=3)) == ["single_family"]  # 20 per fold


def test_identical_repetitions_mark_a_deterministic_judge():
    sim = simulate_study(120, n_families=2, rng=np.random.default_rng(1))
    t = sim.judge_table.copy()
    f0 = (t["family"] == "family0") & (t["prompt_kind"] == "holistic")
    first = t[f0 & (t["repetition"] == 0)].set_index("image")["score"]
    t.loc[f0, "score"] = t.loc[f0, "image"].map(first).to_numpy()
    table = validate_judge_table(t)
    (w,) = design_warnings(table, families=table.families, n_images=120, config=CFG)
    assert w.code == "deterministic" and w.message.startswith("family0 gave the same holistic score")


def test_a_family_named_like_an_offline_backend_is_flagged_as_offline_with_proxies():
    sim = simulate_study(120, n_families=2, rng=np.random.default_rng(2))
    t = sim.judge_table.replace({"family": {"family1": "measured"}})
    codes = _codes(t, 120)
    assert codes == ["offline_calls", "proxy_dimensions"]
    table = validate_judge_table(t)
    msgs = [w.message for w in design_warnings(table, families=table.families, n_images=120, config=CFG)]
    assert "measured runs offline" in msgs[0] and "distinctiveness, emotional_impact" in msgs[1]


def test_the_report_carries_warnings_and_arm_intervals():
    sim = simulate_study(60, n_families=1, rng=np.random.default_rng(0))
    rep = evaluate_judges(sim.judge_table, ratings_from_frame(sim.ratings), CFG)
    assert [w["code"] for w in rep.summary["warnings"]] == ["single_family", "few_images"]
    a = rep.arms.set_index("arm")
    assert (a["n"] == 60).all()
    for m in ("rho", "tau_b"):
        assert ((a[f"{m}_ci_low"] <= a[m]) & (a[m] <= a[f"{m}_ci_high"])).all()
    # the percentile interval is the one of the shared resamples (replayed here with numpy)
    from multicrop.evaluation.judges.arms import bootstrap_arms, fit_arms
    from multicrop.evaluation.judges.align import align, match_images
    from multicrop.fusion.features import validate_judge_table as v
    table, ratings, _ = match_images(v(sim.judge_table), ratings_from_frame(sim.ratings), "auto")
    data = align(table, ratings, families=table.families)
    arms = fit_arms(data, families=table.families, config=CFG, progress=lambda *_: None)
    sc = bootstrap_arms(arms, data.y, seed=CFG.seed, n_resamples=200, progress=lambda *_: None)
    lo, hi = np.nanpercentile(sc.resampled["spearman"][:, 0], [2.5, 97.5])
    assert a.iloc[0]["rho_ci_low"] == pytest.approx(lo) and a.iloc[0]["rho_ci_high"] == pytest.approx(hi)
