"""The one ratio-preset table and its parser."""

from __future__ import annotations

import pytest

from multicrop import geometry
from multicrop.errors import InvalidParameterError
from multicrop.ratios import Ratio, parse_ratios
from multicrop.ratios import (
    ONE_RATIO_PRESETS,
    PLATFORM_SIZES,
    PRESETS,
    RATIO_PRESETS,
    RatioSpec,
    parse_ratio_spec,
    platform_height,
)


def test_geometry_holds_boxes_only():
    assert ONE_RATIO_PRESETS == {"instagram"} and "carousel" in RATIO_PRESETS
    for name in ("Ratio", "parse_ratio", "parse_ratios", "RATIO_PRESETS", "ONE_RATIO_PRESETS"):
        with pytest.raises(AttributeError):
            getattr(geometry, name)


@pytest.mark.parametrize("text, ratios, one", [
    ("instagram", ["4:5", "1:1", "1.91:1"], True),
    ("  Instagram ", ["4:5", "1:1", "1.91:1"], True),
    ("carousel", ["2:3", "3:2"], False),
    ("square", ["1:1"], False),
    ("2:3", ["2:3"], False),
    ("4:5,1:1", ["4:5", "1:1"], False),
    ("4:5,1:1,1.91:1", ["4:5", "1:1", "1.91:1"], False),  # the list, not the preset: mixed on request
    ("1080x1350", ["4:5"], False),
    ("1080×1080,1080×566", ["1:1", "1.91:1"], False),
    ("1920x1080", ["16:9"], False),
])
def test_parse(text, ratios, one):
    spec = parse_ratio_spec(text)
    assert [str(r) for r in spec.ratios] == ratios
    assert spec.one_ratio is one
    assert parse_ratios(text) == spec.ratios


def test_preset_names_and_sequences():
    spec = parse_ratio_spec("instagram")
    assert spec is PRESETS["instagram"] and spec.name == "instagram" and spec.text == "4:5,1:1,1.91:1"
    assert spec.sizes == ((1080, 1350), (1080, 1080), (1080, 566))
    assert parse_ratio_spec(spec) is spec
    assert parse_ratio_spec(Ratio(3, 2)) == RatioSpec("3:2", (Ratio(3, 2),))
    assert parse_ratio_spec(["2:3", Ratio(1, 1)]).ratios == (Ratio(2, 3), Ratio(1, 1))
    mixed = spec.with_one_ratio(False)
    assert mixed.one_ratio is False and mixed.ratios == spec.ratios and spec.one_ratio is True


@pytest.mark.parametrize("bad", ["wide", ",", "", "2:0", "-1:2", "1e308:1:2", 7, None, []])
def test_bad_settings_name_the_value(bad):
    with pytest.raises(InvalidParameterError) as e:
        parse_ratio_spec(bad)
    msg = str(e.value)
    assert "ratio" in msg and (repr(bad) in msg or str(bad) in msg)


def test_platform_sizes_are_exact():
    # Instagram's published slide sizes; 1080 / 1.91 = 565.4 would round to 565
    assert platform_height("1.91:1", 1080) == 566
    assert platform_height(Ratio(4, 5), 1080) == 1350
    assert platform_height("1:1", 1080) == 1080
    assert platform_height("1.91:1", 540) == 283
    assert platform_height("2:3", 1000) == 1500
    for text, (w, h) in PLATFORM_SIZES.items():
        assert abs(w / h - parse_ratio_spec(text).ratios[0].value) < 0.002
