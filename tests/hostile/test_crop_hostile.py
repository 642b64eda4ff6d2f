"""Hostile inputs for ``multicrop crop``: every case is a batch ``[hostile, good photo]``.

Each asserts the exit code, that stderr is one clear line naming the file
(or nothing, for inputs that are fine), that the good photo after it is still
cropped (the batch goes on), and that no partial, temporary or stray file is
left in the output folder.  Config files that are wrong stop the batch before
the first photo: one line naming the file, nothing written.
"""

from __future__ import annotations

import io
import json
import os
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from multicrop.cli.main import main

# partition: no notes on stderr beside the one line each hostile input gets (direct notes small crops)
FAST = ["--saliency", "spectral", "--no-faces", "--no-preview", "-k", "2", "-s", "partition"]
GOOD_FILES = ["good.json", "good_1.jpg", "good_2.jpg"]


def _rgb(w=320, h=128, seed=0):
    rng = np.random.default_rng(seed)
    a = np.full((h, w, 3), 60, np.uint8)
    a[h // 4: 3 * h // 4, w // 8: w // 3] = 220
    a[h // 4: 3 * h // 4, 2 * w // 3: 7 * w // 8] = 200
    return (a + rng.integers(0, 20, a.shape, dtype=np.uint8)).astype(np.uint8)


def _encoded(fmt, **kw):
    buf = io.BytesIO()
    Image.fromarray(_rgb()).save(buf, format=fmt, **kw)
    return buf.getvalue()


def _png_header(w, h):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")


def _corrupt_exif(entries):
    ifd = struct.pack(">H", entries)
    for i in range(entries):
        ifd += struct.pack(">HHII", 0x010F + i, 2, 5000, 200)
    return b"Exif\0\0MM\0*" + struct.pack(">I", 8) + ifd + struct.pack(">I", 0)


def _write(name, data):
    def build(d: Path) -> Path:
        p = d / name
        p.write_bytes(data)
        return p
    return build


def _image(name, mode, size=(320, 128), **save):
    def build(d: Path) -> Path:
        im = Image.fromarray(_rgb(*size))
        if mode == "I;16":
            im = Image.fromarray((np.asarray(im.convert("L")).astype(np.uint16) * 257))
        elif mode in ("PA", "P"):
            im = im.convert("P") if mode == "P" else im.convert("RGBA").convert("PA")
        elif mode != "RGB":
            im = im.convert(mode)
        p = d / name
        im.save(p, **save)
        return p
    return build


CASES: list = []  # (id, build, expect, extra args); expect: "ok", ("error", text) or ("warn", text)

JPEG, PNG, WEBP, TIFF = _encoded("JPEG", quality=90), _encoded("PNG"), _encoded("WEBP"), _encoded("TIFF")
PROG = _encoded("JPEG", quality=90, progressive=True)
for frac in (0.0005, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99):
    CASES.append((f"truncated-jpeg-{frac}", _write("t.jpg", JPEG[: max(1, int(len(JPEG) * frac))]),
                  ("error", ""), []))
for frac in (0.1, 0.3, 0.5, 0.7, 0.9):
    CASES.append((f"truncated-progressive-{frac}", _write("t.jpg", PROG[: int(len(PROG) * frac)]), ("error", ""), []))
for fmt, data, ext in (("png", PNG, "png"), ("webp", WEBP, "webp"), ("tiff", TIFF, "tif")):
    for frac in (0.02, 0.2, 0.5, 0.8, 0.97):
        CASES.append((f"truncated-{fmt}-{frac}", _write(f"t.{ext}", data[: int(len(data) * frac)]), ("error", ""), []))
for ext in ("jpg", "jpeg", "JPG", "png", "webp", "tif", "tiff", "bmp", "gif", "heic", "txt", "noext"):
    name = "zero" if ext == "noext" else f"zero.{ext}"
    CASES.append((f"zero-byte-{ext}", _write(name, b""), ("error", ""), []))
for ext in ("jpg", "png", "webp", "tif", "bmp"):
    CASES.append((f"text-as-{ext}", _write(f"text.{ext}", b"hello, I am not a photo\n" * 20),
                  ("error", "not an image Pillow can read"), []))
    CASES.append((f"html-as-{ext}", _write(f"page.{ext}", b"<!doctype html><html></html>"),
                  ("error", "not an image Pillow can read"), []))
for data, real, ext in ((PNG, "png", "jpg"), (JPEG, "jpeg", "png"), (WEBP, "webp", "jpg"), (TIFF, "tiff", "png"),
                        (JPEG, "jpeg", "webp"), (PNG, "png", "tif")):
    CASES.append((f"{real}-named-{ext}", _write(f"wrong.{ext}", data), "ok", []))
# declared sizes around the limit (pixels are absent: just under is read and found truncated)
for w, h, limit, expect in ((1000, 1000, 1_000_000, ("error", "truncated or corrupt")),
                            (1000, 1001, 1_000_000, ("error", "exceeds the limit of 1.0 MP")),
                            (17320, 17320, None, ("error", "truncated or corrupt")),
                            (17321, 17321, None, ("error", "exceeds the limit of 300.0 MP")),
                            (50000, 50000, None, ("error", "exceeds the limit of 300.0 MP")),
                            (2**31 - 1, 1, None, ("error", "exceeds the limit of 300.0 MP"))):
    args = ["--max-pixels", str(limit)] if limit else []
    CASES.append((f"declared-{w}x{h}-limit-{limit}", _write("big.png", _png_header(w, h)), expect, args))
for n in (1, 2, 3, 6, 12):
    CASES.append((f"corrupt-exif-{n}-tags", _image("exif.jpg", "RGB", exif=_corrupt_exif(n)),
                  ("warn", "EXIF unreadable, ignored"), []))
CASES.append(("exif-garbage", _image("exif.jpg", "RGB", exif=b"Exif\0\0" + b"\x00" * 40),
              ("warn", "EXIF unreadable, ignored"), []))
for mode, ext in (("1", "png"), ("L", "png"), ("LA", "png"), ("P", "png"), ("RGBA", "png"),
                  ("I;16", "png"), ("I", "tif"), ("F", "tif"), ("CMYK", "jpg"), ("CMYK", "tif"), ("L", "jpg"),
                  ("RGBA", "webp"), ("P", "gif"), ("LAB", "tif"), ("YCbCr", "jpg"), ("RGB", "bmp")):
    CASES.append((f"mode-{mode}-{ext}", _image(f"m.{ext}", mode), "ok", []))
for w, h, expect in ((1, 1, ("error", "smaller than")), (63, 200, ("error", "smaller than")),
                     (127, 64, ("error", "cannot hold k=2")), (5000, 64, ("warn", "partition failure")), (64, 3000, ("warn", "partition failure")),
                     (200, 200, "ok")):
    CASES.append((f"size-{w}x{h}", _image("s.png", "RGB", size=(w, h)), expect, []))


def _symlink(target_kind):
    def build(d: Path) -> Path:
        link = d / f"link-{target_kind}.jpg"
        if target_kind == "good":
            os.symlink(d / "good.jpg", link)
        elif target_kind == "dangling":
            os.symlink(d / "nowhere.jpg", link)
        elif target_kind == "loop":
            os.symlink(link, link)
        return link
    return build


CASES += [
    ("symlink-to-photo", _symlink("good"), "ok", []),
    ("symlink-dangling", _symlink("dangling"), ("error", "no such file"), []),
    ("symlink-loop", _symlink("loop"), ("error", ""), []),
    ("missing-file", lambda d: d / "missing.jpg", ("error", "no such file"), []),
    ("folder-named-jpg", lambda d: (d / "dir.jpg").mkdir() or (d / "dir.jpg"), ("fatal", "folder holds no photo"), []),
    ("empty-folder", lambda d: (d / "empty").mkdir() or (d / "empty"), ("fatal", "folder holds no photo"), []),
    ("glob-no-match", lambda d: d / "*.nothing", ("fatal", "pattern matches no photo"), []),
    ("animated-gif", lambda d: _gif(d), "ok", []),
    ("name-with-spaces-unicode", _image("mé photo #1.png", "RGB"), "ok", []),
]


def _gif(d):
    frames = [Image.fromarray(_rgb(seed=i)).convert("P") for i in range(3)]
    frames[0].save(d / "anim.gif", save_all=True, append_images=frames[1:])
    return d / "anim.gif"


def _config(name, text):
    return lambda d: (d / name).write_text(text) and d / name


CONFIGS = [
    ("empty-json", "c.json", "", "not valid JSON"),
    ("empty-toml-ok", "c.toml", "", None),
    ("list-json", "c.json", "[1, 2]", "holds an object"),
    ("string-json", "c.json", '"k=3"', "holds an object"),
    ("unknown-key", "c.json", '{"colour": 1}', "unknown key 'colour'"),
    ("k-zero", "c.json", '{"k": 0}', "k must be an integer >= 1"),
    ("k-string", "c.toml", 'k = "three"', "got 'three'"),
    ("bad-ratio", "c.toml", 'ratios = "tall"', "ratio"),
    ("bad-strategy", "c.json", '{"strategy": "best"}', "strategy must be one of"),
    ("bad-quality", "c.toml", "quality = 0", "quality"),
    ("bad-format", "c.json", '{"format": "gif"}', "format must be one of"),
    ("bad-lossless", "c.toml", 'lossless = "always"', "lossless must be one of"),
    ("bad-keep", "c.toml", 'keep_metadata = "yes"', "keep_metadata must be true or false"),
    ("toml-syntax", "c.toml", "k = = 2", "not valid TOML"),
    ("toml-as-json", "c.json", "k = 2", "a TOML config must end in .toml"),
    ("binary", "c.json", "\x00\x01\x02", "not valid JSON"),
    ("bad-nested", "c.json", '{"weights": {"thirds": -1}}', "thirds"),
    ("max-pixels-negative", "c.json", '{"max_pixels": -5}', "max_pixels"),
]


@pytest.fixture(scope="module")
def good_bytes():
    buf = io.BytesIO()
    Image.fromarray(_rgb(seed=7)).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def _leftovers(out: Path, allowed: set[str]) -> list[str]:
    return sorted(p.name for p in out.iterdir() if p.name not in allowed)


@pytest.mark.parametrize("case_id,build,expect,args", CASES, ids=[c[0] for c in CASES])
def test_hostile_photo(tmp_path, good_bytes, case_id, build, expect, args, capsys):
    src = tmp_path / "in"
    src.mkdir()
    good = src / "good.jpg"
    good.write_bytes(good_bytes)
    bad = build(src)
    out = tmp_path / "out"
    code = main(["crop", str(bad), str(good), "-o", str(out), *FAST, *args])
    err = capsys.readouterr().err.strip().splitlines()
    if expect == "ok":
        assert code == 0 and err == []
        rec = json.loads((out / f"{Path(bad).stem}.json").read_text())
        assert len(rec["crops"]) == 2
        for c in rec["crops"]:
            with Image.open(out / c["path"]) as im:
                assert im.size == (c["box"]["w"], c["box"]["h"])
        assert not [n for n in os.listdir(out) if n.startswith(".")]
        return
    kind, text = expect
    if kind == "fatal":  # stops before the batch: one line, nothing written
        assert code == 1 and len(err) == 1 and text in err[0]
        assert not out.exists() or list(out.iterdir()) == []
        return
    assert len(err) == 1, err
    assert err[0].startswith(f"multicrop: {bad}: ") and text in err[0]
    assert "Traceback" not in err[0] and "site-packages" not in err[0]
    if kind == "warn":
        assert code == 0 and f"warning: {text}" in err[0]
        return
    assert code == 1
    assert _leftovers(out, set(GOOD_FILES)) == []  # the good photo was cropped; nothing else, no .part


@pytest.mark.parametrize("case_id,name,text,message", CONFIGS, ids=[c[0] for c in CONFIGS])
def test_hostile_config(tmp_path, good_bytes, case_id, name, text, message, capsys):
    good = tmp_path / "good.jpg"
    good.write_bytes(good_bytes)
    cfg = tmp_path / name
    cfg.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    code = main(["crop", str(good), "-o", str(out), "-c", str(cfg), *FAST])
    err = capsys.readouterr().err.strip().splitlines()
    if message is None:
        assert code == 0 and err == [] and sorted(os.listdir(out)) == GOOD_FILES
        return
    assert code == 1 and len(err) == 1 and str(cfg) in err[0] and message in err[0], err
    assert not out.exists()


def test_killed_run_leftovers_are_removed_and_nothing_else(tmp_path, good_bytes):
    good = tmp_path / "good.jpg"
    good.write_bytes(good_bytes)
    out = tmp_path / "out"
    out.mkdir()
    for name in (".good_1.jpg.abcdefgh.part", ".good.json.12345678.part", ".good_2.jpg.a_b_c_d_.part"):
        (out / name).write_bytes(b"\xff\xd8 half")
    assert main(["crop", str(good), "-o", str(out), *FAST]) == 0
    assert sorted(os.listdir(out)) == GOOD_FILES
