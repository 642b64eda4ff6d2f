"""Render the alternatives of a crop result as the judges see them.

Each alternative is cut from the full-resolution photo (the decode the crop
files are cut from, :meth:`multicrop.io.LoadedImage.open_full`), converted to
8-bit RGB and reduced so that its long side is at most :data:`RENDER_MAX_SIDE`
pixels (Lanczos).  A judge never sees more: the ``measured`` backend and the
``openai-compatible`` backend reduce to their own ``max_side`` (1024 by
default) anyway, and a smaller array makes the image hash (part of every call
key) and the request cheap.  The rendering is deterministic, so the same
photo and boxes give the same bytes, the same call keys, and a rerun over the
same store makes no new call.

Examples
--------
>>> import numpy as np
>>> from multicrop.geometry import Box
>>> from multicrop.io import load_image
>>> loaded = load_image(np.zeros((300, 3000, 3), np.uint8))
>>> [a.shape for a in render_boxes(loaded, [Box(0, 0, 2000, 300), Box(10, 10, 40, 60)])]
[(154, 1024, 3), (60, 40, 3)]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InvalidParameterError
from ..geometry import Box
from ..io import LoadedImage

__all__ = ["RENDER_MAX_SIDE", "render_boxes"]

#: Long side, in pixels, of the renders sent to the judges.
RENDER_MAX_SIDE = 1024


def render_boxes(loaded: LoadedImage, boxes: Sequence[Box], *, max_side: int = RENDER_MAX_SIDE) -> list[np.ndarray]:
    """Cut ``boxes`` (source pixels) from the full-resolution photo, each reduced to ``max_side``.

    Parameters
    ----------
    loaded : LoadedImage
        The photo (``CropResult.image``); decoded at full resolution once.
    boxes : sequence of Box
        Crops in source pixels (whole pixels inside the photo).
    max_side : int
        Longest side of a render; smaller crops are kept as they are.

    Returns
    -------
    list of ndarray of uint8, shape (h, w, 3)

    Raises
    ------
    InvalidParameterError
        ``max_side`` below 32, or a box outside the photo.
    """
    from PIL import Image

    if isinstance(max_side, bool) or not isinstance(max_side, int) or max_side < 32:
        raise InvalidParameterError(f"max_side must be an integer >= 32, got {max_side!r}")
    W, H = loaded.size
    for b in boxes:
        x0, y0, x1, y1 = (int(round(v)) for v in b.corners())
        if x0 < 0 or y0 < 0 or x1 > W or y1 > H or x1 <= x0 or y1 <= y0:
            raise InvalidParameterError(f"box {b} is not inside the {W}x{H} photo")
    full = loaded.open_full(rgb=True)
    try:
        out = []
        for b in boxes:
            piece = full.crop(tuple(int(round(v)) for v in b.corners()))
            long_side = max(piece.size)
            if long_side > max_side:
                s = max_side / long_side
                size = (max(1, round(piece.width * s)), max(1, round(piece.height * s)))
                piece = piece.resize(size, Image.Resampling.LANCZOS)
            out.append(np.ascontiguousarray(np.asarray(piece.convert("RGB"), dtype=np.uint8)))
        return out
    finally:
        if not loaded.in_memory:  # never close the caller's own image
            full.close()
