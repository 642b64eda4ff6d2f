"""Uploaded photos, their cached analysis, and crops for given settings.

The web page changes k, the ratios or the strategy many times per photo; the
saliency map and faces depend on none of these, so each photo is analysed
once (in a worker thread) and every later request reuses that analysis.

:func:`multicrop.crop.pipeline.crop_photo` is the only code that chooses
crops.  It asks :func:`multicrop.crop.pipeline.analyse` for the saliency map;
:func:`_install_analysis_cache` wraps that function once so that, inside
:meth:`PhotoStore.crops`, it returns the photo's cached analysis instead of
computing it again (outside, and for any other image, it behaves exactly as
before).
"""

from __future__ import annotations

import contextvars
import dataclasses
import io
import shutil
import tempfile
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from ..crop import pipeline
from ..crop.config import CropConfig
from ..crop.pipeline import CropResult, crop_photo
from ..errors import ImageLoadError, InvalidParameterError
from ..io import DEFAULT_MAX_PIXELS, LoadedImage, load_image

__all__ = ["Analysis", "Photo", "PhotoStore", "DISPLAY_SIDE"]

#: Long side of the copy the page shows (boxes are always in source pixels).
DISPLAY_SIDE = 1600

_CACHED: contextvars.ContextVar[Analysis | None] = contextvars.ContextVar("multicrop_web_analysis", default=None)
_INSTALL_LOCK = threading.Lock()


@dataclass(frozen=True)
class Analysis:
    """The saliency map and faces of one photo's analysis copy, for one saliency setting."""

    image: np.ndarray
    saliency_method: str
    faces_on: bool
    saliency: np.ndarray
    faces: tuple

    def matches(self, image: np.ndarray, config: CropConfig) -> bool:
        """True when ``crop_photo`` asks for exactly this analysis."""
        return image is self.image and config.saliency == self.saliency_method and config.faces == self.faces_on


def _install_analysis_cache() -> None:
    """Make ``pipeline.analyse`` return the analysis set in :data:`_CACHED` when it matches (idempotent)."""
    with _INSTALL_LOCK:
        if getattr(pipeline.analyse, "_multicrop_web_cache", False):
            return
        original = pipeline.analyse

        def analyse(image: np.ndarray, config: CropConfig, *, threads: int | None = None):
            hit = _CACHED.get()
            if hit is not None and hit.matches(image, config):
                return hit.saliency, hit.faces
            return original(image, config, threads=threads)

        analyse.__doc__ = original.__doc__
        analyse._multicrop_web_cache = True  # type: ignore[attr-defined]
        analyse.__wrapped__ = original  # type: ignore[attr-defined]
        pipeline.analyse = analyse


@dataclass
class Photo:
    """One uploaded photo: its file in the session directory and its state."""

    id: str
    name: str
    path: Path
    loaded: LoadedImage
    display: bytes
    status: str = "queued"  # queued -> analysing -> ready | error
    error: str | None = None
    stage: str = "waiting for the worker"
    started: float = field(default_factory=time.monotonic)
    analysis: Analysis | None = None
    future: Future | None = field(default=None, repr=False)

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


class PhotoStore:
    """The photos of one server process, in a temporary directory deleted on :meth:`close`.

    Parameters
    ----------
    config : CropConfig
        Base settings; requests change only k, ratios and strategy.
    max_pixels : int
        Decompression-bomb limit for uploads.
    ttl_s : float
        Photos untouched for this long are deleted (with their files).
    threads : int, optional
        Threads for the saliency model.
    """

    def __init__(self, config: CropConfig | None = None, *, max_pixels: int = DEFAULT_MAX_PIXELS,
                 ttl_s: float = 6 * 3600, threads: int | None = None) -> None:
        _install_analysis_cache()
        self.config = config or CropConfig()
        self.max_pixels = max_pixels
        self.ttl_s = ttl_s
        self.threads = threads
        self.dir = Path(tempfile.mkdtemp(prefix="multicrop-web-"))
        self._photos: dict[str, Photo] = {}
        self._touched: dict[str, float] = {}
        self._lock = threading.Lock()
        # One analysis at a time (it uses every thread it is given); crops for
        # settings are quick and run beside it so other photos stay live.
        self._analysis_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="multicrop-analyse")
        self._crop_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="multicrop-crops")
        self.analysis_runs = 0

    # -- photos --------------------------------------------------------------------------
    def add(self, name: str, data: bytes) -> Photo:
        """Store and decode one upload; the analysis starts in the background.

        Raises
        ------
        ImageLoadError
            The bytes are not an image the loader can decode, or it is too large.
        """
        self.expire()
        pid = uuid.uuid4().hex[:12]
        folder = self.dir / pid
        folder.mkdir()
        suffix = Path(name).suffix.lower()
        path = folder / ("upload" + (suffix if suffix.isascii() and len(suffix) <= 6 else ""))
        path.write_bytes(data)
        try:
            loaded = load_image(path, max_side=self.config.analysis_max_side, max_pixels=self.max_pixels)
            display = display_jpeg(path, self.max_pixels)
        except ImageLoadError as exc:
            shutil.rmtree(folder, ignore_errors=True)
            raise ImageLoadError(f"{name}: {_strip_path(str(exc), path)}") from None
        photo = Photo(pid, name, path, loaded, display)
        with self._lock:
            self._photos[pid] = photo
            self._touched[pid] = time.monotonic()
        photo.future = self._analysis_pool.submit(self._analyse, photo)
        return photo

    def get(self, pid: str) -> Photo:
        """The photo ``pid``.

        Raises
        ------
        KeyError
            No such photo (never uploaded, deleted or expired).
        """
        with self._lock:
            photo = self._photos[pid]
            self._touched[pid] = time.monotonic()
        return photo

    def remove(self, pid: str) -> None:
        """Forget a photo and delete its files."""
        with self._lock:
            photo = self._photos.pop(pid, None)
            self._touched.pop(pid, None)
        if photo is not None:
            shutil.rmtree(photo.path.parent, ignore_errors=True)

    def expire(self) -> list[str]:
        """Delete the photos untouched for longer than ``ttl_s``; their ids."""
        now = time.monotonic()
        with self._lock:
            old = [pid for pid, t in self._touched.items() if now - t > self.ttl_s]
        for pid in old:
            self.remove(pid)
        return old

    def list(self) -> list[dict[str, Any]]:
        with self._lock:
            return [p.info() for p in self._photos.values()]

    def close(self) -> None:
        """Stop the workers and delete every uploaded file."""
        self._analysis_pool.shutdown(wait=False, cancel_futures=True)
        self._crop_pool.shutdown(wait=False, cancel_futures=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- work ----------------------------------------------------------------------------
    def _analyse(self, photo: Photo) -> Analysis:
        photo.status, photo.stage = "analysing", "saliency map and faces"
        try:
            image = photo.loaded.analysis
            sal, faces = pipeline.analyse(image, self.config, threads=self.threads)
            self.analysis_runs += 1
            photo.analysis = Analysis(image, self.config.saliency, self.config.faces, sal, tuple(faces))
            photo.status, photo.stage = "ready", "analysed"
            return photo.analysis
        except Exception as exc:  # reported on the page; the server goes on
            photo.status, photo.error, photo.stage = "error", f"{photo.name}: {exc}", "failed"
            raise

    def config_for(self, k: Any = None, ratios: Any = None, strategy: str | None = None) -> CropConfig:
        """The base config with the request's k, ratios and strategy (validated by CropConfig)."""
        changes: dict[str, Any] = {}
        if k is not None and k != "":
            changes["k"] = _parse_k(k)
        if ratios:
            changes["ratios"] = ratios
        if strategy:
            changes["strategy"] = strategy
        return self.config.replace(**changes) if changes else self.config

    def crops(self, photo: Photo, config: CropConfig) -> CropResult:
        """The crops of ``photo`` for ``config``, reusing its analysis (waits for it)."""
        assert photo.future is not None
        analysis = photo.future.result()
        token = _CACHED.set(analysis)
        try:
            return crop_photo(photo.loaded, config, threads=self.threads)
        finally:
            _CACHED.reset(token)

    def submit_crops(self, photo: Photo, config: CropConfig) -> Future:
        """:meth:`crops` in the crop worker pool."""
        return self._crop_pool.submit(self.crops, photo, config)

    def saliency_png(self, photo: Photo) -> bytes:
        """The photo's saliency map as a greyscale PNG (analysis size)."""
        assert photo.future is not None
        sal = photo.future.result().saliency
        lo, hi = float(np.min(sal)), float(np.max(sal))
        img = ((sal - lo) / (hi - lo or 1.0) * 255).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(img, mode="L").save(buf, format="PNG")
        return buf.getvalue()

    def with_boxes(self, result: CropResult, boxes: list) -> CropResult:
        """``result`` with its crops replaced by ``boxes`` (ScoredCrop list, source pixels)."""
        return dataclasses.replace(result, crops=tuple(boxes))


def _parse_k(k: Any) -> Any:
    """k from a request: an integer, or a word the crop config may accept (e.g. ``auto``)."""
    if isinstance(k, str):
        k = k.strip()
        if k.lstrip("-").isdigit():
            return int(k)
        return k
    if isinstance(k, float) and k.is_integer():
        return int(k)
    if isinstance(k, int) and not isinstance(k, bool):
        return k
    raise InvalidParameterError(f"k must be an integer >= 1 or 'auto', got {k!r}")


def auto_k_strategies() -> list[str]:
    """The strategies with which this version's CropConfig accepts ``k="auto"`` (may be none)."""
    from ..crop.config import STRATEGIES

    out = []
    for strategy in STRATEGIES:
        try:
            CropConfig(k="auto", strategy=strategy)  # type: ignore[arg-type]
        except (InvalidParameterError, TypeError, ValueError):
            continue
        out.append(strategy)
    return out


def _strip_path(message: str, path: Path) -> str:
    """An error message without the server's temporary path (the page shows the upload's name)."""
    return message.replace(str(path) + ": ", "").replace(str(path), "the file")
