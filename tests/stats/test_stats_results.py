"""StatResult and NoiseCeiling serialise through multicrop.serialize: NaN is null and reads back as NaN."""

import json
import math

import pytest

from multicrop.errors import InvalidParameterError
from multicrop.stats.results import NoiseCeiling, StatResult


def test_stat_result_round_trips_with_nan_as_null():
    r = StatResult(0.25, -0.1, 0.6, n_resamples=500)
    data = json.loads(json.dumps(r.to_dict()))
    assert data == {"estimate": 0.25, "ci_low": -0.1, "ci_high": 0.6, "p": None, "n_resamples": 500}
    back = StatResult.from_dict(data)
    assert (back.estimate, back.ci_low, back.ci_high, back.n_resamples) == (0.25, -0.1, 0.6, 500)
    assert math.isnan(back.p)
    with pytest.raises(InvalidParameterError, match="unknown key 'pvalue'"):
        StatResult.from_dict({"estimate": 0.1, "pvalue": 0.5})


def test_noise_ceiling_round_trips():
    c = NoiseCeiling(0.94, 0.88, 0.79, float("nan"), 1, 300, 10.0)
    data = c.to_dict()
    assert list(data) == ["ceiling", "reliability", "split_half", "sd", "n_splits", "n_images", "mean_raters"]
    assert data["sd"] is None and data["n_images"] == 300
    back = NoiseCeiling.from_dict(data)
    assert back.ceiling == 0.94 and math.isnan(back.sd) and back.n_splits == 1
