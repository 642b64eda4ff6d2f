"""What the server checks at its door: its own settings when it starts, each upload's size before its
body is read, and every failure turned into one JSON line naming the file or field.

* :func:`check_models` builds the saliency backend and every detector of the base config and runs
  them once on a small grey image, so ``serve --saliency sam`` (or a detector whose model is
  missing) fails when the server starts, in one line, instead of refusing every upload later.
* :func:`upload_too_large` reads a request's ``Content-Length`` (nothing of its body) and says,
  naming the file when the page gave its name, that the upload is over the limit.
* :func:`crash_reply` is the reply to an exception nothing else handled: ``{"detail": ...}`` with
  the photo's name (never a server path), status 500; never the bare ``Internal Server Error``.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import numpy as np

from ..crop.config import CropConfig
from ..errors import InvalidParameterError, MulticropError

__all__ = ["check_models", "upload_too_large", "crash_message", "MULTIPART_SLACK"]

#: Bytes a multipart body may hold beyond its files (boundaries and part headers of one photo).
MULTIPART_SLACK = 64 * 1024

_log = logging.getLogger("multicrop.web")


def check_models(config: CropConfig, *, threads: int | None = None) -> None:
    """Fail now, in one line, when ``config``'s saliency backend or a detector cannot run.

    Raises
    ------
    InvalidParameterError
        The backend or a detector is unknown (the message lists the known
        ones) or fails on a 64x64 grey image (its model file is missing,
        an extra is not installed, ...).
    """
    from ..detectors import DETECTORS, detect
    from ..saliency import SALIENCY

    try:
        SALIENCY.get(config.saliency)
    except MulticropError as exc:
        raise InvalidParameterError(f"--saliency {config.saliency}: {exc}") from None
    for name in config.active_detectors:
        try:
            DETECTORS.get(name)
        except MulticropError as exc:
            raise InvalidParameterError(f"detector {name}: {exc}") from None
    grey = np.full((64, 64, 3), 128, np.uint8)
    try:  # the registry's backends themselves (not the analysis: its calls are the photos')
        SALIENCY.create(config.saliency, threads=threads)(grey)
        if config.active_detectors:
            detect(grey, detectors=config.active_detectors, threads=threads)
    except Exception as exc:  # any failure of a model is a setting that cannot work
        what = f"saliency {config.saliency!r} with detectors {', '.join(config.active_detectors) or 'none'}"
        raise InvalidParameterError(f"{what} cannot run: {type(exc).__name__}: {exc}") from None


def upload_too_large(headers: Any, limit: int, limit_mb: float, name: str | None) -> str | None:
    """The one line refusing an upload whose ``Content-Length`` is over ``limit`` (plus multipart slack), or None.

    Examples
    --------
    >>> upload_too_large({"content-length": str(3 * 2**20)}, 2**20, 1, "big.jpg")
    'big.jpg: larger than the 1 MB upload limit'
    >>> upload_too_large({"content-length": "100"}, 2**20, 1, None) is None
    True
    """
    raw = headers.get("content-length")
    try:
        length = int(raw) if raw is not None else None
    except ValueError:
        return f"Content-Length: not a number, got {raw!r}"
    if length is None or length <= limit + MULTIPART_SLACK:
        return None
    if name:
        return f"{name}: larger than the {limit_mb:g} MB upload limit"
    return (f"the upload ({length / 2**20:.1f} MB) is larger than the {limit_mb:g} MB upload limit; "
            "send one photo per request")


def crash_message(exc: BaseException, name: str | None, *, hide: str = "") -> str:
    """The one line of an unexpected failure, naming the photo (or the request when there is none).

    Paths under ``hide`` (the server's upload folder) are replaced by "the file".
    """
    _log.error("unexpected failure on %s", name or "a request", exc_info=exc)
    text = " ".join(str(exc).split()) or type(exc).__name__
    if hide:
        text = re.sub(re.escape(hide) + r"[^\s'\",:;)]*", "the file", text)
    return f"{name or 'request'}: the server could not do this ({type(exc).__name__}: {text[:300]})"
