"""Lossless JPEG crops: decoded pixels equal the same region of the decoded original."""

import io
import json
import shutil

import numpy as np
import pytest
from PIL import Image

from multicrop.cli.main import main
from multicrop.crop import lossless
from multicrop.crop.lossless import insert_exif, lossless_crop, snap_box
from multicrop.datasets.examples import example_image
from multicrop.geometry import Box

pytestmark = pytest.mark.skipif(shutil.which("jpegtran") is None,
                                reason="jpegtran (libjpeg-turbo-progs) missing; .ci/run installs it")
FAST = ["--saliency", "spectral", "--no-faces", "--no-preview"]


def _jpeg(path, subsampling, *, progressive=False, grey=False):
    img = Image.fromarray(example_image(width=1003, height=389))  # sizes off the block grid
    if grey:
        img = img.convert("L")
    img.save(path, quality=88, subsampling=subsampling, progressive=progressive)
    return path


def _decode(path, mode):
    with Image.open(path) as im:
        if mode == "L" and im.mode != "L":
            im.draft("L", im.size)  # luma straight from the decoder, no colour conversion
        return np.asarray(im.convert(mode) if im.mode != mode else im).astype(int)


@pytest.mark.parametrize("subsampling,block", [(0, (8, 8)), (1, (16, 8)), (2, (16, 16))])
@pytest.mark.parametrize("box", [Box(21, 9, 333, 200), Box(0, 0, 1003, 389), Box(500, 100, 503, 289),
                                 Box(7, 380, 9, 9)])
def test_decoded_pixels_equal_the_original_region(tmp_path, subsampling, block, box):
    src = _jpeg(tmp_path / "s.jpg", subsampling)
    moved = snap_box(box, block, (1003, 389))
    assert (moved.w, moved.h) == (box.w, box.h) and moved.x % block[0] == 0 and moved.y % block[1] == 0
    assert abs(moved.x - box.x) < block[0] and abs(moved.y - box.y) < block[1]
    assert moved.x + moved.w <= 1003 and moved.y + moved.h <= 389
    lossless_crop(src, moved, tmp_path / "c.jpg")
    x, y, w, h = moved.x, moved.y, moved.w, moved.h
    luma_src, luma = _decode(src, "L"), _decode(tmp_path / "c.jpg", "L")
    assert luma.shape == (h, w)
    assert np.array_equal(luma, luma_src[y:y + h, x:x + w])  # the DCT blocks are the same blocks
    if subsampling == 0:  # no chroma upsampling across the cut: every channel equal
        assert np.array_equal(_decode(tmp_path / "c.jpg", "RGB"), _decode(src, "RGB")[y:y + h, x:x + w])


@pytest.mark.parametrize("kind", ["progressive", "grey"])
def test_progressive_and_grey(tmp_path, kind):
    src = _jpeg(tmp_path / "s.jpg", 2, progressive=kind == "progressive", grey=kind == "grey")
    box = Box(32, 16, 400, 300)
    lossless_crop(src, box, tmp_path / "c.jpg")
    assert np.array_equal(_decode(tmp_path / "c.jpg", "L"), _decode(src, "L")[16:316, 32:432])


def test_cli_crops_are_lossless_and_say_so(tmp_path):
    src = _jpeg(tmp_path / "s.jpg", 2)
    out = tmp_path / "o"
    assert main(["crop", str(src), "-o", str(out), "-k", "3", *FAST]) == 0
    rec = json.loads((out / "s.json").read_text())
    luma_src = _decode(src, "L")
    for c in rec["crops"]:
        b = c["box"]
        assert c["lossless"] is True and c["lossless_fallback"] is None
        assert b["x"] % 16 == 0 and b["y"] % 16 == 0
        got = _decode(out / c["path"], "L")
        assert np.array_equal(got, luma_src[b["y"]:b["y"] + b["h"], b["x"]:b["x"] + b["w"]])
    ratios = {c["ratio"] for c in rec["crops"]}
    for c in rec["crops"]:  # the ratio is the box's, exact to a pixel
        num, den = (float(v) for v in c["ratio"].split(":"))
        assert abs(c["box"]["w"] - c["box"]["h"] * num / den) <= 1, ratios


@pytest.mark.parametrize("case,reason", [
    ("never", "--lossless never"),
    ("png-out", "the output format is png, not JPEG"),
    ("rotated", "EXIF orientation 6 is not applied losslessly"),
    ("no-jpegtran", "jpegtran (libjpeg-turbo-progs) is not installed"),
    ("png-in", "the source is not a JPEG file"),
])
def test_fallback_re_encodes_with_the_reason_in_the_json(tmp_path, monkeypatch, case, reason):
    src = _jpeg(tmp_path / "s.jpg", 2)
    args = []
    if case == "never":
        args = ["--lossless", "never"]
    elif case == "png-out":
        args = ["-f", "png"]
    elif case == "rotated":
        ex = Image.Exif()
        ex[0x0112] = 6
        Image.open(src).save(tmp_path / "r.jpg", quality=88, exif=ex.tobytes())
        src = tmp_path / "r.jpg"
    elif case == "no-jpegtran":
        monkeypatch.setenv("MULTICROP_JPEGTRAN", "")
        lossless.jpegtran.cache_clear()
    elif case == "png-in":
        Image.open(src).save(tmp_path / "p.png")
        src = tmp_path / "p.png"
    try:
        assert main(["crop", str(src), "-o", str(tmp_path / "o"), *args, *FAST]) == 0
    finally:
        lossless.jpegtran.cache_clear()
    rec = json.loads((tmp_path / "o" / f"{src.stem}.json").read_text())
    assert [c["lossless"] for c in rec["crops"]] == [False, False]
    assert {c["lossless_fallback"] for c in rec["crops"]} == {reason}


def test_jpegtran_failure_falls_back_per_crop(tmp_path, monkeypatch):
    src = _jpeg(tmp_path / "s.jpg", 2)
    monkeypatch.setenv("MULTICROP_JPEGTRAN", "/bin/false")
    lossless.jpegtran.cache_clear()
    try:
        assert main(["crop", str(src), "-o", str(tmp_path / "o"), *FAST]) == 0
    finally:
        lossless.jpegtran.cache_clear()
    rec = json.loads((tmp_path / "o" / "s.json").read_text())
    assert all(c["lossless"] is False and c["lossless_fallback"].startswith("jpegtran failed")
               for c in rec["crops"])
    with Image.open(tmp_path / "o" / "s_1.jpg") as im:
        assert im.size == (rec["crops"][0]["box"]["w"], rec["crops"][0]["box"]["h"])


def test_insert_exif_after_app0():
    buf = io.BytesIO()
    Image.new("RGB", (8, 8)).save(buf, "JPEG")
    data = buf.getvalue()
    ex = Image.Exif()
    ex[0x010F] = "Cam"
    out = insert_exif(data, ex.tobytes())
    assert out[:2] == b"\xff\xd8" and out.count(b"Exif\0\0") == 1
    with Image.open(io.BytesIO(out)) as im:
        assert im.getexif()[0x010F] == "Cam"
    assert insert_exif(data, b"") == data


def test_large_photos_cut_one_crop_at_a_time(tmp_path, monkeypatch):
    """Above the parallel limit each jpegtran call starts only after the previous one ended."""
    import multicrop.crop.outputs as outputs

    src = _jpeg(tmp_path / "s.jpg", 2)
    running, peak = [], []
    real_start, real_finish = lossless.start_crop, lossless.finish_crop

    def start(*a, **k):
        running.append(1)
        peak.append(len(running))
        return real_start(*a, **k)

    def finish(*a, **k):
        try:
            return real_finish(*a, **k)
        finally:
            running.pop()

    monkeypatch.setattr(lossless, "start_crop", start)
    monkeypatch.setattr(lossless, "finish_crop", finish)
    for limit, expected in ((10**9, 3), (1000, 1)):
        monkeypatch.setattr(outputs, "_PARALLEL_LOSSLESS_PIXELS", limit)
        peak.clear()
        assert main(["crop", str(src), "-o", str(tmp_path / f"o{limit}"), "-k", "3", *FAST]) == 0
        assert max(peak) == expected and len(peak) == 3
