"""Builders of hostile files for the hostile corpus: every file is made under tmp_path by the test itself."""

from __future__ import annotations

import io
import struct
import types
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image


def rgb(w: int = 160, h: int = 96, seed: int = 0) -> np.ndarray:
    """A small photo-like array: two bright blocks on a noisy background."""
    rng = np.random.default_rng(seed)
    a = rng.integers(30, 90, (h, w, 3), dtype=np.uint8)
    a[h // 4: 3 * h // 4, w // 8: w // 3] = 220
    a[h // 4: 3 * h // 4, 2 * w // 3: 7 * w // 8] = 200
    return a


def encoded(fmt: str, *, w: int = 160, h: int = 96, mode: str = "RGB", **kw) -> bytes:
    """``fmt`` bytes of a small photo (converted to ``mode``)."""
    buf = io.BytesIO()
    Image.fromarray(rgb(w, h)).convert(mode).save(buf, format=fmt, **kw)
    return buf.getvalue()


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_with(chunks: list[bytes], *, after_idat: bool = False) -> bytes:
    """A valid small PNG with extra chunks inserted before the first IDAT (or before IEND)."""
    png = encoded("PNG")
    cut = len(png) - 12 if after_idat else png.index(b"IDAT") - 4
    return png[:cut] + b"".join(chunks) + png[cut:]


def jpeg_claiming(w: int, h: int, *, keep: int = 1300, eoi: bool = True, **kw) -> bytes:
    """A small JPEG whose SOF says ``w`` x ``h``, cut to ``keep`` bytes (an EOI marker appended)."""
    data = bytearray(encoded("JPEG", w=64, h=64, **kw))
    for marker in (b"\xff\xc0", b"\xff\xc1", b"\xff\xc2"):
        i = data.find(marker)
        if i >= 0:
            struct.pack_into(">HH", data, i + 5, h, w)
            break
    return bytes(data[:keep]) + (b"\xff\xd9" if eoi else b"")


def png_claiming(w: int, h: int, rows: int = 4) -> bytes:
    """A PNG whose IHDR says ``w`` x ``h`` but whose IDAT holds only ``rows`` rows."""
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    raw = zlib.compress(b"\0" * (1 + 3 * w) * rows)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", raw) + png_chunk(b"IEND", b"")


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def good_photo(path: Path, seed: int = 1) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(rgb(320, 200, seed)).save(path)
    return path


@pytest.fixture
def hb():
    """The builders, as one namespace."""
    return types.SimpleNamespace(rgb=rgb, encoded=encoded, png_chunk=png_chunk, png_with=png_with,
                                 jpeg_claiming=jpeg_claiming, png_claiming=png_claiming, write=write,
                                 good_photo=good_photo)


@pytest.fixture
def no_subprocess(monkeypatch):
    """Fail the test if anything starts a child process (Ghostscript, ...) or Pillow's EPS plugin opens a file."""
    import subprocess

    from PIL import EpsImagePlugin

    started: list = []

    def refuse(*args, **kwargs):
        started.append(args)
        raise AssertionError(f"a child process was started: {args!r}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(subprocess, "check_call", refuse)
    monkeypatch.setattr(subprocess, "run", refuse)
    monkeypatch.setattr(EpsImagePlugin.EpsImageFile, "_open", lambda self: refuse("EpsImageFile._open"))
    monkeypatch.setattr(EpsImagePlugin, "Ghostscript", lambda *a, **k: refuse("Ghostscript"))
    return started


def finished_batch(base: Path, *, crop, output):
    """Three photos under ``base/src`` and a finished batch over them in ``base/out``: ``(src, out)``."""
    from multicrop.batch import run_crop_batch

    src = base / "src"
    src.mkdir()
    rng = np.random.default_rng(0)
    for i in range(3):
        a = rng.integers(20, 70, (160, 240, 3), dtype=np.uint8)
        a[40:100, 30 + 50 * i:90 + 50 * i] = 230
        Image.fromarray(a).save(src / f"p{i}.jpg")
    out = base / "out"
    s = run_crop_batch(src, out, crop=crop, output=output, workers=1)
    assert s.done == 3
    return src, out


def copied_batch(done: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """``(src, out)`` with ``out`` a fresh copy of a finished batch's folder under ``tmp_path``."""
    import shutil

    src, out = done
    shutil.copytree(out, tmp_path / "out")
    return src, tmp_path / "out"


@pytest.fixture(scope="session")
def batch_builder():
    """:func:`finished_batch` and :func:`copied_batch`, for module-scoped fixtures."""
    return types.SimpleNamespace(finished=finished_batch, copy=copied_batch)
