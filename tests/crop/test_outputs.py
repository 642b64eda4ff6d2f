"""Writing crops, record and preview: full resolution, all or nothing."""

import dataclasses
import json

import numpy as np
import pytest
from PIL import Image

from multicrop import CropConfig, OutputConfig, crop_photo
from multicrop.errors import InvalidParameterError
from multicrop.datasets.examples import example_image
from multicrop.crop.outputs import WriteOptions, render_preview, write_outputs
from multicrop.crop.preview import DIM


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    path = tmp_path_factory.mktemp("src") / "ex.jpg"
    Image.fromarray(example_image(width=1000, height=400)).save(path, quality=85)
    # partition: always three crops (direct writes fewer when it finds fewer distinct subjects)
    return crop_photo(path, CropConfig(k=3, strategy="partition", saliency="spectral", analysis_max_side=256))


def test_crops_are_cut_at_full_resolution(tmp_path, result):
    rec = write_outputs(result, tmp_path, config=OutputConfig(widths=(120,)))
    full = np.asarray(result.image.open_full()).astype(int)
    for i, c in enumerate(result.crops, start=1):
        with Image.open(tmp_path / f"ex_{i}.jpg") as im:
            assert im.size == (c.box.w, c.box.h) and im.format == "JPEG"
            box = rec["crops"][i - 1]["box"]  # a lossless crop's box moves to the block grid
            assert rec["crops"][i - 1]["lossless"] is True and (box["w"], box["h"]) == (c.box.w, c.box.h)
            x, y = box["x"], box["y"]
            assert abs(x - c.box.x) <= 8 and abs(y - c.box.y) <= 8 and x % 16 == 0 and y % 16 == 0
            ref = full[y:y + int(c.box.h), x:x + int(c.box.w)]
            assert np.abs(np.asarray(im).astype(int) - ref).mean() < 6
        with Image.open(tmp_path / f"ex_{i}_w120.jpg") as im:
            assert im.width == 120
    assert json.loads((tmp_path / "ex.json").read_text()) == json.loads(json.dumps(rec))
    assert rec["crops"][0]["path"] == "ex_1.jpg" and rec["preview"] == "ex_preview.jpg"
    with Image.open(tmp_path / "ex_preview.jpg") as im:
        assert im.size == result.analysis_size and im.format == "JPEG"


def test_format_override(tmp_path, result):
    write_outputs(result, tmp_path, config=OutputConfig(format="png", preview=False, record=False))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ex_1.png", "ex_2.png", "ex_3.png"]
    with pytest.raises(InvalidParameterError, match="format"):
        write_outputs(result, tmp_path, config=OutputConfig(format="gif"))


def test_quality_changes_the_files_not_the_record(tmp_path, result):
    low = write_outputs(result, tmp_path / "low", config=OutputConfig(format="webp", quality=20, preview=False))
    high = write_outputs(result, tmp_path / "high", config=OutputConfig(format="webp", quality=95, preview=False))
    assert (tmp_path / "low" / "ex_1.webp").stat().st_size < (tmp_path / "high" / "ex_1.webp").stat().st_size
    for rec in (low, high):
        rec.pop("timings")
    # the record's hashes of the files it wrote follow the files; nothing else changes
    assert low.pop("written") != high.pop("written")
    assert low == high and "quality" not in low["config"]


def test_failure_mid_write_leaves_no_file(tmp_path, result, monkeypatch):
    import multicrop.crop.outputs as outputs

    calls = []
    real = outputs.save_image

    def flaky(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise OSError("disk full")
        return real(*a, **k)

    monkeypatch.setattr(outputs, "save_image", flaky)
    with pytest.raises(OSError, match="disk full"):
        write_outputs(result, tmp_path, options=WriteOptions(lossless="never"))
    assert list(tmp_path.iterdir()) == []


def test_failure_mid_lossless_write_leaves_no_file(tmp_path, result, monkeypatch):
    import pathlib

    calls = []
    real = pathlib.Path.write_bytes

    def flaky(self, data):
        calls.append(self)
        if len(calls) == 3:
            raise OSError("disk full")
        return real(self, data)

    monkeypatch.setattr(pathlib.Path, "write_bytes", flaky)
    with pytest.raises(OSError, match="disk full"):
        write_outputs(result, tmp_path, config=OutputConfig(preview=False))
    assert len(calls) == 3 and list(tmp_path.iterdir()) == []


def test_lossless_width_copies_come_from_the_crops_not_a_full_decode(tmp_path, result, monkeypatch):
    def no_full(*a, **k):
        raise AssertionError("the whole photo was decoded")

    monkeypatch.setattr(type(result.image), "open_full", no_full)
    rec = write_outputs(result, tmp_path, config=OutputConfig(widths=(120,), preview=False))
    assert all(c["lossless"] for c in rec["crops"])
    for i, c in enumerate(rec["crops"], start=1):
        with Image.open(tmp_path / f"ex_{i}.jpg") as im, Image.open(tmp_path / f"ex_{i}_w120.jpg") as small:
            assert small.width == 120
            ref = np.asarray(im.resize(small.size, Image.Resampling.LANCZOS)).astype(int)
            assert np.abs(np.asarray(small).astype(int) - ref).mean() < 6  # one JPEG re-encode apart


def test_preview_keeps_the_photo_s_colours_where_salient_dims_the_rest_and_draws_the_boxes(result):
    bare = dataclasses.replace(result, crops=(), partition=None)
    im = np.asarray(render_preview(bare)).astype(float)  # the analysis copy's size: no resize, nothing drawn
    photo = result.image.analysis.astype(float)
    s = np.clip(result.saliency, 0, 1)[..., None]
    assert im.shape == photo.shape and (s >= 0.99).sum() > 50 and (s <= 0.01).sum() > 50
    assert np.abs(im - np.floor(photo * (DIM + (1 - DIM) * s) + 0.5)).max() <= 1
    salient, plain = s[..., 0] >= 0.99, s[..., 0] <= 0.01
    assert np.abs(im[salient] - photo[salient]).max() <= 1  # as shot
    assert np.abs(im[plain] - photo[plain] * DIM).max() <= 1 and photo[plain].max() > 20  # dimmed, no colour wash
    drawn = np.asarray(render_preview(result)).astype(int)
    b = result.crops[0].box.scale(drawn.shape[1] / result.size[0], drawn.shape[0] / result.size[1])
    edge = drawn[int(b.y) + (int(b.h) // 2), int(b.x):int(b.x) + 3]  # crop 1's left edge, half way down
    assert (edge == (46, 204, 113)).all(axis=1).any()


@pytest.mark.parametrize("ratio, expected", [("1.91:1", (1080, 566)), ("4:5", (1080, 1350)), ("1:1", (1080, 1080))])
def test_platform_width_copies_have_the_platform_s_exact_size(tmp_path, ratio, expected):
    # 1080 px of 1.91:1 is 1080 x 565.4: Instagram's own size is 1080 x 566, and a copy of any other
    # height would be rescaled by the platform again.
    img = np.random.default_rng(0).integers(0, 255, (1400, 2800, 3), dtype=np.uint8)
    src = tmp_path / "wide.png"
    Image.fromarray(img).save(src)
    res = crop_photo(src, CropConfig(k=1, ratios=ratio, saliency="spectral", detectors=()))
    rec = write_outputs(res, tmp_path / "out", config=OutputConfig(widths=(1080,), preview=False))
    name = rec["crops"][0]["resized"]["1080"]
    with Image.open(tmp_path / "out" / name) as im:
        assert im.size == expected


def _boxes_at(result, xs):
    """``result`` with its crops moved to corners (x, 0)."""
    moved = [dataclasses.replace(c, box=dataclasses.replace(c.box, x=float(x), y=0.0))
             for c, x in zip(result.crops, xs)]
    return dataclasses.replace(result, crops=tuple(moved))


@pytest.mark.parametrize("xs, lossless", [((0, 96, 512), True), ((0, 100, 512), False)])
def test_exact_crops_are_cut_losslessly_only_when_no_corner_would_move(tmp_path, result, xs, lossless):
    # a seamless panorama's slides (the CLI's --layout seamless, the web zip) meet edge to edge: a lossless cut
    # moves a corner onto the 16 px block grid of this 4:2:0 JPEG, so one corner off the grid re-encodes them all
    moved = _boxes_at(result, xs)
    rec = write_outputs(moved, tmp_path, config=OutputConfig(preview=False), options=WriteOptions(exact=True))
    for c, crop in zip(rec["crops"], moved.crops):
        assert (c["box"]["x"], c["box"]["y"]) == (crop.box.x, crop.box.y) and c["lossless"] is lossless
        assert c.get("lossless_fallback") == (None if lossless else
                                              "the slides meet edge to edge and their corners are off the JPEG "
                                              "block grid")
    plain = write_outputs(moved, tmp_path / "plain", config=OutputConfig(preview=False))
    assert all(c["lossless"] for c in plain["crops"])  # without exact the off-grid corner is moved instead
    assert [c["box"]["x"] for c in plain["crops"]] == [0, 96, 512]
