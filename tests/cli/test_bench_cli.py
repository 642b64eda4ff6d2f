"""``multicrop bench synth`` on the Carousel labels shipped with multicrop (no ``--labels``)."""

from __future__ import annotations

import json

from multicrop.cli import main as cli_main
from multicrop.datasets.carousel_labels import label_names


def test_bench_synth_defaults_to_the_shipped_labels(tmp_path, carousel_labels, capsys):
    out = tmp_path / "shipped"
    rc = cli_main.main(["bench", "synth", "--out", str(out), "--max-side", "96", "--limit", "2",
                        "--no-progress", "--json"])
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["n_images"], summary["max_side"], summary["version"]) == (2, 96, "carousel-synth-2")
    assert sorted(p.stem for p in (out / "dataset").glob("*.jpg")) == sorted(label_names()[:2])
    # The same bytes as from a directory of the real label files.
    real = tmp_path / "real"
    rc = cli_main.main(["bench", "synth", "--out", str(real), "--labels", str(carousel_labels),
                        "--max-side", "96", "--limit", "2", "--no-progress"])
    assert rc == 0 and "2 images" in capsys.readouterr().out
    for p in sorted((out / "dataset").iterdir()):
        assert p.read_bytes() == (real / "dataset" / p.name).read_bytes()
    assert (out / "hard_failures.txt").read_bytes() == (real / "hard_failures.txt").read_bytes()


# ----------------------------------------------------------------------------- bench subjects


def _outlined(root):
    """One 240x160 photo, a person and a dog outlined (YOLO segmentation layout)."""
    import numpy as np
    from PIL import Image

    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    img = np.full((160, 240, 3), 30, np.uint8)
    img[40:140, 20:80] = (230, 200, 60)
    img[60:130, 150:220] = (190, 200, 110)
    Image.fromarray(img).save(root / "images" / "p.png")
    (root / "labels" / "p.txt").write_text(
        "1 0.083333 0.25 0.333333 0.25 0.333333 0.875 0.083333 0.875\n"
        "18 0.625 0.375 0.916667 0.375 0.916667 0.8125 0.625 0.8125\n")
    return root


def test_bench_subjects_table_json_and_files(tmp_path, capsys):
    src = _outlined(tmp_path / "set")
    rc = cli_main.main(["bench", "subjects", str(src), "-s", "direct", "-k", "auto", "-k", "1", "--no-progress"])
    assert rc == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{src}: 1 photos with >= 2 objects of >= 3 % of the frame"
    assert out[1].split()[:4] == ["method", "photos", "crops/photo", "person-cut"]
    assert [line.split()[0:2] for line in out[2:]] == [["direct", "k=auto"], ["direct", "k=1"]]
    rc = cli_main.main(["bench", "subjects", str(src), "-s", "partition", "-k", "2", "--preset", "square",
                        "--no-progress", "--json", "-o", str(tmp_path / "rep")])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    (method,) = data["methods"]
    assert method["name"] == "partition k=2" and method["ratios"] == ["1:1"]
    s = method["summary"]
    assert (s["photos"], s["crops"], s["covered"]["of"]) == (1, 2, 2)
    assert {p.name for p in (tmp_path / "rep").iterdir()} >= {"summary.json", "report.md", "photos.csv"}


def test_bench_subjects_errors_are_one_line(tmp_path, capsys):
    src = _outlined(tmp_path / "set")
    for args, message in [
        ([str(tmp_path / "nowhere")], "not a folder or a COCO JSON file"),
        ([str(src), "-k", "zero"], "-k must be a positive integer or auto, got 'zero'"),
        ([str(src), "-r", "1:1", "-p", "square"], "give --ratio or --preset, not both"),
        ([str(src), "-s", "partition", "-k", "auto"], "partition k=auto need an integer k"),
    ]:
        rc = cli_main.main(["bench", "subjects", *args, "--no-progress"])
        err = capsys.readouterr().err.strip()
        assert rc == 1 and err.startswith("multicrop: error: ") and message in err and "\n" not in err
