"""Atomic writes and saving crops with the source's quality and profile."""

import numpy as np
import pytest
from PIL import Image, ImageCms

from multicrop.errors import InvalidParameterError
from multicrop.io import atomic_path, atomic_write_text, load_image, save_image


def test_atomic_path_leaves_nothing_on_failure(tmp_path):
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "x.txt") as tmp:
        tmp.write_text("partial")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_replaces_and_has_normal_permissions(tmp_path):
    atomic_write_text(tmp_path / "a.txt", "one")
    atomic_write_text(tmp_path / "a.txt", "two")
    assert (tmp_path / "a.txt").read_text() == "two"
    assert (tmp_path / "a.txt").stat().st_mode & 0o044  # readable by group/others (umask permitting)
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_failed_save_leaves_no_file(tmp_path, monkeypatch):
    def broken(self, fp, *a, **k):
        with open(fp, "wb") as f:
            f.write(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(Image.Image, "save", broken)
    with pytest.raises(OSError, match="disk full"):
        save_image(Image.new("RGB", (10, 10)), tmp_path / "c.jpg")
    assert list(tmp_path.iterdir()) == []


def test_format_from_extension_and_unknown_extension(tmp_path):
    for suffix, fmt in [(".jpg", "JPEG"), (".png", "PNG"), (".webp", "WEBP"), (".tif", "TIFF")]:
        save_image(Image.new("RGB", (10, 10)), tmp_path / f"a{suffix}")
        with Image.open(tmp_path / f"a{suffix}") as im:
            assert im.format == fmt
    with pytest.raises(InvalidParameterError, match="'.gif'"):
        save_image(Image.new("RGB", (10, 10)), tmp_path / "a.gif")


def test_jpeg_crops_keep_quality_tables_icc_and_reset_orientation(tmp_path):
    rng = np.random.default_rng(0)
    arr = rng.integers(0, 255, (200, 300, 3), dtype=np.uint8)
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    exif = Image.Exif()
    exif[0x0112] = 6
    Image.fromarray(arr).save(tmp_path / "src.jpg", quality=60, icc_profile=icc, exif=exif.tobytes(),
                              subsampling=2)
    src = load_image(tmp_path / "src.jpg")
    crop = src.open_full().crop((0, 0, 100, 100))
    save_image(crop, tmp_path / "crop.jpg", icc_profile=src.icc_profile, exif=src.exif,
               qtables=src.jpeg_qtables, subsampling=src.jpeg_subsampling)
    with Image.open(tmp_path / "src.jpg") as a, Image.open(tmp_path / "crop.jpg") as b:
        assert a.quantization == b.quantization
        assert b.info["icc_profile"] == icc
        assert b.getexif()[0x0112] == 1


@pytest.mark.parametrize("suffix", [".png", ".tif"])
def test_sixteen_bit_grey_is_saved_sixteen_bit(tmp_path, suffix):
    g16 = np.array([[0, 1, 2], [65533, 65534, 65535]], np.uint16)
    save_image(Image.fromarray(g16), tmp_path / f"a{suffix}")
    with Image.open(tmp_path / f"a{suffix}") as im:
        assert im.mode == "I;16" and np.array_equal(np.asarray(im), g16)


def test_alpha_kept_in_png_composited_on_white_in_jpeg(tmp_path):
    rgba = Image.new("RGBA", (8, 8), (0, 0, 0, 0))
    save_image(rgba, tmp_path / "a.png")
    save_image(rgba, tmp_path / "a.jpg")
    with Image.open(tmp_path / "a.png") as im:
        assert im.mode == "RGBA" and im.getpixel((0, 0)) == (0, 0, 0, 0)
    with Image.open(tmp_path / "a.jpg") as im:
        assert im.mode == "RGB" and min(im.getpixel((0, 0))) >= 250


def test_grey_profile_is_not_put_on_rgb_webp(tmp_path):
    grey_icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("LAB")).tobytes()  # any non-RGB profile
    save_image(Image.new("L", (8, 8), 100), tmp_path / "a.webp", icc_profile=grey_icc)
    save_image(Image.new("L", (8, 8), 100), tmp_path / "a.png", icc_profile=grey_icc)
    with Image.open(tmp_path / "a.webp") as im:
        assert im.mode == "RGB" and "icc_profile" not in im.info
    with Image.open(tmp_path / "a.png") as im:
        assert im.mode == "L" and im.info["icc_profile"] == grey_icc
