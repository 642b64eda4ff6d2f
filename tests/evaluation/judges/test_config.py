"""JudgesReportConfig and ProbeConfig: defaults, validation, canonical form."""

import dataclasses

import pytest

from multicrop.errors import InvalidParameterError, UnknownNameError
from multicrop.evaluation.judges.config import PROBE_HIGH, PROBE_LOW, JudgesReportConfig, ProbeConfig
from multicrop.hashing import canonical_json


def test_default_robustness_arm_follows_the_first_combiner():
    assert JudgesReportConfig().robustness_arms == ("H+P_gb",)
    assert JudgesReportConfig(combiners=("ridge", "gb")).robustness_arms == ("H+P_ridge",)
    assert JudgesReportConfig(combiners=("ridge",), robustness_arms=("P_ridge",)).robustness_arms == ("P_ridge",)
    assert JudgesReportConfig(combiners=("ridge",)).to_dict()["robustness_arms"] == ["H+P_ridge"]


def test_canonical_form_leaves_out_n_jobs_and_round_trips():
    cfg = JudgesReportConfig(n_resamples=500, combiners=("ridge",), families=("a", "b"), n_jobs=4)
    data = cfg.to_dict()
    assert data == {"seed": 0, "n_resamples": 500, "n_folds": 5, "n_partitions": 20, "n_splits": 200,
                    "confidence": 0.95, "top_fraction": 0.1, "combiners": ["ridge"],
                    "robustness_arms": ["H+P_ridge"], "families": ["a", "b"], "image_key": "auto"}
    assert cfg.to_json() == canonical_json(data)
    assert JudgesReportConfig.from_dict(data) == dataclasses.replace(cfg, n_jobs=1)
    with pytest.raises(InvalidParameterError, match="unknown key 'n_resample'"):
        JudgesReportConfig.from_dict({"n_resample": 100})


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"n_resamples": 99}, "n_resamples must be >= 100, got 99"),
    ({"top_fraction": 0.6}, r"top_fraction must be in \(0, 0.5\], got 0.6"),
    ({"combiners": ()}, r"combiners must name at least one combiner, got \(\)"),
    ({"image_key": "path"}, "image_key must be one of"),
    ({"n_jobs": 0}, "n_jobs must be >= 1, got 0"),
])
def test_report_config_errors_name_the_setting(kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        JudgesReportConfig(**kwargs)


def test_an_unknown_combiner_is_named_with_a_suggestion():
    with pytest.raises(UnknownNameError, match="unknown combiner 'gx'; did you mean 'gb'"):
        JudgesReportConfig(combiners=("ridge", "gx"))


def test_probe_config_shares_the_protocol_defaults():
    p, r = ProbeConfig(), JudgesReportConfig
    assert (p.seed, p.n_splits, p.n_resamples, p.confidence, p.image_key) == (
        r.seed, r.n_splits, r.n_resamples, r.confidence, r.image_key) == (0, 200, 10_000, 0.95, "auto")
    assert (p.repetitions, p.low, p.high) == (5, PROBE_LOW, PROBE_HIGH)
    with pytest.raises(InvalidParameterError, match="repetitions must be >= 1, got 0"):
        ProbeConfig(repetitions=0)
    with pytest.raises(InvalidParameterError, match=r"confidence must be in \(0, 1\), got 1.5"):
        ProbeConfig(confidence=1.5)
