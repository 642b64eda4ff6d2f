"""Tests of the one serialization mechanism (to_data / from_data / Serializable)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from multicrop.errors import InvalidParameterError
from multicrop.geometry import Box
from multicrop.ratios import Ratio
from multicrop.serialize import Serializable, from_data, to_data


@dataclass(frozen=True)
class Inner(Serializable):
    ratio: Ratio
    boxes: tuple[Box, ...] = ()


@dataclass(frozen=True)
class Outer(Serializable):
    name: str
    score: float
    inner: Inner
    note: str | None = None
    parts: dict[str, float] = field(default_factory=dict)
    size: tuple[int, int] = (0, 0)

    def __post_init__(self):
        if not self.name:
            raise InvalidParameterError("name must not be empty")


finite = st.floats(allow_nan=False, allow_infinity=False, width=32)
size = st.floats(min_value=0, max_value=1e6, width=32)


@given(st.builds(Box, finite, finite, size, size))
def test_box_round_trips_through_json(box):
    assert Box.from_dict(json.loads(json.dumps(box.to_dict()))) == box


def test_nested_round_trip_with_text_types_tuples_and_optional():
    o = Outer("a", 0.5, Inner(Ratio(2, 3), (Box(0, 0, 2, 3), Box(1, 1, 2, 3))), None, {"kept": 1.0}, (4, 6))
    data = o.to_dict()
    assert data == {"name": "a", "score": 0.5, "inner": {"ratio": "2:3", "boxes": [
        {"x": 0, "y": 0, "w": 2, "h": 3}, {"x": 1, "y": 1, "w": 2, "h": 3}]}, "note": None,
        "parts": {"kept": 1.0}, "size": [4, 6]}
    back = Outer.from_dict(json.loads(json.dumps(data)))
    assert back == o and isinstance(back.size, tuple) and isinstance(back.inner.boxes, tuple)


def test_nan_is_null_and_back():
    o = Outer("a", math.nan, Inner(Ratio(1, 1)))
    assert o.to_dict()["score"] is None
    assert to_data([math.inf, -math.inf, 1.5]) == [None, None, 1.5]
    assert math.isnan(Outer.from_dict(o.to_dict()).score)


def test_numpy_values_become_builtins():
    assert to_data({"a": np.float32(0.5), "b": np.arange(3), "c": np.int64(2)}) == {"a": 0.5, "b": [0, 1, 2], "c": 2}
    with pytest.raises(TypeError, match="cannot serialize object"):
        to_data(object())


def test_errors_name_the_path():
    good = Outer("a", 1.0, Inner(Ratio(1, 1))).to_dict()
    with pytest.raises(InvalidParameterError, match=r"Outer\.inner: unknown key 'ratoi'; allowed: boxes, ratio"):
        Outer.from_dict({**good, "inner": {"ratoi": "1:1"}})
    with pytest.raises(InvalidParameterError, match=r"Outer\.inner\.boxes\[0\]\.w: expected float, got 'x'"):
        Outer.from_dict({**good, "inner": {"ratio": "1:1", "boxes": [{"x": 0, "y": 0, "w": "x", "h": 1}]}})
    with pytest.raises(InvalidParameterError, match=r"Outer: missing 'inner'"):
        Outer.from_dict({"name": "a", "score": 1.0})
    with pytest.raises(InvalidParameterError, match=r"Outer\.size: expected 2 items, got 3"):
        Outer.from_dict({**good, "size": [1, 2, 3]})
    with pytest.raises(InvalidParameterError, match=r"Outer\.score: expected float, got True"):
        Outer.from_dict({**good, "score": True})


def test_the_class_validation_runs_on_load():
    with pytest.raises(InvalidParameterError, match="name must not be empty"):
        Outer.from_dict({**Outer("a", 1.0, Inner(Ratio(1, 1))).to_dict(), "name": ""})
    with pytest.raises(InvalidParameterError, match="ratio"):
        from_data(Ratio, "0:3")
