"""evaluate_carousel: scores, subsets, resuming, workers, errors, the report files."""

from __future__ import annotations

import csv
import json
import os
import shutil

import pytest

from multicrop.errors import InvalidParameterError, MulticropError
from multicrop.evaluation.carousel.evaluate import evaluate_carousel
from multicrop.evaluation.carousel.report import write_report
from multicrop.evaluation.carousel.methods import METHODS, CarouselMethod
from multicrop.evaluation.carousel.records import RESULTS_FILE, read_results
from multicrop.geometry import Box
from multicrop.metrics import image_kiou, summarize_kiou


def test_slices_scores_and_subsets(small_synth, tmp_path):
    ev = evaluate_carousel(small_synth, "slices", out_dir=tmp_path)
    assert len(ev.results) == 4 and ev.n_resumed == 0
    assert [r.subset for r in ev.rows] == ["all", "ok", "failures"]
    all_row, ok_row, fail_row = ev.rows
    assert (all_row.n_images, ok_row.n_images, fail_row.n_images) == (4, 2, 2)
    assert all_row.n_boxes == 9  # 2 + 2 + 3 + 2: every labelled box is ground truth
    s = summarize_kiou([r.prediction.boxes for r in ev.results], [r.gt for r in ev.results])
    assert all_row.kiou_50 == pytest.approx(s.kiou_50)
    assert all_row.kiou_50_95 == pytest.approx(s.kiou_50_95)
    for r in ev.results:
        assert len(r.prediction.boxes) == r.prediction.k  # k = subcrops, not the box count
        assert r.kiou_50 == pytest.approx(image_kiou(r.prediction.boxes, r.gt, threshold=0.5).mean)
    las = next(r for r in ev.results if r.prediction.name == "1_Las_vegas_strip")
    assert (las.prediction.k, len(las.gt)) == (3, 2)


def test_subset_failures_only(small_synth, tmp_path):
    ev = evaluate_carousel(small_synth, "slices", subset="failures", out_dir=tmp_path)
    assert [r.subset for r in ev.rows] == ["failures"]
    assert all(r.hard_failure for r in ev.results) and len(ev.results) == 2


def test_resume_skips_done_and_recovers_a_torn_line(small_synth, tmp_path):
    calls = []
    evaluate_carousel(small_synth, "slices", out_dir=tmp_path, limit=2)
    ev = evaluate_carousel(small_synth, "slices", out_dir=tmp_path, progress=calls.append)
    assert ev.n_resumed == 2 and len(calls) == 2
    assert len(read_results(tmp_path / RESULTS_FILE)) == 4
    # A run killed mid-write leaves a partial last line: that image is redone.
    path = tmp_path / RESULTS_FILE
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][:40])
    ev2 = evaluate_carousel(small_synth, "slices", out_dir=tmp_path)
    assert ev2.n_resumed == 3
    assert [(r.kiou_50, r.kiou_50_95) for r in ev2.rows] == [(r.kiou_50, r.kiou_50_95) for r in ev.rows]


def test_other_method_in_same_dir_is_refused(small_synth, tmp_path):
    evaluate_carousel(small_synth, "slices", out_dir=tmp_path, limit=1)
    with pytest.raises(InvalidParameterError, match="holds results of method 'slices'"):
        evaluate_carousel(small_synth, "vips", out_dir=tmp_path, limit=1)


def test_workers_give_the_same_results(small_synth, tmp_path):
    one = evaluate_carousel(small_synth, "slices", out_dir=tmp_path / "a")
    two = evaluate_carousel(small_synth, "slices", out_dir=tmp_path / "b", workers=2)
    assert [r.prediction.boxes for r in one.results] == [r.prediction.boxes for r in two.results]
    assert two.workers == 2 and two.threads >= 1


def test_library_error_in_a_method_is_an_error_row(small_synth, tmp_path):
    from multicrop.errors import ImageTooSmallError

    class Refuses(CarouselMethod):
        name = "test-refuses"

        def _predict(self, image, k, ratios):
            raise ImageTooSmallError(f"{image}: too small for k={k}")

    METHODS.register(Refuses)
    try:
        ev = evaluate_carousel(small_synth, "test-refuses", out_dir=tmp_path, limit=2)
    finally:
        METHODS.unregister("test-refuses")
    assert all(r.prediction.error.startswith("ImageTooSmallError: ") for r in ev.results)
    assert ev.rows[0].kiou_50 == 0 and ev.rows[0].errors == 2


def test_unreadable_image_is_an_error_row(small_synth, tmp_path):
    root = tmp_path / "ds"
    shutil.copytree(small_synth, root)
    (root / "dataset" / "Hockey_players.jpg").write_bytes(b"not a jpeg")
    ev = evaluate_carousel(root, "slices", out_dir=tmp_path / "rep")
    bad = next(r for r in ev.results if r.prediction.name == "Hockey_players")
    assert bad.prediction.error and "ImageLoadError" in bad.prediction.error
    assert bad.prediction.boxes == () and bad.prediction.seconds == 0.0 and bad.kiou_50 == 0
    assert ev.rows[0].errors == 1 and ev.rows[0].n_images == 4
    # the image mended, a rerun tries it again (an error line is never reused) and the rest resume
    shutil.copy(small_synth / "dataset" / "Hockey_players.jpg", root / "dataset" / "Hockey_players.jpg")
    again = evaluate_carousel(root, "slices", out_dir=tmp_path / "rep")
    assert again.n_resumed == 3 and again.rows[0].errors == 0
    assert next(r for r in again.results if r.prediction.name == "Hockey_players").kiou_50 > 0


def test_bad_arguments(small_synth, tmp_path):
    with pytest.raises(InvalidParameterError, match="subset"):
        evaluate_carousel(small_synth, "slices", subset="good")
    with pytest.raises(InvalidParameterError, match="workers"):
        evaluate_carousel(small_synth, "slices", workers=0)
    with pytest.raises(MulticropError, match="no 'dataset/' folder"):
        evaluate_carousel(tmp_path, "slices")


def test_plugged_in_method_needs_no_command_change(small_synth, tmp_path):
    class Oracle(CarouselMethod):
        """Reads the label file beside the image: must score kIoU = 1."""

        name = "test-oracle"

        def _predict(self, image, k, ratios):
            from pathlib import Path

            d = json.loads(Path(image).with_suffix(".json").read_text())
            return [Box.from_corners(*p[0], *p[1]) for p in (s["points"] for s in d["shapes"])], None

    METHODS.register(Oracle)
    try:
        ev = evaluate_carousel(small_synth, "test-oracle", out_dir=tmp_path)
    finally:
        METHODS.unregister("test-oracle")
    # Not exactly 1: the oracle returns the raw labels, the ground truth is clipped (Hockey_players).
    assert ev.rows[0].kiou_50 == pytest.approx(1.0, abs=1e-3)
    assert ev.rows[0].kiou_50_95 == pytest.approx(1.0, abs=1e-3)
    # the labels face the way the labels face; their count differs from subcrops where the files disagree
    assert ev.rows[0].orientation_accuracy == 1.0
    expected = sum(len(r.gt) == r.prediction.k for r in ev.results) / len(ev.results)
    assert ev.rows[0].k_exact == pytest.approx(expected)
    assert ev.rows[0].k_mae == pytest.approx(
        sum(abs(len(r.gt) - r.prediction.k) for r in ev.results) / len(ev.results))


def test_k_and_orientation_columns_of_slices(small_synth, tmp_path):
    ev = evaluate_carousel(small_synth, "slices", out_dir=tmp_path)
    row = ev.rows[0]
    assert row.k_exact == 1.0 and row.k_mae == 0.0  # slices always gives k crops
    matched = sum(r.orientation.matched for r in ev.results)
    correct = sum(r.orientation.correct for r in ev.results)
    assert matched > 0 and row.orientation_accuracy == pytest.approx(correct / matched)
    write_report(ev, tmp_path)
    header = (tmp_path / "table.csv").read_text().splitlines()[0].split(",")
    assert header[-4:] == ["k_exact", "k_mae", "orientation_accuracy", "blob_cut"]


def test_report_files(small_synth, tmp_path):
    ev = evaluate_carousel(small_synth, "slices", out_dir=tmp_path)
    paths = write_report(ev, tmp_path)
    rows = list(csv.DictReader(paths["table_csv"].read_text().splitlines()))
    assert [r["subset"] for r in rows] == ["all", "ok", "failures"]
    assert float(rows[0]["kiou_50"]) == pytest.approx(ev.rows[0].kiou_50)
    data = json.loads(paths["table_json"].read_text())
    assert data["method"] == "slices" and len(data["rows"]) == 3
    per_image = list(csv.DictReader(paths["per_image_csv"].read_text().splitlines()))
    assert len(per_image) == 4
    page = paths["html"].read_text()
    assert "kIoU@0.5:0.95" in page and "1_Las_vegas_strip" in page
    thumbs = sorted((tmp_path / "thumbs").iterdir())
    assert len(thumbs) == 4
    for t in thumbs:
        assert f'src="thumbs/{t.name}"' in page


@pytest.mark.slow
def test_partition_method_end_to_end(carousel_labels, tmp_path):
    from multicrop.datasets.synth import make_synth

    names = ("090717-N-4234E-473", "Hockey_players")
    make_synth(carousel_labels, tmp_path / "ds", seed=0, max_side=480, names=names)
    ev = evaluate_carousel(tmp_path / "ds", "partition", out_dir=tmp_path / "rep")
    assert [r.prediction.error for r in ev.results] == [None, None]
    assert len(ev.results) == 2
    assert all(len(r.prediction.boxes) == r.prediction.k for r in ev.results)
    assert 0 <= ev.rows[0].kiou_50_95 <= ev.rows[0].kiou_50 <= 1


def test_resume_with_other_ratios_is_refused(small_synth, tmp_path):
    from multicrop.ratios import parse_ratios

    evaluate_carousel(small_synth, "slices", out_dir=tmp_path, limit=2)
    with pytest.raises(InvalidParameterError, match=r"holds results for ratios 2:3,3:2.*ratios 1:1"):
        evaluate_carousel(small_synth, "slices", out_dir=tmp_path, limit=2, ratios=parse_ratios("1:1"))
    saved = read_results(tmp_path / RESULTS_FILE)
    assert [(p.ratios, p.k) for p in saved] == [("2:3,3:2", 2), ("2:3,3:2", 3)]


def test_saved_lines_hold_predictions_only_and_resumes_score_the_current_labels(small_synth, tmp_path):
    evaluate_carousel(small_synth, "slices", out_dir=tmp_path / "rep", limit=1)
    line = json.loads((tmp_path / "rep" / RESULTS_FILE).read_text())
    assert set(line) == {"name", "method", "method_version", "k", "ratios", "boxes", "failure", "seconds", "error"}
    # The labels change (a corrected box): the resumed prediction is scored against the new ones.
    root = tmp_path / "ds"
    shutil.copytree(small_synth, root)
    label = root / "dataset" / f"{line['name']}.json"
    d = json.loads(label.read_text())
    first = line["boxes"][0]
    d["shapes"][0]["points"] = [[first["x"], first["y"]], [first["x"] + first["w"], first["y"] + first["h"]]]
    label.write_text(json.dumps(d))
    ev = evaluate_carousel(root, "slices", out_dir=tmp_path / "rep", limit=1)
    assert ev.n_resumed == 1
    r = ev.results[0]
    assert r.gt[0] == Box(first["x"], first["y"], first["w"], first["h"])
    assert r.kiou_50 == pytest.approx(image_kiou(r.prediction.boxes, r.gt, threshold=0.5).mean)
    assert ev.rows[0].kiou_50 == pytest.approx(summarize_kiou([r.prediction.boxes], [r.gt]).kiou_50)


def test_results_of_an_older_format_are_read_but_not_reused(small_synth, tmp_path):
    ev = evaluate_carousel(small_synth, "slices", out_dir=tmp_path / "new", limit=1)
    p = read_results(tmp_path / "new" / RESULTS_FILE)[0]
    old = {**p.to_dict(), "hard_failure": False, "gt": [], "kiou_50": 0.9, "kiou_50_95": 0.8}
    del old["ratios"]
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / RESULTS_FILE).write_text(json.dumps(old) + "\n")
    (back,) = read_results(tmp_path / "old" / RESULTS_FILE)
    assert back.ratios is None and back.boxes == ev.results[0].prediction.boxes
    with pytest.raises(InvalidParameterError, match="written before the offered ratios were recorded"):
        evaluate_carousel(small_synth, "slices", out_dir=tmp_path / "old", limit=1)


def test_scores_match_summarize_kiou_for_every_subset(small_synth, tmp_path):
    ev = evaluate_carousel(small_synth, "slices", out_dir=tmp_path)
    for row in ev.rows:
        sel = [r for r in ev.results if row.subset == "all" or (row.subset == "failures") == r.hard_failure]
        s = summarize_kiou([r.prediction.boxes for r in sel], [r.gt for r in sel])
        assert (row.kiou_50_95, row.kiou_50, row.image_mean_50_95, row.image_mean_50) == pytest.approx(
            (s.kiou_50_95, s.kiou_50, s.image_mean_50_95, s.image_mean_50))


def test_threads_are_given_to_the_method_explicitly(small_synth, tmp_path, monkeypatch):
    # One source (u2netp.thread_count), passed as a parameter: nothing goes through the environment.
    from multicrop.saliency import u2netp

    seen = []

    class Records(CarouselMethod):
        name = "test-threads"

        def _predict(self, image, k, ratios):
            seen.append(self.threads)
            return [Box(0, 0, 10, 15)] * k, None

    monkeypatch.delenv("MULTICROP_THREADS", raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert [u2netp.thread_count(w) for w in (1, 2, 8, 32)] == [4, 4, 2, 1]
    METHODS.register(Records)
    try:
        ev = evaluate_carousel(small_synth, "test-threads", out_dir=tmp_path / "a", workers=8, limit=1)
        assert seen == [2] and ev.threads == 2 and "MULTICROP_THREADS" not in os.environ
        monkeypatch.setenv("MULTICROP_THREADS", "3")
        ev = evaluate_carousel(small_synth, "test-threads", out_dir=tmp_path / "b", workers=2, limit=1)
    finally:
        METHODS.unregister("test-threads")
    assert seen == [2, 3] and ev.threads == 3


def test_methods_take_threads():
    method = METHODS.create("partition", threads=3)
    assert method.threads == 3 and METHODS.create("slices").threads is None
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(InvalidParameterError, match="threads must be a positive integer or None"):
            METHODS.create("slices", threads=bad)


def test_in_process_evaluation_reports_the_threads_u2netp_uses(small_synth, tmp_path, monkeypatch):
    from multicrop.saliency import u2netp

    monkeypatch.setenv("MULTICROP_THREADS", "3")
    ev = evaluate_carousel(small_synth, "slices", out_dir=tmp_path, limit=1)
    assert ev.threads == u2netp.thread_count() == 3


def test_a_rerun_redraws_only_changed_thumbnails(small_synth, tmp_path, monkeypatch):
    import multicrop.evaluation.carousel.report as report

    ev = evaluate_carousel(small_synth, "slices", out_dir=tmp_path)
    write_report(ev, tmp_path)
    before = sorted(p.name for p in (tmp_path / "thumbs").iterdir())
    drawn = []
    real = report._draw_thumb
    monkeypatch.setattr(report, "_draw_thumb", lambda *a: drawn.append(a[2].prediction.name) or real(*a))
    write_report(evaluate_carousel(small_synth, "slices", out_dir=tmp_path), tmp_path)  # a no-op resume
    assert drawn == [] and sorted(p.name for p in (tmp_path / "thumbs").iterdir()) == before
    # another prediction for one image: only its thumbnail is drawn, the stale one removed
    from dataclasses import replace

    from multicrop.evaluation.carousel.records import ImageResult

    r0 = ev.results[0]
    changed = ImageResult(replace(r0.prediction, boxes=r0.prediction.boxes[:1]), r0.gt, r0.hard_failure, r0.totals)
    write_report(replace(ev, results=(changed, *ev.results[1:])), tmp_path)
    assert len(drawn) == 1
    after = sorted(p.name for p in (tmp_path / "thumbs").iterdir())
    assert len(after) == 4 and len(set(after) - set(before)) == 1
