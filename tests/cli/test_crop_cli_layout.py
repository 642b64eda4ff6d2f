"""``multicrop crop --layout seamless``: adjacent slides that tile one band of the photo exactly."""

import json

import numpy as np
import pytest
from PIL import Image

from multicrop.cli.main import main
from multicrop.datasets.examples import example_image

FAST = ["--saliency", "spectral", "--no-faces", "--no-preview"]


@pytest.fixture(scope="module")
def panorama(tmp_path_factory):
    root = tmp_path_factory.mktemp("pano")
    px = example_image(width=6000, height=1500)
    Image.fromarray(px).save(root / "pano.png")
    Image.fromarray(px).save(root / "pano.jpg", quality=90)
    return root, px


def _record(capsys):
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def _check_tiling(rec, n=None):
    boxes = [c["box"] for c in rec["crops"]]
    assert len(boxes) >= 2 and (n is None or len(boxes) == n)
    assert len({(b["y"], b["h"], b["w"]) for b in boxes}) == 1  # one row of equal slides
    for a, b in zip(boxes, boxes[1:]):
        assert b["x"] == a["x"] + a["w"]  # adjacent: no gap, no overlap
    assert len({c["ratio"] for c in rec["crops"]}) == 1
    return boxes


@pytest.mark.parametrize("args, n", [(["-p", "instagram"], None), (["-r", "4:5", "--slides", "3"], 3)])
def test_seamless_slides_rejoin_into_the_band(tmp_path, panorama, args, n, capsys):
    root, px = panorama
    out = tmp_path / "o"
    assert main(["crop", str(root / "pano.png"), "--layout", "seamless", *args, "-f", "png", "-o", str(out),
                 "--json", *FAST]) == 0
    rec, err = _record(capsys)
    boxes = _check_tiling(rec, n)
    assert rec["notes"][0].startswith(f"seamless carousel: {len(boxes)} slides of ") and "seamless" in err
    slides = [np.asarray(Image.open(out / c["path"]).convert("RGB")) for c in rec["crops"]]
    for s, b in zip(slides, boxes):
        assert s.shape[:2] == (b["h"], b["w"])
    x0, y0, h = boxes[0]["x"], boxes[0]["y"], boxes[0]["h"]
    x1 = boxes[-1]["x"] + boxes[-1]["w"]
    assert np.array_equal(np.concatenate(slides, axis=1), px[y0:y0 + h, x0:x1])


@pytest.mark.parametrize("mode, why", [("auto", "the slides meet edge to edge and their corners are off the JPEG "
                                                "block grid"), ("never", "--lossless never")])
def test_seamless_jpeg_slides_are_reencoded_at_their_exact_boxes(tmp_path, panorama, mode, why, capsys):
    root, _ = panorama
    out = tmp_path / "o"
    assert main(["crop", str(root / "pano.jpg"), "--layout", "seamless", "-r", "1:1", "--slides", "4",
                 "--lossless", mode, "-o", str(out), "--json", *FAST]) == 0
    rec, _ = _record(capsys)
    boxes = _check_tiling(rec, 4)
    assert any(b["x"] % 16 for b in boxes)  # a corner off this 4:2:0 JPEG's block grid
    for c, b in zip(rec["crops"], boxes):
        with Image.open(out / c["path"]) as im:
            assert im.format == "JPEG" and im.size == (b["w"], b["h"])
        # a lossless cut would snap to the 16 px block grid and open gaps; the record says why it was not made
        assert c["lossless"] is False and c["lossless_fallback"] == why


@pytest.mark.parametrize("args, message", [
    (["--slides", "3"], "--slides 3 needs --layout seamless"),
    (["--layout", "grid"], "--layout must be one of crops, seamless, got 'grid'"),
    (["--layout", "seamless", "--slides", "0"], "--slides must be a positive integer or auto, got '0'"),
])
def test_layout_option_errors_are_one_line(tmp_path, panorama, args, message, capsys):
    root, _ = panorama
    assert main(["crop", str(root / "pano.png"), "-o", str(tmp_path / "o"), *args, *FAST]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not (tmp_path / "o").exists()


def test_slides_under_the_smallest_crop_side_are_refused_as_k_crops_are(tmp_path, panorama, capsys):
    root, _ = panorama  # 6000x1500: slides of 1:1 at least 64 px (CropConfig.min_crop_side, source px) side by side
    base = ["crop", str(root / "pano.png"), "-o", str(tmp_path / "o"), "--layout", "seamless", "-r", "1:1", *FAST]
    assert main([*base, "--slides", "100"]) == 1
    assert ("100 slides of 1:1 would be at most 60x60 px, under the smallest crop side of 64 px; at most 93 fit"
            in capsys.readouterr().err)
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").iterdir())
    assert main([*base, "--slides", "93", "--json"]) == 0
    assert [c["box"]["w"] for c in json.loads(capsys.readouterr().out)["crops"]] == [64] * 93
    # a band too low for any slide: the automatic count says so (it starts at two slides)
    low = tmp_path / "low.png"
    Image.fromarray(np.full((40, 2000, 3), 128, np.uint8)).save(low)
    assert main(["crop", str(low), "-o", str(tmp_path / "o2"), "--layout", "seamless", "-r", "1:1", *FAST]) == 1
    assert "2 slides of 1:1 would be at most 40x40 px, under the smallest crop side of 64 px; not even one fits" \
        in capsys.readouterr().err


def test_the_cli_writes_the_library_s_seamless_carousel(tmp_path, panorama, capsys):
    """`crop --layout seamless` is seamless_photo; seamless_photo is seamless_carousel over the photo's analysis."""
    from multicrop.crop.analysis import analyse
    from multicrop.crop.config import CropConfig
    from multicrop.crop.seamless import seamless_carousel
    from multicrop.crop.seamless_photo import seamless_photo
    from multicrop.io import load_image
    from multicrop.ratios import parse_ratio_spec

    root, _ = panorama
    cfg = CropConfig(saliency="spectral", faces=False, ratios=parse_ratio_spec("instagram"))
    res = seamless_photo(root / "pano.png", cfg)
    loaded = load_image(root / "pano.png", max_side=cfg.analysis_max_side)
    lay = seamless_carousel(analyse(loaded.analysis, cfg), size=loaded.size, ratios=cfg.ratios)
    assert [c.box for c in res.crops] == list(lay.boxes) and res.notes[1:] == lay.notes
    assert main(["crop", str(root / "pano.png"), "-o", str(tmp_path), "-p", "instagram", "--layout", "seamless",
                 "--json", *FAST]) == 0
    rec, _ = _record(capsys)
    assert [c["box"] for c in rec["crops"]] == [b.to_dict() for b in lay.boxes]
    assert {c["ratio"] for c in rec["crops"]} == {str(lay.ratio)} and rec["notes"] == list(res.notes)
