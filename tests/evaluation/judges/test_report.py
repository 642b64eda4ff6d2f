"""The judge protocol end to end: what evaluate_judges returns and write_judges_report writes."""

import json
import os

import numpy as np
import pandas as pd
import pytest

from multicrop.datasets.ratings import ratings_from_frame
from multicrop.errors import DatasetError, InvalidParameterError
from multicrop.evaluation.judges.config import JudgesReportConfig
from multicrop.evaluation.judges.report import evaluate_judges, write_judges_report
from multicrop.evaluation.judges.result import json_data, summary_jsonable


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


def test_report_tables_write_missing_values_as_nan_and_to_json_is_canonical(report, tmp_path):
    from multicrop.hashing import canonical_json

    write_judges_report(report, tmp_path)
    comp = (tmp_path / "comparisons.csv").read_text().splitlines()
    # p_max is undefined against the panel mean: written as the judge table writes a missing score
    assert any(line.split(",")[comp[0].split(",").index("p_max")] == "NaN" for line in comp[1:])
    assert report.config.to_json() == canonical_json(report.config.to_dict())


def test_config_and_input_errors(study, protocol_config):
    with pytest.raises(InvalidParameterError, match="n_folds must be >= 2, got 1"):
        JudgesReportConfig(n_folds=1)
    with pytest.raises(InvalidParameterError, match="confidence"):
        JudgesReportConfig(confidence=95)
    few = study.ratings[study.ratings["image"].isin(sorted(study.ratings["image"].unique())[:5])]
    with pytest.raises(DatasetError, match="only 5 images"):
        evaluate_judges(study.judge_table, ratings_from_frame(few), protocol_config)


def test_a_holistic_only_panel_runs_without_dimension_arms(study, tmp_path):
    t = study.judge_table[study.judge_table.prompt_kind == "holistic"]
    cfg = JudgesReportConfig(n_resamples=100, n_partitions=2, n_splits=5, combiners=("ridge",))
    rep = evaluate_judges(t, ratings_from_frame(study.ratings), cfg)
    protocol = rep.arms[rep.arms["kind"] != "baseline"]
    assert protocol["arm"].tolist() == ["member:family0", "member:family1", "member:family2", "panel_mean",
                                        "H_ridge", "Hsplit_ridge"]
    # without dimension rows there is no H+P block to select from; the tie-breaking ablation remains
    assert rep.arms.loc[rep.arms["kind"] == "baseline", "arm"].tolist() == [
        "rounded:family0", "rounded:family1", "rounded:family2"]
    assert "needs the H+P block" in rep.summary["notes"]["baseline feature_selection"]
    assert rep.summary["notes"]["P"] == "no dimension rows: P and H+P arms skipped"
    assert rep.summary["notes"]["robustness"] == "robustness arms ['H+P_ridge'] are not among the arms run; skipped"
    assert rep.mtmm.empty  # matched cells need dimension prompts
    assert set(rep.mtmm_matrix["prompt"]) == {"holistic"}
    write_judges_report(rep, tmp_path)
    assert "no dimension rows" in (tmp_path / "index.html").read_text()


def test_summary_json_has_no_infinity(report):
    assert json_data({"r": float("-inf"), "c": [1.5, float("nan")]}) == {"r": None, "c": [1.5, None]}
    s = summary_jsonable(report)
    assert s["config"] == report.config.to_dict() and s["ceiling"] == report.ceiling.to_dict()
    assert json.loads(json.dumps(s, allow_nan=False)) == s
