"""One uploaded photo: its record, the copy the page shows, and error messages without the server's path.

:class:`Photo` is an upload's file in the session directory with its
decoded image, its state (queued, analysing, ready or error) and its
analyses; :func:`display_jpeg` makes the reduced, upright JPEG the page
shows; :func:`_strip_path` keeps the server's temporary path out of what
the page is told.  :mod:`multicrop.web.photos` re-exports these names.
"""

from __future__ import annotations

import io
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from ..io import LoadedImage, load_image

__all__ = ["Photo", "DISPLAY_SIDE", "display_jpeg"]

#: Long side of the copy the page shows (boxes are always in source pixels).
DISPLAY_SIDE = 1600


@dataclass
class Photo:
    """One uploaded photo: its file in the session directory and its state."""

    id: str
    name: str
    path: Path
    loaded: LoadedImage
    display: bytes
    session: str = ""
    status: str = "queued"  # queued -> analysing -> ready | error
    error: str | None = None
    stage: str = "waiting for the worker"
    started: float = field(default_factory=time.monotonic)
    future: Future | None = field(default=None, repr=False)
    #: Analyses by settings key (the upload's own first); futures, so a request waits for one running.
    analyses: dict[str, Future] = field(default_factory=dict, repr=False)

    def info(self) -> dict[str, Any]:
        """What the page needs to know about the photo."""
        w, h = self.loaded.size
        return {"id": self.id, "name": self.name, "width": w, "height": h, "status": self.status,
                "stage": self.stage, "error": self.error,
                "elapsed": round(time.monotonic() - self.started, 2)}


def display_jpeg(path: Path, max_pixels: int) -> bytes:
    """A JPEG of the photo with its long side at most :data:`DISPLAY_SIDE` (EXIF-transposed)."""
    small = load_image(path, max_side=DISPLAY_SIDE, max_pixels=max_pixels).analysis
    buf = io.BytesIO()
    Image.fromarray(small).save(buf, format="JPEG", quality=88)
    return buf.getvalue()


def _strip_path(message: str, path: Path) -> str:
    """An error message without the server's temporary path (the page shows the upload's name)."""
    return message.replace(str(path) + ": ", "").replace(str(path), "the file")
