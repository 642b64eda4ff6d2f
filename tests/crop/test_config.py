"""CropConfig: validation and canonical JSON."""

import json

import pytest

from multicrop.crop.config import CompositionWeights, CropConfig, PartitionConfig
from multicrop.errors import InvalidParameterError


def test_round_trip_and_canonical_json():
    cfg = CropConfig(k=3, ratios="instagram", strategy="topk",
                     weights=CompositionWeights(thirds=0.5), partition=PartitionConfig(threshold=0.8))
    d = json.loads(cfg.to_json())
    assert d["ratios"] == ["4:5", "1:1", "1.91:1"] and d["weights"]["thirds"] == 0.5
    assert CropConfig.from_dict(d) == cfg
    assert cfg.to_json() == CropConfig.from_dict(d).to_json()
    assert list(d) == sorted(d)


@pytest.mark.parametrize("kwargs, match", [
    (dict(k=0), "k must be"), (dict(k=True), "k must be"), (dict(ratios="wide"), "ratio"),
    (dict(strategy="best"), "strategy must be one of partition, topk"), (dict(nms_iou=2), "nms_iou"),
    (dict(quality=101), "quality"), (dict(analysis_max_side=10), "analysis_max_side"),
])
def test_bad_values_name_the_parameter(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        CropConfig(**kwargs)


def test_unknown_keys_are_rejected():
    with pytest.raises(InvalidParameterError, match="unknown config keys colour"):
        CropConfig.from_dict({"colour": 1})
    with pytest.raises(InvalidParameterError, match="config.weights: bogus"):
        CropConfig.from_dict({"weights": {"bogus": 1}})


def test_nested_thresholds_are_validated():
    with pytest.raises(InvalidParameterError, match="threshold"):
        PartitionConfig(threshold=0)
    with pytest.raises(InvalidParameterError, match="thirds"):
        CompositionWeights(thirds=-1)
