"""The table, JSON, CSV and worst-photo grid of a subjects run built by hand."""

from __future__ import annotations

import csv
import json

from PIL import Image

from multicrop.datasets.outlines import load_outlines
from multicrop.evaluation.subjects import (
    PhotoResult,
    SubjectRules,
    SubjectsRun,
    measure_photo,
    methods_for,
    remeasure,
)
from multicrop.evaluation.subjects.preview import TILE, worst_results
from multicrop.evaluation.subjects.report import summary_dict, summary_table, write_report
from multicrop.geometry import Box


def _run(outlined):
    """Two methods with chosen boxes: 'direct k=2' cuts and leaves an empty crop, 'partition k=2' is clean."""
    photos = {p.id: p for p in load_outlines(outlined).photos if p.id in ("two", "pair")}
    boxes = {
        ("two", "direct k=2"): (Box(0, 0, 50, 160), Box(100, 0, 40, 30)),     # halves the person; holds nothing
        ("two", "partition k=2"): (Box(0, 20, 100, 140), Box(140, 40, 100, 110)),
        ("pair", "direct k=2"): (Box(0, 0, 100, 100), Box(110, 90, 80, 110)),
        ("pair", "partition k=2"): (Box(0, 0, 100, 100), Box(110, 90, 80, 110)),
    }
    results = []
    for pid in ("pair", "two"):
        p = photos[pid]
        for m in ("direct k=2", "partition k=2"):
            b = boxes[(pid, m)]
            results.append(PhotoResult(pid, m, b, measure_photo(p.masks(), p.categories, b), None, 0.5))
    results.append(PhotoResult("pair", "smartcrop", (), None, "smartcrop failed here", 0.1))
    methods = methods_for(strategies=("direct", "partition"), ks=(2,), peers=("smartcrop",))
    return SubjectsRun(str(outlined), "yolo", methods, SubjectRules(), tuple(results), ("pair", "two"), False, photos)


def test_table_prints_counts_next_to_shares(outlined):
    run = _run(outlined)
    s = run.summary("direct k=2")
    assert (s.person_cut.n, s.person_cut.of, s.empty.n, s.covered.n, s.covered.of) == (1, 4, 1, 2, 4)
    assert (s.featured.n, s.featured.of) == (2, 4)  # the dog of 'two' has no crop
    text = summary_table(run)
    assert "2 photos with >= 2 objects of >= 3 % of the frame" in text
    direct = next(line for line in text.splitlines() if line.startswith("direct k=2"))
    assert "25.0 % (1 / 4)" in direct and "50.0 % (2 / 4)" in direct and "2.00" in direct
    peer = next(line for line in text.splitlines() if line.startswith("smartcrop"))
    assert "0 (+1 failed)" in peer and "- (0 / 0)" in peer
    md = summary_table(run, markdown=True).splitlines()
    assert md[0].startswith("| method | photos | crops/photo | person-cut") and md[1].startswith("|---|")
    d = summary_dict(run)
    assert d["photos_counted"] == 2 and d["rules"]["whole"] == 0.9
    assert d["methods"][0]["summary"]["person_cut"] == {"n": 1, "of": 4, "share": 0.25}
    assert d["methods"][0]["config"]["strategy"] == "direct" and d["methods"][2]["peer"] == "smartcrop"


def test_report_files(outlined, tmp_path):
    run = _run(outlined)
    paths = write_report(run, tmp_path / "out", worst=4)
    assert sorted(paths) == ["csv", "json", "markdown", "worst:direct k=2"]  # partition has no bad crop
    with paths["csv"].open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 5
    two = next(r for r in rows if r["photo"] == "two" and r["method"] == "direct k=2")
    assert (two["crops"], two["person_cut"], two["empty"], two["prominent"], two["covered"]) == ("2", "1", "1", "2", "0")
    assert json.loads(two["boxes"])[1] == {"x": 100, "y": 0, "w": 40, "h": 30}
    failed = next(r for r in rows if r["method"] == "smartcrop")
    assert failed["failure"] == "smartcrop failed here" and failed["crops"] == ""
    assert json.loads(paths["json"].read_text()) == json.loads(json.dumps(summary_dict(run)))
    md = paths["markdown"].read_text()
    assert "| direct k=2 | 2 | 2.00 | 25.0 % (1 / 4)" in md and "worst_direct-k-2.png" in md
    # the worst photo of 'direct k=2' is 'two' (2 bad crops); 'pair' has none and is left out
    assert [r.photo for r in worst_results(run, "direct k=2")] == ["two"]
    with Image.open(paths["worst:direct k=2"]) as grid:
        assert grid.size[0] == TILE and grid.size[1] > TILE
        px = grid.convert("RGB").load()
        # the empty crop (100..140 x 0..30 of 240x160, drawn at 320/240) is outlined in red
        s = TILE / 240
        top = (TILE - round(160 * s)) // 2
        assert px[int(120 * s), top + 1] == (230, 30, 30)
    assert write_report(run, tmp_path / "none", worst=0).keys() == {"csv", "json", "markdown"}


def test_remeasure_counts_the_same_crops_under_other_rules(outlined):
    run = _run(outlined)
    narrow = remeasure(run, SubjectRules(slice_max=0.4))  # holding half a person is no longer a cut
    assert run.summary("direct k=2").person_cut.n == 1 and narrow.summary("direct k=2").person_cut.n == 0
    assert [r.boxes for r in narrow.results] == [r.boxes for r in run.results]
    assert narrow.results[-1].failure == "smartcrop failed here"
    # the photo filter is applied again, among the photos cropped
    assert remeasure(run, SubjectRules(photo_min_objects=3)).qualifying == ()
    assert remeasure(run, SubjectRules()).summary("direct k=2") == run.summary("direct k=2")
