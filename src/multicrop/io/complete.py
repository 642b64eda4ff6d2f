"""Complete images only: a JPEG whose data ends early, lacks scans or holds junk is refused.

Pillow decodes a JPEG cut part-way that still ends in an EOI marker (libjpeg
fills the missing blocks and only warns), a progressive JPEG holding only its
first scans, and scan data that is partly random, all without a word.  Two
checks close that gap, run by :func:`multicrop.io.load_image` on every JPEG
(and MPO) it opens, so every command that opens photos (``crop``, ``batch
crop``, ``judge``, the web upload) refuses them with one line naming the file:

* the marker structure (pure Python, no decode): after the first scan only
  the markers a JPEG may hold there (scans, tables, restarts in order,
  comments, APPn, EOI); and the scans must send every coefficient of every
  component to its last bit (a progressive JPEG whose later scans are missing
  is incomplete, however the file ends);
* libjpeg's warnings, where libjpeg-turbo's TurboJPEG library can be loaded
  (the one :mod:`multicrop.io.lossless` uses): a decode at 1/8 scale (the
  entropy data is read whole; the inverse DCT costs little) that reports
  "premature end of data segment" or "corrupt JPEG data" is an error.

Examples
--------
>>> import io as _io
>>> from PIL import Image
>>> buf = _io.BytesIO(); Image.new("RGB", (64, 64), "red").save(buf, "JPEG", progressive=True)
>>> data = buf.getvalue()
>>> jpeg_problem(data) is None
True
>>> first = data.index(b"\\xff\\xda", data.index(b"\\xff\\xda") + 2)  # the second scan's SOS
>>> jpeg_problem(data[:first] + b"\\xff\\xd9")
'its progressive JPEG data ends after 1 scan: coefficients 1-63 of component 1 never arrive'
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from ..errors import ImageTruncatedError
from .jpeg import PROGRESSIVE_SOF, RST_MARKERS, SOF_MARKERS
from .names import shown

__all__ = ["jpeg_problem", "check_complete_jpeg", "libjpeg_warning"]

_SOF = SOF_MARKERS
_PROGRESSIVE = PROGRESSIVE_SOF
#: Markers a JPEG may hold after its first scan: SOS, DHT, DQT, DRI, DNL, DAC, COM, APPn.
_AFTER_SCAN = frozenset({0xDA, 0xC4, 0xDB, 0xDD, 0xDC, 0xCC, 0xFE, *range(0xE0, 0xF0)})
_RST = RST_MARKERS


def _ranges(ks: list[int]) -> str:
    out, start = [], ks[0]
    for a, b in zip(ks, ks[1:] + [None]):
        if b != a + 1:
            out.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return ", ".join(out)


def _skip_entropy(data: bytes, i: int) -> tuple[int, str | None]:
    """The offset of the marker that ends the scan data starting at ``i``; or why the data is junk."""
    n, expect = len(data), 0
    while True:
        j = data.find(b"\xff", i)
        if j < 0 or j + 1 >= n:
            return n, None
        m = data[j + 1]
        if m == 0x00 or m == 0xFF:
            i = j + 1 if m == 0xFF else j + 2
            continue
        if m in _RST:
            if m - 0xD0 != expect:
                return j, f"restart marker RST{m - 0xD0} at byte {j} out of order (expected RST{expect}): junk in the scan data"
            expect = (expect + 1) % 8
            i = j + 2
            continue
        return j, None


def jpeg_problem(data: bytes) -> str | None:
    """Why the JPEG ``data`` is incomplete or corrupt by its marker structure, or None.

    Only the first picture counts (an MPO's others follow its EOI).  A file
    that is no JPEG, or whose structure ends without EOI, gives None: the
    decoder reports those.
    """
    if data[:2] != b"\xff\xd8":
        return None
    n, i = len(data), 2
    progressive = False
    comps: list[int] = []
    done: dict[int, list[int]] = {}  # component id -> the lowest bit received of each of the 64 coefficients
    scans = 0
    while i + 1 < n:
        if data[i] != 0xFF:
            return f"byte {i}: 0x{data[i]:02X} where a marker belongs: junk in the JPEG data"
        m = data[i + 1]
        if m == 0xFF:
            i += 1
            continue
        if m == 0xD9:
            break
        if m in _RST or m == 0x01:
            i += 2
            continue
        if scans and m not in _AFTER_SCAN:
            return f"marker 0xFF{m:02X} at byte {i} cannot follow a scan: junk in the scan data"
        if i + 4 > n:
            return None
        length = int.from_bytes(data[i + 2:i + 4], "big")
        seg = data[i + 4:i + 2 + length]
        if length < 2 or len(seg) < length - 2:
            return None
        if m in _SOF and not comps:
            progressive = m in _PROGRESSIVE
            nf = seg[5] if len(seg) > 5 else 0
            comps = [seg[6 + 3 * k] for k in range(nf) if 6 + 3 * k < len(seg)]
            done = {c: [-1] * 64 for c in comps}
        elif m == 0xDA:
            ns = seg[0] if seg else 0
            if len(seg) < 4 + 2 * ns:
                return f"scan header at byte {i} is cut short: junk in the JPEG data"
            ids = [seg[1 + 2 * k] for k in range(ns)]
            ss, se, ahal = seg[1 + 2 * ns], seg[2 + 2 * ns], seg[3 + 2 * ns]
            if not progressive:
                ss, se, ahal = 0, 63, 0
            if ss > se or se > 63 or any(c not in done for c in ids):
                return (f"scan header at byte {i} names coefficients {ss}-{se} or components the frame does not have: "
                        "junk in the JPEG data")
            for c in ids:
                for k in range(ss, se + 1):
                    done[c][k] = ahal & 0x0F
            scans += 1
            i, why = _skip_entropy(data, i + 2 + length)
            if why is not None:
                return why
            continue
        i += 2 + length
    if not scans:
        return None
    for c in comps:
        never = [k for k, al in enumerate(done[c]) if al < 0]
        partial = [k for k, al in enumerate(done[c]) if al > 0]
        if never or partial:
            kind = "progressive JPEG" if progressive else "JPEG"
            what = (f"coefficients {_ranges(never)} of component {c} never arrive" if never else
                    f"coefficients {_ranges(partial)} of component {c} arrive only in part")
            return f"its {kind} data ends after {scans} scan{'s' if scans != 1 else ''}: {what}"
    return None


def libjpeg_warning(data: bytes) -> str | None:
    """libjpeg's warning on decoding ``data`` (at 1/8 scale), or None (no warning, or no TurboJPEG)."""
    from .lossless import turbojpeg

    lib = turbojpeg()
    if lib is None or not hasattr(lib, "tjGetErrorCode"):
        return None
    lib.tjInitDecompress.restype = ctypes.c_void_p
    lib.tjInitDecompress.argtypes = []
    lib.tjDecompressHeader3.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong,
                                        *[ctypes.POINTER(ctypes.c_int)] * 4]
    lib.tjDecompress2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p,
                                  ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    lib.tjGetErrorCode.argtypes = [ctypes.c_void_p]
    handle = lib.tjInitDecompress()
    if not handle:
        return None
    try:
        w, h, sub, cs = (ctypes.c_int() for _ in range(4))
        if lib.tjDecompressHeader3(handle, data, len(data), *map(ctypes.byref, (w, h, sub, cs))):
            return None  # a header TurboJPEG cannot read: Pillow's decode decides
        sw, sh = -(-w.value // 8), -(-h.value // 8)
        buf = ctypes.create_string_buffer(max(1, sw * sh))
        if lib.tjDecompress2(handle, data, len(data), buf, sw, 0, sh, 6, 0) == 0:  # 6: TJPF_GRAY
            return None
        if lib.tjGetErrorCode(handle) != 0:  # 1: fatal (an unsupported conversion, ...): not ours to judge
            return None
        return lib.tjGetErrorStr2(handle).decode("utf-8", "replace")
    finally:
        lib.tjDestroy(handle)


def check_complete_jpeg(path: str | os.PathLike, label: str | None = None) -> None:
    """Raise :class:`~multicrop.errors.ImageTruncatedError` naming ``label`` when the JPEG is incomplete.

    See the module docstring for what is checked.
    """
    label = label or shown(path)
    data = Path(path).read_bytes()
    why = jpeg_problem(data)
    if why is None:
        warning = libjpeg_warning(data)
        why = f"libjpeg: {warning}" if warning else None
    if why is not None:
        raise ImageTruncatedError(f"{label}: truncated or corrupt image: {why}")
