"""Values passed between the runner, the backends and the store."""

from __future__ import annotations

import base64
import io
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from ..errors import ImageLoadError
from ..io import load_image, open_regular, shown
from ..hashing import hash_stream, new_hasher, prefixed

__all__ = ["ImageRef", "JudgeRequest", "JudgeReply"]


class ImageRef:
    """An image to be judged: a label, its SHA-256, pixels on demand.

    The hash is of the file's bytes (or of the array's bytes and shape for
    in-memory input), so renaming a file does not invalidate its calls.
    Decoded copies and data URLs are cached per long side.

    Parameters
    ----------
    source : path or ndarray of uint8, shape (H, W, 3)
    label : str, optional
        What the ``image`` column of the output shows (the path as given).

    Examples
    --------
    >>> ref = ImageRef(np.zeros((40, 60, 3), np.uint8), label="black")
    >>> ref.sha256[:7], ref.array(32).shape
    ('sha256:', (21, 32, 3))
    >>> ref.data_url(32).startswith("data:image/jpeg;base64,")
    True
    """

    def __init__(self, source: str | Path | np.ndarray, *, label: str | None = None) -> None:
        self._source = source
        if isinstance(source, np.ndarray):
            arr = np.ascontiguousarray(source)
            h = new_hasher()
            h.update(repr((arr.shape, str(arr.dtype))).encode())
            h.update(arr.tobytes())
            self.sha256 = prefixed(h)
            self.label = label or "<array>"
        else:
            self.label = label or str(source)
            # a regular file only (a FIFO or /dev/zero named in a list would block the hash or never end)
            with open_regular(source, error=ImageLoadError) as fh:
                self.sha256 = hash_stream(fh)
        self._arrays: dict[int, np.ndarray] = {}
        self._urls: dict[tuple[int, int], str] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ImageRef({self.label!r}, {self.sha256[:19]}...)"

    def array(self, max_side: int) -> np.ndarray:
        """RGB pixels, EXIF-transposed, long side at most ``max_side``."""
        with self._lock:
            arr = self._arrays.get(max_side)
            if arr is None:
                try:
                    arr = load_image(self._source, max_side=max_side).analysis
                except OSError as exc:  # e.g. deleted or unreadable since it was hashed
                    raise ImageLoadError(f"{shown(self.label)}: cannot read ({exc.strerror or exc})") from None
                self._arrays[max_side] = arr
            return arr

    def cached_data_url(self, max_side: int, *, quality: int = 90) -> str | None:
        """The data URL if it was already encoded, else None (never blocks on encoding)."""
        return self._urls.get((max_side, quality))

    def data_url(self, max_side: int, *, quality: int = 90) -> str:
        """A ``data:image/jpeg;base64,...`` URL of the image downscaled to ``max_side``."""
        arr = self.array(max_side)
        with self._lock:
            url = self._urls.get((max_side, quality))
            if url is None:
                buf = io.BytesIO()
                Image.fromarray(arr).save(buf, format="JPEG", quality=quality)
                url = "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
                self._urls[(max_side, quality)] = url
            return url

    def release(self) -> None:
        """Drop cached pixels and URLs (the runner calls this when an image is done)."""
        with self._lock:
            self._arrays.clear()
            self._urls.clear()


@dataclass(frozen=True)
class JudgeRequest:
    """One call to a judge backend.

    Attributes
    ----------
    prompt : str
        Rendered prompt text.
    prompt_kind : str
        ``"holistic"`` or ``"dimension"``.
    dimension : str
        A rubric dimension id or ``"overall"``.
    scale : (int, int)
        Score range the prompt states.
    image : ImageRef
    temperature : float
    repetition : int
    json_schema : dict or None
        Reply schema for backends that support structured output.
    timeout_s : float
        Per-call timeout (not part of the call key).
    """

    prompt: str
    prompt_kind: str
    dimension: str
    scale: tuple[int, int]
    image: ImageRef
    temperature: float
    repetition: int
    json_schema: dict | None = field(default=None, hash=False, compare=False)
    timeout_s: float = 60.0


@dataclass(frozen=True)
class JudgeReply:
    """What a backend returned for one request.

    Attributes
    ----------
    text : str or None
        Raw reply text (parsed later; a bad reply is data, not an error).
        A backend that computes its score need not write text at all: it
        sets ``score`` instead.
    model : str or None
        Model string the service says it used.
    prompt_tokens, completion_tokens : int or None
    cost_usd : float or None
    error : str or None
        Set when the service answered but the answer could not be read (e.g.
        an HTTP 200 whose body is not JSON); ``text`` then holds the raw body.
        The call is recorded as completed with this as its parse error.
    score : float or None
        A typed score, for backends that are not chat models (``measured``,
        ``embedding``): taken as it is (it must lie on the request's scale),
        ``text`` is not parsed.
    reason : str or None
        With ``score``: what the score was made from.
    """

    text: str | None
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    error: str | None = None
    score: float | None = None
    reason: str | None = None
