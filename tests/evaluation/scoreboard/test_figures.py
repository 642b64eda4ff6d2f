"""The scoreboard's figures: ratio estimates, bootstrap intervals, flags, targets and the table."""

from __future__ import annotations

import json

import numpy as np
import pytest

from multicrop.errors import InputFileError, InvalidParameterError
from multicrop.io.files import LABEL_LIMIT
from multicrop.evaluation.scoreboard import ROWS, Estimate, Figure, Target, compare, estimate, flag, render, to_json
from multicrop.evaluation.scoreboard.figures import _seed
from multicrop.evaluation.scoreboard.report import read_photos, read_scoreboard
from multicrop.stats import percentile_ci

CUT = Figure("person-cut", "person_cut", "crops", better="lower", percent=True)
KIOU = Figure("kIoU@0.5", "kiou_50", "gt", better="higher")


def test_estimate_is_the_ratio_of_sums_not_the_mean_of_ratios():
    photos = {"a": {"person_cut": 1, "crops": 1}, "b": {"person_cut": 0, "crops": 3}}
    e = estimate(CUT, photos, n_resamples=200)
    assert e.value == 0.25 and (e.num, e.den, e.n) == (1.0, 4.0, 2)


def test_interval_of_two_photos_spans_both_extremes():
    # Resamples of {a: 1/1, b: 0/1} are aa (1), ab (0.5), bb (0), each end with probability 1/4:
    # the 2.5 % and 97.5 % quantiles are 0 and 1.
    photos = {"a": {"kiou_50": 1.0, "gt": 1}, "b": {"kiou_50": 0.0, "gt": 1}}
    e = estimate(KIOU, photos, n_resamples=4000)
    assert (e.value, e.low, e.high) == (0.5, 0.0, 1.0)


def test_interval_of_identical_photos_is_the_value():
    photos = {str(i): {"kiou_50": 0.6, "gt": 2} for i in range(7)}
    e = estimate(KIOU, photos, n_resamples=500)
    assert e.low == pytest.approx(0.3) and e.high == pytest.approx(0.3) and e.value == pytest.approx(0.3)


def test_interval_matches_a_naive_bootstrap_loop():
    rng = np.random.default_rng(3)
    num, den = rng.integers(0, 4, 30), rng.integers(1, 5, 30)
    photos = {f"p{i:02d}": {"person_cut": int(n), "crops": int(d)} for i, (n, d) in enumerate(zip(num, den))}
    e = estimate(CUT, photos, row="r", seed=5, n_resamples=300)
    idx = np.random.default_rng(_seed(5, "r", "person-cut")).integers(0, 30, size=(300, 30))
    boot = [num[i].sum() / den[i].sum() for i in idx]
    lo, hi = percentile_ci(boot)
    assert (e.low, e.high) == pytest.approx((lo, hi))
    assert e.low < e.value < e.high


def test_interval_does_not_depend_on_the_order_photos_are_listed_in():
    photos = {f"p{i}": {"person_cut": i % 3, "crops": 2} for i in range(12)}
    backwards = dict(reversed(list(photos.items())))
    assert estimate(CUT, photos, row="x") == estimate(CUT, backwards, row="x")


def test_a_figure_with_no_denominator_is_nan_and_no_photos_gives_no_interval():
    e = estimate(CUT, {"a": {"person_cut": 0, "crops": 0}}, n_resamples=50)
    assert np.isnan(e.value) and np.isnan(e.low)
    assert estimate(CUT, {}).n == 0


BASE = Estimate(0.3, 0.2, 0.4, 10, 3, 10)


@pytest.mark.parametrize("value, figure, expected", [
    (0.5, KIOU, "up"), (0.1, KIOU, "DOWN"),           # higher is better
    (0.5, CUT, "DOWN"), (0.1, CUT, "up"),             # lower is better: a rise is DOWN
    (0.3, CUT, ""), (0.2, KIOU, ""), (0.4, KIOU, ""),  # inside, bounds included
    (0.41, Figure("crops/photo", "crops", "photos"), "moved"),
])
def test_flag_against_the_baseline_interval(value, figure, expected):
    assert flag(figure, value, BASE) == expected


def test_no_flag_without_a_baseline_or_a_value():
    assert flag(KIOU, 0.9, None) == ""
    assert flag(KIOU, float("nan"), BASE) == ""


def test_target_met_and_missed():
    assert Target(">=", 0.47).met(0.47) and not Target(">=", 0.47).met(0.46)
    assert Target("<=", 0.03).met(0.0) and not Target("<=", 0.03).met(0.031)
    assert not Target("<=", 0.03).met(float("nan"))
    with pytest.raises(InvalidParameterError, match="op"):
        Target(">", 1.0)


def _synth_rows(values):
    return {"synth k=given": {f"p{i}": {"kiou_50": v, "kiou_50_95": v / 2, "gt": 1, "photos": 1}
                              for i, v in enumerate(values)}}


def test_compare_diffs_and_flags_against_the_baselines_own_interval():
    base = _synth_rows([0.5, 0.6, 0.4, 0.5, 0.55, 0.45] * 5)
    same = compare(base, base, n_resamples=500)
    assert [v.figure.name for v in same] == ["kIoU@0.5", "kIoU@0.5:0.95"]
    assert all(v.flag == "" and v.diff == 0 for v in same)
    better = compare(_synth_rows([0.9] * 30), base, n_resamples=500)
    assert [v.flag for v in better] == ["up", "up"]
    assert better[0].diff == pytest.approx(0.4) and better[0].met is True
    worse = compare(_synth_rows([0.1] * 30), base, n_resamples=500)
    assert [v.flag for v in worse] == ["DOWN", "DOWN"] and worse[0].met is False


def test_the_baseline_is_read_on_the_photos_a_run_shares_with_it():
    base = _synth_rows([0.2] * 10 + [0.8] * 10)  # p0-p9 at 0.2, p10-p19 at 0.8
    part = {"synth k=given": {p: c for p, c in base["synth k=given"].items() if p in {"p0", "p1", "p2"}}}
    v = compare(part, base, n_resamples=50)[0]  # a --limit run: its own photos in the baseline, 0.2
    assert v.base.value == pytest.approx(0.2) and v.base.n == 3 and v.diff == pytest.approx(0.0)
    other = {"synth k=given": {f"q{i}": {"kiou_50": 0.5, "kiou_50_95": 0.25, "gt": 1, "photos": 1} for i in range(5)}}
    v = compare(other, base, n_resamples=50)[0]  # another folder's photos: nothing to compare with
    assert v.base is None and v.flag == ""
    assert "| - | - |" in render([v], coco="coco-heldout")
    more = {"synth k=given": {**part["synth k=given"], **other["synth k=given"]}}  # shared and new photos mixed
    v = compare(more, base, n_resamples=50)[0]
    assert v.base is None and v.flag == ""  # not 3 shared photos' baseline against 8 photos' figure


def test_a_photo_row_names_the_folder_it_ran_on():
    rows = {"coco-multi k=auto": {"a": {"photos": 1, "crops": 2, "person_cut": 0, "subject_cut": 0, "empty": 0,
                                        "portrait": 0, "person_cut_v1": 0, "prominent": 1, "covered": 1,
                                        "featured": 0}}}
    line = render(compare(rows, None, n_resamples=20), coco="coco-heldout").splitlines()[2]
    assert line.startswith("| coco-heldout, the multi-subject photos, direct, k auto (1) | crops/photo | 2.000 |")


def test_compare_leaves_out_rows_not_run_and_rows_have_unique_keys():
    assert compare({}, None) == []
    keys = [r.key for r in ROWS]
    assert len(keys) == len(set(keys))


def test_render_names_each_row_once_and_shows_flag_and_target():
    base = _synth_rows([0.5, 0.6, 0.4, 0.5] * 5)
    text = render(compare(_synth_rows([0.1] * 20), base, n_resamples=200))
    lines = text.splitlines()
    assert lines[0].startswith("| row | figure | value | 95 % interval | baseline | diff | flag | target |")
    assert lines[2] == ("| carousel-synth seed 0, direct, the labelled k (20) | kIoU@0.5 | 0.100 | 0.100–0.100 | "
                        "0.500 | -0.400 | DOWN | ≥ 0.450 missed |")
    assert lines[3].startswith("|  | kIoU@0.5:0.95 | 0.050 |")
    assert len(lines) == 4
    # a held-out seed names its own scenes (the rows' titles carry it, not the script)
    held_out = render(compare(_synth_rows([0.1] * 20), None, n_resamples=200), seed=1).splitlines()
    assert held_out[2].startswith("| carousel-synth seed 1, direct, the labelled k (20) |")


def test_render_shows_counts_of_shares_and_a_dash_without_baseline():
    rows = {"coco-other k=auto": {"a": {"photos": 1, "crops": 2, "person_cut": 1, "subject_cut": 1, "empty": 0,
                                        "prominent": 1, "covered": 1, "featured": 0}}}
    line = render(compare(rows, None, n_resamples=50)).splitlines()[2]
    assert line == ("| coco-subjects, the other photos, direct, k auto (1) | empty | 0.0 % (0/2) | 0.0 %–0.0 % | "
                    "- | - |  | ≤ 10.0 % met |")


def test_json_round_trip_keeps_the_per_photo_counts(tmp_path):
    rows = _synth_rows([0.5, 0.7])
    p = tmp_path / "b.json"
    p.write_text(to_json(compare(rows, None, n_resamples=50), rows, meta={"commit": "abc"}))
    assert read_photos(p) == rows
    doc = json.loads(p.read_text())
    assert doc["commit"] == "abc" and doc["figures"][0]["value"] == pytest.approx(0.6)
    (tmp_path / "other.json").write_text('{"photos": {}}')
    with pytest.raises(InvalidParameterError, match="scoreboard"):
        read_photos(tmp_path / "other.json")


def test_a_baseline_that_is_no_regular_file_is_one_clear_error(tmp_path):
    with pytest.raises(InputFileError, match=r"scoreboard baseline .*: is a directory, not a regular file"):
        read_photos(tmp_path)
    big = tmp_path / "big.json"
    with big.open("wb") as fh:          # sparse: a file over the limit costs no disk
        fh.truncate(LABEL_LIMIT + 1)
    with pytest.raises(InputFileError, match="scoreboard baseline"):
        read_photos(big)


def test_a_scoreboard_is_read_whole_once_with_its_versions(tmp_path):
    rows = _synth_rows([0.5])
    p = tmp_path / "b.json"
    p.write_text(to_json(compare(rows, None, n_resamples=50), rows, meta={"versions": {"subjects-metric": "2"}}))
    doc = read_scoreboard(p)
    assert doc["photos"] == rows and doc["versions"] == {"subjects-metric": "2"}
