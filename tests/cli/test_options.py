"""The one grammar of shared options (cli/options.py), and `crop` and `batch crop` reading it alike."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from multicrop.cli import options
from multicrop.cli.main import main
from multicrop.errors import InvalidParameterError


def test_k_is_a_count_or_auto():
    assert options.k_option(None) is None
    assert (options.k_option(" AUTO "), options.k_option("4")) == ("auto", 4)
    with pytest.raises(InvalidParameterError, match="^-k must be a positive integer or auto, got 'two'$"):
        options.k_option("two", "-k")


def test_ratio_and_preset_share_one_parser_and_one_error():
    assert options.ratios_option(None, None) is None
    square = options.ratios_option(None, " Square ")
    assert [str(r) for r in square.ratios] == ["1:1"] and square.name == "square"
    assert options.ratios_option("instagram", None).one_ratio is True
    with pytest.raises(InvalidParameterError, match="^give --ratio or --preset, not both$"):
        options.ratios_option("1:1", "square")
    with pytest.raises(InvalidParameterError, match=r"^--preset: unknown preset 'wide'; presets: carousel \(2:3,3:2\)"):
        options.ratios_option(None, "wide")


def test_detectors_none_or_registered_names():
    assert options.detectors_option("none") == () and options.detectors_option(None) is None
    with pytest.raises(InvalidParameterError, match="^--detectors: "):
        options.detectors_option("people,nosuchdetector")


def test_a_json_and_a_toml_config_give_the_same_settings(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps({"k": "auto", "ratios": "1:1", "quality": 80, "lossless": "never"}))
    (tmp_path / "c.toml").write_text('k = "auto"\nratios = "1:1"\nquality = 80\nlossless = "never"\n')
    a, b = options.read_config_file(tmp_path / "c.json"), options.read_config_file(tmp_path / "c.toml")
    assert a == b
    assert (a.crop.k, [str(r) for r in a.crop.ratios], a.output.quality, a.write) == ("auto", ["1:1"], 80,
                                                                                       {"lossless": "never"})
    with pytest.raises(InvalidParameterError, match="lossless cannot be set for this command"):
        options.read_config_file(tmp_path / "c.toml", write=False)


def test_a_bad_config_names_the_file(tmp_path):
    (tmp_path / "c.toml").write_text("k = [")
    with pytest.raises(InvalidParameterError, match=r"c\.toml: not valid TOML"):
        options.read_config_file(tmp_path / "c.toml")
    (tmp_path / "c.json").write_text("[1, 2]")
    with pytest.raises(InvalidParameterError, match=r"c\.json: a config file holds an object \(table\), got list"):
        options.read_config_file(tmp_path / "c.json")


def test_the_progress_bar_counts_without_a_terminal(capsys):
    bar = options.ProgressBar("judging", unit="calls", fields={"spend": "${:.4f}"})
    with bar:
        bar.start(3, 0)
        bar.advance(2, 1, spend=0.25)
        bar.row({"status": "done"})
        bar.echo("multicrop: a line")
    assert not bar.shown  # pytest's stderr is no terminal: nothing drawn, rich not needed
    assert (bar.n, bar.failed, bar.values) == (3, 1, {"spend": 0.25})
    assert capsys.readouterr().err == "multicrop: a line\n"


@pytest.fixture
def folder(tmp_path):
    """A GIF and a JPEG of the example scene (small), side by side in one folder."""
    from multicrop.datasets.examples import example_image

    src = tmp_path / "src"
    src.mkdir()
    pixels = example_image(width=600, height=240)
    Image.fromarray(pixels).save(src / "scene.gif")
    Image.fromarray(pixels[:, ::-1]).save(src / "mirror.jpg", quality=90)
    return src


def _boxes(out, stem):
    rec = json.loads((out / f"{stem}.json").read_text())
    return rec["config"]["k"], [c["box"] for c in rec["crops"]]


def test_batch_crop_takes_k_auto_and_crops_gifs_as_crop_does(folder, tmp_path):
    common = ["-k", "auto", "--saliency", "spectral", "--no-preview"]
    assert main(["crop", str(folder), "-o", str(tmp_path / "c"), *common]) == 0
    assert main(["batch", "crop", str(folder), "-o", str(tmp_path / "b"), "-j", "1", "--no-progress", *common]) == 0
    for stem in ("scene", "mirror"):
        k, boxes = _boxes(tmp_path / "b", stem)
        assert k == "auto" and boxes
        assert (k, boxes) == _boxes(tmp_path / "c", stem)


def test_batch_crop_reads_the_same_config_grammar_as_crop(folder, tmp_path):
    (tmp_path / "square.toml").write_text('ratios = "square"\nk = 1\nsaliency = "spectral"\n')
    for cmd, out in ((["crop"], "c"), (["batch", "crop"], "b")):
        extra = ["-j", "1", "--no-progress"] if cmd[0] == "batch" else []
        assert main([*cmd, str(folder), "-o", str(tmp_path / out), "-c", str(tmp_path / "square.toml"),
                     "--no-preview", *extra]) == 0
    k, boxes = _boxes(tmp_path / "b", "scene")
    assert k == 1 and [b["w"] for b in boxes] == [b["h"] for b in boxes]
    assert (k, boxes) == _boxes(tmp_path / "c", "scene")


def test_batch_crop_takes_a_preset_and_refuses_what_crop_refuses(folder, tmp_path, capsys):
    assert main(["batch", "crop", str(folder), "-o", str(tmp_path / "b"), "--preset", "wide"]) == 1
    batch_err = capsys.readouterr().err
    assert main(["crop", str(folder), "-o", str(tmp_path / "c"), "--preset", "wide"]) == 1
    assert batch_err == capsys.readouterr().err
    assert batch_err.startswith("multicrop: error: --preset: unknown preset 'wide'; presets: carousel")
    (tmp_path / "w.json").write_text('{"keep_metadata": true}')
    assert main(["batch", "crop", str(folder), "-o", str(tmp_path / "b"), "-c", str(tmp_path / "w.json")]) == 1
    assert "keep_metadata cannot be set for this command" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()
