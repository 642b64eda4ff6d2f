"""The command faces' own reads of user-named files go through the one door (issue 29 class 4).

Each case: the command ends with exit 1 and one line naming the file, never a traceback or a hang.
"""

from __future__ import annotations

import os

import pytest

from multicrop.cli.main import main

DEEP = "[" * 100_000 + "]" * 100_000


def _run(capsys, argv: list[str]) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("multicrop: error:")]
    assert len(lines) == 1, err
    return lines[0]


def test_a_config_nested_100k_deep_is_one_line(tmp_path, capsys):
    cfg = tmp_path / "deep.json"
    cfg.write_text(DEEP)
    line = _run(capsys, ["crop", str(tmp_path / "a.jpg"), "-c", str(cfg), "-o", str(tmp_path / "o")])
    assert "deep.json" in line and "nested" in line


def test_a_toml_config_nested_too_deep_is_one_line(tmp_path, capsys):
    cfg = tmp_path / "deep.toml"
    cfg.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    line = _run(capsys, ["crop", str(tmp_path / "a.jpg"), "-c", str(cfg), "-o", str(tmp_path / "o")])
    assert "deep.toml" in line


def test_a_coco_file_nested_100k_deep_is_one_line(tmp_path, capsys):
    coco = tmp_path / "deep_coco.json"
    coco.write_text('{"images": [], "annotations": [], "x": ' + DEEP + "}")
    line = _run(capsys, ["bench", "subjects", str(coco)])
    assert "deep_coco.json" in line and "nested" in line


def test_ratings_from_a_fifo_are_refused_at_once(tmp_path, capsys):
    fifo = tmp_path / "r.csv"
    os.mkfifo(fifo)
    line = _run(capsys, ["judge", "fit", str(fifo), "-i", str(tmp_path), "-o", str(tmp_path / "h.json")])
    assert "r.csv" in line and "FIFO" in line


def test_a_judge_image_list_that_is_a_fifo_is_refused_at_once(tmp_path, capsys):
    fifo = tmp_path / "lst.csv"
    os.mkfifo(fifo)
    line = _run(capsys, ["judge", str(fifo)])
    assert "lst.csv" in line and "FIFO" in line


@pytest.mark.parametrize("content", [None, "stray.txt"])
def test_batch_failed_on_a_folder_that_is_no_manifest_says_so(tmp_path, capsys, content):
    folder = tmp_path / "e"
    folder.mkdir()
    if content:
        (folder / content).write_text("x")
    line = _run(capsys, ["batch", "failed", str(folder)])
    assert "not a batch manifest" in line
