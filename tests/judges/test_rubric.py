"""The frozen rubric: content, hash stability, and the hash entering call keys."""

import hashlib
from importlib import resources

import numpy as np
import pytest

from multicrop.errors import InvalidParameterError, UnknownNameError
from multicrop.judges.backends import JUDGE_BACKENDS
from multicrop.judges.panel import Family, Panel, default_panel
from multicrop.judges.rubric import DIMENSION_IDS, load_rubric, parse_rubric
from multicrop.judges.runner import plan_calls
from multicrop.judges.types import ImageRef


def _packaged_bytes() -> bytes:
    return resources.files("multicrop").joinpath("data/rubric.toml").read_bytes()


def test_rubric_has_five_dimensions_with_five_observable_tiers():
    r = load_rubric()
    assert r.dimension_ids == DIMENSION_IDS == (
        "technical_quality", "composition", "colour_and_tone", "distinctiveness", "emotional_impact")
    assert (r.scale_min, r.scale_max) == (1, 5)
    for d in r.dimensions:
        assert len(d.tiers) == 5 and len(set(d.tiers)) == 5
        assert all(len(t) > 40 for t in d.tiers)
    with pytest.raises(UnknownNameError, match="colour_and_tone"):
        r.dimension("colour")


def test_hash_is_sha256_of_the_file_bytes_and_stable():
    data = _packaged_bytes()
    r = load_rubric()
    assert r.sha256 == "sha256:" + hashlib.sha256(data).hexdigest()
    assert parse_rubric(data).sha256 == r.sha256  # recomputed, not cached
    assert r.to_dict()["sha256"] == r.sha256


def test_changing_the_rubric_changes_hash_and_every_call_key(tmp_path):
    data = _packaged_bytes()
    edited = data.replace(b"crisp where it matters", b"crisp where it counts")
    assert edited != data
    path = tmp_path / "rubric.toml"
    path.write_bytes(edited)
    r0, r1 = load_rubric(), load_rubric(path)
    assert r1.sha256 != r0.sha256
    img = ImageRef(np.zeros((8, 8, 3), np.uint8))
    panel = Panel((Family("vlm", "openai-compatible", "m", {"api_key_env": "", "base_url": "http://127.0.0.1:9/v1"}),))
    backends = {"vlm": panel.families[0].create()}
    k0 = {c.key for c in plan_calls([img], panel, backends, r0)}
    k1 = {c.key for c in plan_calls([img], panel, backends, r1)}
    assert len(k0) == len(k1) == 5 + 5 * 3
    assert not (k0 & k1)
    # a backend that reads no prompt (measured) keeps its keys: a rubric text edit re-runs nothing
    measured = default_panel()
    mb = {"measured": JUDGE_BACKENDS.create("measured", model="measured-v1")}
    assert {c.key for c in plan_calls([img], measured, mb, r0)} == {c.key for c in plan_calls([img], measured, mb, r1)}


@pytest.mark.parametrize("mutation, match", [
    (lambda s: s.replace(b'id = "composition"', b'id = "framing"'), "dimensions must be"),
    (lambda s: s.replace(b"scale_max = 5", b"scale_max = 7"), "scale must span"),
    (lambda s: s + b"\n[[[", "not valid"),
    (lambda s: s.replace(b'id = "multicrop-rubric"', b""), "missing or malformed"),
])
def test_malformed_rubrics_are_refused(mutation, match):
    with pytest.raises(InvalidParameterError, match=match):
        parse_rubric(mutation(_packaged_bytes()))


def test_rubric_round_trips_through_its_dict():
    from multicrop.judges.rubric import Rubric

    r = load_rubric()
    data = r.to_dict()
    assert data["dimensions"][1]["id"] == "composition" and isinstance(data["dimensions"][1]["tiers"], list)
    assert Rubric.from_dict(data) == r
