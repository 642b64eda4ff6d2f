"""Prompt contents and lenient reply parsing."""

import math

import pytest

from multicrop.judges.prompts import (
    DIMENSION_TEMPLATE, HOLISTIC_SCALE, HOLISTIC_TEMPLATE, build_prompt, parse_reply, reply_schema,
)
from multicrop.judges.rubric import DIMENSION_IDS, OVERALL, load_rubric


def test_holistic_prompt_asks_for_json_on_1_to_10():
    p = build_prompt(HOLISTIC_TEMPLATE, load_rubric())
    assert p.kind == "holistic" and p.dimension == OVERALL and p.scale == HOLISTIC_SCALE == (1, 10)
    assert '{"score": <number>, "reason": "<one short sentence>"}' in p.text
    assert "from 1 (lowest) to 10 (highest)" in p.text
    assert HOLISTIC_TEMPLATE.ref == "holistic@1"


@pytest.mark.parametrize("dim", DIMENSION_IDS)
def test_dimension_prompt_quotes_only_its_own_rubric(dim):
    r = load_rubric()
    p = build_prompt(DIMENSION_TEMPLATE, r, dim)
    d = r.dimension(dim)
    assert p.kind == "dimension" and p.dimension == dim and p.scale == (1, 5)
    assert d.name in p.text and d.question in p.text
    for i, tier in enumerate(d.tiers, start=1):
        assert f"{i}: {tier}" in p.text
    for other in r.dimensions:
        if other.id != dim:
            assert other.tiers[0] not in p.text
    assert "from 1 (lowest) to 5 (highest)" in p.text and '"score"' in p.text
    assert DIMENSION_TEMPLATE.ref == "dimension@1"


def test_reply_schema_bounds_the_score():
    s = reply_schema((1, 5))
    assert s["properties"]["score"] == {"type": "number", "minimum": 1, "maximum": 5}
    assert s["required"] == ["score", "reason"] and s["additionalProperties"] is False


@pytest.mark.parametrize("text, score", [
    ('{"score": 4, "reason": "ok"}', 4.0),
    ('{"score": 3.5}', 3.5),
    ('{"score": "2"}', 2.0),
    ('Here you go:\n```json\n{"score": 5, "reason": "x"}\n```', 5.0),
    ('{"score": 4, "reason": "unterminated', 4.0),  # malformed JSON, score still readable
])
def test_parse_accepts_lenient_forms(text, score):
    r = parse_reply(text, scale=(1, 5))
    assert r.error is None and r.score == score


@pytest.mark.parametrize("text, fragment", [
    (None, "empty"),
    ("   ", "empty"),
    ("lovely photo, a seven", "no JSON object"),
    ('{"reason": "no score"}', "no field 'score'"),
    ('{"score": "high"}', "not a number"),
    ('{"score": [4]}', "not a number"),
    ('{"score": true}', "not a number"),
    ('{"score": 9}', "outside the scale"),
    ('{"score": NaN}', "outside the scale"),
])
def test_parse_failures_are_data_not_exceptions(text, fragment):
    r = parse_reply(text, scale=(1, 5))
    assert math.isnan(r.score) and fragment in r.error
