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
    pillow_heif = pytest.importorskip("pillow_heif")
    assert ".heic" in SUPPORTED_SUFFIXES
    path = tmp_path / "a.jpg"  # named like a JPEG: the bytes, not the name, call for pillow-heif
    pillow_heif.from_bytes(mode="RGB", size=(400, 300), data=gradient().tobytes()).save(path)
    assert load_image(path, max_side=200).size == (400, 300)


def test_only_a_file_that_may_be_heif_imports_pillow_heif(tmp_path):
    """A JPEG or PNG opens without pillow-heif (10-20 ms of start-up); an ISO media file's bytes register it."""
    pytest.importorskip("pillow_heif")
    import subprocess
    import sys

    jpg = tmp_path / "a.jpg"
    Image.fromarray(gradient()).save(jpg, quality=90)
    prog = ("import sys\nfrom multicrop.io import load_image, formats\n"
            f"load_image({str(jpg)!r}, max_side=100)\n"
            "print('pillow_heif' in sys.modules)\n"
            "formats.register_heif(b'\\0\\0\\0\\x18ftypheic\\0\\0')\n"
            "print('pillow_heif' in sys.modules, 'HEIF' in formats.formats_for(" + repr(str(jpg)) + "))\n")
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["False", "True", "True"]


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


def test_too_large_message_names_the_option_that_raises_the_limit(tmp_path):
    Image.new("RGB", (2000, 1000)).save(tmp_path / "b.png")
    with pytest.raises(ImageTooLargeError) as err:
        load_image(tmp_path / "b.png", max_pixels=1_500_000)
    assert str(err.value) == (
        f"{tmp_path / 'b.png'}: 2000x1000 = 2.0 MP exceeds the limit of 1.5 MP; if this is a real photo, "
        "raise the limit with --max-pixels (OutputConfig.max_pixels)"
    )
    with pytest.raises(ImageTooLargeError, match="--max-pixels"):
        load_image(np.zeros((100, 100), np.uint8), max_pixels=9_999)


def test_max_pixels_above_pillows_own_limit_is_honoured(tmp_path, monkeypatch):
    Image.new("RGB", (300, 200)).save(tmp_path / "b.png")
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 10_000)  # Pillow alone refuses above 20,000 pixels
    img = load_image(tmp_path / "b.png", max_pixels=60_000)
    assert img.size == (300, 200) and img.open_full().size == (300, 200)
    assert Image.MAX_IMAGE_PIXELS == 10_000  # restored


def test_open_full_keeps_the_native_mode(tmp_path):
    g16 = (np.arange(300 * 400, dtype=np.uint32).reshape(300, 400) * 65535 // (300 * 400)).astype(np.uint16)
    Image.fromarray(g16).save(tmp_path / "g16.png")
    img = load_image(tmp_path / "g16.png", max_side=100)
    full = img.open_full()
    assert full.mode == "I;16" and np.array_equal(np.asarray(full), g16)
    assert img.analysis.shape == (75, 100, 3)  # the analysis copy alone is 8-bit RGB
    assert img.open_full(rgb=True).mode == "RGB"

    Image.fromarray(gradient()[..., 1]).save(tmp_path / "l.png")
    assert load_image(tmp_path / "l.png").open_full().mode == "L"
    rgba = np.dstack([gradient(), np.full((300, 400), 7, np.uint8)])
    Image.fromarray(rgba).save(tmp_path / "a.png")
    full = load_image(tmp_path / "a.png").open_full()
    assert full.mode == "RGBA" and np.array_equal(np.asarray(full), rgba)


def test_sixteen_bit_analysis_copy_is_reduced_and_rescaled(tmp_path):
    g16 = np.tile(np.linspace(0, 65535, 2000).astype(np.uint16), (1000, 1))
    Image.fromarray(g16).save(tmp_path / "g16.tif")
    a = load_image(tmp_path / "g16.tif", max_side=200).analysis
    assert a.shape == (100, 200, 3)
    assert a[50, 0].max() <= 2 and a[50, -1].min() >= 253
    assert np.all(np.diff(a[50, :, 0].astype(int)) >= 0)


@pytest.mark.parametrize(
    "mode, fmt, expected",
    [
        ("I;16", "PNG", "I;16"), ("I;16", "TIFF", "I;16"), ("I;16", "JPEG", "L"), ("I;16", "WEBP", "RGB"),
        ("I", "PNG", "I;16"), ("I", "TIFF", "I"),
        ("L", "JPEG", "L"), ("L", "PNG", "L"), ("L", "TIFF", "L"), ("L", "WEBP", "RGB"),
        ("LA", "JPEG", "L"), ("LA", "PNG", "LA"), ("LA", "WEBP", "RGBA"),
        ("RGBA", "JPEG", "RGB"), ("RGBA", "PNG", "RGBA"), ("RGBA", "WEBP", "RGBA"), ("RGBA", "TIFF", "RGBA"),
        ("RGB", "JPEG", "RGB"), ("P", "PNG", "P"), ("P", "JPEG", "RGB"), ("1", "JPEG", "L"),
        ("CMYK", "JPEG", "RGB"), ("CMYK", "TIFF", "RGB"), ("CMYK", "PNG", "RGB"),
    ],
)
def test_to_output_mode(mode, fmt, expected):
    from multicrop.io import to_output_mode

    im = Image.new(mode, (4, 3))
    out = to_output_mode(im, fmt)
    assert out.mode == expected and out.size == (4, 3)
    if expected == mode:
        assert out is im  # nothing to convert: no copy


def test_to_output_mode_values():
    from multicrop.io import to_output_mode

    g16 = Image.fromarray(np.array([[0, 257, 65535]], np.uint16))
    assert np.asarray(to_output_mode(g16, "JPEG")).tolist() == [[0, 1, 255]]
    big = Image.fromarray(np.array([[-5, 70_000, 1234]], np.int32))
    assert np.asarray(to_output_mode(big, "PNG")).tolist() == [[0, 65535, 1234]]
    rgba = Image.new("RGBA", (2, 2), (10, 20, 30, 0))
    assert to_output_mode(rgba, "JPEG").getpixel((0, 0)) == (255, 255, 255)
    la = Image.new("LA", (2, 2), (10, 128))
    assert to_output_mode(la, "JPEG").getpixel((0, 0)) in (132, 133)  # half-way to white


def test_pillow_bomb_limit_survives_concurrent_loads(tmp_path):
    """Threads switching Pillow's global check off around Image.open never leave it off."""
    from concurrent.futures import ThreadPoolExecutor

    Image.new("RGB", (64, 48)).save(tmp_path / "s.png")
    before = Image.MAX_IMAGE_PIXELS
    with ThreadPoolExecutor(8) as pool:
        sizes = list(pool.map(lambda _: load_image(tmp_path / "s.png", max_pixels=10_000).size, range(200)))
    assert sizes == [(64, 48)] * 200
    assert Image.MAX_IMAGE_PIXELS == before is not None


def test_the_jpeg_block_is_found_past_a_mib_of_metadata(tmp_path):
    # the block grid of a lossless cut is read from the markers; twenty 60 kB comments push the frame
    # header past the first MiB, which is then read on (the web page reads loaded.jpeg_block)
    buf = io.BytesIO()
    Image.new("RGB", (64, 48), (90, 120, 150)).save(buf, "JPEG", subsampling=2, quality=90)
    plain = buf.getvalue()
    com = b"\xff\xfe" + (60002).to_bytes(2, "big") + b"x" * 60000
    (tmp_path / "big.jpg").write_bytes(plain[:2] + com * 20 + plain[2:])
    (tmp_path / "plain.jpg").write_bytes(plain)
    assert (tmp_path / "big.jpg").stat().st_size > 1 << 20
    assert load_image(tmp_path / "plain.jpg").jpeg_block == (16, 16)
    assert load_image(tmp_path / "big.jpg").jpeg_block == (16, 16)
    assert load_image(tmp_path / "big.jpg").size == (64, 48)
