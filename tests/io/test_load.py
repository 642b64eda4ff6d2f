"""Loading: formats, colour modes, EXIF orientation, reduced decode, bad files, bomb guard."""

import io

import numpy as np
import pytest
from PIL import Image, ImageCms

from multicrop.errors import ImageLoadError, ImageTooLargeError, InvalidParameterError
from multicrop.io import SUPPORTED_SUFFIXES, load_image


def gradient(w=400, h=300):
    x = np.linspace(0, 255, w, dtype=np.float32)[None, :]
    y = np.linspace(0, 255, h, dtype=np.float32)[:, None]
    return np.stack([x + 0 * y, y + 0 * x, np.full((h, w), 90, np.float32)], -1).astype(np.uint8)


@pytest.mark.parametrize("suffix", [".jpg", ".png", ".webp", ".tif", ".bmp"])
def test_formats_load_with_size_and_colours(tmp_path, suffix):
    path = tmp_path / f"a{suffix}"
    Image.fromarray(gradient()).save(path)
    img = load_image(path, max_side=200)
    assert img.size == (400, 300) and img.analysis.shape == (150, 200, 3)
    assert img.analysis.dtype == np.uint8
    assert abs(int(img.analysis[75, 199, 0]) - 255) < 12  # red grows to the right
    full = np.asarray(img.open_full())
    assert full.shape == (300, 400, 3)


def test_heic_loads_when_pillow_heif_is_installed(tmp_path):
    pytest.importorskip("pillow_heif")
    assert ".heic" in SUPPORTED_SUFFIXES
    path = tmp_path / "a.heic"
    Image.fromarray(gradient()).save(path, format="HEIF")
    assert load_image(path, max_side=200).size == (400, 300)


def test_jpeg_is_decoded_reduced(tmp_path, monkeypatch):
    path = tmp_path / "big.jpg"
    Image.fromarray(gradient(3200, 2400)).save(path, quality=80)
    seen = []
    orig = Image.Image.load

    def spy(self):
        out = orig(self)
        seen.append(self.size)
        return out

    monkeypatch.setattr(Image.Image, "load", spy)
    img = load_image(path, max_side=400)
    assert img.size == (3200, 2400) and img.analysis.shape == (300, 400, 3)
    assert max(seen[0]) <= 800  # DCT scaling decoded at most 1/4 of the pixels per side


@pytest.mark.parametrize("orientation, size", [(1, (400, 300)), (3, (400, 300)), (6, (300, 400)), (8, (300, 400))])
def test_exif_orientation_is_applied(tmp_path, orientation, size):
    arr = np.zeros((300, 400, 3), np.uint8)
    arr[:100, :100] = 255  # white top-left corner
    exif = Image.Exif()
    exif[0x0112] = orientation
    path = tmp_path / "o.jpg"
    Image.fromarray(arr).save(path, exif=exif.tobytes(), quality=95)
    img = load_image(path, max_side=400)
    assert img.size == size
    full = np.asarray(img.open_full())
    assert full.shape[:2] == size[::-1] and img.analysis.shape[:2] == size[::-1]
    corner = {1: (0, 0), 3: (-1, -1), 6: (0, -1), 8: (-1, 0)}[orientation]
    assert full[corner[0] * 50 + (25 if corner[0] == 0 else -25), corner[1] * 50 + (25 if corner[1] == 0 else -25)].min() > 200


def test_cmyk_with_profile_and_without(tmp_path):
    rgb = Image.fromarray(gradient())
    cmyk = rgb.convert("CMYK")
    path = tmp_path / "c.jpg"
    cmyk.save(path, quality=95)
    a = load_image(path).analysis
    assert np.abs(a.astype(int) - gradient().astype(int)).mean() < 20


def test_sixteen_bit_grey_alpha_and_palette(tmp_path):
    g16 = (np.linspace(0, 65535, 300 * 400).reshape(300, 400)).astype(np.uint16)
    Image.fromarray(g16).save(tmp_path / "g16.png")
    a = load_image(tmp_path / "g16.png").analysis
    assert a[0, 0].tolist() == [0, 0, 0] and a[-1, -1].min() >= 250

    rgba = np.zeros((50, 60, 4), np.uint8)  # fully transparent black: composited on white
    Image.fromarray(rgba).save(tmp_path / "t.png")
    img = load_image(tmp_path / "t.png")
    assert img.has_alpha and img.analysis.min() == 255

    Image.fromarray(gradient()[..., 0]).save(tmp_path / "grey.jpg")
    assert load_image(tmp_path / "grey.jpg").analysis.shape == (300, 400, 3)

    Image.fromarray(gradient()).convert("P").save(tmp_path / "p.png")
    assert load_image(tmp_path / "p.png").analysis.shape == (300, 400, 3)


def test_icc_profile_is_kept(tmp_path):
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    Image.fromarray(gradient()).save(tmp_path / "i.jpg", icc_profile=icc)
    assert load_image(tmp_path / "i.jpg").icc_profile == icc


def test_arrays_and_pil_images(tmp_path):
    img = load_image(np.zeros((100, 50)), max_side=64)
    assert img.size == (50, 100) and img.analysis.shape == (64, 32, 3) and img.path is None
    assert load_image(Image.new("RGB", (30, 20))).size == (30, 20)
    with pytest.raises(InvalidParameterError, match="shape"):
        load_image(np.zeros((3, 3, 2)))


def test_missing_directory_non_image_and_truncated(tmp_path):
    with pytest.raises(ImageLoadError, match="no such file"):
        load_image(tmp_path / "nope.jpg")
    with pytest.raises(ImageLoadError, match="directory"):
        load_image(tmp_path)
    (tmp_path / "text.jpg").write_text("not an image")
    with pytest.raises(ImageLoadError, match="not an image"):
        load_image(tmp_path / "text.jpg")
    buf = io.BytesIO()
    Image.fromarray(gradient()).save(buf, format="JPEG")
    (tmp_path / "cut.jpg").write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    with pytest.raises(ImageLoadError, match="truncated or corrupt"):
        load_image(tmp_path / "cut.jpg")
    png = io.BytesIO()
    Image.fromarray(gradient()).save(png, format="PNG")
    (tmp_path / "cut.png").write_bytes(png.getvalue()[:200])
    with pytest.raises(ImageLoadError):
        load_image(tmp_path / "cut.png")


def test_decompression_bomb_limit(tmp_path):
    Image.new("RGB", (1000, 1000)).save(tmp_path / "b.png")
    with pytest.raises(ImageTooLargeError, match="exceeds the limit"):
        load_image(tmp_path / "b.png", max_pixels=999_999)
    assert load_image(tmp_path / "b.png", max_pixels=1_000_000).size == (1000, 1000)
    assert Image.MAX_IMAGE_PIXELS >= 300_000_000  # Pillow's own guard no longer fires first
