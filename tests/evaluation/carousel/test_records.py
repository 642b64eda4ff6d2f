"""The per-image records: one line of results.jsonl, its parsing, and its score."""

from __future__ import annotations

import json

import pytest

from multicrop.errors import InvalidParameterError
from multicrop.evaluation.carousel.methods import METHODS, MethodResult
from multicrop.evaluation.carousel.records import (
    ImageResult,
    Prediction,
    Task,
    append_result,
    check_reusable,
    read_results,
)
from multicrop.geometry import Box

#: A line as results.jsonl has held it since ratios were recorded (keys in this order).
LINE = (
    '{"name": "a", "method": "slices", "method_version": "1", "k": 2, "ratios": "2:3,3:2", '
    '"boxes": [{"x": 0.0, "y": 0.0, "w": 40.0, "h": 60.0}, {"x": 40.5, "y": 0, "w": 40, "h": 60}], '
    '"failure": null, "seconds": 0.25, "error": null}'
)


def test_a_line_round_trips_byte_for_byte():
    p = Prediction.from_line(LINE)
    assert p == Prediction("a", "slices", "1", 2, "2:3,3:2", (Box(0.0, 0.0, 40.0, 60.0), Box(40.5, 0, 40, 60)),
                           None, 0.25)
    assert p.to_line() == LINE


def test_from_result_copies_the_method_result_without_a_dict():
    task = Task("a", "/x/a.jpg", 2, "2:3,3:2")
    method = METHODS.create("slices")
    result = MethodResult((Box(0, 0, 40, 60),), "partition failed", 1.5)
    p = Prediction.from_result(task, method, result)
    assert p == Prediction("a", "slices", "1", 2, "2:3,3:2", (Box(0, 0, 40, 60),), "partition failed", 1.5, None)
    e = Prediction.from_result(task, method, MethodResult(()), error="ImageLoadError: bad")
    assert (e.boxes, e.failure, e.seconds, e.error) == ((), None, 0.0, "ImageLoadError: bad")


def test_older_lines_are_read_without_their_scores():
    old = json.loads(LINE)
    del old["ratios"]
    old.update(hard_failure=True, gt=[{"x": 0, "y": 0, "w": 1, "h": 1}], kiou_50=0.5, kiou_50_95=0.25)
    p = Prediction.from_line(json.dumps(old))
    assert p.ratios is None and p.boxes == Prediction.from_line(LINE).boxes


def test_unknown_keys_and_wrong_types_are_not_records():
    with pytest.raises(InvalidParameterError, match="unknown key 'colour'"):
        Prediction.from_line(LINE[:-1] + ', "colour": 1}')
    with pytest.raises(InvalidParameterError, match="k"):
        Prediction.from_line(LINE.replace('"k": 2', '"k": "two"'))
    with pytest.raises(InvalidParameterError, match="JSON object"):
        Prediction.from_line("[1, 2]")


def test_append_then_read(tmp_path):
    path = tmp_path / "results.jsonl"
    p = Prediction.from_line(LINE)
    append_result(path, p)
    append_result(path, Prediction.from_line(LINE.replace('"a"', '"b"')))
    assert path.read_text() == LINE + "\n" + LINE.replace('"a"', '"b"') + "\n"
    assert [r.name for r in read_results(path)] == ["a", "b"]
    assert read_results(tmp_path / "missing.jsonl") == []


def test_a_bad_line_before_the_last_is_an_error(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text("not json\n" + LINE + "\n")
    with pytest.raises(InvalidParameterError, match="line 1 is not a result record"):
        read_results(path)
    path.write_text(LINE + "\n" + "[" * 100_000 + "]" * 100_000 + "\n" + LINE + "\n")  # too deep for json
    with pytest.raises(InvalidParameterError, match="line 2 is not a result record"):
        read_results(path)


def test_check_reusable(tmp_path):
    method = METHODS.create("slices")
    p = Prediction.from_line(LINE)
    check_reusable(p, tmp_path, method, "2:3,3:2")
    with pytest.raises(InvalidParameterError, match="holds results for ratios 2:3,3:2"):
        check_reusable(p, tmp_path, method, "1:1")
    with pytest.raises(InvalidParameterError, match="version 0"):
        check_reusable(Prediction.from_line(LINE.replace('"method_version": "1"', '"method_version": "0"')),
                       tmp_path, method, "2:3,3:2")


def test_image_result_scores_the_prediction(small_synth):
    from multicrop.datasets.carousel import load_carousel

    item = load_carousel(small_synth).items[0]
    exact = Prediction(item.name, "x", "1", item.k, "2:3,3:2", item.boxes, None, 0.0)
    r = ImageResult.score(exact, item)
    assert r.kiou_50 == pytest.approx(1.0) and r.kiou_50_95 == pytest.approx(1.0)
    assert r.prediction is exact and r.gt == item.boxes and len(r.totals) == 10
    half = ImageResult.score(Prediction(item.name, "x", "1", item.k, "2:3,3:2", item.boxes[:1], None, 0.0), item)
    assert half.kiou_50 == pytest.approx(1 / len(item.boxes))
