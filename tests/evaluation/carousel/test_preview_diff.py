"""benchmarks/preview_diff.py: which photos it picks, and the grid it draws from two results.jsonl."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest
from PIL import Image

from multicrop.evaluation.carousel.evaluate import evaluate_carousel
from multicrop.evaluation.carousel.records import RESULTS_FILE, read_results
from multicrop.geometry import Box

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
import preview_diff  # noqa: E402


def test_agreement_is_the_mean_best_iou_both_ways():
    a = [Box(0, 0, 10, 10), Box(20, 0, 10, 10)]
    assert preview_diff.agreement(a, a) == 1.0
    assert preview_diff.agreement(a, [Box(100, 100, 5, 5)]) == 0.0
    assert preview_diff.agreement([], []) == 1.0 and preview_diff.agreement(a, []) == 0.0
    # B = the first box of A only: best IoUs are 1 and 0 from A's side, 1 from B's: mean 2/3
    assert preview_diff.agreement(a, a[:1]) == pytest.approx(2 / 3)
    half = [Box(0, 0, 10, 5)]  # IoU 0.5 with A's first box
    assert preview_diff.agreement(a[:1], half) == pytest.approx(0.5)


def test_grid_shows_the_least_agreeing_photos_first(small_synth, tmp_path, capsys):
    ev = evaluate_carousel(small_synth, "slices", out_dir=tmp_path / "a", blobs=False)
    preds = read_results(tmp_path / "a" / RESULTS_FILE)
    # B: the same crops, except one photo where every box shrinks to its top-left quarter (IoU 1/16)
    moved = sorted(p.name for p in preds)[1]
    b_lines = []
    for p in preds:
        if p.name == moved:
            p = dataclasses.replace(p, method="moved", boxes=tuple(Box(b.x, b.y, b.w / 4, b.h / 4) for b in p.boxes))
        b_lines.append(dataclasses.replace(p, method="moved").to_line())
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / RESULTS_FILE).write_text("\n".join(b_lines) + "\n")
    pa = {p.name: p for p in preds}
    pb = {p.name: p for p in read_results(tmp_path / "b" / RESULTS_FILE)}
    ranked = preview_diff.differing({i.name: i for i in ev.dataset.items}, pa, pb, 4)
    assert ranked[0][0] == moved and ranked[0][1] == pytest.approx(1 / 16)
    assert [r[1] for r in ranked[1:]] == [1.0, 1.0, 1.0]

    out = preview_diff.main(["--data", str(small_synth), "--a", str(tmp_path / "a"), "--b", str(tmp_path / "b"),
                             "--n", "2", "--out", str(tmp_path / "grid.png")])
    assert "2 photos (slices vs moved" in capsys.readouterr().out
    with Image.open(out) as im:
        assert im.height == 2 * (preview_diff.TITLE_H + preview_diff.PANEL_H + preview_diff.GAP)
    assert len(ev.results) == 4


def test_no_common_photo_is_an_error(small_synth, tmp_path):
    evaluate_carousel(small_synth, "slices", out_dir=tmp_path / "a", blobs=False, limit=1)
    (tmp_path / "b").mkdir()
    with pytest.raises(SystemExit):
        preview_diff.main(["--data", str(small_synth), "--a", str(tmp_path / "a"), "--b", str(tmp_path / "b")])
