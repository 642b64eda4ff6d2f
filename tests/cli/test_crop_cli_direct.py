"""`multicrop crop` options of the direct strategy: --k auto, --max-k, --force-k, --one-ratio, and its notes."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from multicrop.cli import main as cli_main
from multicrop.datasets.photos import sample_photo


@pytest.fixture(scope="module")
def portrait(tmp_path_factory):
    path = tmp_path_factory.mktemp("direct") / "astronaut.jpg"
    Image.fromarray(sample_photo("astronaut")).save(path, quality=92)
    return path


def _records(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_a_k_larger_than_the_subjects_writes_only_distinct_crops_and_says_so(portrait, tmp_path, capsys):
    rc = cli_main.main(["crop", str(portrait), "-o", str(tmp_path), "-s", "direct", "-k", "5", "--no-preview",
                        "--json"])
    cap = capsys.readouterr()
    assert rc == 0
    (rec,) = _records(cap.out)
    assert 1 <= rec["k"] < 5
    assert f"wrote {rec['k']} crop" in cap.err and "asked for 5" in cap.err
    assert sorted(p.name for p in tmp_path.glob("astronaut_*.jpg")) == [f"astronaut_{i}.jpg" for i in
                                                                       range(1, rec["k"] + 1)]


def test_force_k_writes_k_crops(portrait, tmp_path, capsys):
    rc = cli_main.main(["crop", str(portrait), "-o", str(tmp_path), "-s", "direct", "-k", "3", "--force-k",
                        "--no-preview", "--json"])
    assert rc == 0
    (rec,) = _records(capsys.readouterr().out)
    assert rec["k"] == 3


def test_k_auto_respects_max_k(portrait, tmp_path, capsys):
    rc = cli_main.main(["crop", str(portrait), "-o", str(tmp_path), "-s", "direct", "-k", "auto", "--max-k", "1",
                        "--dry-run"])
    assert rc == 0
    (rec,) = _records(capsys.readouterr().out)
    assert rec["k"] == 1 and not list(tmp_path.iterdir())


def test_one_ratio_gives_every_crop_the_same_ratio(portrait, tmp_path, capsys):
    rc = cli_main.main(["crop", str(portrait), "-o", str(tmp_path), "-s", "direct", "-k", "3", "--force-k",
                        "-p", "instagram", "--one-ratio", "--dry-run"])
    assert rc == 0
    (rec,) = _records(capsys.readouterr().out)
    assert len({c["ratio"] for c in rec["crops"]}) == 1


@pytest.mark.parametrize("bad", ["0", "-2", "two", "1.5"])
def test_bad_k_is_one_line(bad, portrait, tmp_path, capsys):
    assert cli_main.main(["crop", str(portrait), "-o", str(tmp_path), "-k", bad]) == 1
    assert capsys.readouterr().err == f"multicrop: error: --k must be a positive integer or auto, got {bad!r}\n"


def test_k_auto_needs_the_direct_strategy(portrait, tmp_path, capsys):
    assert cli_main.main(["crop", str(portrait), "-o", str(tmp_path), "-k", "auto", "-s", "partition"]) == 1
    assert "k='auto' needs strategy 'direct'" in capsys.readouterr().err
