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


@pytest.mark.parametrize("label", [None, "garbage", '{"shapes": [{"label": "a", "points": [[NaN, 1], [5, 5]], '
                                                    '"shape_type": "rectangle"}], "imageHeight": 100, '
                                                    '"imageWidth": 100}'])
def test_bench_synth_on_a_label_folder_with_nothing_usable_says_so(tmp_path, capsys, label):
    labels = tmp_path / "labels"
    (labels / "dataset").mkdir(parents=True)
    if label is not None:
        (labels / "dataset" / "x.json").write_text(label)
        (labels / "dataset" / "x_metadata.json").write_text('{"subcrops": 1}')
    out = tmp_path / "out"
    line = _run(capsys, ["bench", "synth", "-o", str(out), "-l", str(labels)])
    assert "no usable Carousel label file" in line
    assert not (out / "synth_info.json").exists()   # no empty benchmark written


def test_sigterm_ends_a_command_as_ctrl_c_does():
    # the handler main() installs: SIGTERM raises KeyboardInterrupt in the main thread, so pools are shut
    # down in their finally blocks (a default SIGTERM kills the process and leaks the pools' semaphores)
    import signal

    from multicrop.cli.main import _terminate_as_interrupt

    before = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        _terminate_as_interrupt()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs between two bytecodes of this thread
                pass
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_file_name_with_terminal_controls_is_printed_escaped(tmp_path, capsys):
    from PIL import Image

    from multicrop.datasets.examples import example_image

    name = tmp_path / "a\x1b[2Jb\u202egpj.jpg"
    Image.fromarray(example_image(width=640, height=300)).save(name, quality=90)
    assert main(["crop", str(name), "-o", str(tmp_path / "o"), "--saliency", "spectral", "--no-faces",
                 "--no-preview", "--detectors", "none"]) == 0
    out = capsys.readouterr()
    for text in (out.out, out.err):
        assert "\x1b" not in text and "\u202e" not in text
    assert "a\\x1b[2Jb\\u202egpj" in out.out
