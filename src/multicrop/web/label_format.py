"""The label files' spelling: a ratio's ``label``, whether a box is of its ratio, reading a label file.

The real Carousel label files spell a 2:3 box's ``label`` ``"2x3"``
(:func:`ratio_label`) and carry LabelMe :data:`LABELME_VERSION`; a photo's
metadata file ends in ``_metadata.json``.  :func:`ratio_fits` says whether a
box is of a ratio to a pixel of rounding, and :func:`_read` reads a label or
metadata file as one JSON object.  :mod:`multicrop.web.labels` re-exports
these names.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import DatasetError, MulticropError
from ..io.files import read_text_bounded
from ..ratios import Ratio

__all__ = ["LABELME_VERSION", "ratio_label", "ratio_fits"]

_META = "_metadata.json"
#: The LabelMe version string the real Carousel files carry.
LABELME_VERSION = "0.4.16"


def ratio_label(ratio: Ratio) -> str:
    """The ``label`` string of a box: ``"2x3"`` for 2:3 (the Carousel files' spelling)."""
    def fmt(v: float) -> str:
        return str(int(v)) if float(v).is_integer() else f"{v:g}"
    return f"{fmt(ratio.width)}x{fmt(ratio.height)}"


def ratio_fits(w: float, h: float, ratio: Ratio) -> bool:
    """Whether a ``w`` x ``h`` box is of ``ratio``, to a pixel of rounding (or 1 %)."""
    return abs(w - h * ratio.value) <= max(1.5, 0.01 * w)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_text_bounded(path, what="label folder"))
    except (MulticropError, ValueError, RecursionError) as exc:
        raise DatasetError(f"{path.name}: cannot read: {exc}") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{path.name}: must hold a JSON object")
    return data
