"""Headers that lie, truncated files and compressed metadata bombs: one clear line each, and no valid file refused.

A file whose data ends far before the size its header declares is a
truncated file, refused before its pixels are decoded (a 1.3 KB JPEG
claiming 17000 x 17000 used to decode for 45 s into grey crops).  The bounds
used are sound lower bounds, so complete files of every size and content,
however well they compress, still open.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from PIL import Image, ImageFile, PngImagePlugin

from multicrop.batch.admission import header_pixels
from multicrop.errors import ImageLoadError, ImageMetadataError, ImageTruncatedError
from multicrop.io import load_image, read_header


def test_truncated_images_are_never_loaded_silently_by_pillow():
    assert ImageFile.LOAD_TRUNCATED_IMAGES is False


_CLAIMS = [(2000, 2000), (5000, 3000), (17000, 17000), (300, 20000), (16384, 1024)]
_JPEG_KINDS = {"baseline": {}, "progressive": {"progressive": True}, "grey": {"mode": "L"},
               "444": {"subsampling": 0}, "optimized": {"optimize": True}}


@pytest.mark.parametrize("kind", sorted(_JPEG_KINDS))
@pytest.mark.parametrize("w,h", _CLAIMS)
def test_a_small_jpeg_claiming_a_large_size_is_a_truncated_file(tmp_path, hb, kind, w, h):
    path = hb.write(tmp_path / "lie.jpg", hb.jpeg_claiming(w, h, **_JPEG_KINDS[kind]))
    with pytest.raises(ImageTruncatedError) as err:
        load_image(path)
    line = str(err.value)
    assert "\n" not in line and f"{w}x{h}" in line and "truncated or corrupt image: its JPEG header" in line
    with pytest.raises(ImageTruncatedError):
        read_header(path)
    assert read_header(path, complete=False).size == (w, h)  # admission still reads the declared size


@pytest.mark.parametrize("w,h,rows", [(4000, 4000, 4), (17000, 17000, 4), (100000, 50, 4), (300, 300, 10),
                                      (300, 300, 299), (64, 64, 0)])
def test_a_png_whose_data_ends_before_its_last_row_is_a_truncated_file(tmp_path, hb, w, h, rows):
    # a complete zlib stream of too few rows: Pillow alone decodes it silently, the rest black
    path = hb.write(tmp_path / "lie.png", hb.png_claiming(w, h, rows))
    with pytest.raises(ImageTruncatedError, match=f"{w}x{h}"):
        load_image(path)


@pytest.mark.parametrize("interlace", [False, True])
@pytest.mark.parametrize("mode", ["1", "L", "RGB", "RGBA", "P", "I;16"])
def test_complete_pngs_of_every_mode_and_interlacing_pass_the_row_check(tmp_path, hb, mode, interlace):
    from multicrop.io.load import png_data_short

    path = tmp_path / "ok.png"
    im = Image.fromarray(hb.rgb(37, 23)).convert("L" if mode == "I;16" else mode)
    if mode == "I;16":
        im = Image.fromarray((np.asarray(im).astype(np.uint16) * 257))
    im.save(path, interlace=interlace) if not interlace else _save_interlaced(im, path)
    assert png_data_short(path) is None
    assert load_image(path, max_side=32).size == (37, 23)


def _save_interlaced(im, path):
    """Pillow writes no interlaced PNG: build one from its rows (Adam7), with filter 0."""
    import struct

    arr = np.asarray(im)
    bits = {"1": 1, "L": 8, "RGB": 24, "RGBA": 32, "P": 8, "I;16": 16}[im.mode]
    colour = {"1": 0, "L": 0, "RGB": 2, "RGBA": 6, "P": 3, "I;16": 0}[im.mode]
    depth = {"1": 1, "I;16": 16}.get(im.mode, 8)
    raw = b""
    for x0, y0, dx, dy in ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
                           (0, 1, 1, 2)):
        sub = arr[y0::dy, x0::dx]
        if sub.size == 0:
            continue
        for row in sub:
            if im.mode == "1":
                data = np.packbits(row.astype(bool)).tobytes()
            elif im.mode == "I;16":
                data = row.astype(">u2").tobytes()
            else:
                data = row.tobytes()
            raw += b"\0" + data[: -(-row.shape[0] * bits // 8)]
    h, w = arr.shape[:2]
    chunks = hb_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, colour, 0, 0, 1))
    if im.mode == "P":
        chunks += hb_chunk(b"PLTE", bytes(range(256)) * 3)
    chunks += hb_chunk(b"IDAT", zlib.compress(raw)) + hb_chunk(b"IEND", b"")
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunks)


def hb_chunk(kind, data):
    import struct

    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def test_a_bmp_shorter_than_its_rows_is_a_truncated_file(tmp_path, hb):
    data = hb.encoded("BMP", w=400, h=300)
    path = hb.write(tmp_path / "short.bmp", data[: len(data) // 4])
    with pytest.raises(ImageTruncatedError, match="400x300"):
        load_image(path)


_CUT_FORMATS = [("JPEG", {}), ("JPEG", {"progressive": True}), ("PNG", {}), ("WEBP", {}), ("TIFF", {}),
                ("TIFF", {"compression": "tiff_deflate"}), ("BMP", {})]


@pytest.mark.parametrize("fraction", [0.05, 0.3, 0.6, 0.95])
@pytest.mark.parametrize("fmt,kw", _CUT_FORMATS, ids=[f"{f}{'-' + next(iter(k)) if k else ''}" for f, k in _CUT_FORMATS])
def test_a_file_cut_short_is_one_line_never_a_silent_result(tmp_path, hb, fmt, kw, fraction):
    data = hb.encoded(fmt, w=320, h=240, **kw)
    path = hb.write(tmp_path / f"cut.{fmt.lower()}", data[: int(len(data) * fraction)])
    with pytest.raises(ImageLoadError) as err:
        load_image(path, max_side=64).analysis  # noqa: B018 - decoding is the point
    assert "\n" not in str(err.value) and str(path) in str(err.value)


# Complete files that compress as well as files can: the bounds must never refuse them.
_VALID = [("JPEG", "RGB", {}), ("JPEG", "L", {"optimize": True}), ("JPEG", "RGB", {"progressive": True}),
          ("JPEG", "RGB", {"subsampling": 2, "quality": 1}), ("PNG", "1", {"optimize": True}),
          ("PNG", "L", {"optimize": True}), ("PNG", "RGB", {"compress_level": 9}), ("PNG", "P", {}),
          ("BMP", "RGB", {}), ("BMP", "1", {}), ("BMP", "P", {}), ("WEBP", "RGB", {"lossless": True}),
          ("TIFF", "RGB", {"compression": "tiff_deflate"})]


@pytest.mark.parametrize("size", [(1, 1), (9, 7), (4000, 3000)])
@pytest.mark.parametrize("fmt,mode,kw", _VALID, ids=[f"{f}-{m}-{i}" for i, (f, m, _) in enumerate(_VALID)])
def test_complete_flat_files_are_never_called_truncated(tmp_path, fmt, mode, kw, size):
    path = tmp_path / f"flat.{fmt.lower()}"
    Image.new(mode, size).save(path, format=fmt, **kw)
    header = read_header(path)
    assert header.size == size and header_pixels(str(path)) == size[0] * size[1]


@pytest.mark.parametrize("where", ["before_idat", "after_idat"])
@pytest.mark.parametrize("chunk", ["zTXt", "iTXt", "iCCP"])
def test_a_compressed_png_metadata_bomb_is_one_line(tmp_path, hb, chunk, where):
    bomb = zlib.compress(b"\0" * (PngImagePlugin.MAX_TEXT_CHUNK * 8), 9)
    body = {"zTXt": b"Comment\0\0" + bomb, "iTXt": b"XML:com.adobe.xmp\0\1\0\0\0" + bomb,
            "iCCP": b"profile\0\0" + bomb}[chunk]
    data = hb.png_with([hb.png_chunk(chunk.encode(), body)], after_idat=where == "after_idat")
    path = hb.write(tmp_path / "bomb.png", data)
    with pytest.raises(ImageMetadataError) as err:
        load_image(path, max_side=64)
    assert "\n" not in str(err.value) and "decompression bomb" in str(err.value)


def test_many_text_chunks_past_pillows_text_memory_are_one_line(tmp_path, hb):
    one = zlib.compress(b"a" * (PngImagePlugin.MAX_TEXT_CHUNK - 1024), 9)
    n = PngImagePlugin.MAX_TEXT_MEMORY // PngImagePlugin.MAX_TEXT_CHUNK + 2
    data = hb.png_with([hb.png_chunk(b"zTXt", f"k{i}".encode() + b"\0\0" + one) for i in range(n)])
    path = hb.write(tmp_path / "many.png", data)
    with pytest.raises(ImageMetadataError):
        load_image(path, max_side=64)


def test_a_metadata_bomb_fails_its_row_and_the_batch_goes_on(tmp_path, hb):
    from multicrop.batch import run_crop_batch
    from multicrop.crop.config import CropConfig, OutputConfig

    src = tmp_path / "src"
    bomb = zlib.compress(b"\0" * (100 << 20), 9)
    hb.write(src / "a_bomb.png", hb.png_with([hb.png_chunk(b"zTXt", b"k\0\0" + bomb)]))
    hb.write(src / "b_lie.jpg", hb.jpeg_claiming(17000, 17000))
    hb.good_photo(src / "c_good.jpg")
    s = run_crop_batch(src, tmp_path / "out", crop=CropConfig(saliency="spectral", faces=False, k=2),
                       output=OutputConfig(preview=False), workers=1)
    assert (s.done, s.failed) == (1, 2)
    assert s.failed_by_reason == {"ImageMetadataError": 1, "ImageTruncatedError": 1}


@pytest.mark.parametrize("values", [[np.nan], [np.inf], [-np.inf], [np.nan, np.inf, 0.25]])
def test_float_tiffs_with_nan_or_inf_load_without_numpy_warnings(tmp_path, values):
    # pytest turns warnings into errors here, so a RuntimeWarning would fail the test
    arr = np.full((40, 60), 0.5, np.float32)
    for i, v in enumerate(values):
        arr[i * 5: i * 5 + 5, :] = v
    path = tmp_path / "float.tif"
    Image.fromarray(arr, "F").save(path)
    loaded = load_image(path, max_side=32)
    assert loaded.analysis.dtype == np.uint8 and loaded.size == (60, 40)
    assert loaded.open_full(rgb=True).mode == "RGB"
