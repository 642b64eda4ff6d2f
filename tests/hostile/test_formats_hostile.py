"""Only the formats of ``multicrop.io.FORMATS`` are ever opened, whatever a file's extension says.

Every entry point that opens an image (``load_image``, the header reader,
batch admission, a batch run) is tried with files of other formats renamed to
accepted extensions: each is refused with one line naming the format found,
no child process starts, and Pillow's EPS plugin never opens a file.
"""

from __future__ import annotations

import io
import warnings

import pytest
from PIL import Image

from multicrop.batch.admission import header_pixels
from multicrop.errors import ImageFormatError, ImageLoadError
from multicrop.io import FORMATS, OPEN_FORMATS, SUPPORTED_SUFFIXES, load_image, read_header
from multicrop.io.load import identify_format

#: Formats Pillow can write that multicrop must refuse: (format, mode to save, name the message must say).
_FOREIGN = [("PCX", "RGB", "PCX"), ("TGA", "RGB", "TGA"), ("DDS", "RGB", "DDS"), ("XBM", "1", "XBM"),
            ("SGI", "RGB", "SGI"), ("QOI", "RGB", "QOI"), ("ICO", "RGB", "ICO"), ("IM", "RGB", "IM"),
            ("PPM", "RGB", "PPM"), ("JPEG2000", "RGB", "JPEG2000"),
            ("ICNS", "RGB", "ICNS"), ("MSP", "1", "MSP"), ("EPS", "RGB", "EPS"), ("PDF", "RGB", None)]
_SUFFIXES = [".jpg", ".png", ".tif"]

_PS_FILES = {
    "eps_loop": b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 100 100\n{ } loop\n",
    "eps_gs_error": b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 100 100\n/undefinedcommand exec\n",
    "ps_plain": b"%!PS\n/Times findfont 12 scalefont setfont 72 72 moveto (hi) show showpage\n",
    "dos_eps": b"\xc5\xd0\xd3\xc6" + b"\x20\x00\x00\x00" + b"\x40\x00\x00\x00" + b"\0" * 20
               + b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\n{ } loop\n",
}


def _foreign(tmp_path, fmt, mode, suffix):
    buf = io.BytesIO()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # writing IM is deprecated in Pillow 12+
            Image.new(mode, (16, 16)).save(buf, format=fmt)
    except (OSError, KeyError, ValueError) as exc:  # a plugin this Pillow cannot write
        pytest.skip(f"Pillow cannot write {fmt}: {exc}")
    path = tmp_path / f"photo{suffix}"
    path.write_bytes(buf.getvalue())
    return path


def test_the_accepted_suffixes_follow_from_the_one_format_table():
    assert SUPPORTED_SUFFIXES == frozenset(s for f in FORMATS for s in f.suffixes)
    assert {"JPEG", "PNG", "WEBP", "TIFF"} <= set(OPEN_FORMATS) and "EPS" not in OPEN_FORMATS
    assert {f.name for f in FORMATS} >= {"JPEG", "MPO", "PNG", "WEBP", "TIFF"}


@pytest.mark.parametrize("suffix", _SUFFIXES)
@pytest.mark.parametrize("fmt,mode,named", _FOREIGN, ids=[f[0] for f in _FOREIGN])
def test_a_foreign_format_under_an_accepted_name_is_refused_naming_it(tmp_path, no_subprocess, fmt, mode, named,
                                                                      suffix):
    path = _foreign(tmp_path, fmt, mode, suffix)
    with pytest.raises(ImageLoadError) as err:
        load_image(path)
    line = str(err.value)
    assert "\n" not in line and str(path) in line
    if named is not None:
        assert isinstance(err.value, ImageFormatError) and f"its format is {named}" in line
    with pytest.raises(ImageLoadError):
        read_header(path)
    assert header_pixels(str(path)) == 0  # admission: refused, the worker reports why
    assert no_subprocess == []


@pytest.mark.parametrize("suffix", [".jpg", ".jpeg", ".png", ".webp", ".tif"])
@pytest.mark.parametrize("name", sorted(_PS_FILES))
def test_postscript_renamed_as_a_photo_never_starts_ghostscript(tmp_path, no_subprocess, name, suffix):
    path = tmp_path / f"{name}{suffix}"
    path.write_bytes(_PS_FILES[name])
    with pytest.raises(ImageFormatError, match="its format is EPS"):
        load_image(path)
    assert header_pixels(str(path)) == 0
    assert identify_format(path) == "EPS"
    assert no_subprocess == []  # neither gs nor the EPS plugin ran


_ALLOWED = [("JPEG", ".jpg"), ("PNG", ".png"), ("WEBP", ".webp"), ("TIFF", ".tif"), ("BMP", ".bmp"), ("GIF", ".gif")]


@pytest.mark.parametrize("fmt,suffix", _ALLOWED)
def test_every_allowed_format_opens_even_under_another_allowed_suffix(tmp_path, hb, fmt, suffix):
    for name in (f"right{suffix}", "wrong.jpeg" if fmt != "JPEG" else "wrong.png"):
        path = hb.write(tmp_path / name, hb.encoded(fmt))
        loaded = load_image(path, max_side=64)
        assert loaded.format == fmt and loaded.size == (160, 96)
        assert read_header(path).format == fmt and header_pixels(str(path)) == 160 * 96


def test_a_multi_picture_jpeg_opens_as_mpo_with_the_jpeg_grid(tmp_path, hb):
    path = tmp_path / "camera.jpg"
    first, second = Image.fromarray(hb.rgb(64, 48)), Image.new("RGB", (64, 48), "blue")
    first.save(path, "MPO", save_all=True, append_images=[second])
    loaded = load_image(path, max_side=32)
    assert loaded.format == "MPO" and loaded.size == (64, 48) and loaded.jpeg_block in ((8, 8), (16, 16))


@pytest.mark.parametrize("junk", [b"hello, not an image at all\n", b"\x00" * 64, b"GIF87a" + b"\x00" * 3, b"BM" + b"\x00" * 10,
                                  b"\x89PNG\r\n\x1a\n" + b"\x00" * 8, b"\xff\xd8\xff" + b"\x00" * 20, b"x"])
def test_junk_and_damaged_headers_are_one_line(tmp_path, junk):
    path = tmp_path / "junk.jpg"
    path.write_bytes(junk)
    with pytest.raises(ImageLoadError) as err:
        load_image(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_an_empty_file_says_it_is_empty(tmp_path):
    path = tmp_path / "empty.jpg"
    path.write_bytes(b"")
    with pytest.raises(ImageLoadError, match="empty file"):
        load_image(path)


def test_a_batch_records_each_foreign_format_by_name_and_crops_the_good_photo(tmp_path, hb):
    from multicrop.batch import run_crop_batch
    from multicrop.batch.manifest import latest_rows, read_manifest
    from multicrop.crop.config import CropConfig, OutputConfig

    src = tmp_path / "src"
    src.mkdir()
    foreign = {}
    for fmt, mode, named in _FOREIGN[:8]:
        buf = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            Image.new(mode, (16, 16)).save(buf, format=fmt)
        foreign[fmt] = hb.write(src / f"{fmt.lower()}.jpg", buf.getvalue())
    (src / "eps.png").write_bytes(_PS_FILES["eps_loop"])
    good = hb.good_photo(src / "zz_good.jpg")
    out = tmp_path / "out"
    s = run_crop_batch(src, out, crop=CropConfig(saliency="spectral", faces=False, k=2),
                       output=OutputConfig(preview=False), workers=1)
    assert (s.total, s.done, s.failed) == (len(foreign) + 2, 1, len(foreign) + 1)
    rows = latest_rows(read_manifest(out / "manifest.parquet"))
    assert rows[str(good)]["status"] == "done"
    for fmt, path in foreign.items():
        row = rows[str(path)]
        assert row["error_kind"] == "ImageFormatError" and f"its format is {fmt}" in row["error"]
    assert "EPS" in rows[str(src / "eps.png")]["error"]
    assert len(s.failed_examples) == 5 and all(len(e) == 2 for e in s.failed_examples)


def _image_open_calls_without_formats() -> list[str]:
    """``Image.open(...)`` calls in the package that do not pass ``formats=`` (file:line)."""
    import ast
    from pathlib import Path

    import multicrop

    root = Path(multicrop.__file__).parent
    bad = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "open"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "Image"
                    and not any(k.arg == "formats" for k in node.keywords)):
                bad.append(f"{path.relative_to(root)}:{node.lineno}")
    return bad


def test_every_image_open_in_the_package_names_its_formats():
    assert _image_open_calls_without_formats() == []
