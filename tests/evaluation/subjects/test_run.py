"""Every method over an outlined folder: what is cropped, counted and left out."""

from __future__ import annotations

import pytest
from PIL import Image

from multicrop.datasets.outlines import load_outlines
from multicrop.errors import InvalidParameterError
from multicrop.evaluation.subjects import SubjectsMethod, methods_for, measure_photo, run_subjects
from multicrop.ratios import Ratio

from .conftest import write_outlined


def test_methods_for_pairs_each_strategy_with_each_k_it_accepts():
    ms = methods_for(strategies=("direct", "partition"), ks=("auto", 3), peers=("smartcrop",), ratios="square")
    assert [m.name for m in ms] == ["direct k=auto", "direct k=3", "partition k=3", "smartcrop"]
    assert all(m.ratios == (Ratio(1, 1),) for m in ms)
    assert ms[0].config().k == "auto" and ms[2].config().strategy == "partition"
    # a one-ratio preset keeps its rule when named
    assert methods_for(ratios="instagram")[0].config().one_ratio is True
    with pytest.raises(InvalidParameterError, match="partition k=auto need an integer k"):
        methods_for(strategies=("partition",), ks=("auto",))
    with pytest.raises(InvalidParameterError, match="strategy must be one of"):
        methods_for(strategies=("diagonal",), ks=(2,))
    with pytest.raises(InvalidParameterError, match="peer must be one of smartcrop, vips"):
        SubjectsMethod(peer="vpn")
    with pytest.raises(InvalidParameterError, match="exactly one of strategy, peer"):
        SubjectsMethod(strategy="direct", k=2, peer="vips")


def test_run_measures_each_method_on_the_photos_with_two_large_objects(outlined):
    ds = load_outlines(outlined)
    methods = methods_for(strategies=("direct", "partition"), ks=("auto", 2))
    seen = []
    run = run_subjects(ds, methods, progress=seen.append)
    assert seen == ["pair", "single", "two"]  # every photo looked at, in id order
    assert run.qualifying == ("pair", "two") and sorted(run.photos) == ["pair", "two"]
    assert [(r.photo, r.method) for r in run.results] == [
        (p, m) for p in ("pair", "two") for m in ("direct k=auto", "direct k=2", "partition k=2")]
    by_id = {p.id: p for p in ds.photos}
    for r in run.results:
        assert r.failure is None and r.measures is not None and r.boxes
        photo = by_id[r.photo]
        # the counts are those of the boxes against the outlines, nothing else
        assert r.measures == measure_photo(photo.masks(), photo.categories, r.boxes)
        w, h = photo.size
        assert all(0 <= b.x and b.x + b.w <= w + 0.5 and 0 <= b.y and b.y + b.h <= h + 0.5 for b in r.boxes)
    assert len(run.results[2].boxes) == 2  # partition at k=2 writes two crops
    s = run.summary("partition k=2")
    assert (s.photos, s.crops, s.failed) == (2, 4, 0)
    assert s.covered.of == 4  # two prominent counted subjects per photo


def test_all_photos_and_limit(outlined):
    ds = load_outlines(outlined)
    ms = methods_for(strategies=("direct",), ks=(1,))
    run = run_subjects(ds, ms, all_photos=True)
    assert sorted(run.photos) == ["pair", "single", "two"] and run.qualifying == ("pair", "two")
    assert run.summary("direct k=1").photos == 3
    run = run_subjects(ds, ms, limit=1)
    assert list(run.photos) == ["pair"] and run.summary("direct k=1").photos == 1
    with pytest.raises(InvalidParameterError, match="limit must be a positive integer"):
        run_subjects(ds, ms, limit=0)


def test_peer_is_one_crop_per_photo_of_the_best_fitting_ratio(outlined):
    pytest.importorskip("pyvips")
    run = run_subjects(load_outlines(outlined), methods_for(strategies=(), ks=(), peers=("vips",)))
    boxes = {r.photo: r.boxes for r in run.results}
    assert {p: [(b.w, b.h) for b in bs] for p, bs in boxes.items()} == {"two": [(240, 160)], "pair": [(200, 133)]}


def test_a_photo_shown_rotated_is_a_failure_not_a_wrong_count(tmp_path):
    root = write_outlined(tmp_path / "set", {"r": (160, 120, [(1, (10, 10, 70, 110)), (18, (90, 20, 150, 100))])})
    img = Image.open(root / "images" / "r.png")
    exif = Image.Exif()
    exif[0x0112] = 6  # shown rotated by 90 degrees: 120x160
    img.save(root / "images" / "r.jpg", exif=exif)
    (root / "images" / "r.png").unlink()
    run = run_subjects(load_outlines(root), methods_for(strategies=("direct",), ks=(1,)))
    (r,) = run.results
    assert r.measures is None and "EXIF orientation" in r.failure
    s = run.summary("direct k=1")
    assert (s.photos, s.failed) == (0, 1)
