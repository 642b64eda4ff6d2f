from __future__ import annotations

import struct
import zlib

import pytest

from multicrop.batch.admission import PixelBudget, header_pixels
from multicrop.batch.engines import Item, dispatch
from multicrop.errors import InvalidParameterError


def fake_large_png(path, width, height):
    """A PNG whose header says width x height but that holds no pixel data (it cannot be decoded)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\0" * 64)  # a few bytes of the first row only
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b""))
    return path


def test_header_pixels_reads_the_size_without_decoding(tmp_path):
    assert header_pixels(str(fake_large_png(tmp_path / "big.png", 20000, 10000))) == 200_000_000
    (tmp_path / "junk.jpg").write_bytes(b"junk")
    assert header_pixels(str(tmp_path / "junk.jpg")) == 0


class _FakeEngine:
    """Finishes the oldest submitted item on each wait; records the pixels in flight at every submit."""

    workers = 4
    max_in_flight = 8

    def __init__(self, budget):
        self.budget, self.running, self.seen = budget, set(), []

    def submit(self, fn, *args):
        self.running.add(args[0])
        self.seen.append(frozenset(self.running))
        return args[0]

    def wait(self, handles):
        self.running.discard(handles[0])
        return [handles[0]]

    def result(self, handle):
        if handle == "boom":
            raise RuntimeError("worker died")
        return {"path": handle}


def test_dispatch_never_decodes_two_200mp_photos_at_once(tmp_path):
    sizes = {"big1": 200_000_000, "small1": 1_000_000, "big2": 200_000_000, "small2": 1_000_000, "boom": 10}
    budget = PixelBudget(300_000_000)
    eng = _FakeEngine(budget)
    rows = []
    items = [Item(n, (n,), lambda exc, n=n: {"path": n, "error": str(exc)}) for n in sizes]
    dispatch(eng, None, items, on_result=rows.append, budget=budget, pixels=sizes.__getitem__)
    assert not any({"big1", "big2"} <= running for running in eng.seen)  # big2 waited for big1
    assert budget.peak == 202_000_010 <= budget.limit  # big2 + small1 + small2 + boom
    assert budget.in_flight == 0 and budget.n_in_flight == 0
    assert sorted(r["path"] for r in rows) == sorted(sizes)
    assert {"path": "boom", "error": "worker died"} in rows


def test_a_photo_over_the_whole_budget_runs_alone():
    budget = PixelBudget(100)
    assert budget.try_admit(1000) and not budget.try_admit(1)
    with pytest.raises(InvalidParameterError, match="positive integer"):
        PixelBudget(0)
