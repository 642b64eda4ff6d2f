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


# --- what a class writes beyond its fields is declared: serialized(...) and computed -------------------------

from multicrop.serialize import computed, serialized  # noqa: E402


@dataclass(frozen=True)
class Report(Serializable):
    n_checked: int
    mismatches: tuple[tuple[str, str], ...] = field(default=(), metadata=serialized(pairs=("call_key", "problem")))
    threads: int = field(default=1, metadata=serialized(key="threads_per_worker"))
    seconds: dict[str, float] = field(default_factory=dict, metadata=serialized(round=2))
    cache: dict[str, int] = field(default_factory=dict, metadata=serialized(skip=True))
    ranking: dict[str, int] | None = field(default=None, metadata=serialized(omit_none=True))

    @computed()
    def ok(self) -> bool:
        return not self.mismatches

    @computed(round=3, key="share_ok")
    def share(self) -> float:
        return 1 / 3


def test_declared_rules_shape_the_data():
    r = Report(4, (("k1", "sha differs"),), threads=2, seconds={"load": 0.123456}, cache={"x": 1})
    assert to_data(r) == {"n_checked": 4, "mismatches": [{"call_key": "k1", "problem": "sha differs"}],
                          "threads_per_worker": 2, "seconds": {"load": 0.12}, "ok": False, "share_ok": 0.333}
    assert list(to_data(r)) == ["n_checked", "mismatches", "threads_per_worker", "seconds", "ok", "share_ok"]
    assert to_data(Report(1, ranking={"a": 1}))["ranking"] == {"a": 1}


def test_declared_rules_load_back():
    """Renamed keys and named pairs read back; computed keys are ignored; a skipped field is still accepted."""
    r = Report(4, (("k1", "sha differs"),), threads=2, seconds={"load": 0.5})
    assert Report.from_dict(json.loads(json.dumps(r.to_dict()))) == r
    assert Report.from_dict({"n_checked": 1, "cache": {"x": 2}}).cache == {"x": 2}
    with pytest.raises(InvalidParameterError, match="unknown key 'threads'"):
        Report.from_dict({"n_checked": 1, "threads": 2})


@dataclass(frozen=True)
class Rounded(Serializable):
    a: float
    b: tuple[float, ...]
    n: int = 7
    exact: float = field(default=0.123456, metadata=serialized(round=5))

    __data_round__ = 2


def test_a_class_round_rounds_every_float_of_its_fields_but_a_field_may_say_otherwise():
    assert to_data(Rounded(1.23456, (2.34567, math.nan))) == {"a": 1.23, "b": [2.35, None], "n": 7, "exact": 0.12346}


@pytest.mark.parametrize("bad, match", [({"round": -1}, "round must be"), ({"round": 1.5}, "round must be"),
                                        ({"pairs": ()}, "pairs must be"), ({"pairs": ("a", 1)}, "pairs must be")])
def test_serialized_refuses_bad_rules(bad, match):
    with pytest.raises(InvalidParameterError, match=match):
        serialized(**bad)


def test_pairs_of_the_wrong_length_are_an_error_not_a_silent_truncation():
    with pytest.raises(ValueError):
        to_data(Report(1, (("k1", "a", "extra"),)))


def test_a_subclass_that_overrides_a_computed_property_with_a_plain_one_does_not_write_it():
    @dataclass(frozen=True)
    class Plain(Report):
        @property
        def ok(self) -> bool:
            return True

    assert "ok" not in to_data(Plain(1)) and to_data(Plain(1))["share_ok"] == 0.333
