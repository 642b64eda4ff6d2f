"""Private by default: which EXIF tags a crop keeps (a dump before and after)."""

import json
import struct

import numpy as np
import pytest
from PIL import ExifTags, Image

from multicrop.cli.main import main
from multicrop.io.metadata import EXIF_UNREADABLE, KEPT_EXIF, KEPT_IFD0, filter_exif, read_exif

# partition: no notes on stderr beside the warnings tested (direct notes small crops)
FAST = ["--saliency", "spectral", "--no-faces", "--no-preview", "-s", "partition"]
GPS, EXIF_IFD = 0x8825, 0x8769


def _camera_exif(orientation=1):
    ex = Image.Exif()
    ex[0x010F], ex[0x0110], ex[0x0112], ex[0x0131] = "Canon", "EOS R5", orientation, "fw 1.8"
    ex[0x013B], ex[0x8298] = "Ann Photographer", "(c) Ann"
    ex[EXIF_IFD] = {0x829A: (1, 250), 0x829D: (28, 10), 0x8827: 400, 0x9003: "2026:05:01 10:00:00",
                    0x920A: (50, 1), 0xA434: "RF50mm F1.8", 0x927C: b"maker notes with serial 123",
                    0xA431: "SERIAL-0042", 0xA435: "LENS-77", 0xA430: "Ann", 0xA420: "uid-1",
                    0x9286: b"ASCII\0\0\0at home"}
    ex[GPS] = {1: "N", 2: (52.0, 22.0, 1.0), 3: "E", 4: (4.0, 53.0, 2.0)}
    return ex


def corrupt_exif(entries=6):
    """An EXIF block whose tags point past its end (Pillow warns once per tag)."""
    ifd = struct.pack(">H", entries)
    for i in range(entries):
        ifd += struct.pack(">HHII", 0x010F + i, 2, 5000, 200)
    return b"Exif\0\0MM\0*" + struct.pack(">I", 8) + ifd + struct.pack(">I", 0)


def dump(path):
    """Every tag name in a file's EXIF, IFD0 and Exif/GPS sub-IFDs (an exiftool-style dump)."""
    with Image.open(path) as im:
        ex = im.getexif()
        names = {f"IFD0:{ExifTags.TAGS.get(t, t)}" for t in ex if t not in (EXIF_IFD, GPS)}
        names |= {f"Exif:{ExifTags.TAGS.get(t, t)}" for t in ex.get_ifd(EXIF_IFD)}
        names |= {f"GPS:{ExifTags.GPSTAGS.get(t, t)}" for t in ex.get_ifd(GPS)}
        return names, ex, im.info.get("icc_profile")


@pytest.fixture
def camera_photo(tmp_path):
    from multicrop.datasets.examples import example_image

    path = tmp_path / "cam.jpg"
    icc = b"\0" * 128 + b"fake-but-kept"  # Pillow stores any bytes as an ICC profile
    Image.fromarray(example_image(width=900, height=350)).save(path, quality=92, exif=_camera_exif().tobytes(),
                                                               icc_profile=icc)
    return path


EXPECTED_AFTER = {
    "IFD0:Make", "IFD0:Model", "IFD0:Orientation", "IFD0:Software", "IFD0:Artist", "IFD0:Copyright",
    "Exif:ExposureTime", "Exif:FNumber", "Exif:ISOSpeedRatings", "Exif:DateTimeOriginal",
    "Exif:FocalLength", "Exif:LensModel",
}


@pytest.mark.parametrize("lossless", ["auto", "never"])
@pytest.mark.parametrize("fmt", ["jpg", "png", "webp"])
def test_crop_dump_before_and_after(tmp_path, camera_photo, lossless, fmt):
    before, _, icc_before = dump(camera_photo)
    assert {"GPS:GPSLatitude", "Exif:BodySerialNumber", "Exif:MakerNote", "Exif:LensSerialNumber"} <= before
    out = tmp_path / "o"
    assert main(["crop", str(camera_photo), "-o", str(out), "-f", fmt, "--lossless", lossless, "--width", "100",
                 *FAST]) == 0
    rec = json.loads((out / "cam.json").read_text())
    files = [c["path"] for c in rec["crops"]] + [c["resized"]["100"] for c in rec["crops"]]
    for name in files:
        after, ex, icc = dump(out / name)
        assert after == EXPECTED_AFTER, name
        assert ex[0x0112] == 1 and ex.get_ifd(EXIF_IFD)[0x8827] == 400
        assert icc == icc_before
    assert rec["crops"][0]["lossless"] is (lossless == "auto" and fmt == "jpg")


def test_keep_metadata_keeps_everything(tmp_path, camera_photo):
    out = tmp_path / "o"
    before, _, _ = dump(camera_photo)
    for lossless in ("auto", "never"):
        assert main(["crop", str(camera_photo), "-o", str(out), "--keep-metadata", "--lossless", lossless,
                     *FAST]) == 0
        after, ex, _ = dump(out / "cam_1.jpg")
        assert after == before and ex.get_ifd(GPS)[1] == "N"


def test_filter_exif_keeps_only_the_listed_tags():
    out, bad = read_exif(filter_exif(_camera_exif(orientation=6).tobytes()))
    assert not bad and set(out) <= set(KEPT_IFD0) | {EXIF_IFD} and out[0x0112] == 1
    assert set(out.get_ifd(EXIF_IFD)) <= set(KEPT_EXIF) and GPS not in out


@pytest.mark.parametrize("raw", [b"", None, b"Exif\0\0garbage", b"Exif\0\0MM\0*\0\0\0\x08\xff\xff"])
def test_unreadable_or_empty_exif_gives_nothing(raw):
    assert filter_exif(raw) == b""


def test_corrupt_exif_is_one_line(tmp_path, capsys):
    from multicrop.datasets.examples import example_image

    path = tmp_path / "bad.jpg"
    corrupt = corrupt_exif()
    Image.fromarray(example_image(width=900, height=350)).save(path, quality=90, exif=corrupt)
    out = tmp_path / "o"
    assert main(["crop", str(path), "-o", str(out), *FAST]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"multicrop: {path}: warning: {EXIF_UNREADABLE}"]
    assert json.loads((out / "bad.json").read_text())["warnings"] == [EXIF_UNREADABLE]
    with Image.open(out / "bad_1.jpg") as im:
        assert dict(im.getexif()) == {}
    assert np.asarray(Image.open(out / "bad_1.jpg")).size > 0
