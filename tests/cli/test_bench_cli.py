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
    assert (summary["n_images"], summary["max_side"], summary["version"]) == (2, 96, "carousel-synth-1")
    assert sorted(p.stem for p in (out / "dataset").glob("*.jpg")) == sorted(label_names()[:2])
    # The same bytes as from a directory of the real label files.
    real = tmp_path / "real"
    rc = cli_main.main(["bench", "synth", "--out", str(real), "--labels", str(carousel_labels),
                        "--max-side", "96", "--limit", "2", "--no-progress"])
    assert rc == 0 and "2 images" in capsys.readouterr().out
    for p in sorted((out / "dataset").iterdir()):
        assert p.read_bytes() == (real / "dataset" / p.name).read_bytes()
    assert (out / "hard_failures.txt").read_bytes() == (real / "hard_failures.txt").read_bytes()
