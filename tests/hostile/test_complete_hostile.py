"""Complete images only: a JPEG cut part-way (ending in EOI), holding only its first scans, or with junk scan data
is refused with one line naming the file, by every command that opens photos (they all go through load_image)."""

from __future__ import annotations

import io
import os

import numpy as np
import pytest
from PIL import Image

from multicrop.cli.main import main
from multicrop.errors import ImageTruncatedError
from multicrop.io import load_image
from multicrop.io.complete import jpeg_problem
from multicrop.io.lossless import turbojpeg

FAST = ["--saliency", "spectral", "--no-faces", "--no-preview", "-k", "2", "-s", "partition"]
needs_libjpeg = pytest.mark.skipif(turbojpeg() is None, reason="the EOI-cut check reads libjpeg's warnings "
                                                                "through TurboJPEG, which is not installed")


def _jpeg(**kw) -> bytes:
    rng = np.random.default_rng(3)
    a = (rng.random((120, 160, 3)) * 50 + np.linspace(0, 200, 160)[None, :, None]).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(a).save(buf, "JPEG", quality=90, **kw)
    return buf.getvalue()


def _scans(data: bytes) -> list[int]:
    return [i for i in range(len(data) - 1) if data[i:i + 2] == b"\xff\xda"]


def _first_scans(n: int) -> bytes:
    data = _jpeg(progressive=True)
    return data[:_scans(data)[n]] + b"\xff\xd9"


def _junk(progressive: bool) -> bytes:
    data = bytearray(_jpeg(progressive=progressive))
    start = _scans(bytes(data))[0] + 20
    third = (len(data) - start) // 3
    data[start + third:start + 2 * third] = np.random.default_rng(5).integers(0, 256, third, np.uint8).tobytes()
    return bytes(data)


def _cut(frac: float, progressive: bool = False) -> bytes:
    data = _jpeg(progressive=progressive)
    return data[:int(len(data) * frac)] + b"\xff\xd9"


@pytest.mark.parametrize("n", [1, 2, 3, 9])
def test_a_progressive_jpeg_with_only_its_first_scans_is_incomplete(n):
    why = jpeg_problem(_first_scans(n))
    assert why is not None and why.startswith(f"its progressive JPEG data ends after {n} scan")
    assert jpeg_problem(_jpeg(progressive=True)) is None and jpeg_problem(_jpeg()) is None


@pytest.mark.parametrize("progressive", [False, True])
def test_junk_scan_data_is_refused(progressive):
    assert "junk in the" in (jpeg_problem(_junk(progressive)) or "")


@needs_libjpeg
@pytest.mark.parametrize("frac", [0.3, 0.6, 0.9])
@pytest.mark.parametrize("progressive", [False, True])
def test_a_jpeg_cut_part_way_that_ends_in_eoi_is_refused(tmp_path, frac, progressive):
    p = tmp_path / "cut.jpg"
    p.write_bytes(_cut(frac, progressive))
    with Image.open(p) as im:
        im.load()  # Pillow alone takes it: the gap this check closes
    with pytest.raises(ImageTruncatedError, match=rf"^{p}: truncated or corrupt image: "):
        load_image(p)


def test_an_mpo_like_tail_after_eoi_is_not_junk(tmp_path):
    data = _jpeg() + _jpeg(progressive=True)  # a second picture after the first's EOI (as in an MPO)
    assert jpeg_problem(data) is None


@pytest.mark.parametrize("name, build", [("scans.jpg", lambda: _first_scans(2)),
                                         ("junk.jpg", lambda: _junk(False))])
def test_crop_names_the_incomplete_file_and_goes_on(tmp_path, hb, capsys, name, build):
    src = tmp_path / "in"
    bad = hb.write(src / name, build())
    good = hb.good_photo(src / "good.png")
    out = tmp_path / "out"
    code = main(["crop", str(bad), str(good), "-o", str(out), *FAST])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and err[0].startswith(f"multicrop: {bad}: truncated or corrupt image")
    assert sorted(os.listdir(out)) == ["good.json", "good_1.png", "good_2.png"]
