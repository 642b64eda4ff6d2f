"""Blob-cut share: the definition on hand-built maps, and its place in evaluate_carousel."""

from __future__ import annotations

import csv
import json
import shutil

import numpy as np
import pytest

from multicrop.evaluation.carousel import blobs as blobs_mod
from multicrop.evaluation.carousel.blobs import (
    BLOB_VERSION,
    BlobCut,
    blob_cut,
    blob_map,
    cutting_crops,
    mask_blobs,
)
from multicrop.evaluation.carousel.evaluate import SALIENCY_DIR, evaluate_carousel
from multicrop.evaluation.carousel.records import RESULTS_FILE
from multicrop.evaluation.carousel.report import write_report
from multicrop.geometry import Box


def _map() -> np.ndarray:
    """A 100 x 200 map of an image twice that size (source 400 x 200).

    Blob A: map rows 10-29, columns 10-29 (400 px; source x, y 20-60).
    Blob B: rows 50-89, columns 100-139 (1600 px; source x 200-280, y 100-180).
    A 5 x 5 speck (25 px, under 0.5 % of 20 000) and a faint square at 0.49 are no blobs.
    """
    m = np.zeros((100, 200), np.float32)
    m[10:30, 10:30] = 1.0
    m[50:90, 100:140] = 0.8
    m[80:85, 20:25] = 1.0
    m[40:70, 160:190] = 0.49
    return m


SIZE = (400, 200)


def test_blobs_keep_threshold_and_minimum_area():
    labels, n = mask_blobs(_map())
    assert n == 2
    assert sorted(np.bincount(labels.ravel())[1:].tolist()) == [400, 1600]
    assert labels[85, 22] == 0 and labels[50, 170] == 0  # the speck and the faint square


def test_diagonal_neighbours_are_one_blob():
    m = np.zeros((40, 40))
    m[0:10, 0:10] = 1
    m[10:20, 10:20] = 1  # touches the first square at one corner only
    labels, n = mask_blobs(m)
    assert n == 1 and int((labels == 1).sum()) == 200


def test_known_cuts_on_a_hand_built_map():
    boxes = [
        Box(0, 0, 100, 100),    # holds A whole: no cut
        Box(0, 0, 40, 100),     # holds the left half of A (source x 20-40 of 20-60): cut
        Box(0, 0, 58, 100),     # holds 95 % of A (a sliver off): no cut
        Box(0, 0, 22, 100),     # holds 5 % of A: grazes it, no cut
        Box(0, 0, 240, 200),    # A whole and half of B: cut
        Box(30, 150, 40, 50),   # through the speck only: no cut
        Box(300, 60, 80, 100),  # through the faint square only: no cut
    ]
    assert cutting_crops(*mask_blobs(_map()), boxes, SIZE) == (False, True, False, False, True, False, False)
    assert blob_cut(_map(), boxes, SIZE) == BlobCut(crops=7, cuts=2, blobs=2)
    assert BlobCut(7, 2, 2).share == pytest.approx(2 / 7) and BlobCut(0, 0, 3).share == 0.0


@pytest.mark.parametrize(("columns", "cut"), [(1, False), (2, True), (8, True), (9, False), (10, False)])
def test_the_band_is_strict_at_ten_and_ninety_percent(columns, cut):
    # Blob A is 20 columns wide: a crop holding 2, 4, 16, 18 or 20 of them holds 10 % ... 100 %.
    box = Box(0, 0, 2 * (10 + 2 * columns), 100)  # source x 0 .. the end of column 10 + 2*columns
    assert cutting_crops(*mask_blobs(_map()), [box], SIZE) == (cut,)


def test_pixel_centres_decide_membership_against_brute_force():
    # At source resolution (the map upsampled 2x), a box with even corners holds exactly the map
    # pixels whose centres lie inside it: count them directly and compare.
    rng = np.random.default_rng(7)
    for _ in range(40):
        m = np.zeros((30, 40), np.float32)
        for _ in range(3):
            y, x = rng.integers(0, 25), rng.integers(0, 35)
            m[y:y + rng.integers(3, 8), x:x + rng.integers(3, 8)] = 1
        labels, n = mask_blobs(m, min_area=0)
        big = np.kron(labels, np.ones((2, 2), np.int32))
        boxes = []
        for _ in range(5):
            x0, y0 = 2 * rng.integers(0, 35), 2 * rng.integers(0, 25)
            boxes.append(Box(x0, y0, 2 * rng.integers(1, 40 - x0 // 2 + 1), 2 * rng.integers(1, 30 - y0 // 2 + 1)))
        got = cutting_crops(labels, n, boxes, (80, 60))
        for b, g in zip(boxes, got):
            inside = big[int(b.y):int(b.y2), int(b.x):int(b.x2)]
            shares = [(inside == i).sum() / (big == i).sum() for i in range(1, n + 1)]
            assert g == any(0.1 < s < 0.9 for s in shares)


def test_map_is_cached_on_disk_by_content(small_synth, tmp_path, monkeypatch):
    img = next((small_synth / "dataset").glob("*.jpg"))
    first = blob_map(img, cache_dir=tmp_path / "c")
    files = list((tmp_path / "c" / BLOB_VERSION).glob("*.png"))
    assert len(files) == 1
    from PIL import Image

    with Image.open(img) as im:  # a 160 px image is below MAP_SIDE: the map has its size
        assert first.shape == (im.height, im.width)
    assert first.dtype == np.float32 and 0 <= first.min() and first.max() == pytest.approx(1.0)
    # A copy under another name is the same content: read from disk, the model is not run.
    blobs_mod._MEMORY.clear()
    monkeypatch.setattr(blobs_mod, "_compute_map", lambda *a: pytest.fail("map recomputed"))
    shutil.copy(img, tmp_path / "renamed.jpg")
    np.testing.assert_array_equal(blob_map(tmp_path / "renamed.jpg", cache_dir=tmp_path / "c"), first)


def test_evaluation_measures_blob_cuts_for_any_method(small_synth, tmp_path):
    ev = evaluate_carousel(small_synth, "slices", out_dir=tmp_path)
    assert all(r.blob_cut is not None and r.blob_cut.crops == len(r.prediction.boxes) for r in ev.results)
    for row in ev.rows:
        sel = [r for r in ev.results if row.subset == "all" or (row.subset == "failures") == r.hard_failure]
        assert row.blob_cut == pytest.approx(sum(r.blob_cut.cuts for r in sel) / sum(r.blob_cut.crops for r in sel))
    # each result is the definition applied to the cached map of its image
    items = {i.name: i for i in ev.dataset.items}
    for r in ev.results:
        item = items[r.prediction.name]
        expect = blob_cut(blob_map(item.image_path, cache_dir=tmp_path / SALIENCY_DIR), r.prediction.boxes,
                          (item.width, item.height))
        assert r.blob_cut == expect
    assert len(list((tmp_path / SALIENCY_DIR / BLOB_VERSION).glob("*.png"))) == 4
    per_image = list(csv.DictReader(write_report(ev, tmp_path, thumbnails=False)["per_image_csv"].read_text().splitlines()))
    assert [int(p["blob_cuts"]) for p in per_image] == [r.blob_cut.cuts for r in ev.results]


def test_workers_store_the_maps_and_give_the_same_counts(small_synth, tmp_path):
    one = evaluate_carousel(small_synth, "slices", out_dir=tmp_path / "a")
    two = evaluate_carousel(small_synth, "slices", out_dir=tmp_path / "b", workers=2)
    assert [r.blob_cut for r in one.results] == [r.blob_cut for r in two.results]
    assert len(list((tmp_path / "b" / SALIENCY_DIR / BLOB_VERSION).glob("*.png"))) == 4


def test_resumed_records_without_a_map_get_the_measure(small_synth, tmp_path):
    first = evaluate_carousel(small_synth, "slices", out_dir=tmp_path)
    shutil.rmtree(tmp_path / SALIENCY_DIR)  # as a report directory from before blob cuts existed
    blobs_mod._MEMORY.clear()
    again = evaluate_carousel(small_synth, "slices", out_dir=tmp_path)
    assert again.n_resumed == 4
    assert [r.blob_cut for r in again.results] == [r.blob_cut for r in first.results]
    assert again.rows[0].blob_cut is not None
    assert "blob" not in (tmp_path / RESULTS_FILE).read_text()  # lines hold predictions only


def test_blob_cut_can_be_turned_off_and_an_unreadable_image_has_none(small_synth, tmp_path):
    off = evaluate_carousel(small_synth, "slices", out_dir=tmp_path / "off", blobs=False)
    assert all(r.blob_cut is None for r in off.results) and off.rows[0].blob_cut is None
    assert not (tmp_path / "off" / SALIENCY_DIR).exists()
    root = tmp_path / "ds"
    shutil.copytree(small_synth, root)
    (root / "dataset" / "Hockey_players.jpg").write_bytes(b"not a jpeg")
    ev = evaluate_carousel(root, "slices", out_dir=tmp_path / "rep")
    assert [r.prediction.name for r in ev.results if r.blob_cut is None] == ["Hockey_players"]
    assert ev.rows[0].blob_cut is not None


def test_cli_prints_the_column_and_can_turn_it_off(small_synth, tmp_path, capsys):
    from multicrop.cli import main as cli_main

    assert cli_main.main(["eval", "carousel", str(small_synth), "-m", "slices", "-o", str(tmp_path / "on"),
                          "--no-progress", "--no-thumbnails"]) == 0
    assert "blob-cut" in capsys.readouterr().out
    assert cli_main.main(["eval", "carousel", str(small_synth), "-m", "slices", "-o", str(tmp_path / "off"),
                          "--no-progress", "--no-thumbnails", "--no-blob-cut", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["blob_cut"] for r in rows] == [None, None, None]
    assert not (tmp_path / "off" / SALIENCY_DIR).exists()
