"""Lossless JPEG crops: all boxes of one photo cut in one pass over its DCT coefficients.

A JPEG can be cut without decoding and re-encoding when the crop's top-left
corner lies on the iMCU grid (8 or 16 pixels per axis, by chroma
subsampling); its right and bottom edges may fall anywhere.
:func:`snap_to_blocks` moves a box's top-left corner to the grid and keeps
its width and height, so the ratio is exactly the box's; :func:`cut_jpeg`
cuts every box of a photo.
The decoded pixels of a crop equal the same region of the decoded original
(luma exactly; chroma too for 4:4:4, and away from the edges for subsampled
chroma, whose upsampling reads neighbouring samples).

Two ways to cut, the first one found is used (:func:`backend`):

``libturbojpeg``
    libjpeg-turbo's TurboJPEG library (Debian ``libturbojpeg0``), called in
    this process through :mod:`ctypes`: ``tjTransform`` entropy-decodes the
    file's coefficients once and writes every crop from them.
``jpegtran``
    The ``jpegtran`` program (Debian ``libjpeg-turbo-progs``), one process
    per crop; each decodes the whole file's coefficients again.

Either way the crop gets no marker of the source's but the JFIF header the
encoder writes; the segments to keep are put back by :func:`insert_segments`:
by default the ICC profile and the EXIF block the caller passes (already
filtered), with ``keep_all`` every APPn and COM segment except the MPF index
of a multi-picture file, which would point at pictures the crop does not
hold.  A multi-picture JPEG (MPO: a camera's preview or depth map after the
main picture) is cut from its first picture, which is what Pillow decodes.

The two backends live in :mod:`multicrop.io.jpeg_cutters`, the header and the
segments in :mod:`multicrop.io.jpeg_segments` (both re-exported here); ``MULTICROP_TURBOJPEG``
(a library path, or empty for none) and ``MULTICROP_JPEGTRAN`` (a program
path, or empty for none) override the lookup.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import MulticropError
from ..geometry import Box
from .jpeg_cutters import backend, jpegtran, turbojpeg
from .jpeg_cutters import jpegtran_finish as _jpegtran_finish  # module globals: tests replace them here
from .jpeg_cutters import jpegtran_start as _jpegtran_start
from .jpeg_cutters import tj_cut as _tj_cut
from .jpeg_segments import JpegHeader, insert_segments, jpeg_header, kept_segments

__all__ = ["JpegHeader", "LosslessCut", "backend", "cut_jpeg", "insert_segments", "jpeg_header", "jpegtran",
           "kept_segments", "on_grid", "snap_to_blocks", "turbojpeg"]

#: Largest photo whose jpegtran crops run as parallel processes: each holds the
#: photo's DCT coefficients (2 bytes a sample, about 600 MB at 200 MP).
PARALLEL_JPEGTRAN_PIXELS = 50_000_000


@dataclass(frozen=True)
class LosslessCut:
    """One crop of :func:`cut_jpeg`: the box cut and the file's bytes, or why it could not be cut.

    Attributes
    ----------
    box : Box
        The box cut (top-left on the iMCU grid, the asked size).
    data : bytes or None
        The crop's JPEG file, or None when it failed.
    error : str or None
        Why it failed (the library's or jpegtran's message), else None.
    """

    box: Box
    data: bytes | None = None
    error: str | None = None


def on_grid(boxes: Sequence[Box], block: tuple[int, int] | None) -> bool:
    """Whether every box's top-left corner lies on the ``block`` grid (so a lossless cut moves none of them).

    Examples
    --------
    >>> on_grid([Box(16, 8, 100, 50), Box(116, 8, 100, 50)], (16, 8)), on_grid([Box(16, 8, 100, 50)], None)
    (False, False)
    >>> on_grid([Box(16, 8, 96, 50), Box(112, 8, 96, 50)], (16, 8))
    True
    """
    return block is not None and all(b.x % block[0] == 0 and b.y % block[1] == 0 for b in boxes)


def snap_to_blocks(box: Box, block: tuple[int, int], size: tuple[int, int]) -> Box:
    """``box`` with its top-left corner on the ``block`` grid, same width and height, inside ``size``.

    Examples
    --------
    >>> snap_to_blocks(Box(21, 9, 100, 150), (16, 16), (400, 300))
    Box(x=16, y=16, w=100, h=150)
    >>> snap_to_blocks(Box(395, 0, 5, 5), (16, 16), (400, 300))
    Box(x=384, y=0, w=5, h=5)
    """
    x, y, w, h = (int(v) for v in (box.x, box.y, box.w, box.h))
    bx, by = block
    nx = round(x / bx) * bx
    if nx + w > size[0]:
        nx = (x // bx) * bx
    ny = round(y / by) * by
    if ny + h > size[1]:
        ny = (y // by) * by
    return Box(nx, ny, w, h)


def _jpegtran_cut(prog: str, source: Path, boxes: Sequence[Box], *, parallel: bool) -> list[bytes | MulticropError]:
    """Each box by its own ``jpegtran -crop`` process: all at once when ``parallel``, else one after another."""
    if not parallel:
        return [_jpegtran_finish(_jpegtran_start(prog, source, b)) for b in boxes]
    procs = [_jpegtran_start(prog, source, b) for b in boxes]
    try:
        return [_jpegtran_finish(p) for p in procs]
    finally:  # a failure part-way leaves no process running
        for p in procs:
            if isinstance(p, subprocess.Popen) and p.poll() is None:
                p.kill()
                p.communicate()


def _size(data: bytes) -> tuple[int, int] | None:
    try:
        return jpeg_header(data).size
    except MulticropError:
        return None


def cut_jpeg(source: str | os.PathLike, boxes: Sequence[Box], *, exif: bytes = b"",
             keep_all: bool = False) -> list[LosslessCut]:
    """Cut every box of the JPEG (or MPO) file ``source`` losslessly, their corners moved to its iMCU grid.

    Parameters
    ----------
    source : path
        A JPEG file; a multi-picture file (MPO) is cut from its first picture.
    boxes : sequence of Box
        Crop boxes inside the picture, in pixels; each keeps its width and
        height, its top-left corner moves to the nearest grid point that
        keeps it inside (:func:`snap_to_blocks`).
    exif : bytes
        EXIF block each crop carries (the ICC profile is copied from the
        source); ignored with ``keep_all``.
    keep_all : bool
        Copy every APPn and COM segment of the source except its MPF index.

    Returns
    -------
    list of LosslessCut
        Per box, in order: the box cut and the crop's bytes, or why it failed
        (then the caller re-encodes that crop).

    Raises
    ------
    MulticropError
        ``source`` is no JPEG, or neither libturbojpeg nor jpegtran is installed.
    OSError
        ``source`` cannot be read.
    """
    path = Path(source)
    data = path.read_bytes()
    header = jpeg_header(data)
    snapped = [snap_to_blocks(b, header.block, header.size) for b in boxes]
    lib, prog = turbojpeg(), jpegtran()
    if lib is not None:
        try:
            outs: list[bytes | MulticropError] = list(_tj_cut(lib, data, snapped))
        except MulticropError as exc:
            outs = [exc] * len(snapped)
    elif prog is not None:
        del data  # jpegtran reads the file itself
        w, h = header.size
        outs = _jpegtran_cut(prog, path, snapped, parallel=w * h <= PARALLEL_JPEGTRAN_PIXELS)
    else:
        raise MulticropError("neither libturbojpeg (libturbojpeg0) nor jpegtran (libjpeg-turbo-progs) is installed")
    keep = kept_segments(header, exif=exif, keep_all=keep_all)
    cuts = []
    for box, out in zip(snapped, outs):
        if isinstance(out, MulticropError):
            cuts.append(LosslessCut(box, error=str(out)))
            continue
        got = _size(out)
        if got != (int(box.w), int(box.h)):
            cuts.append(LosslessCut(box, error=f"the lossless cut is {got}, not {int(box.w)}x{int(box.h)}"))
            continue
        cuts.append(LosslessCut(box, insert_segments(out, keep)))
    return cuts
