"""CropConfig and OutputConfig: validation, canonical JSON, what enters the hash."""

import dataclasses
import json

import pytest

from multicrop.crop.config import CandidateConfig, CompositionWeights, CropConfig, OutputConfig, PartitionConfig
from multicrop.errors import InvalidParameterError
from multicrop.hashing import content_hash
from multicrop.io import DEFAULT_MAX_PIXELS, DEFAULT_QUALITY


def test_round_trip_and_canonical_json():
    cfg = CropConfig(k=3, ratios="instagram", strategy="topk",
                     weights=CompositionWeights(thirds=0.5), partition=PartitionConfig(threshold=0.8))
    d = json.loads(cfg.to_json())
    assert d["ratios"] == ["4:5", "1:1", "1.91:1"] and d["weights"]["thirds"] == 0.5
    assert d["candidates"]["window_scales"] == [1.0, 0.85, 0.7, 0.55]
    assert CropConfig.from_dict(d) == cfg
    assert cfg.to_json() == CropConfig.from_dict(d).to_json()
    assert list(d) == sorted(d)


def test_ratios_may_be_given_as_text_in_a_config_file():
    assert [str(r) for r in CropConfig.from_dict({"ratios": "2:3,1:1"}).ratios] == ["2:3", "1:1"]
    assert CropConfig.from_dict({"ratios": "instagram"}) == CropConfig(ratios="instagram")


@pytest.mark.parametrize("kwargs, match", [
    (dict(k=0), "k must be"), (dict(k=True), "k must be"), (dict(ratios="wide"), "ratio"),
    (dict(strategy="best"), "strategy must be one of partition, topk"), (dict(nms_iou=2), "nms_iou"),
    (dict(faces="yes"), "faces must be true or false"), (dict(analysis_max_side=10), "analysis_max_side"),
])
def test_bad_values_name_the_parameter(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        CropConfig(**kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(quality=101), r"quality must be in \[1, 100\], got 101"), (dict(quality=0), "quality must be a positive"),
    (dict(format="gif"), "format must be one of"), (dict(widths=(100, 0)), "widths must be positive integers"),
    (dict(max_pixels=0), "max_pixels must be a positive integer"), (dict(preview=1), "preview must be true or false"),
])
def test_bad_output_values_name_the_parameter(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        OutputConfig(**kwargs)


def test_unknown_keys_are_rejected():
    with pytest.raises(InvalidParameterError, match="CropConfig: unknown key 'colour'; allowed: analysis_max_side"):
        CropConfig.from_dict({"colour": 1})
    with pytest.raises(InvalidParameterError, match="CropConfig.weights: unknown key 'bogus'; allowed: border_band"):
        CropConfig.from_dict({"weights": {"bogus": 1}})
    with pytest.raises(InvalidParameterError, match="CropConfig: unknown key 'quality'"):
        CropConfig.from_dict({"quality": 80})  # an output setting, not an analysis one


def test_nested_thresholds_are_validated():
    with pytest.raises(InvalidParameterError, match="threshold"):
        PartitionConfig(threshold=0)
    with pytest.raises(InvalidParameterError, match="thirds"):
        CompositionWeights(thirds=-1)
    with pytest.raises(InvalidParameterError, match="weights must be a CompositionWeights"):
        CropConfig(weights={"thirds": 0.5})


def test_output_settings_stay_out_of_the_analysis_config_and_its_hash():
    analysis = {f.name for f in dataclasses.fields(CropConfig)}
    output = {f.name for f in dataclasses.fields(OutputConfig)}
    assert output == {"format", "quality", "widths", "preview", "record", "max_pixels"}
    assert not analysis & output
    assert set(CropConfig().to_dict()) == analysis
    # changing how files are written leaves what evaluation caches hash unchanged
    digest = content_hash(CropConfig().to_dict())
    OutputConfig(quality=50, max_pixels=1000, format="png", widths=(1080,))
    assert content_hash(CropConfig().to_dict()) == digest


def test_every_default_has_one_home():
    assert OutputConfig().max_pixels == DEFAULT_MAX_PIXELS == 300_000_000
    assert OutputConfig().quality == DEFAULT_QUALITY == 92
    assert OutputConfig.from_dict(OutputConfig(widths=(1080, 720)).to_dict()).widths == (1080, 720)
    assert OutputConfig(format="PNG").suffix == ".png" and OutputConfig().suffix is None


def test_experiment_only_knobs_are_gone():
    names = {f.name for cls in (PartitionConfig, CandidateConfig, CompositionWeights) for f in dataclasses.fields(cls)}
    assert not names & {"max_box_area", "subject_shift", "framed_density", "framed_thirds"}


def test_a_ratio_setting_brings_its_one_ratio_rule():
    from multicrop.ratios import Ratio
    from multicrop.ratios import PRESETS, parse_ratio_spec

    insta = CropConfig(ratios=PRESETS["instagram"])
    assert insta.one_ratio is True and insta.ratios == (Ratio(4, 5), Ratio(1, 1), Ratio(1.91, 1))
    assert CropConfig(ratios="instagram") == insta
    assert CropConfig(ratios="instagram", one_ratio=False).one_ratio is False
    assert CropConfig(ratios="4:5,1:1,1.91:1").one_ratio is False  # plain ratios: each crop its own
    # replace() with new ratios takes their rule; an explicit one_ratio wins; other changes keep it
    assert CropConfig().replace(ratios="instagram").one_ratio is True
    assert CropConfig().replace(ratios=parse_ratio_spec("instagram")).one_ratio is True
    assert insta.replace(ratios="2:3,3:2").one_ratio is False
    assert CropConfig().replace(ratios="instagram", one_ratio=False).one_ratio is False
    assert insta.replace(k=3).one_ratio is True
    assert CropConfig(ratios="instagram", one_ratio=False).replace(k=3).one_ratio is False
    with pytest.raises(InvalidParameterError, match="ratios: ratio setting 'wide' is neither a preset"):
        CropConfig(ratios="wide")


def test_canonical_json_does_not_depend_on_how_the_ratios_were_given():
    from multicrop.ratios import Ratio
    from multicrop.ratios import parse_ratio_spec

    forms = [CropConfig(ratios=r) for r in ("2:3,3:2", "carousel", parse_ratio_spec("2:3, 3:2"),
                                            (Ratio(2, 3), Ratio(3, 2)), ["2:3", "3:2"])]
    assert {c.to_json() for c in forms} == {CropConfig().to_json()}
    data = json.loads(CropConfig(ratios="instagram").to_json())
    assert data["ratios"] == ["4:5", "1:1", "1.91:1"] and data["one_ratio"] is True
    assert CropConfig.from_dict(data) == CropConfig(ratios="instagram")


def test_k_auto_is_taken_by_the_declared_strategies_only():
    # the web page offers k=auto with AUTO_K_STRATEGIES (web.crop_settings.auto_k_strategies): what the config accepts
    from multicrop.crop.config import AUTO_K_STRATEGIES, STRATEGIES
    from multicrop.web.crop_settings import auto_k_strategies

    assert auto_k_strategies() == list(AUTO_K_STRATEGIES) == ["direct"]
    for strategy in STRATEGIES:
        if strategy in AUTO_K_STRATEGIES:
            assert CropConfig(k="auto", strategy=strategy).k == "auto"
        else:
            with pytest.raises(InvalidParameterError, match=f"k='auto' needs strategy 'direct', got strategy '{strategy}'"):
                CropConfig(k="auto", strategy=strategy)
