"""``multicrop crop --focus`` and ``--detectors``: parsed once, refused with one line, recorded."""

import json

import pytest
from PIL import Image

from multicrop.cli.main import main
from multicrop.datasets.examples import example_image

FAST = ["--saliency", "spectral", "--no-preview", "-s", "direct", "-k", "auto"]


@pytest.fixture(scope="module")
def photo(tmp_path_factory):
    path = tmp_path_factory.mktemp("focus") / "ex.jpg"
    Image.fromarray(example_image(width=900, height=300)).save(path)
    return path


def test_focus_is_held_by_the_first_crop_and_recorded(photo, tmp_path, capsys):
    assert main(["crop", str(photo), "-o", str(tmp_path), "--focus", "450,150", "--detectors", "none",
                 "--json", *FAST]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["focus"] == {"x": 450.0, "y": 150.0, "w": 0.0, "h": 0.0}
    box = rec["crops"][0]["box"]
    assert box["x"] <= 450 <= box["x"] + box["w"] and box["y"] <= 150 <= box["y"] + box["h"]
    assert "the focus given is held by the first crop" in rec["notes"]
    assert rec["versions"]["detectors"] == "off" and rec["config"]["detectors"] == []


@pytest.mark.parametrize("args,line", [
    (["--focus", "1,2,3"], "multicrop: error: --focus: focus must be X,Y or X,Y,W,H"),
    (["--detectors", "nanodt"], "multicrop: error: --detectors: unknown detector 'nanodt'"),
])
def test_bad_focus_or_detector_fails_before_the_batch(photo, tmp_path, capsys, args, line):
    assert main(["crop", str(photo), "-o", str(tmp_path / "o"), *args, *FAST]) == 1
    assert capsys.readouterr().err.startswith(line)
    assert not (tmp_path / "o").exists()


def test_focus_outside_the_photo_is_that_photos_error(photo, tmp_path, capsys):
    assert main(["crop", str(photo), "-o", str(tmp_path), "--focus", "5000,10", "--detectors", "none",
                 *FAST]) == 1
    assert "must lie inside the 900x300 photo" in capsys.readouterr().err
